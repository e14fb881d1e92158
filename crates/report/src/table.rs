//! The comparison table for stdout (and as Markdown): one row per variant, numbers
//! right-aligned, then notes for variants that did not settle. One variant's `key: value` view
//! is `variant_view`.

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
    comparison_table_labelled(report, extra, &[])
}

/// A column of words the caller computed for each row (`compare --verdict`), shown last.
pub struct Labels {
    pub header: String,
    /// One cell per variant, in the report's order.
    pub cells: Vec<String>,
}

/// [`comparison_table_with`] with the `labels` columns after the metric columns.
pub fn comparison_table_labelled(
    report: &RunReport,
    extra: &[String],
    labels: &[Labels],
) -> String {
    let (mut cols, outcomes) = comparison_columns(report, extra);
    cols.extend(labels.iter().map(|l| Column {
        header: l.header.clone(),
        align: Align::Left,
        cells: l.cells.clone(),
    }));
    let rows: Vec<&VariantResult> = report.variants.iter().collect();
    let any = |f: fn(&Summary) -> u64| rows.iter().any(|v| f(&v.summary) != 0);
    let (headers, cells) = grid(&cols, rows.len());
    let mut out = crate::text::aligned(&headers, &cells, |i| cols[i].align == Align::Right);

    if !outcomes && any(|s| s.applied_once) {
        out.push_str("every settled intent's effect was applied exactly once\n");
    }
    out.push_str(&notes(report));
    crate::replica_rows::push_replica_text(
        &mut out,
        crate::replica_rows::plain_replica_grid(report),
    );
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
