//! The writers of a run's report: the table on stdout and every `--json`, `--csv`, `--md` and
//! chart file of `run` and `compare` (and the replicated report of `--seeds N`), through
//! [`crate::output`].

use crate::args::{ModelArgs, OutputArgs};
use crate::{error::CliError, output};
use retrystorm_core::model::Model;
use retrystorm_core::summary::{ReplicatedReport, RunReport};
use retrystorm_report as report;
use retrystorm_report::export::{ExportManager, Format, Results};
use std::path::PathBuf;

/// Whether an output path means standard output (`-`, `/dev/stdout`, ...).
pub fn is_stdout(p: &std::path::Path) -> bool {
    output::resolve(p) == Ok(output::Dest::Stdout)
}

/// The file outputs of `run` and `compare`: each flag, the format it exports and its path, in
/// the order they are checked, rendered and written.
fn exports(o: &OutputArgs) -> [(&'static str, Format, &Option<PathBuf>); 10] {
    [
        ("--json", Format::Json, &o.json),
        ("--csv", Format::Csv, &o.csv),
        ("--svg", Format::LoadSvg, &o.svg),
        ("--outcomes-svg", Format::OutcomesSvg, &o.outcomes_svg),
        ("--cdf-svg", Format::CdfSvg, &o.cdf_svg),
        ("--tiers-csv", Format::TiersCsv, &o.tiers_csv),
        ("--tiers-svg", Format::TiersSvg, &o.tiers_svg),
        ("--replicas-csv", Format::ReplicasCsv, &o.replicas_csv),
        ("--replicas-svg", Format::ReplicasSvg, &o.replicas_svg),
        ("--md", Format::Markdown, &o.md),
    ]
}

/// The outputs of `run`/`compare`, as (flag, path).
pub fn outputs(o: &OutputArgs) -> Vec<output::Out<'_>> {
    exports(o)
        .into_iter()
        .filter_map(|(flag, _, p)| p.as_deref().map(|p| output::Out::new(flag, p)))
        .collect()
}

/// Checks outputs before anything runs (see [`output::check`]); the model file (or the sweep
/// file `report` and `map` read in its place) is an input. Once the model is loaded, its trace
/// and imported files are inputs too: [`output::refuse_inputs`] then refuses them as outputs.
pub fn check_outputs(outs: &[output::Out], args: &ModelArgs) -> Result<(), CliError> {
    let what = if crate::sweep_file::looks_like_sweep(&args.model) {
        "the sweep file"
    } else {
        "the model file"
    };
    output::check(outs, &[(what, args.model.as_path())])
}

/// `--metric` names, checked before anything runs (with a did-you-mean).
pub fn check_column_metrics(out: &OutputArgs) -> Result<(), CliError> {
    for m in &out.metrics {
        retrystorm_core::expect::check_metric(m)
            .map_err(|e| CliError::Input(format!("--metric {m}: {e}")))?;
    }
    Ok(())
}

/// As [`emit_with`], for `--seeds N`: the JSON is the replicated report (it adds `seeds` and
/// `replications`), the Markdown the means with their intervals; the CSV and charts show the
/// means (series and CDF of the first replication).
pub fn emit_replicated(
    rep: &ReplicatedReport,
    out: &OutputArgs,
    table: String,
    models: &[Model],
) -> Result<(), CliError> {
    let seeds = u32::try_from(rep.seeds.len()).unwrap_or(u32::MAX);
    emit_results(
        &rep.to_run_report(),
        Some(rep),
        out,
        table,
        false,
        models,
        seeds,
    )
}

/// Prints the table (unless `quiet` or an output goes to stdout) and writes the requested files.
pub fn emit_with(
    rep: &RunReport,
    out: &OutputArgs,
    table: String,
    quiet: bool,
    models: &[Model],
) -> Result<(), CliError> {
    emit_results(rep, None, out, table, quiet, models, 1)
}

/// Renders every requested file through the report crate's [`ExportManager`] first, so a
/// failing chart leaves no output half-written; then prints the table, unless `quiet` or a text
/// output goes to stdout in its place; then writes the files. The numbers are the means of
/// `seeds` replications (the charts' titles say so).
fn emit_results(
    rep: &RunReport,
    replicated: Option<&ReplicatedReport>,
    out: &OutputArgs,
    table: String,
    quiet: bool,
    models: &[Model],
    seeds: u32,
) -> Result<(), CliError> {
    let results = Results {
        report: rep,
        replicated,
        metrics: &out.metrics,
        load: crate::charts::load_options(out, models, seeds),
        charts: crate::charts::chart_options(models, seeds),
        replicas: crate::charts::replica_chart_options(models, seeds),
    };
    let mut manager = ExportManager::default();
    for (flag, format, path) in exports(out) {
        if let Some(p) = path {
            manager.add(format, output::Out::new(flag, p));
        }
    }
    let files = manager
        .render(&results)
        .map_err(|e| CliError::Output(e.to_string()))?;
    let replaced = files
        .iter()
        .any(|(format, o, _)| format.is_text() && is_stdout(o.path));
    if !quiet && !replaced {
        output::print(&format!(
            "{} ({})\n{table}",
            rep.model,
            report::fmt::seeds_label(rep.seed, seeds)
        ))?;
    }
    for (_, o, text) in files {
        output::write(o, &text)?;
    }
    Ok(())
}
