//! Tables of replicated runs (`--seeds N`): every number as `mean ± half-width` of its 95%
//! confidence interval.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use retrystorm_core::summary::{ReplicatedReport, ReplicatedVariant, Replications};

pub use crate::fmt::pm;

/// [`crate::fmt::num`], under its old name.
pub fn short(v: f64) -> String {
    crate::fmt::num(v)
}

/// The cell for `metric` of a variant: a ratio (`amplification`) with its `x`, as the one-seed
/// table writes it.
pub fn cell(r: &Replications, metric: &str) -> String {
    if let Some(s) = r.shares.get(metric) {
        return share(s);
    }
    match r.mean.get(metric) {
        Some(m) if metric == "amplification" => {
            crate::fmt::pm_times(*m, r.ci95.get(metric).copied())
        }
        Some(m) => pm(*m, r.ci95.get(metric).copied()),
        None => "-".into(),
    }
}

/// The peak column's header, as the one-seed table names it: `peak/10 ms`.
fn peak_header(report: &ReplicatedReport) -> String {
    let first = report.variants.first().map(|v| v.result.summary.bucket_ms);
    match first.filter(|b| {
        report
            .variants
            .iter()
            .all(|v| v.result.summary.bucket_ms == *b)
    }) {
        Some(b) => format!("peak/{}", crate::fmt::duration(b)),
        None => "peak/bucket".to_string(),
    }
}

/// A share of seeds: `7/10 (40-89%)`, the Wilson 95% interval in whole percent.
pub fn share(s: &retrystorm_core::stats::Share) -> String {
    format!(
        "{}/{} ({:.0}-{:.0}%)",
        s.count,
        s.n,
        (s.low * 100.0).floor(),
        (s.high * 100.0).ceil()
    )
}

/// The columns of the comparison table: (header, metric).
const COLUMNS: &[(&str, &str)] = &[
    ("intents", "intents"),
    ("attempts", "attempts"),
    ("amplif.", "amplification"),
    ("peak/", "peak_arrivals"),
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
    ("false failures", "false_failures"),
];

/// Renders rows of cells as an aligned text table (first column left-aligned).
pub fn text_table(headers: &[String], rows: &[Vec<String>]) -> String {
    text_table_left(headers, rows, 1)
}

/// As [`text_table`], with the first `left` columns left-aligned and the rest right-aligned.
pub fn text_table_left(headers: &[String], rows: &[Vec<String>], left: usize) -> String {
    crate::text::aligned(headers, rows, |i| i >= left)
}

/// The headers and rows of [`ci_table`], for other renderers (HTML).
pub fn ci_rows(report: &ReplicatedReport) -> (Vec<String>, Vec<Vec<String>>) {
    ci_rows_with(report, &[])
}

/// [`ci_rows`] with a column for each metric of `extra` (`--metric`), last, headed by its name;
/// an attempt number no seed reached reads 0.
pub fn ci_rows_with(
    report: &ReplicatedReport,
    extra: &[String],
) -> (Vec<String>, Vec<Vec<String>>) {
    let any = |m: &str| {
        report
            .variants
            .iter()
            .any(|v| v.replications.mean.get(m).is_some_and(|x| *x != 0.0))
    };
    let mut cols: Vec<(&str, &str)> = COLUMNS.to_vec();
    if any("unsettled") {
        cols.insert(7, ("unsettled", "unsettled"));
    }
    // Runs with a trigger (spike, outage): the recovery time, as the one-seed table shows it.
    let trigger = report.variants.iter().any(|v| {
        v.result.summary.recovered.is_some() || v.replications.mean.contains_key("recovery_ms")
    });
    if trigger {
        cols.push(("recovered", "recovered"));
        cols.push(("recovery ms", "recovery_ms"));
    }
    cols.extend(OUTCOMES.iter().filter(|(_, m)| any(m)));
    let mut headers = vec!["variant".to_string()];
    let peak = peak_header(report);
    headers.extend(cols.iter().map(|(h, _)| match *h {
        "peak/" => peak.clone(),
        h => h.to_string(),
    }));
    headers.extend(extra.iter().cloned());
    let rows = report
        .variants
        .iter()
        .map(|v| {
            let mut r = vec![v.result.name.clone()];
            r.extend(cols.iter().map(|(_, m)| cell(&v.replications, m)));
            r.extend(extra.iter().map(
                |m| match retrystorm_core::catalogue::absent_attempt_value(m) {
                    Some(x) if !v.replications.mean.contains_key(m) => pm(x, Some(0.0)),
                    _ => cell(&v.replications, m),
                },
            ));
            r
        })
        .collect();
    (headers, rows)
}

/// One row per variant, each number `mean ± 95% CI half-width` over the replications.
pub fn ci_table(report: &ReplicatedReport) -> String {
    ci_table_with(report, &[])
}

/// [`ci_table`] with a column per `--metric` ([`ci_rows_with`]).
pub fn ci_table_with(report: &ReplicatedReport, extra: &[String]) -> String {
    ci_table_labelled(report, extra, &[])
}

/// [`ci_table_with`] with the `labels` columns last (`compare --seeds N --verdict`).
pub fn ci_table_labelled(
    report: &ReplicatedReport,
    extra: &[String],
    labels: &[crate::table::Labels],
) -> String {
    let (mut h, mut r) = ci_rows_with(report, extra);
    for l in labels {
        h.push(l.header.clone());
        for (row, cell) in r.iter_mut().zip(&l.cells) {
            row.push(cell.clone());
        }
    }
    let mut out = text_table(&h, &r);
    if h.iter().any(|c| c == "recovery ms") {
        out.push_str("recovered: seeds whose goodput came back, with the 95% Wilson interval; recovery ms: - where some seed never recovered\n");
    }
    let _ = writeln!(
        out,
        "means over {} seeds ({}..={}), ± the 95% confidence half-width (Student t)",
        report.seeds.len(),
        report.seeds.first().copied().unwrap_or(0),
        report.seeds.last().copied().unwrap_or(0)
    );
    crate::replica_rows::push_replica_text(&mut out, ci_replica_grid(report));
    out
}

/// The replicas block of a replicated report (`crate::replica_rows::replica_grid`): each count
/// `mean ± half-width`. None without replicas.
pub(crate) fn ci_replica_grid(
    report: &ReplicatedReport,
) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let variants: Vec<(&str, &retrystorm_core::summary::Summary)> = report
        .variants
        .iter()
        .map(|v| (v.result.name.as_str(), &v.result.summary))
        .collect();
    crate::replica_rows::replica_grid(&variants, |i, t, k, f| {
        cell(
            &report.variants[i].replications,
            &format!("tiers.{t}.replicas.{k}.{f}"),
        )
    })
}

/// Every metric of every variant as `mean ± half-width`, grouped in lines as the one-seed view
/// (`variant_view::variant_view`) groups them; metrics not in a group follow by name.
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
        out.push_str(&replicated_view(v));
    }
    out
}

/// Lines of `(label, template)`: `{metric}` in a template is that metric's cell.
const VIEW: &[(&str, &str)] = &[
    (
        "intents",
        "{intents} (succeeded {succeeded}, failed {failed}, unsettled {unsettled})",
    ),
    (
        "attempts",
        "{attempts} (retries {retries}, amplification {amplification})",
    ),
    (
        "peak arrivals",
        "{peak_arrivals} per {bucket} bucket (peak retries {peak_retries})",
    ),
    ("last arrival", "{last_arrival_ms} ms"),
    (
        "completion ms",
        "p50 {completion_ms.p50}  p90 {completion_ms.p90}  p99 {completion_ms.p99}  p99.9 {completion_ms.p999}  max {completion_ms.max}  mean {completion_ms.mean}",
    ),
    (
        "success ms",
        "p50 {success_ms.p50}  p90 {success_ms.p90}  p99 {success_ms.p99}  p99.9 {success_ms.p999}  max {success_ms.max}  mean {success_ms.mean}",
    ),
    ("recovered", "{recovered} seeds"),
    ("recovery ms", "{recovery_ms}"),
    (
        "effects",
        "applied once {applied_once}, duplicated {duplicated}, lost {lost} (phantom {phantom}), false failures {false_failures}, {effects} effects in all",
    ),
    (
        "server",
        "arrivals {arrivals}, rejected {rejected}, dropped expired {dropped_expired}, conflicts {conflicts}, replayed {replayed}, crashes {crashes}",
    ),
    (
        "network",
        "requests lost {requests_lost}, responses lost {responses_lost}, timeouts {timeouts}, late responses {late_responses}",
    ),
    (
        "work",
        "{work_ms} ms busy, {wasted_work_ms} ms wasted (share {wasted_share})",
    ),
    (
        "queue",
        "mean wait {mean_wait_ms} ms, mean length {mean_queue_len}, mean busy workers {mean_busy}",
    ),
    (
        "throughput",
        "goodput {goodput_per_s}/s, offered {offered_per_s}/s",
    ),
    (
        "policies",
        "rate limited {rate_limited}, overloaded {overloaded}, client errors {client_errors}, budget denied {budget_denied}, throttled locally {throttled_locally}, breaker rejected {breaker_rejected}, breaker opened {breaker_opened}, Retry-After waits {retry_after_waits}",
    ),
    ("ended", "at {end_ms} ms after {events} events"),
];

/// A tier's line of [`replicated_view`]: its metrics, then each replica's.
struct Tier {
    label: String,
    items: Vec<String>,
    replicas: Vec<(usize, Vec<String>)>,
}

/// `replicas.2.errors` as (2, `errors`).
fn replica_field(field: &str) -> Option<(usize, &str)> {
    let rest = field.strip_prefix("replicas.")?;
    let (n, f) = rest.split_once('.')?;
    Some((n.parse().ok()?, f))
}

/// One replicated variant as aligned `label: values` lines.
fn replicated_view(v: &ReplicatedVariant) -> String {
    let mut used: BTreeSet<&str> = BTreeSet::new();
    let mut rows = view_rows(v, &mut used);
    rows.extend(other_rows(v, &used));
    crate::text::key_values(&rows)
}

/// The lines of [`VIEW`], each filled from the replications; the metrics they use go in `used`.
fn view_rows(v: &ReplicatedVariant, used: &mut BTreeSet<&str>) -> Vec<(String, String)> {
    let r = &v.replications;
    let mut rows: Vec<(String, String)> = Vec::new();
    for (label, template) in VIEW {
        let mut line = String::new();
        let mut rest = *template;
        let mut any = false;
        while let Some(open) = rest.find('{') {
            line.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let metric = &rest[open + 1..open + close];
            if metric == "bucket" {
                // The bucket is the model's, the same in every seed: a duration, as the one-seed
                // view writes it.
                used.insert("bucket_ms");
                line.push_str(&crate::fmt::duration(v.result.summary.bucket_ms));
                rest = &rest[open + close + 1..];
                continue;
            }
            used.insert(metric);
            any |= r.mean.contains_key(metric);
            line.push_str(&cell(r, metric));
            rest = &rest[open + close + 1..];
        }
        line.push_str(rest);
        if *label == "recovered" && !any {
            continue;
        }
        if *label == "recovery ms" {
            // Only runs with a trigger recover (or not); a mean needs every seed to recover.
            match (v.result.summary.recovered, any) {
                (None, false) => continue,
                (_, false) => line = "- (not every seed recovered)".into(),
                _ => {}
            }
        }
        rows.push((label.to_string(), line));
    }
    rows
}

/// The metrics [`VIEW`] did not show: per-tier metrics grouped by tier (replicas under it), then
/// every other one on its own line.
fn other_rows(v: &ReplicatedVariant, used: &BTreeSet<&str>) -> Vec<(String, String)> {
    let r = &v.replications;
    let mut rows: Vec<(String, String)> = Vec::new();
    // Per-tier metrics (`tiers.0.served`): one line per tier, named as the tier is; a replicated
    // tier's replicas (`tiers.0.replicas.2.errors`) each a line under it, in replica order.
    let mut tiers: Vec<Tier> = Vec::new();
    for k in r.mean.keys() {
        if used.contains(k.as_str()) {
            continue;
        }
        let mut parts = k.splitn(3, '.');
        if let (Some("tiers"), Some(i), Some(field)) = (parts.next(), parts.next(), parts.next())
            && let Ok(i) = i.parse::<usize>()
        {
            let name = v
                .result
                .summary
                .tiers
                .get(i)
                .map_or_else(|| i.to_string(), |t| t.name.clone());
            let label = format!("tier {name}");
            let at = match tiers.iter().position(|t| t.label == label) {
                Some(at) => at,
                None => {
                    tiers.push(Tier {
                        label,
                        items: Vec::new(),
                        replicas: Vec::new(),
                    });
                    tiers.len() - 1
                }
            };
            let tier = &mut tiers[at];
            if let Some((replica, field)) = replica_field(field) {
                // The replica's index is its position: no line of its own.
                if field == "replica" {
                    continue;
                }
                let item = format!("{} {}", field.replace('_', " "), cell(r, k));
                match tier.replicas.iter_mut().find(|(n, _)| *n == replica) {
                    Some((_, items)) => items.push(item),
                    None => tier.replicas.push((replica, vec![item])),
                }
                continue;
            }
            let item = format!("{} {}", field.replace('_', " "), cell(r, k));
            tier.items.push(item);
            continue;
        }
        rows.push((k.replace(['_', '.'], " "), cell(r, k)));
    }
    for mut t in tiers {
        rows.push((t.label, t.items.join(", ")));
        t.replicas.sort_by_key(|(n, _)| *n);
        rows.extend(
            t.replicas
                .into_iter()
                .map(|(n, items)| (format!("  replica {n}"), items.join(", "))),
        );
    }
    rows
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
