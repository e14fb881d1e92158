//! Plain-text views for stdout: a comparison table with one row per variant, and a key: value
//! view of one variant.

use std::fmt::Write as _;

use retrystorm_core::summary::{Ended, RunReport, Summary, VariantResult};

use crate::fmt;

#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

struct Column {
    header: String,
    align: Align,
    cells: Vec<String>,
}

impl Column {
    fn num(
        header: impl Into<String>,
        rows: &[&VariantResult],
        f: impl Fn(&Summary) -> String,
    ) -> Self {
        Column {
            header: header.into(),
            align: Align::Right,
            cells: rows.iter().map(|v| f(&v.summary)).collect(),
        }
    }
}

/// The bucket width shared by every variant, if they agree.
fn common_bucket_ms(report: &RunReport) -> Option<f64> {
    let first = report.variants.first()?.summary.bucket_ms;
    report
        .variants
        .iter()
        .all(|v| v.summary.bucket_ms == first)
        .then_some(first)
}

/// The comparison table: one row per variant, numbers right-aligned, then notes for variants that
/// did not settle. The request-path outcome columns (lost, once, duplicated, phantom, false
/// failures) appear only when some effect ran somewhere and some variant lost, duplicated or
/// misreported an intent; the
/// unsettled column only when some variant left intents unsettled.
///
/// ```text
/// variant   intents  attempts  amplif.  peak/10 ms  peak retries  succeeded  failed  p50 ms  p99 ms
/// --------  -------  --------  -------  ----------  ------------  ---------  ------  ------  ------
/// baseline   10,000    24,100    2.41x         812           700      9,800     200    12.3     851
/// ```
pub fn comparison_table(report: &RunReport) -> String {
    comparison_table_with(report, &[])
}

/// [`comparison_table`] with a column for each metric of `extra` (a dotted summary metric name,
/// `--metric`), last, headed by its name: an integer grouped, another number as
/// [`fmt::num`], `-` where the run did not produce it.
pub fn comparison_table_with(report: &RunReport, extra: &[String]) -> String {
    let (cols, outcomes) = comparison_columns(report, extra);
    let rows: Vec<&VariantResult> = report.variants.iter().collect();
    let any = |f: fn(&Summary) -> u64| rows.iter().any(|v| f(&v.summary) != 0);
    let (headers, cells) = grid(&cols, rows.len());
    let mut out = crate::text::aligned(&headers, &cells, |i| cols[i].align == Align::Right);

    if !outcomes && any(|s| s.applied_once) {
        out.push_str("every settled intent's effect was applied exactly once\n");
    }
    out.push_str(&notes(report));
    if let Some((h, rows)) = crate::replica_rows::plain_replica_grid(report) {
        out.push('\n');
        out.push_str(&crate::text::aligned(
            &h,
            &rows,
            crate::replica_rows::replica_right,
        ));
    }
    out
}

/// The comparison table as GitHub-flavoured markdown: the same columns and cells as
/// [`comparison_table`], numbers right-aligned (`---:`), `|` in names escaped; then the same notes
/// as a paragraph.
pub fn comparison_markdown(report: &RunReport) -> String {
    comparison_markdown_with(report, &[])
}

/// [`comparison_markdown`] with the `extra` metric columns of [`comparison_table_with`].
pub fn comparison_markdown_with(report: &RunReport, extra: &[String]) -> String {
    let (cols, _) = comparison_columns(report, extra);
    let (headers, rows) = grid(&cols, report.variants.len());
    let right: Vec<bool> = cols.iter().map(|c| c.align == Align::Right).collect();
    let mut out = format!(
        "**{}** (seed {})\n\n",
        crate::gfm::escape(&report.model),
        report.seed
    );
    out.push_str(&crate::gfm::table(&headers, &right, &rows));
    let notes = notes(report);
    if !notes.is_empty() {
        out.push('\n');
        for l in notes.lines() {
            out.push_str(&crate::gfm::escape(l));
            out.push_str("  \n");
        }
    }
    if let Some((h, rows)) = crate::replica_rows::plain_replica_grid(report) {
        out.push('\n');
        out.push_str(&crate::replica_rows::replica_markdown(&h, &rows));
    }
    out
}

/// The headers and the `n` rows of cells of `cols`.
fn grid(cols: &[Column], n: usize) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = cols.iter().map(|c| c.header.clone()).collect();
    let rows = (0..n)
        .map(|r| cols.iter().map(|c| c.cells[r].clone()).collect())
        .collect();
    (headers, rows)
}

/// The columns of the comparison table, and whether the outcome columns are among them.
fn comparison_columns(report: &RunReport, extra: &[String]) -> (Vec<Column>, bool) {
    let rows: Vec<&VariantResult> = report.variants.iter().collect();
    let any = |f: fn(&Summary) -> u64| rows.iter().any(|v| f(&v.summary) != 0);

    let peak_header = match common_bucket_ms(report) {
        Some(b) => format!("peak/{}", fmt::duration(b)),
        None => "peak/bucket".to_string(),
    };

    let mut cols = vec![
        Column {
            header: "variant".to_string(),
            align: Align::Left,
            cells: rows.iter().map(|v| v.name.clone()).collect(),
        },
        Column::num("intents", &rows, |s| fmt::int(s.intents)),
        Column::num("attempts", &rows, |s| fmt::int(s.attempts)),
        Column::num("amplif.", &rows, |s| fmt::times(s.amplification)),
        Column::num(peak_header, &rows, |s| fmt::int(s.peak_arrivals)),
        Column::num("peak retries", &rows, |s| fmt::int(s.peak_retries)),
        Column::num("succeeded", &rows, |s| fmt::int(s.succeeded)),
        Column::num("failed", &rows, |s| fmt::int(s.failed)),
    ];
    if any(|s| s.unsettled) {
        cols.push(Column::num("unsettled", &rows, |s| fmt::int(s.unsettled)));
    }
    cols.push(Column::num("p50 ms", &rows, |s| {
        fmt::ms(s.completion_ms.p50)
    }));
    cols.push(Column::num("p99 ms", &rows, |s| {
        fmt::ms(s.completion_ms.p99)
    }));
    // Runs with a trigger (spike, outage): how long goodput took to come back after it, or never.
    if rows.iter().any(|v| v.summary.recovered.is_some()) {
        cols.push(Column::num("recovery ms", &rows, |s| {
            match (s.recovered, s.recovery_ms) {
                (Some(true), Some(ms)) => fmt::ms(ms),
                (Some(false), _) => "never".to_string(),
                _ => "-".to_string(),
            }
        }));
    }
    // A model whose server never applies an effect (the herd's `fail = "always"`) has nothing to
    // say about outcomes: every intent would read "lost".
    let outcomes = (any(|s| s.effects) || any(|s| s.phantom))
        && (any(|s| s.lost)
            || any(|s| s.duplicated)
            || any(|s| s.phantom)
            || any(|s| s.false_failures));
    if outcomes {
        cols.push(Column::num("lost", &rows, |s| fmt::int(s.lost)));
        cols.push(Column::num("once", &rows, |s| fmt::int(s.applied_once)));
        cols.push(Column::num("duplicated", &rows, |s| fmt::int(s.duplicated)));
        cols.push(Column::num("phantom", &rows, |s| fmt::int(s.phantom)));
        cols.push(Column::num("false failures", &rows, |s| {
            fmt::int(s.false_failures)
        }));
    }
    for m in extra {
        cols.push(Column::num(m.as_str(), &rows, |s| metric_cell(s, m)));
    }

    (cols, outcomes)
}

/// One metric of a summary as a table cell: integers grouped, `-` when absent.
pub(crate) fn metric_cell(s: &Summary, name: &str) -> String {
    match retrystorm_core::expect::metric(s, name) {
        Ok(v) if v.fract() == 0.0 && v >= 0.0 && v < 2f64.powi(63) => fmt::int(v as u64),
        Ok(v) => fmt::num(v),
        Err(_) => "-".to_string(),
    }
}

/// Notes for variants that did not settle.
fn notes(report: &RunReport) -> String {
    let mut out = String::new();
    for v in &report.variants {
        let s = &v.summary;
        match s.ended {
            Ended::Settled => {}
            Ended::Horizon => {
                let _ = writeln!(
                    out,
                    "note: {} reached the horizon at {} ms with {} intents unsettled",
                    v.name,
                    fmt::ms(s.end_ms),
                    fmt::int(s.unsettled)
                );
            }
            Ended::MaxEvents => {
                let _ = writeln!(
                    out,
                    "note: {} stopped at the max_events guard after {} events; its totals are partial",
                    v.name,
                    fmt::int(s.events)
                );
            }
            Ended::Interrupted => {
                let _ = writeln!(
                    out,
                    "note: {} truncated by Ctrl-C at {} ms with {} intents unsettled; its totals are partial",
                    v.name,
                    fmt::ms(s.end_ms),
                    fmt::int(s.unsettled)
                );
            }
        }
    }
    out
}

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

/// A `key: value` row of [`variant_view`].
pub(crate) type Row = (String, String);

/// One variant as an aligned `key: value` list.
pub fn variant_view(v: &VariantResult) -> String {
    let s = &v.summary;
    let mut rows = vec![("variant".into(), v.name.clone())];
    rows.extend(load_rows(s));
    rows.extend(attempt_row(s));
    rows.extend(outcome_rows(s));
    rows.extend(crate::path_rows::path_rows(s));
    rows.extend(extra_rows(s));
    aligned(&rows)
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

/// The rows as `key: value` lines, the values aligned one space after the longest key.
fn aligned(rows: &[Row]) -> String {
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 1;
    let mut out = String::new();
    for (k, val) in rows {
        let key = format!("{k}:");
        let _ = writeln!(out, "{key:<width$} {val}");
    }
    out
}

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
