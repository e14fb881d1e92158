//! One function per subcommand.

use crate::args::{Cli, Command, CompareArgs, ModelArgs, OutputArgs, RunArgs};
use crate::{CliError, output, progress};
use rayon::prelude::*;
use retrystorm_core::load::{self, Override, Scenario};
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::{
    Ended, ReplicatedReport, ReplicatedVariant, Replications, RunReport, SCHEMA_VERSION,
    VariantResult,
};
use retrystorm_report as report;

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run(a) => run(a),
        Command::Compare(a) => compare(a),
        Command::Check(a) => crate::check::check(a),
        Command::Sweep(a) => crate::sweep::sweep(a),
        Command::Merge(a) => crate::sweep::merge(a),
        Command::Report(a) => crate::html::report(a),
        Command::Init(a) => crate::init::init(a),
        Command::Completions(a) => crate::init::completions(a),
    }
}

/// Reads the model file's text, naming it in errors.
pub fn read_model(args: &ModelArgs) -> Result<(String, String), CliError> {
    let origin = args.model.display().to_string();
    let text = std::fs::read_to_string(&args.model)
        .map_err(|e| CliError::Input(format!("{origin}: cannot read the model file: {e}")))?;
    Ok((origin, text))
}

/// The `--set` flags, parsed.
pub fn overrides(args: &ModelArgs) -> Result<Vec<Override>, CliError> {
    let mut sets = args
        .sets
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(n) = args.max_events {
        sets.push(Override::parse_as(
            "--max-events",
            &format!("max_events={n}"),
        )?);
    }
    Ok(sets)
}

/// Says on stderr which runs stopped before their workload finished.
fn warn_truncated(results: &[VariantResult]) {
    for r in results.iter().filter(|r| r.summary.truncated) {
        let s = &r.summary;
        let why = match s.ended {
            Ended::MaxEvents => {
                format!("stopped at the max_events guard after {} events", s.events)
            }
            _ => format!("reached the horizon at {} ms", s.end_ms),
        };
        eprintln!(
            "warning: {}: {why} with {} of {} intents unsettled; its summary is partial (\"truncated\": true)",
            r.name, s.unsettled, s.intents
        );
    }
}

/// Reads and resolves the model file with its `--set` overrides.
pub fn load_model(args: &ModelArgs) -> Result<Scenario, CliError> {
    let (origin, text) = read_model(args)?;
    Ok(load::load(&origin, &text, &overrides(args)?)?)
}

/// Runs every `(model, seed)` in parallel (one per core); the result order is the input order.
/// A single run shows its progress in simulated time.
pub fn run_all(runs: &[(&Model, u64)]) -> Vec<VariantResult> {
    if let [(m, seed)] = runs {
        let horizon = m.horizon.as_millis_f64().max(1.0) as u64;
        let bar = progress::sim_bar(horizon);
        let r = retrystorm_core::run_model(m, *seed, &mut |t| {
            bar.set_position((t.as_millis_f64() as u64).min(horizon));
        });
        bar.finish_and_clear();
        warn_truncated(std::slice::from_ref(&r));
        return vec![r];
    }
    let bar = progress::bar(runs.len() as u64, "runs");
    let results: Vec<VariantResult> = runs
        .par_iter()
        .map(|(m, seed)| {
            let r = retrystorm_core::run_model(m, *seed, &mut |_| {});
            bar.inc(1);
            r
        })
        .collect();
    bar.finish_and_clear();
    warn_truncated(&results);
    results
}

/// Runs every model with every seed and aggregates each model's replications.
pub fn replicate(name: &str, models: &[Model], base_seed: u64, n: u32) -> ReplicatedReport {
    let seeds = stats::replication_seeds(base_seed, n);
    let runs: Vec<(&Model, u64)> = models
        .iter()
        .flat_map(|m| seeds.iter().map(move |s| (m, *s)))
        .collect();
    let mut results = run_all(&runs).into_iter();
    let variants = models
        .iter()
        .map(|_| {
            let reps: Vec<VariantResult> = results.by_ref().take(seeds.len()).collect();
            let summaries: Vec<&retrystorm_core::summary::Summary> =
                reps.iter().map(|r| &r.summary).collect();
            let agg = stats::aggregate(&summaries);
            let mut replications = Replications {
                n,
                ..Replications::default()
            };
            for (k, e) in &agg.estimates {
                if e.mean.is_finite() {
                    replications.mean.insert(k.clone(), e.mean);
                }
                if e.half_width.is_finite() {
                    replications.ci95.insert(k.clone(), e.half_width);
                }
            }
            let first = reps.into_iter().next().expect("at least one seed");
            ReplicatedVariant {
                result: VariantResult {
                    summary: agg.summary,
                    ..first
                },
                replications,
            }
        })
        .collect();
    ReplicatedReport {
        schema_version: SCHEMA_VERSION,
        model: name.to_string(),
        seed: base_seed,
        variants,
        seeds,
    }
}

/// The variant named `v` (or the base model), with a listing of the names when there is none.
pub fn pick_variant(scenario: &Scenario, v: Option<&str>, file: &str) -> Result<Model, CliError> {
    match v {
        None => Ok(scenario.base.clone()),
        Some(v) => scenario
            .variants
            .iter()
            .find(|m| m.name == v)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = scenario.variants.iter().map(|m| m.name.as_str()).collect();
                let hint = load::closest(v, &names)
                    .map(|b| format!("did you mean `{b}`? "))
                    .unwrap_or_default();
                CliError::Input(format!(
                    "--variant {v}: no such variant in {file}; {hint}variants: {}",
                    names.join(", ")
                ))
            }),
    }
}

fn run(a: RunArgs) -> Result<(), CliError> {
    let scenario = load_model(&a.model)?;
    let file = a.model.model.display().to_string();
    let model = pick_variant(&scenario, a.variant.as_deref(), &file)?;
    let seed = a.model.seed.unwrap_or(model.seed);
    if a.model.seeds > 1 {
        let rep = replicate(
            &scenario.name,
            std::slice::from_ref(&model),
            seed,
            a.model.seeds,
        );
        return emit_replicated(
            &rep,
            &a.output,
            report::ci_view(&rep),
            std::slice::from_ref(&model),
        );
    }
    let results = run_all(&[(&model, seed)]);
    let rep = RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: results,
    };
    emit(
        &rep,
        &a.output,
        report::run_view(&rep),
        std::slice::from_ref(&model),
    )
}

fn compare(a: CompareArgs) -> Result<(), CliError> {
    let scenario = load_model(&a.model)?;
    let models = vary(&scenario, &a.vary, &a.model)?;
    let seed = a.model.seed.unwrap_or(scenario.base.seed);
    if a.model.seeds > 1 {
        let rep = replicate(&scenario.name, &models, seed, a.model.seeds);
        return emit_replicated(&rep, &a.output, report::ci_table(&rep), &models);
    }
    let runs: Vec<(&Model, u64)> = models.iter().map(|m| (m, seed)).collect();
    let results = run_all(&runs);
    let rep = RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: results,
    };
    emit(&rep, &a.output, report::comparison_table(&rep), &models)
}

/// The replicated report as pretty JSON: a superset of the plain report's keys.
pub fn replicated_json(rep: &ReplicatedReport) -> String {
    let mut s = serde_json::to_string_pretty(rep).expect("a report always serializes");
    s.push('\n');
    s
}

/// As [`emit`], for `--seeds N`: the JSON adds `seeds` and `replications`; the CSV and charts
/// show the means (series and CDF of the first replication).
fn emit_replicated(
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
    let json_to_stdout = out.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let md = out.md.as_ref().map(|_| report::markdown::ci_table(rep));
    let no_md = OutputArgs {
        md: None,
        ..no_json
    };
    let md_to_stdout = out.md.as_ref().is_some_and(|p| p.as_os_str() == "-");
    emit_with(
        &plain,
        &no_md,
        table,
        json_to_stdout || md_to_stdout,
        models,
    )?;
    if let (Some(p), Some(m)) = (&out.md, md) {
        output::write(p, &m)?;
    }
    if let (Some(p), Some(j)) = (&out.json, json) {
        output::write(p, &j)?;
    }
    Ok(())
}

pub use retrystorm_core::sweep::split_values;

/// The file's variants crossed with every `--vary KEY=V1,V2` (each value re-validated).
fn vary(s: &Scenario, varies: &[String], args: &ModelArgs) -> Result<Vec<Model>, CliError> {
    if varies.is_empty() {
        return Ok(s.variants.clone());
    }
    let origin = args.model.display().to_string();
    let text = std::fs::read_to_string(&args.model)
        .map_err(|e| CliError::Input(format!("{origin}: {e}")))?;
    let base_sets = args
        .sets
        .iter()
        .map(|x| Override::parse(x))
        .collect::<Result<Vec<_>, _>>()?;
    // Each grid point is a list of extra overrides with a label.
    let mut points: Vec<(String, Vec<Override>)> = vec![(String::new(), Vec::new())];
    for v in varies {
        let (key, values) = v.split_once('=').ok_or_else(|| {
            CliError::Input(format!(
                "--vary {v}: expected KEY=V1,V2,..., e.g. retry.jitter=none,full"
            ))
        })?;
        let values = split_values(values);
        if values.iter().any(String::is_empty) {
            return Err(CliError::Input(format!(
                "--vary {v}: empty value in the list"
            )));
        }
        let mut next = Vec::new();
        for (label, sets) in &points {
            for val in &values {
                let o = Override::parse_as("--vary", &format!("{key}={val}"))?;
                let mut sets = sets.clone();
                sets.push(o);
                let label = if label.is_empty() {
                    format!("{key}={val}")
                } else {
                    format!("{label} {key}={val}")
                };
                next.push((label, sets));
            }
        }
        points = next;
    }
    let named = s.variants.len() > 1 || s.variants[0].name != s.base.name;
    let mut out = Vec::new();
    for (label, extra) in points {
        let sets: Vec<Override> = base_sets.iter().cloned().chain(extra).collect();
        let loaded = load::load(&origin, &text, &sets)?;
        for mut m in loaded.variants {
            m.name = if named {
                format!("{} {label}", m.name)
            } else {
                label.clone()
            };
            out.push(m);
        }
    }
    Ok(out)
}

/// Prints the table (unless JSON goes to stdout) and writes the requested files.
fn emit(
    rep: &RunReport,
    out: &OutputArgs,
    table: String,
    models: &[Model],
) -> Result<(), CliError> {
    emit_with(rep, out, table, false, models)
}

fn emit_with(
    rep: &RunReport,
    out: &OutputArgs,
    table: String,
    quiet: bool,
    models: &[Model],
) -> Result<(), CliError> {
    let json_to_stdout = quiet || out.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let csv_to_stdout = out.csv.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let md_to_stdout = out.md.as_ref().is_some_and(|p| p.as_os_str() == "-");
    // Render everything first, so a failing chart leaves no output half-written.
    let mut files = Vec::new();
    if let Some(p) = &out.json {
        files.push((p, report::to_json(rep)));
    }
    if let Some(p) = &out.csv {
        files.push((
            p,
            report::series_csv(rep).map_err(|e| CliError::Output(format!("csv: {e}")))?,
        ));
    }
    if let Some(p) = &out.md {
        files.push((p, report::markdown::comparison_table(rep)));
    }
    if let Some(p) = &out.svg {
        let opt = crate::charts::load_options(out, models);
        files.push((
            p,
            report::load_chart_with(rep, &opt)
                .map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.outcomes_svg {
        files.push((
            p,
            report::outcome_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.cdf_svg {
        files.push((
            p,
            report::cdf_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if !json_to_stdout && !csv_to_stdout && !md_to_stdout {
        println!("{} (seed {})", rep.model, rep.seed);
        print!("{table}");
    }
    for (p, text) in files {
        output::write(p, &text)?;
    }
    Ok(())
}
