//! `retrystorm validate`: every published comparison in one command ("How it is kept
//! true"). Each experiment is a shipped model (or a textbook queue) run over its seeds; each case
//! compares one metric of one variant with a cited reference and prints reference, ours, the
//! reference's noise and a verdict.
//!
//! A case passes when the reference lies in our 95% interval widened by the reference's own
//! noise (its 95% interval when it is a mean over runs or a share, a run's 95% spread when it is
//! one run, nothing when it is exact). A case that differs is a finding: it is reported (exit 1),
//! never tuned away; `known` marks the findings docs/validation.md already explains.

use crate::args::ValidateArgs;
use crate::emit::is_stdout;
use crate::error::CliError;
use crate::output;
use crate::run::run_all;
use crate::text::plural;
use retrystorm_core::catalogue;
use retrystorm_core::load;
use retrystorm_core::model::Model;
use retrystorm_core::stats::{self, Estimate};
use retrystorm_core::study::verdict::chain;
use retrystorm_core::summary::Summary;
use serde::Serialize;

mod experiment;
mod fanout;
mod queueing;
mod replicas;
mod suite;

use experiment::*;
use suite::*;

/// One case's numbers and verdict, as printed and as JSON.
#[derive(Serialize)]
struct Row {
    experiment: &'static str,
    variant: &'static str,
    what: &'static str,
    reference: String,
    source: &'static str,
    ours: String,
    /// The reference's own 95% noise as `[below, above]` its value.
    noise: String,
    seeds: u32,
    pass: bool,
    known: Option<&'static str>,
}

fn value_of(v: Value, s: &Summary) -> Result<f64, String> {
    let m = catalogue::metrics(s);
    let get = |k: &str| {
        m.get(k)
            .copied()
            .ok_or_else(|| format!("the run has no metric `{k}`"))
    };
    match v {
        Value::Metric(k) => get(k),
        Value::Ratio(a, b) => Ok(get(a)? / get(b)?),
        Value::Chain(k) => Err(format!("`{k}` is the chain's, not a run's")),
    }
}

/// A field of the model's Markov chain, solved (no run).
fn chain_value(m: &Model, field: &str) -> Result<f64, String> {
    let c = chain::solve(m).map_err(|e| e.to_string())?;
    serde_json::to_value(&c)
        .ok()
        .and_then(|v| v.get(field)?.as_f64())
        .ok_or_else(|| format!("the chain has no number `{field}`"))
}

/// A number with 4 significant digits, no exponent for ordinary sizes.
fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.digits$}")
}

fn judge(c: &Case, ours: &[f64], paired: Option<&[f64]>) -> (String, String, String, bool) {
    let est = Estimate::of(ours);
    let half = if est.half_width.is_finite() {
        est.half_width
    } else {
        0.0
    };
    let (lo, hi) = (est.mean - half, est.mean + half);
    let ours_txt = format!("{} ± {}", num(est.mean), num(half));
    // Absolute slack for values that are exact up to floating-point rounding.
    let eps = 1e-9 * est.mean.abs().max(1.0);
    match c.reference {
        Reference::Exact(r) => (
            num(r),
            ours_txt,
            "exact".into(),
            lo - eps <= r && r <= hi + eps,
        ),
        Reference::Mean { value, sd, n } => {
            let rh = stats::t975(n as usize - 1) * sd / f64::from(n).sqrt();
            (
                format!("{} (mean of {n}, sd {})", num(value), num(sd)),
                ours_txt,
                format!("± {}", num(rh)),
                lo - rh - eps <= value && value <= hi + rh + eps,
            )
        }
        Reference::OneRun(r) => {
            let rh = 1.96 * stats::sample_sd(ours);
            (
                format!("{} (one run)", num(r)),
                ours_txt,
                format!("± {} (one run's spread)", num(rh)),
                lo - rh - eps <= r && r <= hi + rh + eps,
            )
        }
        Reference::Share { count, n } => {
            let p = f64::from(count) / f64::from(n);
            let (rlo, rhi) = stats::wilson(count, n);
            let k = ours.iter().filter(|x| **x > 0.5).count() as u32;
            let m = ours.len() as u32;
            let (olo, ohi) = stats::wilson(k, m);
            (
                format!("{count}/{n}"),
                format!("{k}/{m} ({:.0}-{:.0}%)", olo * 100.0, ohi * 100.0),
                format!("{:.0}-{:.0}%", rlo * 100.0, rhi * 100.0),
                olo - (p - rlo) - eps <= p && p <= ohi + (rhi - p) + eps,
            )
        }
        Reference::Within { value, share } => (
            num(value),
            num(est.mean),
            format!("± {:.0}%", share * 100.0),
            (est.mean - value).abs() <= share * value.abs(),
        ),
        Reference::Order { other, below } => {
            let theirs = paired.expect("an Order case has its other variant's values");
            let diff: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| a - b).collect();
            let d = Estimate::of(&diff);
            let ok = if below {
                d.mean + d.half_width < 0.0
            } else {
                d.mean - d.half_width > 0.0
            };
            let word = if below { "below" } else { "above" };
            (
                format!("{word} {other}"),
                format!(
                    "{} vs {} (diff {} ± {})",
                    num(est.mean),
                    num(stats::mean(theirs)),
                    num(d.mean),
                    num(d.half_width)
                ),
                "a ranking".into(),
                ok,
            )
        }
    }
}

/// Runs the experiments (`quick`: only the cheap ones) and returns one row per case.
fn run_suite(a: &ValidateArgs) -> Result<Vec<Row>, CliError> {
    let mut rows = Vec::new();
    let experiments: Vec<Experiment> = suite()
        .into_iter()
        .filter(|e| !a.quick || e.quick)
        .filter(|e| a.only.as_deref().is_none_or(|o| e.id == o))
        .collect();
    if experiments.is_empty() {
        let ids: Vec<&str> = suite().iter().map(|e| e.id).collect();
        return Err(CliError::Input(format!(
            "--only: no experiment {:?}; the experiments are: {}",
            a.only.as_deref().unwrap_or(""),
            ids.join(", ")
        )));
    }
    for e in experiments {
        let sets = e
            .sets
            .iter()
            .map(|s| load::Override::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| CliError::Input(format!("{}: {err}", e.id)))?;
        let sc = load::load(e.file, &(e.model)(), &sets)
            .map_err(|err| CliError::Input(format!("{}: {err}", e.id)))?;
        let models: Vec<&Model> = sc.variants.iter().collect();
        let seeds = stats::replication_seeds(1, e.seeds);
        let runs: Vec<(&Model, u64)> = models
            .iter()
            .flat_map(|m| seeds.iter().map(move |s| (*m, *s)))
            .collect();
        let results = run_all(&runs, a.jobs)?;
        let values = |variant: &str, v: Value| -> Result<Vec<f64>, CliError> {
            let i = models
                .iter()
                .position(|m| m.name == variant)
                .or_else(|| (models.len() == 1).then_some(0))
                .ok_or_else(|| CliError::Input(format!("{}: no variant {variant}", e.id)))?;
            if let Value::Chain(field) = v {
                let x = chain_value(models[i], field)
                    .map_err(|err| CliError::Input(format!("{}: {err}", e.id)))?;
                return Ok(vec![x]);
            }
            results[i * seeds.len()..(i + 1) * seeds.len()]
                .iter()
                .map(|r| value_of(v, &r.summary))
                .collect::<Result<_, _>>()
                .map_err(|err| CliError::Input(format!("{}: {err}", e.id)))
        };
        for c in &e.cases {
            let ours = values(c.variant, c.value)?;
            let other = match c.reference {
                Reference::Order { other, .. } => Some(values(other, c.value)?),
                _ => None,
            };
            let (reference, ours, noise, pass) = judge(c, &ours, other.as_deref());
            rows.push(Row {
                experiment: e.title,
                variant: c.variant,
                what: c.what,
                reference,
                source: c.source,
                ours,
                noise,
                seeds: e.seeds,
                pass,
                known: c.known,
            });
        }
    }
    Ok(rows)
}

fn verdict(r: &Row) -> &'static str {
    match (r.pass, r.known.is_some()) {
        (true, false) => "matches",
        (true, true) => "matches (was a known finding)",
        (false, true) => "differs (known finding)",
        (false, false) => "DIFFERS",
    }
}

/// The rows as a GitHub-flavoured markdown table (docs/validation.md's summary).
fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| experiment | variant | metric | reference | ours (mean ± 95% CI) | reference noise | seeds | verdict | source |\n\
         |---|---|---|---:|---:|---:|---:|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.experiment,
            r.variant,
            r.what,
            r.reference,
            r.ours,
            r.noise,
            r.seeds,
            verdict(r),
            r.source
        ));
    }
    out
}

fn text(rows: &[Row]) -> String {
    let mut out = String::new();
    let mut last = "";
    for r in rows {
        if r.experiment != last {
            out.push_str(&format!("\n{}\n", r.experiment));
            last = r.experiment;
        }
        out.push_str(&format!(
            "  {:<9} {:<18} {:<34} ref {:<28} ours {:<34} noise {:<26} [{}]\n",
            verdict(r).split(' ').next().unwrap_or(""),
            r.variant,
            r.what,
            r.reference,
            r.ours,
            r.noise,
            r.source
        ));
    }
    out
}

/// The block of docs/validation.md the suite owns.
const BEGIN: &str = "<!-- validate:begin (retrystorm validate --docs docs/validation.md) -->";
const END: &str = "<!-- validate:end -->";

pub fn validate(a: ValidateArgs) -> Result<(), CliError> {
    let mut outs = Vec::new();
    if let Some(p) = &a.json {
        outs.push(output::Out::new("--json", p));
    }
    if let Some(p) = &a.md {
        outs.push(output::Out::new("--md", p));
    }
    if let Some(p) = &a.docs {
        outs.push(output::Out::new("--docs", p));
    }
    output::check(&outs, &[])?;
    // The docs file must already hold the block, so a typo'd path fails before the runs.
    let docs = match &a.docs {
        Some(p) => {
            let t = std::fs::read_to_string(p)
                .map_err(|e| CliError::Input(format!("--docs {}: {e}", p.display())))?;
            let (Some(b), Some(e)) = (t.find(BEGIN), t.find(END)) else {
                return Err(CliError::Input(format!(
                    "--docs {}: no block to replace: it needs the lines {BEGIN} and {END}",
                    p.display()
                )));
            };
            Some((p, t, b, e))
        }
        None => None,
    };
    let rows = run_suite(&a)?;
    let table = markdown(&rows);
    if let Some(p) = &a.json {
        let mut j = serde_json::to_string_pretty(&rows).expect("JSON");
        j.push('\n');
        output::write(output::Out::new("--json", p), &j)?;
    }
    if let Some(p) = &a.md {
        output::write(output::Out::new("--md", p), &table)?;
    }
    if let Some((p, t, b, e)) = docs {
        let new = format!("{}{BEGIN}\n{table}{}", &t[..b], &t[e..]);
        output::write(output::Out::new("--docs", p), &new)?;
    }
    if a.json.as_deref().is_none_or(|p| !is_stdout(p)) {
        output::print(&text(&rows))?;
    }
    let differ: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.pass && r.known.is_none())
        .collect();
    let n = rows.len() as u64;
    if differ.is_empty() {
        if !crate::progress::quiet() {
            eprintln!("{}", agreement(&rows));
        }
        Ok(())
    } else {
        Err(CliError::Failed(format!(
            "{} of {} differ from their reference: {}",
            differ.len(),
            plural(n, "comparison"),
            differ
                .iter()
                .map(|r| format!("{} / {} / {}", r.experiment, r.variant, r.what))
                .collect::<Vec<_>>()
                .join("; ")
        )))
    }
}

/// The closing line when nothing differs unexpectedly: `31 of 32 comparisons agree with their
/// reference, 1 known difference` (a known difference is a finding, documented, not a pass).
fn agreement(rows: &[Row]) -> String {
    let n = rows.len() as u64;
    let agree = rows.iter().filter(|r| r.pass).count() as u64;
    let known = n - agree;
    if known == 0 {
        format!("{} agree with their reference", plural(n, "comparison"))
    } else {
        format!(
            "{agree} of {} agree with their reference, {}",
            plural(n, "comparison"),
            plural(known, "known difference")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_counts_known_differences_apart() {
        let row = |pass, known| Row {
            experiment: "e",
            variant: "v",
            what: "w",
            reference: String::new(),
            source: "s",
            ours: String::new(),
            noise: String::new(),
            seeds: 1,
            pass,
            known,
        };
        let mut rows: Vec<Row> = (0..31).map(|_| row(true, None)).collect();
        assert_eq!(
            agreement(&rows),
            "31 comparisons agree with their reference"
        );
        rows.push(row(false, Some("documented")));
        assert_eq!(
            agreement(&rows),
            "31 of 32 comparisons agree with their reference, 1 known difference"
        );
    }

    #[test]
    fn a_reference_inside_the_widened_interval_passes_and_one_outside_does_not() {
        let c = |r| case("v", "m", Value::Metric("x"), r);
        let ours = [9.0, 10.0, 11.0, 10.0];
        assert!(judge(&c(Reference::Exact(10.0)), &ours, None).3);
        assert!(!judge(&c(Reference::Exact(12.0)), &ours, None).3);
        // One run at 12: the spread of a run (1.96 x 0.816) widens the interval enough.
        assert!(judge(&c(Reference::OneRun(12.0)), &ours, None).3);
        assert!(!judge(&c(Reference::OneRun(14.0)), &ours, None).3);
        let shares = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert!(judge(&c(Reference::Share { count: 27, n: 100 }), &shares, None).3);
        assert!(!judge(&c(Reference::Share { count: 100, n: 100 }), &shares, None).3);
        let other = [20.0, 21.0, 19.0, 20.0];
        let below = c(Reference::Order {
            other: "o",
            below: true,
        });
        assert!(judge(&below, &ours, Some(&other)).3);
        assert!(!judge(&below, &other, Some(&ours)).3);
    }

    #[test]
    fn every_case_names_a_variant_its_model_has() {
        for e in suite() {
            let sc = load::load(e.file, &(e.model)(), &[]).unwrap();
            for c in &e.cases {
                let names: Vec<&str> = sc.variants.iter().map(|m| m.name.as_str()).collect();
                assert!(
                    names.contains(&c.variant) || names.len() == 1,
                    "{}: {} not in {names:?}",
                    e.id,
                    c.variant
                );
                assert!(!c.source.is_empty(), "{}: {} cites nothing", e.id, c.what);
            }
        }
    }
}
