//! The one-variant view for stdout: a run's variants, each an aligned `key: value` list (how the
//! run ended, its load, attempts, outcomes, the request path a line per hop and per tier with
//! its replicas, then any summary field this view does not name).

use retrystorm_core::summary::{
    ConnectionSummary, Ended, FanoutSummary, Layered, RunReport, Summary, TierSummary,
    VariantResult,
};

use crate::fmt;

/// The model and seed, then [`variant_view`] for each variant, separated by blank
/// lines.
pub fn run_view(report: &RunReport) -> String {
    let mut out = format!("model: {}\nseed:  {}\n", report.model, report.seed);
    for v in &report.variants {
        out.push('\n');
        out.push_str(&variant_view(v));
    }
    out
}

/// A `key: value` row of [`variant_view`].
type Row = (String, String);

/// One variant as an aligned `key: value` list.
pub fn variant_view(v: &VariantResult) -> String {
    let s = &v.summary;
    let mut rows = vec![("variant".into(), v.name.clone())];
    rows.extend(load_rows(s));
    rows.extend(attempt_row(s));
    rows.extend(outcome_rows(s));
    rows.extend(path_rows(s));
    rows.extend(extra_rows(s));
    crate::text::key_values(&rows)
}

/// How the run ended, and the load it made: intents, attempts and the peaks of arrivals.
fn load_rows(s: &Summary) -> Vec<Row> {
    vec![
        ("ended".into(), ended(s)),
        (
            "intents".into(),
            format!(
                "{} (succeeded {}, failed {}, unsettled {})",
                fmt::int(s.intents),
                fmt::int(s.succeeded),
                fmt::int(s.failed),
                fmt::int(s.unsettled)
            ),
        ),
        (
            "attempts".into(),
            format!(
                "{} (retries {}, amplification {})",
                fmt::int(s.attempts),
                fmt::int(s.retries),
                fmt::times(s.amplification)
            ),
        ),
        (
            "peak arrivals".into(),
            format!(
                "{} per {} bucket (peak retries {})",
                fmt::int(s.peak_arrivals),
                fmt::duration(s.bucket_ms),
                fmt::int(s.peak_retries)
            ),
        ),
        (
            "peak window".into(),
            format!(
                "{} in any {} window (peak retries {})",
                fmt::int(s.peak_arrivals_window),
                fmt::duration(s.peak_window_ms),
                fmt::int(s.peak_retries_window)
            ),
        ),
    ]
}

/// Per attempt number: arrivals, the peak per bucket and per window (no row when the summary
/// has no attempt peaks).
fn attempt_row(s: &Summary) -> Option<Row> {
    if s.attempt_peaks.is_empty() {
        return None;
    }
    let parts: Vec<String> = s
        .attempt_peaks
        .iter()
        .map(|a| {
            format!(
                "#{} {} (peak {}, window {})",
                a.attempt,
                fmt::int(a.arrivals),
                fmt::int(a.peak),
                fmt::int(a.peak_window)
            )
        })
        .collect();
    Some(("by attempt".into(), parts.join(", ")))
}

/// What became of the intents and where the time went: latencies, effects, the server's and
/// the network's counts, work and queueing.
fn outcome_rows(s: &Summary) -> Vec<Row> {
    vec![
        (
            "last arrival".into(),
            format!("{} ms", fmt::ms(s.last_arrival_ms)),
        ),
        ("completion ms".into(), percentiles(&s.completion_ms)),
        // With no success there is no time to a success: zeros would read as instant ones.
        (
            "success ms".into(),
            if s.succeeded == 0 {
                "none".into()
            } else {
                percentiles(&s.success_ms)
            },
        ),
        (
            "effects".into(),
            format!(
                "applied once {}, duplicated {}, lost {} (phantom {}), false failures {}, {} effects in all",
                fmt::int(s.applied_once),
                fmt::int(s.duplicated),
                fmt::int(s.lost),
                fmt::int(s.phantom),
                fmt::int(s.false_failures),
                fmt::int(s.effects)
            ),
        ),
        (
            "server".into(),
            format!(
                "arrivals {}, rejected {}, dropped expired {}, conflicts {}, replayed {}, crashes {}",
                fmt::int(s.arrivals),
                fmt::int(s.rejected),
                fmt::int(s.dropped_expired),
                fmt::int(s.conflicts),
                fmt::int(s.replayed),
                fmt::int(s.crashes)
            ),
        ),
        (
            "network".into(),
            format!(
                "requests lost {}, responses lost {}, timeouts {}, late responses {}",
                fmt::int(s.requests_lost),
                fmt::int(s.responses_lost),
                fmt::int(s.timeouts),
                fmt::int(s.late_responses)
            ),
        ),
        (
            "work".into(),
            format!(
                "{} ms busy, {} ms wasted ({})",
                fmt::ms(s.work_ms),
                fmt::ms(s.wasted_work_ms),
                fmt::pct(s.wasted_share)
            ),
        ),
        (
            "queue".into(),
            format!(
                "mean wait {} ms, mean length {}, mean busy workers {}",
                fmt::ms(s.mean_wait_ms),
                fmt::ms(s.mean_queue_len),
                fmt::ms(s.mean_busy)
            ),
        ),
    ]
}

/// The request path, one line per hop and per tier (a path of one tier has neither, unless
/// its tier is replicated), each replica of a replicated tier under it.
fn path_rows(s: &Summary) -> Vec<Row> {
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
    rows.extend(s.fanout.iter().map(fanout_row));
    rows.extend(s.connections.iter().map(connection_row));
    rows
}

/// The connections to a tier: the connects per intent and their share of the tier's work, what
/// refused or deferred them, and how many were open.
fn connection_row(c: &ConnectionSummary) -> Row {
    (
        format!("connections {}", c.tier),
        format!(
            "connects {} ({} per intent, {}% of the work, {} ms), drops {}, refused {}, deferred by backoff {}, open at peak {}, at the end {}",
            fmt::int(c.connects),
            fmt::fixed(c.connects_per_intent, 2),
            fmt::fixed(c.connect_work_share * 100.0, 1),
            fmt::ms(c.connect_work_ms),
            fmt::int(c.drops),
            fmt::int(c.connects_refused),
            fmt::int(c.connects_deferred),
            fmt::int(c.peak_open),
            fmt::int(c.open_at_end)
        ),
    )
}

/// A tier's fan-out: its calls to the next tier per intent, how it answered, and the calls
/// still running once it had.
fn fanout_row(f: &FanoutSummary) -> Row {
    (
        format!("fan-out {}", f.tier),
        format!(
            "k {}, leaf calls {} per intent ({} leaves), answered ok {}, failed {}, leaves running after the answer {} (cancelled {}, served after {})",
            fmt::int(f.k),
            fmt::fixed(f.leaf_calls_per_intent, 2),
            fmt::fixed(f.leaves_per_intent, 2),
            fmt::int(f.answered_ok),
            fmt::int(f.answered_failed),
            fmt::int(f.leaves_running_after),
            fmt::int(f.leaves_cancelled),
            fmt::int(f.leaf_served_after)
        ),
    )
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

/// The summary's fields not in [`SHOWN`], sorted by name: fields added to the core after this
/// view was written still show up.
fn extra_rows(s: &Summary) -> Vec<Row> {
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(s) else {
        return Vec::new();
    };
    let mut extra: Vec<(&String, &serde_json::Value)> = map
        .iter()
        .filter(|(k, _)| !SHOWN.contains(&k.as_str()))
        .collect();
    extra.sort_by(|a, b| a.0.cmp(b.0));
    extra
        .into_iter()
        .map(|(k, val)| (k.replace('_', " "), json_value(val)))
        .collect()
}

/// How the run ended and after how many events.
fn ended(s: &Summary) -> String {
    let why = match s.ended {
        Ended::Settled => "settled",
        Ended::Horizon => "horizon reached",
        Ended::MaxEvents => "max_events guard (totals are partial)",
        Ended::Interrupted => "truncated by Ctrl-C (totals are partial)",
    };
    format!(
        "{why} at {} ms after {} events",
        fmt::ms(s.end_ms),
        fmt::int(s.events)
    )
}

/// `Summary` fields that [`variant_view`] shows in its own lines; any other field (added to the
/// core later) is listed at the end as it appears in the JSON.
const SHOWN: &[&str] = &[
    "tiers",
    "fanout",
    "connections",
    "layered",
    "intents",
    "attempts",
    "retries",
    "amplification",
    "succeeded",
    "failed",
    "unsettled",
    "peak_arrivals",
    "peak_retries",
    "bucket_ms",
    "peak_arrivals_window",
    "peak_retries_window",
    "peak_window_ms",
    "attempt_peaks",
    "completion_ms",
    "success_ms",
    "last_arrival_ms",
    "lost",
    "applied_once",
    "duplicated",
    "phantom",
    "false_failures",
    "effects",
    "arrivals",
    "timeouts",
    "late_responses",
    "requests_lost",
    "responses_lost",
    "rejected",
    "dropped_expired",
    "conflicts",
    "replayed",
    "crashes",
    "work_ms",
    "wasted_work_ms",
    "wasted_share",
    "mean_wait_ms",
    "mean_queue_len",
    "mean_busy",
    "end_ms",
    "ended",
    "events",
];

/// A JSON value of the summary the way the rest of the view prints numbers: integers grouped,
/// other numbers by [`fmt::num`], objects and arrays item by item, strings bare.
fn json_value(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Number(n) => match n.as_u64() {
            Some(u) => fmt::int(u),
            None => n.as_f64().map_or_else(|| n.to_string(), fmt::num),
        },
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(json_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(o) => {
            let items: Vec<String> = o
                .iter()
                .map(|(k, x)| format!("{} {}", k.replace('_', " "), json_value(x)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn percentiles(c: &retrystorm_core::summary::Percentiles) -> String {
    format!(
        "p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {}",
        fmt::ms(c.p50),
        fmt::ms(c.p90),
        fmt::ms(c.p99),
        fmt::ms(c.p999),
        fmt::ms(c.max),
        fmt::ms(c.mean)
    )
}
