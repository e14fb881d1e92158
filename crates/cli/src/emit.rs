//! The writers of a run's report: the table on stdout and every `--json`, `--csv`, `--md` and
//! chart file of `run` and `compare` (and the replicated report of `--seeds N`), through
//! [`crate::output`].

use crate::args::{ModelArgs, OutputArgs};
use crate::{error::CliError, output};
use retrystorm_core::model::Model;
use retrystorm_core::summary::{ReplicatedReport, RunReport};
use retrystorm_report as report;

/// Whether an output path means standard output (`-`, `/dev/stdout`, ...).
pub fn is_stdout(p: &std::path::Path) -> bool {
    output::resolve(p) == Ok(output::Dest::Stdout)
}

/// The outputs of `run`/`compare`, as (flag, path).
pub fn outputs<'a>(o: &'a OutputArgs) -> Vec<output::Out<'a>> {
    let mut v = Vec::new();
    let mut add = |flag: &'static str, p: &'a Option<std::path::PathBuf>| {
        if let Some(p) = p {
            v.push(output::Out::new(flag, p));
        }
    };
    add("--json", &o.json);
    add("--csv", &o.csv);
    add("--svg", &o.svg);
    add("--outcomes-svg", &o.outcomes_svg);
    add("--cdf-svg", &o.cdf_svg);
    add("--tiers-csv", &o.tiers_csv);
    add("--tiers-svg", &o.tiers_svg);
    add("--replicas-csv", &o.replicas_csv);
    add("--replicas-svg", &o.replicas_svg);
    add("--md", &o.md);
    v
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

/// The replicated report as pretty JSON: a superset of the plain report's keys.
pub fn replicated_json(rep: &ReplicatedReport) -> String {
    let mut s = serde_json::to_string_pretty(rep).expect("a report always serializes");
    s.push('\n');
    s
}

/// As [`emit`], for `--seeds N`: the JSON adds `seeds` and `replications`; the CSV and charts
/// show the means (series and CDF of the first replication).
pub fn emit_replicated(
    rep: &ReplicatedReport,
    out: &OutputArgs,
    table: String,
    models: &[Model],
) -> Result<(), CliError> {
    let plain = rep.to_run_report();
    let json = out.json.as_ref().map(|_| replicated_json(rep));
    let no_json = OutputArgs {
        json: None,
        ..out.clone()
    };
    let json_to_stdout = out.json.as_deref().is_some_and(is_stdout);
    let md = out
        .md
        .as_ref()
        .map(|_| report::markdown::ci_table_with(rep, &out.metrics));
    let no_md = OutputArgs {
        md: None,
        ..no_json
    };
    let md_to_stdout = out.md.as_deref().is_some_and(is_stdout);
    emit_seeds(
        &plain,
        &no_md,
        table,
        json_to_stdout || md_to_stdout,
        models,
        u32::try_from(rep.seeds.len()).unwrap_or(u32::MAX),
    )?;
    if let (Some(p), Some(m)) = (&out.md, md) {
        output::write(output::Out::new("--md", p), &m)?;
    }
    if let (Some(p), Some(j)) = (&out.json, json) {
        output::write(output::Out::new("--json", p), &j)?;
    }
    Ok(())
}

/// Prints the table (unless `quiet` or an output goes to stdout) and writes the requested files.
pub fn emit_with(
    rep: &RunReport,
    out: &OutputArgs,
    table: String,
    quiet: bool,
    models: &[Model],
) -> Result<(), CliError> {
    emit_seeds(rep, out, table, quiet, models, 1)
}

/// [`emit_with`] for a report whose numbers are the means of `seeds` replications (the
/// charts' titles say so).
fn emit_seeds(
    rep: &RunReport,
    out: &OutputArgs,
    table: String,
    quiet: bool,
    models: &[Model],
    seeds: u32,
) -> Result<(), CliError> {
    let chart_opt = crate::charts::chart_options(models, seeds);
    let json_to_stdout = quiet || out.json.as_deref().is_some_and(is_stdout);
    let csv_to_stdout = out.csv.as_deref().is_some_and(is_stdout);
    let md_to_stdout = out.md.as_deref().is_some_and(is_stdout);
    // Render everything first, so a failing chart leaves no output half-written.
    let mut files = Vec::new();
    if let Some(p) = &out.json {
        files.push((output::Out::new("--json", p), report::to_json(rep)));
    }
    if let Some(p) = &out.csv {
        files.push((
            output::Out::new("--csv", p),
            report::series_csv(rep).map_err(|e| CliError::Output(format!("csv: {e}")))?,
        ));
    }
    if let Some(p) = &out.md {
        files.push((
            output::Out::new("--md", p),
            report::markdown::comparison_table_with(rep, &out.metrics),
        ));
    }
    if let Some(p) = &out.svg {
        let opt = crate::charts::load_options(out, models, seeds);
        files.push((
            output::Out::new("--svg", p),
            report::load_chart_with(rep, &opt)
                .map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.outcomes_svg {
        files.push((
            output::Out::new("--outcomes-svg", p),
            report::outcome_chart_opts(rep, &chart_opt)
                .map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.cdf_svg {
        files.push((
            output::Out::new("--cdf-svg", p),
            report::cdf_chart_opts(rep, report::XScale::Auto, &chart_opt)
                .map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.tiers_csv {
        files.push((
            output::Out::new("--tiers-csv", p),
            report::tiers_csv(rep).map_err(|e| CliError::Output(format!("csv: {e}")))?,
        ));
    }
    if let Some(p) = &out.tiers_svg {
        files.push((
            output::Out::new("--tiers-svg", p),
            report::tiers_chart_opts(rep, &chart_opt)
                .map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.replicas_csv {
        files.push((
            output::Out::new("--replicas-csv", p),
            report::replicas_csv(rep).map_err(|e| CliError::Output(format!("csv: {e}")))?,
        ));
    }
    if let Some(p) = &out.replicas_svg {
        files.push((
            output::Out::new("--replicas-svg", p),
            report::replicas_chart_opts(rep, &crate::charts::replica_chart_options(models, seeds))
                .map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    let tiers_csv_to_stdout = out.tiers_csv.as_deref().is_some_and(is_stdout);
    let replicas_csv_to_stdout = out.replicas_csv.as_deref().is_some_and(is_stdout);
    if !json_to_stdout
        && !csv_to_stdout
        && !md_to_stdout
        && !tiers_csv_to_stdout
        && !replicas_csv_to_stdout
    {
        output::print(&format!(
            "{} ({})\n{table}",
            rep.model,
            report::fmt::seeds_label(rep.seed, seeds)
        ))?;
    }
    for (o, text) in files {
        output::write(o, &text)?;
    }
    Ok(())
}
