//! The request path in the one-variant view ([`crate::table::variant_view`]): a line per hop of a
//! layered path, its bottom's amplification, and a line per tier (with its replicas under it).

use crate::fmt;
use crate::table::Row;
use retrystorm_core::summary::{Layered, Summary, TierSummary};

/// The request path, one line per hop and per tier (a path of one tier has neither, unless
/// its tier is replicated), each replica of a replicated tier under it.
pub(crate) fn path_rows(s: &Summary) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(l) = &s.layered {
        rows.extend(hop_rows(l));
    }
    // A path of several tiers, or one replicated tier: each tier, its replicas under it.
    if s.tiers.len() > 1 || s.tiers.iter().any(|t| !t.replicas.is_empty()) {
        for t in &s.tiers {
            rows.push(tier_row(t));
            rows.extend(t.replicas.iter().map(crate::replica_rows::replica_row));
        }
    }
    rows
}

/// A layered path's hops, each with its retries, then the amplification at the bottom.
fn hop_rows(l: &Layered) -> Vec<Row> {
    let mut rows: Vec<Row> = l
        .layers
        .iter()
        .map(|h| {
            (
                format!("hop {}", h.name),
                format!(
                    "received {}, sent {} ({} retries, {}x per call), failed {}, timeouts {}, budget denied {}",
                    fmt::num(h.received as f64),
                    fmt::num(h.sent as f64),
                    fmt::num(h.retries as f64),
                    fmt::fixed(h.per_call, 2),
                    fmt::num(h.failed as f64),
                    fmt::num(h.timeouts as f64),
                    fmt::num(h.budget_denied as f64)
                ),
            )
        })
        .collect();
    rows.push((
        "bottom".into(),
        format!(
            "amplification {}x (worst case {}x{}), orphaned {} ({})",
            fmt::fixed(l.amplification_bottom, 2),
            fmt::fixed(l.worst_case_amplification, 0),
            l.expected_amplification.map_or(String::new(), |e| format!(
                ", closed form {}x",
                fmt::fixed(e, 2)
            )),
            fmt::num(l.orphaned as f64),
            fmt::pct(l.orphaned_share)
        ),
    ));
    rows
}

/// One tier of a path of several (or a replicated one): its arrivals and what became of them.
fn tier_row(t: &TierSummary) -> Row {
    (
        format!("tier {}", t.name),
        format!(
            "arrivals {} ({} retries), served {}, rejected {}, dropped {}, orphaned {}, mean busy {}, mean wait {} ms",
            fmt::num(t.arrivals as f64),
            fmt::num(t.retries as f64),
            fmt::num(t.served as f64),
            fmt::num(t.rejected as f64),
            fmt::num(t.dropped_expired as f64),
            fmt::num(t.orphaned as f64),
            fmt::ms(t.mean_busy),
            fmt::ms(t.mean_wait_ms)
        ),
    )
}
