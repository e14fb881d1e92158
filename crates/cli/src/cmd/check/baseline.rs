//! `check --baseline old.json [--tolerance 5%]`: rerun the model with the baseline's seeds and
//! fail when a metric got worse than in the saved report (and, with `[[expect]]` tables, when an
//! expectation fails, as plain `check` does).

use crate::CliError;
use crate::args::CheckArgs;
use crate::emit::replicated_json;
use crate::run::{replicate, run_all};
use crate::verdict::{evaluate, render};
use retrystorm_core::expect::Expectation;
use retrystorm_core::load::Scenario;
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_report::baseline::{self, DEFAULT_METRICS, Tolerance};
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
    let metrics: Vec<String> = if a.metrics.is_empty() {
        DEFAULT_METRICS.iter().map(|m| m.to_string()).collect()
    } else {
        for m in &a.metrics {
            retrystorm_core::expect::check_metric(m)
                .map_err(|e| CliError::Input(format!("--metric {m}: {e}")))?;
        }
        a.metrics.clone()
    };
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
    let json = if n > 1 {
        replicated_json(&replicate(
            &scenario.name,
            &scenario.variants,
            seed,
            n,
            a.model.jobs,
        )?)
    } else {
        let runs: Vec<(&Model, u64)> = scenario.variants.iter().map(|m| (m, seed)).collect();
        retrystorm_report::to_json(&RunReport {
            schema_version: SCHEMA_VERSION,
            model: scenario.name.clone(),
            seed,
            variants: run_all(&runs, a.model.jobs)?,
        })
    };
    let new = baseline::read(&json).map_err(|e| CliError::Output(format!("this run: {e}")))?;
    // --quiet: only the failures and the verdict.
    let quiet = crate::progress::quiet();
    if !quiet {
        println!(
            "{} against {name} ({} seed{} from {seed}, tolerance {})",
            scenario.name,
            n,
            if n == 1 { "" } else { "s" },
            a.tolerance
        );
        if (old.seed, old.seeds) != (seed, n) {
            println!(
                "note: the baseline used {} seed{} from {}; differences include seed noise",
                old.seeds,
                if old.seeds == 1 { "" } else { "s" },
                old.seed
            );
        }
        for m in baseline::missing(&old, &new) {
            println!("note: {m}");
        }
    }
    let results = baseline::compare(&old, &new, &metrics, tol);
    let shown: Vec<baseline::Compared> = results
        .iter()
        .filter(|c| !quiet || c.regressed)
        .cloned()
        .collect();
    print!("{}", baseline::render(&shown, tol));
    let regressed = results.iter().filter(|c| c.regressed).count();

    let mut failed_exps = 0;
    if !exps.is_empty() {
        let seeds = stats::replication_seeds(seed, n);
        let checked = evaluate(scenario, &a.model, exps, &seeds)?;
        failed_exps = checked.iter().filter(|c| !c.outcome.passed).count();
        print!("{}", render(&checked, quiet));
        if let Some(p) = &a.junit {
            crate::output::write(
                crate::output::Out::new("--junit", p),
                &crate::verdict::junit(&scenario.name, &checked),
            )?;
        }
    }
    if regressed + failed_exps > 0 {
        return Err(CliError::Failed(format!(
            "{regressed} of {} metrics regressed against {name}{}",
            results.len(),
            if failed_exps > 0 {
                format!(", {failed_exps} expectations failed")
            } else {
                String::new()
            }
        )));
    }
    // A gate that compares nothing (another model's report, renamed variants, metrics it lacks)
    // or less than its baseline holds proves nothing: it fails, with its own exit code.
    let held = baseline::held(&old, &metrics);
    if results.is_empty() || results.len() < held {
        let why = baseline::missing(&old, &new);
        let why = if why.is_empty() {
            "this run lacks some of its metrics".to_string()
        } else {
            why.join("; ")
        };
        return Err(CliError::Incomplete(format!(
            "--baseline {name}: compared {} of the {} values it holds (variant x metric): {why}; a baseline of this model, its variants and these metrics is needed",
            results.len(),
            held
        )));
    }
    println!("no metric regressed ({} compared)", results.len());
    Ok(())
}
