//! The per-bucket time series as CSV (`--csv`).

use std::io;

use retrystorm_core::summary::{ReplicaSeries, RunReport, TierSeries, VariantResult};

use crate::{error::ReportError, fmt};

/// The header row, in column order.
pub const CSV_HEADER: [&str; 9] = [
    "variant",
    "bucket",
    "start_ms",
    "first",
    "retries",
    "arrivals",
    "succeeded",
    "queue_len",
    "busy",
];

/// The column added after [`CSV_HEADER`]'s (and [`TIERS_CSV_HEADER`]'s) when some variant has an
/// autoscaled tier: its time-averaged serving replicas per bucket.
pub const READY_REPLICAS_COLUMN: &str = "ready_replicas";

/// One tier's series of a level column.
type Level = fn(&TierSeries) -> &[f32];

/// The columns added after those, in this order, each when some variant has the series: the
/// autoscaler's ready replicas, the learned timeout and the learned hedging delay (ms) of the
/// tier's caller. A report without them keeps the columns it always had.
const LEVEL_COLUMNS: [(&str, Level); 3] = [
    (READY_REPLICAS_COLUMN, |t| &t.ready_replicas),
    ("learned_timeout_ms", |t| &t.learned_timeout_ms),
    ("learned_hedge_delay_ms", |t| &t.learned_hedge_delay_ms),
];

/// Which of [`LEVEL_COLUMNS`] some of `tiers` has.
fn levels_kept<'a>(tiers: impl Iterator<Item = &'a TierSeries> + Clone) -> Vec<bool> {
    LEVEL_COLUMNS
        .iter()
        .map(|(_, pick)| tiers.clone().any(|t| !pick(t).is_empty()))
        .collect()
}

/// The header, with the kept [`LEVEL_COLUMNS`].
fn header(columns: &[&'static str], kept: &[bool]) -> Vec<&'static str> {
    let mut h = columns.to_vec();
    for ((name, _), &k) in LEVEL_COLUMNS.iter().zip(kept) {
        if k {
            h.push(name);
        }
    }
    h
}

/// Bucket `i`'s cells of the kept [`LEVEL_COLUMNS`] (0 where a series is absent).
fn level_cells(row: &mut Vec<String>, t: &TierSeries, kept: &[bool], i: usize) {
    for ((_, pick), &k) in LEVEL_COLUMNS.iter().zip(kept) {
        if k {
            row.push(pick(t).get(i).copied().unwrap_or(0.0).to_string());
        }
    }
}

/// The last tier's series of a variant as a [`TierSeries`] named `server`.
fn last_tier(v: &VariantResult) -> TierSeries {
    let s = &v.series;
    TierSeries {
        name: "server".into(),
        first: s.first.clone(),
        retries: s.retries.clone(),
        queue_len: s.queue_len.clone(),
        busy: s.busy.clone(),
        ready_replicas: s.ready_replicas.clone(),
        replicas: Vec::new(),
        learned_timeout_ms: s.learned_timeout_ms.clone(),
        learned_hedge_delay_ms: s.learned_hedge_delay_ms.clone(),
    }
}

/// Writes one row per (variant, bucket), variants in report order. `arrivals` is
/// `first + retries`; `start_ms` is `bucket * bucket_ms`. A series shorter than the longest of
/// its variant (which the core should not produce) is padded with zeros. When a variant has an
/// autoscaled last tier, a last column holds its ready replicas; when its caller learns its
/// timeout or hedging delay, a column holds each.
pub fn write_series_csv<W: io::Write>(report: &RunReport, out: W) -> Result<(), ReportError> {
    let mut w = ::csv::Writer::from_writer(out);
    let lasts: Vec<TierSeries> = report.variants.iter().map(last_tier).collect();
    let kept = levels_kept(lasts.iter());
    w.write_record(header(&CSV_HEADER, &kept))
        .map_err(ReportError::Csv)?;
    for (v, last) in report.variants.iter().zip(&lasts) {
        let s = &v.series;
        let len = [
            s.first.len(),
            s.retries.len(),
            s.succeeded.len(),
            s.queue_len.len(),
            s.busy.len(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let bucket_ms = bucket_ms(v);
        for i in 0..len {
            let first = s.first.get(i).copied().unwrap_or(0);
            let retries = s.retries.get(i).copied().unwrap_or(0);
            let mut row = vec![
                v.name.clone(),
                i.to_string(),
                fmt::trim(i as f64 * bucket_ms),
                first.to_string(),
                retries.to_string(),
                (u64::from(first) + u64::from(retries)).to_string(),
                s.succeeded.get(i).copied().unwrap_or(0).to_string(),
                s.queue_len.get(i).copied().unwrap_or(0.0).to_string(),
                s.busy.get(i).copied().unwrap_or(0.0).to_string(),
            ];
            level_cells(&mut row, last, &kept, i);
            w.write_record(row).map_err(ReportError::Csv)?;
        }
    }
    w.flush().map_err(|e| ReportError::Csv(e.into()))?;
    Ok(())
}

/// [`write_series_csv`] into a `String`.
pub fn series_csv(report: &RunReport) -> Result<String, ReportError> {
    into_string(|buf| write_series_csv(report, buf))
}

/// The header row of the per-tier series (`--tiers-csv`), in column order.
pub const TIERS_CSV_HEADER: [&str; 9] = [
    "variant",
    "tier",
    "bucket",
    "start_ms",
    "first",
    "retries",
    "arrivals",
    "queue_len",
    "busy",
];

/// One row per (variant, tier, bucket): the arrivals and levels at every tier of the request
/// path, top first. A path of one tier gives its server's series under the tier name `server`.
/// When some tier is autoscaled, a last column holds each tier's ready replicas (0 for a tier
/// without an autoscaler); so do the learned timeout and hedging delay of each tier's caller.
pub fn write_tiers_csv<W: io::Write>(report: &RunReport, out: W) -> Result<(), ReportError> {
    let mut w = ::csv::Writer::from_writer(out);
    let lasts: Vec<TierSeries> = report.variants.iter().map(last_tier).collect();
    let kept = levels_kept(
        lasts
            .iter()
            .chain(report.variants.iter().flat_map(|v| &v.series.tiers)),
    );
    w.write_record(header(&TIERS_CSV_HEADER, &kept))
        .map_err(ReportError::Csv)?;
    for (v, last) in report.variants.iter().zip(&lasts) {
        let s = &v.series;
        let bucket_ms = bucket_ms(v);
        let one = [last.clone()];
        let tiers = if s.tiers.is_empty() {
            &one[..]
        } else {
            &s.tiers[..]
        };
        for t in tiers {
            for i in 0..t.first.len().max(t.retries.len()) {
                let first = t.first.get(i).copied().unwrap_or(0);
                let retries = t.retries.get(i).copied().unwrap_or(0);
                let mut row = vec![
                    v.name.clone(),
                    t.name.clone(),
                    i.to_string(),
                    fmt::trim(i as f64 * bucket_ms),
                    first.to_string(),
                    retries.to_string(),
                    (u64::from(first) + u64::from(retries)).to_string(),
                    t.queue_len.get(i).copied().unwrap_or(0.0).to_string(),
                    t.busy.get(i).copied().unwrap_or(0.0).to_string(),
                ];
                level_cells(&mut row, t, &kept, i);
                w.write_record(row).map_err(ReportError::Csv)?;
            }
        }
    }
    w.flush().map_err(|e| ReportError::Csv(e.into()))?;
    Ok(())
}

/// [`write_tiers_csv`] into a `String`.
pub fn tiers_csv(report: &RunReport) -> Result<String, ReportError> {
    into_string(|buf| write_tiers_csv(report, buf))
}

/// The header row of the per-replica series (`--replicas-csv`), in column order.
pub const REPLICAS_CSV_HEADER: [&str; 9] = [
    "variant",
    "tier",
    "replica",
    "bucket",
    "start_ms",
    "arrivals",
    "served",
    "rejected",
    "ejections",
];

/// One row per (variant, tier, replica, bucket): each replica of a replicated tier (2 to 64
/// replicas), tiers top first, named as [`write_tiers_csv`] names them (`server` for a path of
/// one tier). A report without replicas gives the header only.
pub fn write_replicas_csv<W: io::Write>(report: &RunReport, out: W) -> Result<(), ReportError> {
    let mut w = ::csv::Writer::from_writer(out);
    w.write_record(REPLICAS_CSV_HEADER)
        .map_err(ReportError::Csv)?;
    for v in &report.variants {
        let s = &v.series;
        let bucket_ms = bucket_ms(v);
        let one = [("server", &s.replicas)];
        let tiers: Vec<(&str, &Vec<ReplicaSeries>)> = if s.tiers.is_empty() {
            one.to_vec()
        } else {
            s.tiers
                .iter()
                .map(|t| (t.name.as_str(), &t.replicas))
                .collect()
        };
        for (tier, replicas) in tiers {
            for r in replicas {
                let len = [
                    r.arrivals.len(),
                    r.served.len(),
                    r.rejected.len(),
                    r.ejections.len(),
                ]
                .into_iter()
                .max()
                .unwrap_or(0);
                let at = |x: &[u32], i: usize| x.get(i).copied().unwrap_or(0).to_string();
                for i in 0..len {
                    w.write_record([
                        v.name.clone(),
                        tier.to_string(),
                        r.replica.to_string(),
                        i.to_string(),
                        fmt::trim(i as f64 * bucket_ms),
                        at(&r.arrivals, i),
                        at(&r.served, i),
                        at(&r.rejected, i),
                        at(&r.ejections, i),
                    ])
                    .map_err(ReportError::Csv)?;
                }
            }
        }
    }
    w.flush().map_err(|e| ReportError::Csv(e.into()))?;
    Ok(())
}

/// [`write_replicas_csv`] into a `String`.
pub fn replicas_csv(report: &RunReport) -> Result<String, ReportError> {
    into_string(|buf| write_replicas_csv(report, buf))
}

/// A variant's bucket width: its series', or the summary's for a report read back without one.
fn bucket_ms(v: &VariantResult) -> f64 {
    if v.series.bucket_ms > 0.0 {
        v.series.bucket_ms
    } else {
        v.summary.bucket_ms
    }
}

/// What `write` writes, as a `String` (every CSV writer here writes UTF-8 only).
fn into_string(
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), ReportError>,
) -> Result<String, ReportError> {
    let mut buf = Vec::new();
    write(&mut buf)?;
    Ok(String::from_utf8(buf).expect("every field written is UTF-8"))
}
