//! A sweep's table: its runs aggregated per point and variant (mean ± 95% CI over seeds).

use crate::ci::{pm, text_table_left};
use crate::sweep::format::SweepRecord;
use crate::sweep::header::SweepHeader;
use retrystorm_core::aggregate;
use retrystorm_core::stats::Estimate;
use retrystorm_core::summary::Summary;
use std::collections::BTreeMap;

/// A point and variant, aggregated over its seeds.
#[derive(Clone, Debug)]
pub struct PointRow {
    pub point: u64,
    pub params: Vec<(String, String)>,
    pub variant: String,
    pub n: usize,
    pub estimates: BTreeMap<String, Estimate>,
}

/// Groups records by (point, variant) in grid order and aggregates each group: the estimates
/// of what the table and the chart of `metric` read ([`table_metrics`]), not of every metric.
pub fn aggregate(header: &SweepHeader, records: &[SweepRecord], metric: &str) -> Vec<PointRow> {
    type Group<'a> = (Vec<(String, String)>, Vec<&'a Summary>);
    let mut groups: BTreeMap<(u64, usize), Group> = BTreeMap::new();
    for r in records {
        let vi = header
            .grid
            .variants
            .iter()
            .position(|v| *v == r.variant)
            .unwrap_or(usize::MAX);
        let g = groups
            .entry((r.point, vi))
            .or_insert_with(|| (r.params.clone(), Vec::new()));
        g.1.push(&r.summary);
    }
    let names = table_metrics(metric);
    groups
        .into_iter()
        .map(|((point, vi), (params, sums))| PointRow {
            point,
            params,
            variant: header.grid.variants.get(vi).cloned().unwrap_or_default(),
            n: sums.len(),
            estimates: aggregate::estimates(&sums, &names),
        })
        .collect()
}

const TABLE_METRICS: &[(&str, &str)] = &[
    ("amplif.", "amplification"),
    ("peak retries", "peak_retries"),
    ("p99 ms", "completion_ms.p99"),
];

/// The metrics [`aggregate()`] estimates for the table and the chart of `metric`: the table's
/// columns, `bucket_ms` (the chart's label) and `intents` (its seed count stands for a
/// per-attempt metric no run reached, [`aggregate::estimate`]).
pub fn table_metrics(metric: &str) -> Vec<&str> {
    let mut names: Vec<&str> = TABLE_METRICS.iter().map(|(_, m)| *m).collect();
    for m in [metric, "bucket_ms", "intents"] {
        if !names.contains(&m) {
            names.push(m);
        }
    }
    names
}

/// The metric the table adds and the chart draws when none is asked for.
pub const DEFAULT_METRIC: &str = "amplification";

/// Headers and cells of [`sweep_table`].
pub fn sweep_rows(
    header: &SweepHeader,
    rows: &[PointRow],
    metric: &str,
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut metrics: Vec<(String, String)> = TABLE_METRICS
        .iter()
        .map(|(h, m)| (h.to_string(), m.to_string()))
        .collect();
    if !metrics.iter().any(|(_, m)| m == metric) {
        metrics.push((metric.to_string(), metric.to_string()));
    }
    let mut headers: Vec<String> = header.grid.axes.iter().map(|a| a.key.clone()).collect();
    headers.push("variant".into());
    headers.push("seeds".into());
    headers.extend(metrics.iter().map(|(h, _)| h.clone()));
    let cells = rows
        .iter()
        .map(|r| {
            let mut c: Vec<String> = r.params.iter().map(|(_, v)| v.clone()).collect();
            c.push(r.variant.clone());
            c.push(r.n.to_string());
            for (_, m) in &metrics {
                c.push(match aggregate::estimate(&r.estimates, m) {
                    Some(e) => pm(e.mean, Some(e.half_width)),
                    None => "-".into(),
                });
            }
            c
        })
        .collect();
    (headers, cells)
}

/// One row per (point, variant): the parameters, the variant, the number of seeds, and
/// amplification, peak retries, p99 and `metric` as mean ± 95% CI half-width.
pub fn sweep_table(header: &SweepHeader, rows: &[PointRow], metric: &str) -> String {
    let (h, c) = sweep_rows(header, rows, metric);
    let mut out = text_table_left(&h, &c, header.grid.axes.len() + 1);
    if header.grid.seeds.len() > 1 {
        out.push_str("mean ± 95% confidence half-width over seeds (Student t)\n");
    }
    out
}
