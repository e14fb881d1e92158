//! The replicas block under the comparison tables (`server.replicas`, docs/replicas.md): one row
//! per (variant, replicated tier, replica) with its arrivals, served, rejected, errors and
//! ejections, as text, markdown, and with `--seeds N` as mean ± half-width (`crate::ci`).

use crate::fmt;
use retrystorm_core::summary::{ReplicaSummary, RunReport, Summary};

/// The headers of the replicas block ([`replica_grid`]).
const REPLICA_HEADERS: [&str; 8] = [
    "variant",
    "tier",
    "replica",
    "arrivals",
    "served",
    "rejected",
    "errors",
    "ejections",
];

/// The counts of a replica, as [`REPLICA_HEADERS`] names them after the replica's index.
pub(crate) const REPLICA_FIELDS: [&str; 5] =
    ["arrivals", "served", "rejected", "errors", "ejections"];

/// Whether column `i` of the replicas block is right-aligned (the replica index and counts).
fn replica_right(i: usize) -> bool {
    i >= 2
}

/// Each variant's name and summary, in report order.
fn summaries(report: &RunReport) -> Vec<(&str, &Summary)> {
    report
        .variants
        .iter()
        .map(|v| (v.name.as_str(), &v.summary))
        .collect()
}

/// [`replica_grid`] of a one-seed report.
pub(crate) fn plain_replica_grid(report: &RunReport) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let variants = summaries(report);
    replica_grid(&variants, |i, t, k, f| {
        plain_replica_cell(variants[i].1, t, k, f)
    })
}

/// A replica's count from the summary (`field` of [`REPLICA_FIELDS`]), grouped.
fn plain_replica_cell(s: &Summary, tier: usize, k: usize, field: &str) -> String {
    let Some(r) = s.tiers.get(tier).and_then(|t| t.replicas.get(k)) else {
        return "-".into();
    };
    fmt::int(match field {
        "arrivals" => r.arrivals,
        "served" => r.served,
        "rejected" => r.rejected,
        "errors" => r.errors,
        _ => r.ejections,
    })
}

/// The replicas block under the comparison table, when some variant has a replicated tier: one
/// row per (variant, replicated tier, replica), the variant and tier named on their group's first
/// row; `cell(variant, tier, replica position, field)` gives each count. None without replicas.
pub(crate) fn replica_grid(
    variants: &[(&str, &Summary)],
    cell: impl Fn(usize, usize, usize, &str) -> String,
) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut rows = Vec::new();
    for (i, (name, s)) in variants.iter().enumerate() {
        for (t, tier) in s.tiers.iter().enumerate() {
            for (k, r) in tier.replicas.iter().enumerate() {
                let (v, n) = if k == 0 {
                    (name.to_string(), tier.name.clone())
                } else {
                    (String::new(), String::new())
                };
                let mut row = vec![v, n, r.replica.to_string()];
                row.extend(REPLICA_FIELDS.iter().map(|f| cell(i, t, k, f)));
                rows.push(row);
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some((
        REPLICA_HEADERS.iter().map(|h| h.to_string()).collect(),
        rows,
    ))
}

/// The replicas block ([`replica_grid`]), if any, as aligned text after a blank line at the end
/// of `out`.
pub(crate) fn push_replica_text(out: &mut String, grid: Option<(Vec<String>, Vec<Vec<String>>)>) {
    if let Some((h, rows)) = grid {
        out.push('\n');
        out.push_str(&crate::text::aligned(&h, &rows, replica_right));
    }
}

/// The replicas block ([`replica_grid`]) as a GFM table.
pub(crate) fn replica_markdown(h: &[String], rows: &[Vec<String>]) -> String {
    let right: Vec<bool> = (0..h.len()).map(replica_right).collect();
    crate::gfm::table(h, &right, rows)
}

/// One replica of a replicated tier, indented under its tier's row.
pub(crate) fn replica_row(r: &ReplicaSummary) -> (String, String) {
    (
        format!("  replica {}", r.replica),
        format!(
            "arrivals {}, served {}, rejected {}, errors {}, ejections {}",
            fmt::int(r.arrivals),
            fmt::int(r.served),
            fmt::int(r.rejected),
            fmt::int(r.errors),
            fmt::int(r.ejections)
        ),
    )
}
