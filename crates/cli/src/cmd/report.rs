//! `retrystorm report`: an HTML report of a model (or the aggregated view of a sweep file).

use crate::args::ReportArgs;
use crate::emit::is_stdout;
use crate::model_args::{base_seed, load_model, read_model};
use crate::prepare::study_outputs;
use crate::run::{replicate, run_all};
use crate::sweep_file::{looks_like_sweep, metric_name, read_sweep, summarize};
use crate::text::plural;
use crate::verdict::{Timing, evaluate, expectations, verdict};
use crate::{error::CliError, output, progress};
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_report::fmt::shell_word;
use retrystorm_report::html::{ExpectRow, ModelReport, model_report, sweep_report};

/// How the published report names a path the user gave: an absolute one by its file name
/// alone (a report is shared; the folders of the machine that made it are not its business), a
/// relative one as given.
fn published(p: &std::path::Path) -> String {
    match p.file_name() {
        Some(name) if p.is_absolute() => name.to_string_lossy().into_owned(),
        _ => p.display().to_string(),
    }
}

/// `retrystorm report MODEL -o OUT --seed S [--seeds N] [--set ...] [--max-events N]`.
fn command(a: &ReportArgs, out: &std::path::Path, seed: u64) -> String {
    let mut w = vec![
        "retrystorm".to_string(),
        "report".into(),
        shell_word(&published(&a.model.model)),
        "-o".into(),
        shell_word(&published(out)),
        "--seed".into(),
        seed.to_string(),
    ];
    if a.model.seeds > 1 {
        w.push("--seeds".into());
        w.push(a.model.seeds.to_string());
    }
    for s in &a.model.sets {
        w.push("--set".into());
        w.push(shell_word(s));
    }
    if let Some(n) = a.model.max_events {
        w.push("--max-events".into());
        w.push(n.to_string());
    }
    w.join(" ")
}

pub fn report(a: ReportArgs) -> Result<(), CliError> {
    let outs = study_outputs(&[("--out", &a.out), ("--svg", &a.chart.svg)], &a.model)?;
    if looks_like_sweep(&a.model.model) {
        return sweep(a);
    }
    let out = a.out.clone().ok_or_else(|| {
        CliError::Input("--out: where to write the HTML report, e.g. -o report.html".into())
    })?;
    let (_, text) = read_model(&a.model)?;
    let scenario = load_model(&a.model)?;
    output::refuse_inputs(&outs)?;
    let file = a.model.model.display().to_string();
    let exps = expectations(&scenario, &file, &[])?;
    let base = base_seed(&a.model, &scenario.base);
    let (plain, replicated) = if a.model.seeds > 1 {
        let rep = replicate(
            &scenario.name,
            &scenario.variants,
            base,
            a.model.seeds,
            a.model.jobs,
        )?;
        (rep.to_run_report(), Some(rep))
    } else {
        let runs: Vec<(&Model, u64)> = scenario.variants.iter().map(|m| (m, base)).collect();
        let rep = RunReport {
            schema_version: SCHEMA_VERSION,
            model: scenario.name.clone(),
            seed: base,
            variants: run_all(&runs, a.model.jobs)?,
        };
        (rep, None)
    };
    // Expectations are evaluated on their own runs (per seed), as `check` does; the runs are
    // deterministic, so they match the tables.
    let results = if exps.is_empty() {
        Vec::new()
    } else {
        let seeds = stats::replication_seeds(base, a.model.seeds);
        evaluate(
            &scenario,
            &a.model,
            &exps,
            &seeds,
            Timing::Untimed,
            crate::run::ctrl_c(),
        )?
    };
    let (_, held) = verdict(&exps, &results);
    let shown = published(&a.model.model);
    let rows: Vec<ExpectRow> = results
        .into_iter()
        .map(|c| ExpectRow {
            expectation: c.expectation.to_string(),
            variant: c.outcome.variant.clone(),
            passed: c.outcome.passed,
            seen: c.outcome.seen(c.expectation.over),
            source: c.expectation.source.replace(&file, &shown),
            reproduce: c
                .reproduce
                .map(|r| r.replace(&shell_word(&file), &shell_word(&shown))),
        })
        .collect();
    let cmd = command(&a, &out, base);
    let html = model_report(&ModelReport {
        file: &shown,
        text: &text,
        report: &plain,
        replicated: replicated.as_ref(),
        expectations: &rows,
        description: &scenario.base.description,
        load: retrystorm_report::LoadOptions {
            windows: scenario
                .variants
                .iter()
                .map(retrystorm_report::model_windows)
                .collect(),
            ..Default::default()
        },
        command: &cmd,
    })
    .map_err(|e| CliError::Output(format!("html: {e}")))?;
    output::write(output::Out::new("--out", &out), &html)?;
    if !is_stdout(&out) && !progress::quiet() {
        let expectations = if exps.is_empty() {
            "no expectations".to_string()
        } else {
            held
        };
        output::print(&format!(
            "wrote {}: {}, {expectations}\n",
            out.display(),
            plural(plain.variants.len() as u64, "variant"),
        ))?;
    }
    Ok(())
}

/// `report SWEEP.jsonl [-o report.html] [--svg chart.svg] [--metric NAME]`.
fn sweep(a: ReportArgs) -> Result<(), CliError> {
    let f = read_sweep(&a.model.model)?;
    if f.torn {
        progress::note(&format!(
            "{}: ignoring a torn last line (an interrupted write)",
            a.model.model.display()
        ));
    }
    summarize(&f.header, &f.records, &a.chart)?;
    if let Some(out) = &a.out {
        let metric = metric_name(&a.chart)?;
        let rows = retrystorm_report::sweep::table::aggregate(&f.header, &f.records, &metric);
        let html = sweep_report(&f.header, &rows, &metric)
            .map_err(|e| CliError::Output(format!("html: {e}")))?;
        output::write(output::Out::new("--out", out), &html)?;
    }
    Ok(())
}
