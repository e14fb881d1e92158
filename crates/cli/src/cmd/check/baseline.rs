//! `check --baseline old.json [--tolerance 5%]`: rerun the model with the baseline's seeds and
//! fail when a metric got worse than in the saved report (and, with `[[expect]]` tables, when an
//! expectation fails, as plain `check` does).

use super::timing;
use crate::args::CheckArgs;
use crate::error::CliError;
use crate::run::{replicate, run_all};
use crate::verdict::{Checked, evaluate, render};
use retrystorm_core::expect::Expectation;
use retrystorm_core::load::Scenario;
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_report::baseline::{self, DEFAULT_METRICS, Tolerance};
use retrystorm_report::to_json_replicated as replicated_json;
use std::fmt::Write as _;
use std::path::Path;

pub fn check(
    a: &CheckArgs,
    scenario: &Scenario,
    path: &Path,
    exps: &[Expectation],
) -> Result<(), CliError> {
    let name = path.display().to_string();
    let tol = Tolerance::parse(&a.tolerance)
        .map_err(|e| CliError::Input(format!("--tolerance {}: {e}", a.tolerance)))?;
    let text = crate::output::read_text(path, "the --baseline report", 1 << 30)?;
    let old =
        baseline::read(&text).map_err(|e| CliError::Input(format!("--baseline {name}: {e}")))?;
    let metrics = metrics(a)?;
    if old.model != scenario.name {
        eprintln!(
            "warning: --baseline {name} is a report of model `{}`, this is `{}`",
            old.model, scenario.name
        );
    }
    // The baseline's seeds unless the flags say otherwise.
    let seed = a.model.seed.unwrap_or(old.seed);
    let n = if a.model.seeds > 1 {
        a.model.seeds
    } else {
        old.seeds
    };
    let new = baseline::read(&rerun(a, scenario, seed, n)?)
        .map_err(|e| CliError::Output(format!("this run: {e}")))?;
    let results = baseline::compare(&old, &new, &metrics, tol);
    let noisy = results.iter().filter(|c| baseline::within_noise(c)).count();
    let shown = Shown {
        heading: format!(
            "{} against {name} ({} seed{} from {seed}, tolerance {})",
            scenario.name,
            n,
            if n == 1 { "" } else { "s" },
            a.tolerance
        ),
        notes: notes(&old, &new, (seed, n), &metrics, (noisy, results.len())),
        results,
        tolerance: tol,
    };
    // --quiet: only the failures and the verdict; --md to stdout replaces the plain report.
    let quiet = crate::progress::quiet();
    let to_stdout = super::md_to_stdout(a);
    if !to_stdout {
        crate::output::print(&shown.plain(quiet))?;
    }
    if quiet && noisy > 0 {
        eprintln!("{}", too_few_seeds(noisy, shown.results.len(), n));
    }
    let mut checked = Vec::new();
    if !exps.is_empty() {
        let seeds = stats::replication_seeds(seed, n);
        checked = evaluate(
            scenario,
            &a.model,
            exps,
            &seeds,
            timing(a),
            crate::run::ctrl_c(),
        )?;
        if !to_stdout {
            crate::output::print(&render(&checked, quiet))?;
        }
    }
    let outcome = outcome(&name, &old, &new, &metrics, &shown.results, &checked);
    if let Some(p) = &a.junit {
        let incomplete = match &outcome {
            Err(CliError::Incomplete(why)) => Some(why.as_str()),
            _ => None,
        };
        let cases = crate::verdict::BaselineCases {
            compared: &shown.results,
            tolerance: tol,
            incomplete,
        };
        crate::output::write(
            crate::output::Out::new("--junit", p),
            &crate::verdict::junit(&scenario.name, &checked, Some(&cases)),
        )?;
    }
    if let Some(p) = &a.md {
        crate::output::write(
            crate::output::Out::new("--md", p),
            &shown.markdown(&checked, &outcome),
        )?;
    }
    let line = outcome?;
    if !to_stdout {
        println!("{line}");
    }
    Ok(())
}

/// `--metric` names (checked), or the default metrics a baseline compares.
fn metrics(a: &CheckArgs) -> Result<Vec<String>, CliError> {
    if a.metrics.is_empty() {
        return Ok(DEFAULT_METRICS.iter().map(|m| m.to_string()).collect());
    }
    for m in &a.metrics {
        retrystorm_core::expect::check_metric(m)
            .map_err(|e| CliError::Input(format!("--metric {m}: {e}")))?;
    }
    Ok(a.metrics.clone())
}

/// Reruns every variant from `seed` (`n` replications when more than one), as the report's JSON.
fn rerun(a: &CheckArgs, scenario: &Scenario, seed: u64, n: u32) -> Result<String, CliError> {
    if n > 1 {
        return Ok(replicated_json(&replicate(
            &scenario.name,
            &scenario.variants,
            seed,
            n,
            a.model.jobs,
        )?));
    }
    let runs: Vec<(&Model, u64)> = scenario.variants.iter().map(|m| (m, seed)).collect();
    Ok(retrystorm_report::to_json(&RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: run_all(&runs, a.model.jobs)?,
    }))
}

/// The notes under the heading: other seeds than the baseline's, what either side lacks, and
/// the hint when changes passed as seed noise.
fn notes(
    old: &baseline::Side,
    new: &baseline::Side,
    (seed, n): (u64, u32),
    metrics: &[String],
    (noisy, compared): (usize, usize),
) -> Vec<String> {
    let mut notes = Vec::new();
    if (old.seed, old.seeds) != (seed, n) {
        notes.push(format!(
            "note: the baseline used {} seed{} from {}; differences include seed noise",
            old.seeds,
            if old.seeds == 1 { "" } else { "s" },
            old.seed
        ));
    }
    for m in baseline::missing(old, new)
        .into_iter()
        .chain(baseline::not_numbers(old, metrics))
    {
        notes.push(format!("note: {m}"));
    }
    if noisy > 0 {
        notes.push(too_few_seeds(noisy, compared, n));
    }
    notes
}

/// The verdict: a regression or a failed expectation fails; a gate that compares nothing
/// (another model's report, renamed variants, metrics it lacks) or less than its baseline
/// holds proves nothing, so it fails with its own exit code.
fn outcome(
    name: &str,
    old: &baseline::Side,
    new: &baseline::Side,
    metrics: &[String],
    results: &[baseline::Compared],
    checked: &[Checked],
) -> Result<String, CliError> {
    let regressed = results.iter().filter(|c| c.regressed).count();
    let failed_exps = checked.iter().filter(|c| !c.outcome.passed).count();
    let held = baseline::held(old, metrics);
    if regressed + failed_exps > 0 {
        Err(CliError::Failed(format!(
            "{regressed} of {} metrics regressed against {name}{}",
            results.len(),
            if failed_exps > 0 {
                format!(", {failed_exps} expectations failed")
            } else {
                String::new()
            }
        )))
    } else if results.is_empty() || results.len() < held {
        let mut why = baseline::missing(old, new);
        why.extend(baseline::not_numbers(old, metrics));
        let why = if why.is_empty() {
            "this run lacks some of its metrics".to_string()
        } else {
            why.join("; ")
        };
        Err(CliError::Incomplete(format!(
            "--baseline {name}: compared {} of the {} values it holds (variant x metric): {why}; a baseline of this model, its variants and these metrics is needed",
            results.len(),
            held
        )))
    } else {
        Ok(format!("no metric regressed ({} compared)", results.len()))
    }
}

/// The comparison as reported: its heading, notes and compared values.
struct Shown {
    heading: String,
    notes: Vec<String>,
    results: Vec<baseline::Compared>,
    tolerance: Tolerance,
}

impl Shown {
    /// The plain report on stdout; `quiet` keeps only the regressions.
    fn plain(&self, quiet: bool) -> String {
        let mut text = String::new();
        if !quiet {
            let _ = writeln!(text, "{}", self.heading);
            for l in &self.notes {
                let _ = writeln!(text, "{l}");
            }
        }
        let shown: Vec<baseline::Compared> = self
            .results
            .iter()
            .filter(|c| !quiet || c.regressed)
            .cloned()
            .collect();
        text.push_str(&baseline::render(&shown, self.tolerance));
        text
    }

    /// The `--md` report: the comparison, the expectations and the verdict line.
    fn markdown(&self, checked: &[Checked], outcome: &Result<String, CliError>) -> String {
        let mut md = format!("### {}\n\n", self.heading);
        for l in &self.notes {
            let _ = writeln!(md, "{l}\n");
        }
        md.push_str(&baseline::markdown(&self.results));
        if !checked.is_empty() {
            md.push('\n');
            md.push_str(&crate::verdict::markdown(checked));
        }
        let line = match outcome {
            Ok(l) => super::md_verdict(true, l),
            Err(CliError::Failed(l)) | Err(CliError::Incomplete(l)) => super::md_verdict(false, l),
            Err(e) => super::md_verdict(false, &e.to_string()),
        };
        let _ = writeln!(md, "\n{line}");
        md
    }
}

/// The hint when metrics got worse beyond the tolerance yet passed as seed noise: at a few seeds
/// the interval of a change is wide (at 5 seeds a +297% p99 passed; at 20 it failed).
fn too_few_seeds(noisy: usize, compared: usize, seeds: u32) -> String {
    format!(
        "hint: {noisy} of {compared} metrics got worse beyond the tolerance but pass because the 95% interval of the change includes 0 at {seeds} seed{}; with more seeds (e.g. --seeds 20, against a baseline saved with as many) a real change stands out from the noise",
        if seeds == 1 { "" } else { "s" }
    )
}
