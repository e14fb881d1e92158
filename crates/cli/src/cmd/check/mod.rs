//! `retrystorm check`: run a model's expectations over one or more seeds.

mod baseline;

use crate::args::CheckArgs;
use crate::emit::is_stdout;
use crate::model_args::{base_seed, load_model};
use crate::text::plural;
use crate::verdict::{
    Timing, evaluate, expectations, junit, junit_unloaded, markdown, render, verdict,
};
use crate::{error::CliError, output, progress};
use retrystorm_core::stats;
use std::fmt::Write as _;

/// The files `check` writes: `--junit` and `--md`.
fn outputs(a: &CheckArgs) -> Vec<output::Out<'_>> {
    let mut outs = Vec::new();
    if let Some(p) = &a.junit {
        outs.push(output::Out::new("--junit", p));
    }
    if let Some(p) = &a.md {
        outs.push(output::Out::new("--md", p));
    }
    outs
}

/// Whether the runs are timed for the JUnit file (`--junit-time`).
fn timing(a: &CheckArgs) -> Timing {
    if a.junit_time {
        Timing::PerVariant
    } else {
        Timing::Untimed
    }
}

/// Whether `--md` goes to stdout: then it replaces the plain report there.
fn md_to_stdout(a: &CheckArgs) -> bool {
    a.md.as_deref().is_some_and(is_stdout)
}

pub fn check(a: CheckArgs) -> Result<(), CliError> {
    let outs = outputs(&a);
    if !outs.is_empty() {
        let mut inputs = vec![("the model file", a.model.model.as_path())];
        if let Some(b) = &a.baseline {
            inputs.push(("the --baseline file", b.as_path()));
        }
        output::check(&outs, &inputs)?;
    }
    let file = a.model.model.display().to_string();
    let scenario = load_model(&a.model).map_err(|e| unloaded(&a, &file, e))?;
    output::refuse_inputs(&outs)?;
    let exps = expectations(&scenario, &file, &a.expects).map_err(|e| unloaded(&a, &file, e))?;
    // From here on Ctrl-C stops the runs and the outputs hold what they simulated (exit 130).
    crate::run::ctrl_c();
    crate::advice::warn_models(&scenario.variants.iter().collect::<Vec<_>>());
    if let Some(path) = &a.baseline {
        return baseline::check(&a, &scenario, path, &exps);
    }
    if exps.is_empty() {
        return Err(CliError::Input(format!(
            "{file}: no expectations; add [[expect]] tables to the model or pass --expect 'METRIC OP VALUE'"
        )));
    }
    let base = base_seed(&a.model, &scenario.base);
    let seeds = stats::replication_seeds(base, a.model.seeds);
    let results = evaluate(
        &scenario,
        &a.model,
        &exps,
        &seeds,
        timing(&a),
        crate::run::ctrl_c(),
    )?;
    let quiet = progress::quiet();
    let heading = format!(
        "{} ({} from {base})",
        scenario.name,
        plural(seeds.len() as u64, "seed")
    );
    let (failed, line) = verdict(&exps, &results);
    // Without the heading (`--quiet`, often over several files) the verdict names the model.
    let line = if quiet {
        format!("{file}: {line}")
    } else {
        line
    };
    if !md_to_stdout(&a) {
        let mut text = String::new();
        if !quiet {
            let _ = writeln!(text, "{heading}");
        }
        text.push_str(&render(&results, quiet));
        output::print(&text)?;
    }
    if let Some(p) = &a.junit {
        output::write(
            output::Out::new("--junit", p),
            &junit(&scenario.name, &results, None),
        )?;
    }
    if let Some(p) = &a.md {
        let md = format!(
            "### {heading}\n\n{}\n{}\n",
            markdown(&results),
            md_verdict(failed == 0, &line)
        );
        output::write(output::Out::new("--md", p), &md)?;
    }
    if failed > 0 {
        return Err(CliError::Failed(line));
    }
    if !md_to_stdout(&a) {
        output::print(&format!("{line}\n"))?;
    }
    Ok(())
}

/// A model that failed to load (or whose expectations are malformed) still gets its `--junit`
/// file, a test case in error saying why; the error is returned as it was.
fn unloaded(a: &CheckArgs, file: &str, e: CliError) -> CliError {
    let Some(p) = &a.junit else {
        return e;
    };
    match output::write(
        output::Out::new("--junit", p),
        &junit_unloaded(file, &e.to_string()),
    ) {
        Ok(()) => e,
        Err(w) => w,
    }
}

/// The verdict as the markdown report's last line.
fn md_verdict(passed: bool, line: &str) -> String {
    format!("**{}**: {line}", if passed { "PASS" } else { "FAIL" })
}
