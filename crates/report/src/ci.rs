//! Tables of replicated runs (`--seeds N`): every number as `mean ± half-width` of its 95%
//! confidence interval.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use retrystorm_core::summary::{ReplicatedReport, Replications};

pub use crate::fmt::pm;

/// [`crate::fmt::num`], under its old name.
pub fn short(v: f64) -> String {
    crate::fmt::num(v)
}

/// The cell for `metric` of a variant.
pub fn cell(r: &Replications, metric: &str) -> String {
    match r.mean.get(metric) {
        Some(m) => pm(*m, r.ci95.get(metric).copied()),
        None => "-".into(),
    }
}

/// The columns of the comparison table: (header, metric).
const COLUMNS: &[(&str, &str)] = &[
    ("intents", "intents"),
    ("attempts", "attempts"),
    ("amplif.", "amplification"),
    ("peak arrivals", "peak_arrivals"),
    ("peak retries", "peak_retries"),
    ("succeeded", "succeeded"),
    ("failed", "failed"),
    ("p50 ms", "completion_ms.p50"),
    ("p99 ms", "completion_ms.p99"),
];
const OUTCOMES: &[(&str, &str)] = &[
    ("lost", "lost"),
    ("duplicated", "duplicated"),
    ("phantom", "phantom"),
];

/// Renders rows of cells as an aligned text table (first column left-aligned).
pub fn text_table(headers: &[String], rows: &[Vec<String>]) -> String {
    text_table_left(headers, rows, 1)
}

/// As [`text_table`], with the first `left` columns left-aligned and the rest right-aligned.
pub fn text_table_left(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
    let n = headers.len();
    let mut w: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            let pad = w[i].saturating_sub(c.chars().count());
            if i < left {
                l.push_str(c);
                l.extend(std::iter::repeat_n(' ', pad));
            } else {
                l.extend(std::iter::repeat_n(' ', pad));
                l.push_str(c);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(headers);
    line(&w.iter().map(|n| "-".repeat(*n)).collect::<Vec<_>>());
    for r in rows {
        line(r);
    }
    out
}

/// The headers and rows of [`ci_table`], for other renderers (HTML).
pub fn ci_rows(report: &ReplicatedReport) -> (Vec<String>, Vec<Vec<String>>) {
    let any = |m: &str| {
        report
            .variants
            .iter()
            .any(|v| v.replications.mean.get(m).is_some_and(|x| *x != 0.0))
    };
    let mut cols: Vec<(&str, &str)> = COLUMNS.to_vec();
    cols.extend(OUTCOMES.iter().filter(|(_, m)| any(m)));
    let mut headers = vec!["variant".to_string()];
    headers.extend(cols.iter().map(|(h, _)| h.to_string()));
    let rows = report
        .variants
        .iter()
        .map(|v| {
            let mut r = vec![v.result.name.clone()];
            r.extend(cols.iter().map(|(_, m)| cell(&v.replications, m)));
            r
        })
        .collect();
    (headers, rows)
}

/// One row per variant, each number `mean ± 95% CI half-width` over the replications.
pub fn ci_table(report: &ReplicatedReport) -> String {
    let (h, r) = ci_rows(report);
    let mut out = text_table(&h, &r);
    let _ = writeln!(
        out,
        "means over {} seeds ({}..={}), ± the 95% confidence half-width (Student t)",
        report.seeds.len(),
        report.seeds.first().copied().unwrap_or(0),
        report.seeds.last().copied().unwrap_or(0)
    );
    out
}

/// Every metric of every variant as `name: mean ± half-width`, one variant after the other.
pub fn ci_view(report: &ReplicatedReport) -> String {
    let mut out = format!(
        "model: {}\nseeds: {} ({}..={}), means ± 95% CI half-width\n",
        report.model,
        report.seeds.len(),
        report.seeds.first().copied().unwrap_or(0),
        report.seeds.last().copied().unwrap_or(0)
    );
    for v in &report.variants {
        let _ = writeln!(out, "\nvariant: {}", v.result.name);
        let metrics: &BTreeMap<String, f64> = &v.replications.mean;
        let width = metrics.keys().map(|k| k.len()).max().unwrap_or(0) + 1;
        for k in metrics.keys() {
            let _ = writeln!(
                out,
                "{:<width$} {}",
                format!("{k}:"),
                cell(&v.replications, k)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(pm(1000.0, Some(0.0)), "1,000");
        assert_eq!(pm(171.2, Some(12.34)), "171.2 ± 12.3");
        assert_eq!(pm(2.4142, None), "2.41");
        assert_eq!(short(-1234.6), "-1,235");
        assert_eq!(short(f64::NAN), "-");
    }
}
