//! One self-contained HTML report: inline CSS, SVG and a few lines of script, no network loads.
//!
//! Charts are interactive without a server: a variant has one colour in every chart, so each
//! element drawn in variant `i`'s colour is tagged `v{i}` and titled with its name (an SVG
//! `<title>`: the browser's tooltip), and the variant buttons above the charts (or a click on a
//! line) hide and show a variant in every chart at once. Without script, everything shows.
//!
//! Sections have stable ids, for readers and tests: `model`, `summary`, `expectations`,
//! `load-chart`, `cdf-chart`, `outcome-chart` (model reports) and `sweep-table`, `sweep-chart`
//! (sweep reports).

use std::fmt::Write as _;

use retrystorm_core::summary::{ReplicatedReport, RunReport};

use crate::ci::{ci_rows, short};
use crate::error::ReportError;
use crate::fmt::shell_word;
use crate::sweep::chart::sweep_chart;
use crate::sweep::header::SweepHeader;
use crate::sweep::table::{PointRow, sweep_rows};

/// One expectation's result, as the report shows it.
#[derive(Clone, Debug)]
pub struct ExpectRow {
    pub expectation: String,
    pub variant: String,
    pub passed: bool,
    pub seen: String,
    /// `file:line` or the `--expect` flag.
    pub source: String,
    pub reproduce: Option<String>,
}

/// What a model report shows.
pub struct ModelReport<'a> {
    /// The model file as given (path), and its text.
    pub file: &'a str,
    pub text: &'a str,
    /// The runs (means when replicated).
    pub report: &'a RunReport,
    /// The replications, when `--seeds N` > 1.
    pub replicated: Option<&'a ReplicatedReport>,
    pub expectations: &'a [ExpectRow],
    /// The model's `description` (may be empty).
    pub description: &'a str,
    /// The load chart's options (the model's windows), see [`crate::svg::LoadOptions`].
    pub load: crate::svg::LoadOptions,
    /// The command that writes this report again (with its `-o`, seeds and `--set` flags).
    pub command: &'a str,
}

/// The tool and version that wrote a report: `retrystorm 0.1.0`.
pub const TOOL: &str = concat!("retrystorm ", env!("CARGO_PKG_VERSION"));

/// Escapes text for HTML element content and attribute values (html-escape's quoted-attribute
/// escaping: `&`, `<`, `>`, `"` and `'`).
pub fn escape(s: &str) -> String {
    html_escape::encode_quoted_attribute(s).into_owned()
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1250px;color:#222;padding:0 1rem}\
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}\
table{border-collapse:collapse;font-size:.9rem;font-variant-numeric:tabular-nums}\
th,td{border:1px solid #ddd;padding:.3rem .6rem;text-align:right}th{background:#f5f5f5}\
td:first-child,th:first-child{text-align:left}\
pre{background:#f7f7f7;border:1px solid #e4e4e4;padding:.8rem;overflow:auto;font-size:.85rem}\
.pass{color:#1b7a3a;font-weight:bold}.fail{color:#c0392b;font-weight:bold}\
figure{margin:1rem 0}svg{max-width:100%;height:auto}\
#variant-toggles button{font:inherit;margin:.2rem;padding:.2rem .6rem;border:1px solid #bbb;border-radius:.3rem;background:#fff;cursor:pointer}\
#variant-toggles button[aria-pressed=false]{opacity:.4;text-decoration:line-through}\
#variant-toggles .sw{display:inline-block;width:1.4em;height:.7em;margin-right:.4em;vertical-align:middle}\
svg [class^=v]{cursor:pointer}";

/// Hides and shows variant `i` (class `off-i` on the body); a click on a chart element of a
/// variant hides it.
const SCRIPT: &str = "function rsToggle(i){var b=document.body.classList;b.toggle('off-'+i);\
document.querySelectorAll('#variant-toggles button[data-v=\"'+i+'\"]').forEach(function(e){\
e.setAttribute('aria-pressed',b.contains('off-'+i)?'false':'true')})}\
document.querySelectorAll('figure svg [class^=v]').forEach(function(e){\
e.addEventListener('click',function(){rsToggle(e.getAttribute('class').slice(1))})});";

/// A page with extra CSS rules and an inline script at the end of the body.
fn page_with(title: &str, body: &str, css: &str, script: &str) -> String {
    let script = if script.is_empty() {
        String::new()
    } else {
        format!("<script>{script}</script>\n")
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}{css}</style>\n</head>\n<body>\n{body}{script}</body>\n</html>\n",
        escape(title)
    )
}

/// The variants' names and colours (`#RRGGBB`, as the charts write them), in report order.
fn variant_colours<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<(String, String)> {
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let c = crate::style::variant(i);
            (name.clone(), format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2))
        })
        .collect()
}

/// Tags every element of `svg` drawn in a variant's colour with its class (`v0`, `v1`, ...) and
/// a `<title>` naming it. Variants past the eighth share a colour, and so a class and a title,
/// with an earlier one.
fn tag_variants(svg: &str, variants: &[(String, String)]) -> String {
    let mut out = String::with_capacity(svg.len() * 11 / 10);
    for line in svg.split_inclusive('\n') {
        let trimmed = line.trim_end();
        let shape = [
            "<polyline ",
            "<path ",
            "<rect ",
            "<circle ",
            "<polygon ",
            "<line ",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p));
        let found = shape.then(|| {
            variants.iter().position(|(_, c)| {
                trimmed.contains(&format!("stroke=\"{c}\""))
                    || trimmed.contains(&format!("fill=\"{c}\""))
            })
        });
        match (found.flatten(), trimmed.strip_suffix("/>")) {
            (Some(i), Some(open)) => {
                let tag = &open[1..open.find(' ').unwrap_or(1)];
                let names: Vec<&str> = variants
                    .iter()
                    .skip(i)
                    .step_by(crate::style::VARIANTS.len())
                    .map(|(n, _)| n.as_str())
                    .collect();
                let _ = writeln!(
                    out,
                    "{open} class=\"v{i}\"><title>{}</title></{tag}>",
                    escape(&names.join(", "))
                );
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// The variant buttons, and the CSS that hides a variant whose button is off.
fn toggles(variants: &[(String, String)]) -> (String, String) {
    let n = variants.len().min(crate::style::VARIANTS.len());
    let mut b = String::from(
        "<section id=\"variant-toggles\">\n<p>Variants (click one, or a line in a chart, to hide or show it in every chart; hover a line for its name):</p>\n<p>",
    );
    let mut css = String::new();
    for (i, (name, colour)) in variants.iter().enumerate().take(n) {
        let _ = write!(
            b,
            "<button type=\"button\" data-v=\"{i}\" aria-pressed=\"true\" onclick=\"rsToggle({i})\"><span class=\"sw\" style=\"background:{colour}\"></span>{}</button>",
            escape(name)
        );
        let _ = write!(css, ".off-{i} svg .v{i}{{display:none}}");
    }
    b.push_str("</p>\n</section>\n");
    (b, css)
}

/// An HTML table; the first column is left-aligned.
pub fn table(id: &str, headers: &[String], rows: &[Vec<String>]) -> String {
    let mut o = format!("<table id=\"{id}\">\n<thead><tr>");
    for h in headers {
        let _ = write!(o, "<th>{}</th>", escape(h));
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            let _ = write!(o, "<td>{}</td>", escape(c));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
    o
}

/// An SVG document made fit to inline: the XML prolog dropped.
fn inline_svg(svg: &str) -> &str {
    let s = svg.trim_start();
    if s.starts_with("<?xml") {
        s.find("?>").map_or(s, |i| s[i + 2..].trim_start())
    } else {
        s
    }
}

fn figure(id: &str, title: &str, svg: &str) -> String {
    format!(
        "<section id=\"{id}\">\n<h2>{}</h2>\n<figure>\n{}\n</figure>\n</section>\n",
        escape(title),
        inline_svg(svg).trim_end()
    )
}

fn summary_rows(r: &RunReport) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = [
        "variant",
        "intents",
        "attempts",
        "amplif.",
        "peak/",
        "peak retries",
        "succeeded",
        "failed",
        "p50 ms",
        "p99 ms",
        "applied once",
        "duplicated",
        "lost",
        "phantom",
        "false failures",
    ]
    .map(String::from)
    .to_vec();
    // The peak column named as the text table names it: `peak/10 ms`.
    let first = r.variants.first().map(|v| v.summary.bucket_ms);
    let peak = match first.filter(|b| r.variants.iter().all(|v| v.summary.bucket_ms == *b)) {
        Some(b) => format!("peak/{}", crate::fmt::duration(b)),
        None => "peak/bucket".to_string(),
    };
    let headers: Vec<String> = headers
        .into_iter()
        .map(|h| if h == "peak/" { peak.clone() } else { h })
        .collect();
    // As the text table: a recovery column only when the model has a trigger.
    let recovery = r.variants.iter().any(|v| v.summary.recovered.is_some());
    let mut headers = headers;
    if recovery {
        headers.push("recovery ms".into());
    }
    let rows = r
        .variants
        .iter()
        .map(|v| {
            let s = &v.summary;
            let mut row = vec![
                v.name.clone(),
                short(s.intents as f64),
                short(s.attempts as f64),
                crate::fmt::times(s.amplification),
                short(s.peak_arrivals as f64),
                short(s.peak_retries as f64),
                short(s.succeeded as f64),
                short(s.failed as f64),
                short(s.completion_ms.p50),
                short(s.completion_ms.p99),
                short(s.applied_once as f64),
                short(s.duplicated as f64),
                short(s.lost as f64),
                short(s.phantom as f64),
                short(s.false_failures as f64),
            ];
            if recovery {
                row.push(match (s.recovered, s.recovery_ms) {
                    (Some(true), Some(ms)) => short(ms),
                    (Some(false), _) => "never".into(),
                    _ => "-".into(),
                });
            }
            row
        })
        .collect();
    (headers, rows)
}

/// The report of one model: its text, the summary table, the expectations, and the load,
/// completion-CDF and outcome charts.
pub fn model_report(m: &ModelReport) -> Result<String, ReportError> {
    let r = m.report;
    let mut b = model_intro(m);
    b.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    let (h, rows) = match m.replicated {
        Some(rep) => ci_rows(rep),
        None => summary_rows(r),
    };
    b.push_str(&table("summary-table", &h, &rows));
    b.push_str("</section>\n");
    b.push_str(&expectations_section(m.expectations));
    let (charts, css) = model_charts(m)?;
    b.push_str(&charts);
    let _ = writeln!(
        b,
        "<section id=\"model\">\n<h2>Model</h2>\n<pre>{}</pre>\n</section>",
        escape(m.text)
    );
    Ok(page_with(
        &format!("retrystorm: {}", r.model),
        &b,
        &css,
        SCRIPT,
    ))
}

/// The report's heading: the model, its description, the tool, the seeds and the command that
/// writes the report again.
fn model_intro(m: &ModelReport) -> String {
    let r = m.report;
    let mut b = String::new();
    let _ = writeln!(b, "<h1>retrystorm report: {}</h1>", escape(&r.model));
    if !m.description.is_empty() {
        let _ = writeln!(b, "<p class=\"description\">{}</p>", escape(m.description));
    }
    let _ = writeln!(b, "<p class=\"tool\">Written by {TOOL}.</p>");
    let seeds = match m.replicated {
        Some(rep) => format!(
            "{} seeds ({}..={}); numbers are means ± the 95% confidence half-width (Student t)",
            rep.seeds.len(),
            rep.seeds.first().copied().unwrap_or(0),
            rep.seeds.last().copied().unwrap_or(0)
        ),
        None => format!("seed {}", r.seed),
    };
    let _ = writeln!(
        b,
        "<p>Model file <code>{}</code>, {}. Reproduce with <code>{}</code>.</p>",
        escape(m.file),
        escape(&seeds),
        escape(m.command)
    );
    b
}

/// The expectations section: how many hold, then one row each (a failure with the command that
/// reproduces it).
fn expectations_section(expectations: &[ExpectRow]) -> String {
    let mut b = String::from("<section id=\"expectations\">\n<h2>Expectations</h2>\n");
    if expectations.is_empty() {
        b.push_str("<p>The model has no <code>[[expect]]</code> tables.</p>\n");
    } else {
        let passed = expectations.iter().filter(|e| e.passed).count();
        let _ = writeln!(b, "<p>{passed} of {} hold.</p>", expectations.len());
        b.push_str("<table id=\"expectations-table\">\n<thead><tr><th>result</th><th>expectation</th><th>variant</th><th>seen</th><th>where</th></tr></thead>\n<tbody>\n");
        for e in expectations {
            let (class, word) = if e.passed {
                ("pass", "pass")
            } else {
                ("fail", "FAIL")
            };
            let mut seen = escape(&e.seen);
            if let Some(cmd) = &e.reproduce {
                let _ = write!(seen, "<br>reproduce: <code>{}</code>", escape(cmd));
            }
            let _ = writeln!(
                b,
                "<tr><td class=\"{class}\">{word}</td><td>{}</td><td>{}</td><td>{seen}</td><td>{}</td></tr>",
                escape(&e.expectation),
                escape(&e.variant),
                escape(&e.source)
            );
        }
        b.push_str("</tbody>\n</table>\n");
    }
    b.push_str("</section>\n");
    b
}

/// The variant buttons and the charts (load, CDF, outcomes, the tiers of a path of several and
/// the replicas of a replicated tier), each variant's elements tagged so the buttons hide them;
/// and the buttons' CSS.
fn model_charts(m: &ModelReport) -> Result<(String, String), ReportError> {
    let r = m.report;
    let charts_note = if m.replicated.is_some() {
        " (first replication)"
    } else {
        ""
    };
    let colours = variant_colours(r.variants.iter().map(|v| &v.name));
    let (mut b, css) = toggles(&colours);
    b.push_str(&figure(
        "load-chart",
        &format!("Arrivals at the server{charts_note}"),
        &tag_variants(&crate::svg::load_chart_with(r, &m.load)?, &colours),
    ));
    b.push_str(&figure(
        "cdf-chart",
        &format!("Completion time CDF{charts_note}"),
        &tag_variants(&crate::svg::cdf_chart(r)?, &colours),
    ));
    b.push_str(&figure(
        "outcome-chart",
        "Outcomes per intent",
        &crate::svg::outcome_chart(r)?,
    ));
    // A path of several tiers: each tier's load, one panel per tier.
    if r.variants.iter().any(|v| v.summary.tiers.len() > 1) {
        b.push_str(&figure(
            "tiers-chart",
            &format!("Arrivals at each tier of the request path{charts_note}"),
            &tag_variants(&crate::svg::tiers_chart(r)?, &colours),
        ));
    }
    // A replicated tier: each replica's load, one panel per variant and tier (its colours are
    // the replicas', so the variant buttons leave it alone).
    if r.variants.iter().any(has_replica_series) {
        b.push_str(&figure(
            "replicas-chart",
            &format!("Arrivals at each replica{charts_note}"),
            &crate::svg::replicas_chart(r)?,
        ));
    }
    Ok((b, css))
}

/// Whether a variant kept per-replica series (a tier of 2 to 64 replicas).
fn has_replica_series(v: &retrystorm_core::summary::VariantResult) -> bool {
    !v.series.replicas.is_empty() || v.series.tiers.iter().any(|t| !t.replicas.is_empty())
}

/// The report of a sweep: the aggregated table and the sweep chart of `metric`.
pub fn sweep_report(
    header: &SweepHeader,
    rows: &[PointRow],
    metric: &str,
) -> Result<String, ReportError> {
    let mut b = String::new();
    let _ = writeln!(b, "<h1>retrystorm sweep: {}</h1>", escape(&header.model));
    let axes: Vec<String> = header
        .grid
        .axes
        .iter()
        .map(|a| format!("{} = {}", a.key, a.values.join(", ")))
        .collect();
    let _ = writeln!(
        b,
        "<p>{} runs: {} × variants {} × {} seeds.</p>",
        header.jobs,
        escape(&axes.join(" × ")),
        escape(&header.grid.variants.join(", ")),
        header.grid.seeds.len()
    );
    let mut cmd = vec!["retrystorm".to_string(), "sweep".into(), "MODEL".into()];
    for a in &header.grid.axes {
        cmd.push("--vary".into());
        cmd.push(shell_word(&format!("{}={}", a.key, a.values.join(","))));
    }
    for s in &header.sets {
        cmd.push("--set".into());
        cmd.push(shell_word(s));
    }
    if let Some(first) = header.grid.seeds.first() {
        cmd.push(format!(
            "--seed {first} --seeds {}",
            header.grid.seeds.len()
        ));
    }
    cmd.push(format!("--metric {}", shell_word(metric)));
    cmd.push("--out sweep.jsonl --svg sweep.svg".into());
    let _ = writeln!(
        b,
        "<p>Reproduce (MODEL is the model file, fingerprint <code>{}</code>): <code>{}</code></p>",
        escape(&header.model_hash),
        escape(&cmd.join(" "))
    );
    let colours = variant_colours(&header.grid.variants);
    let (buttons, css) = toggles(&colours);
    b.push_str(&buttons);
    b.push_str(&figure(
        "sweep-chart",
        &format!("{} by parameter", crate::fmt::metric_label(metric, None)),
        &tag_variants(&sweep_chart(header, rows, metric)?, &colours),
    ));
    b.push_str("<section id=\"sweep-table\">\n<h2>Results per point</h2>\n");
    let (h, c) = sweep_rows(header, rows, metric);
    b.push_str(&table("sweep-results", &h, &c));
    b.push_str("</section>\n");
    Ok(page_with(
        &format!("retrystorm sweep: {}", header.model),
        &b,
        &css,
        SCRIPT,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> Vec<(String, String)> {
        vec![
            ("no-jitter".into(), "#4E79A7".into()),
            ("a<b".into(), "#F28E2B".into()),
        ]
    }

    #[test]
    fn variant_elements_get_a_class_and_a_title() {
        let svg = "<svg>\n<rect x=\"0\" fill=\"#FFFFFF\"/>\n<polyline fill=\"none\" stroke=\"#F28E2B\" points=\"1,2\"/>\n<circle cx=\"1\" fill=\"#4E79A7\"/>\n<text fill=\"#4E79A7\">\nx\n</text>\n</svg>\n";
        let out = tag_variants(svg, &two());
        assert!(out.contains("<rect x=\"0\" fill=\"#FFFFFF\"/>"), "{out}");
        assert!(out.contains(
            "<polyline fill=\"none\" stroke=\"#F28E2B\" points=\"1,2\" class=\"v1\"><title>a&lt;b</title></polyline>"
        ));
        assert!(out.contains(
            "<circle cx=\"1\" fill=\"#4E79A7\" class=\"v0\"><title>no-jitter</title></circle>"
        ));
        assert!(
            out.contains("<text fill=\"#4E79A7\">"),
            "text stays as it is"
        );
    }

    #[test]
    fn toggles_have_a_button_and_a_rule_per_variant() {
        let (html, css) = toggles(&two());
        assert_eq!(html.matches("<button").count(), 2);
        assert!(html.contains("a&lt;b"));
        assert_eq!(
            css,
            ".off-0 svg .v0{display:none}.off-1 svg .v1{display:none}"
        );
    }
}
