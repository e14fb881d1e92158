//! One function per subcommand.

use crate::args::{CompareArgs, ModelArgs, OutputArgs, RunArgs, TraceArgs};
use crate::{CliError, output, progress};
use rayon::prelude::*;
use retrystorm_core::load::{self, Override, Scenario};
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::{
    Ended, ReplicatedReport, ReplicatedVariant, Replications, RunReport, SCHEMA_VERSION,
    VariantResult,
};
use retrystorm_core::sweep::{Axis, Grid, MAX_RUNS, parse_vary};
use retrystorm_core::time::Time;
use retrystorm_core::trace::{TraceLog, TraceOptions};
use retrystorm_report as report;

/// Reads the model file's text, naming it in errors: a regular file of at most 16 MiB in UTF-8.
pub fn read_model(args: &ModelArgs) -> Result<(String, String), CliError> {
    let origin = args.model.display().to_string();
    let text = output::read_text(&args.model, "the model file", output::MAX_MODEL_BYTES)?;
    Ok((origin, text))
}

/// Refuses a `--set`/`--vary` argument that spans several lines: a value is one value (a TOML
/// value after `KEY=` would otherwise bring its own tables along).
pub fn one_line(flag: &str, text: &str) -> Result<(), CliError> {
    if text.contains(['\n', '\r']) {
        return Err(CliError::Input(format!(
            "{flag} {}: a value is one value on one line; give one {flag} per field",
            text.escape_debug()
        )));
    }
    Ok(())
}

/// The key of a `KEY=VALUE` flag, trimmed.
fn key_of(text: &str) -> &str {
    text.split_once('=').map_or(text, |(k, _)| k).trim()
}

/// The `--set` flags, parsed (all but `--set name=...`, see [`renamed`]), then `--max-events`.
pub fn overrides(args: &ModelArgs) -> Result<Vec<Override>, CliError> {
    let mut sets = Vec::new();
    for s in &args.sets {
        one_line("--set", s)?;
        if key_of(s) != "name" {
            sets.push(Override::parse(s)?);
        }
    }
    if let Some(n) = args.max_events {
        sets.push(Override::parse_as(
            "--max-events",
            &format!("max_events={n}"),
        )?);
    }
    Ok(sets)
}

/// The name given with `--set name=NAME` (the last one), if any. It renames the model (its
/// tables, JSON and sweep header), not its variants.
pub fn renamed(args: &ModelArgs) -> Option<String> {
    args.sets
        .iter()
        .rev()
        .filter(|s| key_of(s) == "name")
        .find_map(|s| s.split_once('='))
        .map(|(_, v)| {
            let v = v.trim();
            // A quoted TOML string loses its quotes; anything else is the name as written.
            match load::parse_value(v) {
                x if x.is_str() => x.as_str().unwrap_or(v).to_string(),
                _ => v.to_string(),
            }
        })
}

/// The largest trace file a model may replay.
const MAX_TRACE_BYTES: u64 = 1 << 30;

/// Loads the model with its `--set` flags and `extra` overrides (a `--vary` point), and applies
/// `--set name=`.
pub fn load_with(
    args: &ModelArgs,
    origin: &str,
    text: &str,
    extra: &[Override],
) -> Result<Scenario, CliError> {
    let mut sets = overrides(args)?;
    sets.extend(extra.iter().cloned());
    let resolve = |r: &str| match r.strip_prefix("trace:") {
        // `workload.trace`: the file's text, relative to the model file; the core parses it.
        Some(file) => {
            let dir = std::path::Path::new(origin)
                .parent()
                .unwrap_or(std::path::Path::new(""));
            crate::output::read_text(&dir.join(file), "the trace file", MAX_TRACE_BYTES)
                .map_err(|e| e.to_string())
        }
        None => crate::import::resolve_from(origin, r),
    };
    let mut s = load::load_resolved(origin, text, &sets, &resolve)?;
    for w in &s.warnings {
        warn_once(w);
    }
    for n in &s.notes {
        note_once(n);
    }
    if let Some(name) = renamed(args) {
        if name.trim().is_empty() {
            return Err(CliError::Input(
                "--set name=: the model's name must not be empty".into(),
            ));
        }
        let named = has_named_variants(&s);
        s.name = name.clone();
        s.base.name = name.clone();
        if !named {
            s.variants[0].name = name;
        }
    }
    Ok(s)
}

/// Prints a load warning on stderr once per process, whatever the value: a sweep loads the
/// model once per point, and `--vary retry.jitter=a,b` would otherwise warn at every point.
fn warn_once(w: &str) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let key = w.split(": ").next().unwrap_or(w).to_string();
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.contains(&key) {
        eprintln!("warning: {w}");
        seen.push(key);
    }
}

/// Prints a load note on stderr once per process (a sweep loads the model once per point), not
/// with `--quiet`.
fn note_once(n: &str) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|s| s == n) {
        crate::progress::note(&format!("note: {n}"));
        seen.push(n.to_string());
    }
}

/// Builds the worker pool of `--jobs` (every core by default).
pub fn pool(jobs: Option<u32>) -> Result<rayon::ThreadPool, CliError> {
    let threads = jobs
        .map(|j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::Input(format!("--jobs {threads}: {e}")))
}

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
    add("--md", &o.md);
    v
}

/// Checks outputs before anything runs (see [`output::check`]); the model file (or the sweep
/// file `report` and `map` read in its place) is an input. Once the model is loaded, its trace
/// and imported files are inputs too: [`output::refuse_inputs`] then refuses them as outputs.
pub fn check_outputs(outs: &[output::Out], args: &ModelArgs) -> Result<(), CliError> {
    let what = if crate::sweep::looks_like_sweep(&args.model) {
        "the sweep file"
    } else {
        "the model file"
    };
    output::check(outs, &[(what, args.model.as_path())])
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
        let what = if s.unsettled == 0 {
            format!(
                "after starting only {} intents (the workload's start or spread runs past the horizon)",
                s.intents
            )
        } else {
            format!("with {} of {} intents unsettled", s.unsettled, s.intents)
        };
        eprintln!(
            "warning: {}: {why} {what}; its summary is partial (\"truncated\": true)",
            r.name
        );
    }
}

/// Reads and resolves the model file with its `--set` overrides.
pub fn load_model(args: &ModelArgs) -> Result<Scenario, CliError> {
    let (origin, text) = read_model(args)?;
    load_with(args, &origin, &text, &[])
}

/// Runs every `(model, seed)` in parallel on `--jobs` threads; the result order is the input
/// order. A single run shows its progress in simulated time.
pub fn run_all(runs: &[(&Model, u64)], jobs: Option<u32>) -> Result<Vec<VariantResult>, CliError> {
    run_all_as(runs, jobs, |_| true, None).map(|(r, _)| r)
}

/// [`run_all`], with each run traced when `trace` is given (then one log per run, in order).
pub fn run_all_traced(
    runs: &[(&Model, u64)],
    jobs: Option<u32>,
    trace: Option<TraceOptions>,
) -> Result<(Vec<VariantResult>, Vec<TraceLog>), CliError> {
    run_all_as(runs, jobs, |_| true, trace)
}

/// As [`run_all_traced`]; a run `i` with `full(i)` false has only its summary (no series, no
/// CDFs, no trace).
fn run_all_as(
    runs: &[(&Model, u64)],
    jobs: Option<u32>,
    full: impl Fn(usize) -> bool + Sync,
    trace: Option<TraceOptions>,
) -> Result<(Vec<VariantResult>, Vec<TraceLog>), CliError> {
    let one = |m: &Model, seed: u64, progress: &mut dyn FnMut(Time)| match trace {
        None => (retrystorm_core::run_model(m, seed, progress), None),
        Some(opt) => {
            let (r, log) = retrystorm_core::run_model_traced(m, seed, progress, opt);
            (r, Some(log))
        }
    };
    let pairs: Vec<(VariantResult, Option<TraceLog>)> = if let [(m, seed)] = runs {
        let horizon = m.horizon.as_millis_f64().max(1.0) as u64;
        let bar = progress::sim_bar(horizon);
        let r = one(m, *seed, &mut |t| {
            bar.set_position((t.as_millis_f64() as u64).min(horizon));
        });
        bar.finish_and_clear();
        vec![r]
    } else {
        let bar = progress::bar(runs.len() as u64, "runs");
        let pairs = pool(jobs)?.install(|| {
            runs.par_iter()
                .enumerate()
                .map(|(i, (m, seed))| {
                    let r = if full(i) {
                        one(m, *seed, &mut |_| {})
                    } else {
                        (retrystorm_core::run_summary(m, *seed), None)
                    };
                    bar.inc(1);
                    r
                })
                .collect()
        });
        bar.finish_and_clear();
        pairs
    };
    let (results, logs): (Vec<VariantResult>, Vec<Option<TraceLog>>) = pairs.into_iter().unzip();
    warn_truncated(&results);
    Ok((results, logs.into_iter().flatten().collect()))
}

/// The outputs of `run`/`compare` with `--trace`.
fn outputs_traced<'a>(o: &'a OutputArgs, t: &'a TraceArgs) -> Vec<output::Out<'a>> {
    let mut v = outputs(o);
    if let Some(p) = &t.trace {
        v.push(output::Out::new("--trace", p));
    }
    v
}

/// Refuses `--trace` with `--seeds N`: a trace follows one run.
fn trace_one_seed(t: &TraceArgs, m: &ModelArgs) -> Result<Option<TraceOptions>, CliError> {
    let opt = crate::trace::options(t);
    if opt.is_some() && m.seeds > 1 {
        return Err(CliError::Input(format!(
            "--trace: a trace follows one run, not {} replications; drop --seeds (or pick one with --seed)",
            m.seeds
        )));
    }
    Ok(opt)
}

/// Writes the trace of every run (named by variant) and says what it left out.
fn write_trace(
    t: &TraceArgs,
    results: &[VariantResult],
    logs: &[TraceLog],
) -> Result<(), CliError> {
    let Some(p) = &t.trace else { return Ok(()) };
    let traces: Vec<(&str, &TraceLog)> =
        results.iter().map(|r| r.name.as_str()).zip(logs).collect();
    output::write(
        output::Out::new("--trace", p),
        &crate::trace::render(&traces),
    )?;
    crate::trace::warn(t, &traces);
    Ok(())
}

/// Runs every model with every seed and aggregates each model's replications.
pub fn replicate(
    name: &str,
    models: &[Model],
    base_seed: u64,
    n: u32,
    jobs: Option<u32>,
) -> Result<ReplicatedReport, CliError> {
    let seeds = stats::replication_seeds(base_seed, n);
    let runs: Vec<(&Model, u64)> = models
        .iter()
        .flat_map(|m| seeds.iter().map(move |s| (m, *s)))
        .collect();
    // Only the first replication's series and CDFs are kept (the report draws them).
    let mut results = run_all_as(&runs, jobs, |i| i % seeds.len() == 0, None)?
        .0
        .into_iter();
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
            replications.shares = agg.shares;
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
    Ok(ReplicatedReport {
        schema_version: SCHEMA_VERSION,
        model: name.to_string(),
        seed: base_seed,
        variants,
        seeds,
    })
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

/// `--metric` names, checked before anything runs (with a did-you-mean).
fn check_column_metrics(out: &OutputArgs) -> Result<(), CliError> {
    for m in &out.metrics {
        retrystorm_core::expect::check_metric(m)
            .map_err(|e| CliError::Input(format!("--metric {m}: {e}")))?;
    }
    Ok(())
}

pub fn run(a: RunArgs) -> Result<(), CliError> {
    check_column_metrics(&a.output)?;
    let outs = outputs_traced(&a.output, &a.trace);
    check_outputs(&outs, &a.model)?;
    let trace = trace_one_seed(&a.trace, &a.model)?;
    let scenario = load_model(&a.model)?;
    output::refuse_inputs(&outs)?;
    let file = a.model.model.display().to_string();
    let model = pick_variant(&scenario, a.variant.as_deref(), &file)?;
    let seed = base_seed(&a.model, &model);
    crate::explain::warn_models(&[&model]);
    if a.model.seeds > 1 {
        let rep = replicate(
            &scenario.name,
            std::slice::from_ref(&model),
            seed,
            a.model.seeds,
            a.model.jobs,
        )?;
        return emit_replicated(
            &rep,
            &a.output,
            report::ci_view(&rep),
            std::slice::from_ref(&model),
        );
    }
    let (results, logs) = run_all_traced(&[(&model, seed)], a.model.jobs, trace)?;
    let rep = RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: results,
    };
    let quiet = a.trace.trace.as_deref().is_some_and(is_stdout);
    let table = report::run_view(&rep);
    emit_with(&rep, &a.output, table, quiet, std::slice::from_ref(&model))?;
    write_trace(&a.trace, &rep.variants, &logs)
}

pub fn compare(a: CompareArgs) -> Result<(), CliError> {
    check_column_metrics(&a.output)?;
    let outs = outputs_traced(&a.output, &a.trace);
    check_outputs(&outs, &a.model)?;
    let trace = trace_one_seed(&a.trace, &a.model)?;
    let scenario = load_model(&a.model)?;
    let models = vary(&scenario, &a.vary, &a.model)?;
    output::refuse_inputs(&outs)?;
    if !base_is_a_variant(&scenario) {
        crate::progress::note(&format!(
            "note: {} runs its {}, not its base by itself; to have the base as a row, add a [[variant]] with only a name, e.g. name = \"base\"",
            a.model.model.display(),
            plural(scenario.variants.len() as u64, "variant")
        ));
    }
    crate::explain::warn_models(&models.iter().collect::<Vec<_>>());
    let seed = base_seed(&a.model, &scenario.base);
    if a.model.seeds > 1 {
        let rep = replicate(&scenario.name, &models, seed, a.model.seeds, a.model.jobs)?;
        let table = report::ci_table_with(&rep, &a.output.metrics);
        return emit_replicated(&rep, &a.output, table, &models);
    }
    let runs: Vec<(&Model, u64)> = models.iter().map(|m| (m, seed)).collect();
    let (results, logs) = run_all_traced(&runs, a.model.jobs, trace)?;
    let rep = RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: results,
    };
    let quiet = a.trace.trace.as_deref().is_some_and(is_stdout);
    let table = report::comparison_table_with(&rep, &a.output.metrics);
    emit_with(&rep, &a.output, table, quiet, &models)?;
    write_trace(&a.trace, &rep.variants, &logs)
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
    emit_with(
        &plain,
        &no_md,
        table,
        json_to_stdout || md_to_stdout,
        models,
    )?;
    if let (Some(p), Some(m)) = (&out.md, md) {
        output::write(output::Out::new("--md", p), &m)?;
    }
    if let (Some(p), Some(j)) = (&out.json, json) {
        output::write(output::Out::new("--json", p), &j)?;
    }
    Ok(())
}

/// The most rows `compare --vary` builds: every row is a resolved model and a result with its
/// series, all held for the table (a sweep keeps one line of numbers per run instead).
pub const MAX_COMPARE_ROWS: u64 = 10_000;

/// The file's variants crossed with every `--vary KEY=V1,V2` (or a range, as `sweep` takes it;
/// each value re-validated). A key varied twice, a value listed twice, a grid over [`MAX_RUNS`]
/// runs and one of more than [`MAX_COMPARE_ROWS`] rows are refused, before any is built.
fn vary(s: &Scenario, varies: &[String], args: &ModelArgs) -> Result<Vec<Model>, CliError> {
    if varies.is_empty() {
        return Ok(s.variants.clone());
    }
    let (origin, text) = read_model(args)?;
    let axes = parse_axes(varies)?;
    let grid = Grid {
        axes,
        variants: s.variants.iter().map(|m| m.name.clone()).collect(),
        seeds: stats::replication_seeds(0, args.seeds),
    };
    check_grid_size(&grid)?;
    let rows = grid
        .checked_points()
        .and_then(|p| p.checked_mul(grid.variants.len() as u64));
    if rows.is_none_or(|r| r > MAX_COMPARE_ROWS) {
        return Err(CliError::Input(format!(
            "--vary: compare would hold {} rows in memory ({} points x {}), each a model and its series, for its table; at most {MAX_COMPARE_ROWS} per process: use larger steps, or `retrystorm sweep` for a larger grid",
            rows.map_or_else(
                || "more than 18446744073709551615".to_string(),
                |r| r.to_string()
            ),
            grid.checked_points()
                .map_or_else(|| "too many".to_string(), |n| n.to_string()),
            plural(grid.variants.len() as u64, "variant")
        )));
    }
    let named = has_named_variants(s);
    let mut out = Vec::new();
    for point in 0..grid.points() {
        let params = grid.params(point);
        let mut extra = Vec::new();
        for kv in grid.sets(point) {
            extra.push(Override::parse_as("--vary", &kv)?);
        }
        let label = params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let loaded = load_with(args, &origin, &text, &extra)?;
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

/// The `--vary` flags as axes: each one line, a key at most once, not the model's name.
pub fn parse_axes(varies: &[String]) -> Result<Vec<Axis>, CliError> {
    let mut axes: Vec<Axis> = Vec::new();
    for v in varies {
        one_line("--vary", v)?;
        let axis = parse_vary(v).map_err(|e| CliError::Input(format!("--vary {v}: {e}")))?;
        if axis.key == "name" {
            return Err(CliError::Input(format!(
                "--vary {v}: the model's name is not a parameter; vary a model field such as retry.base"
            )));
        }
        if let Some(first) = axes.iter().find(|x| x.key == axis.key) {
            return Err(CliError::Input(format!(
                "--vary {v}: {} is varied twice (first with {}); give its values in one --vary",
                axis.key,
                first.values.join(",")
            )));
        }
        axes.push(axis);
    }
    Ok(axes)
}

/// Refuses a grid of more than [`MAX_RUNS`] runs (counted without overflow), before anything is
/// allocated for it.
pub fn check_grid_size(grid: &Grid) -> Result<u64, CliError> {
    match grid.checked_jobs() {
        Some(n) if n <= MAX_RUNS => Ok(n),
        n => Err(CliError::Input(format!(
            "--vary: the grid has {} runs ({} points x {} variants x {} seeds); the limit is {MAX_RUNS} runs",
            n.map_or_else(
                || "more than 18446744073709551615".to_string(),
                |n| n.to_string()
            ),
            grid.checked_points()
                .map_or_else(|| "too many".to_string(), |n| n.to_string()),
            grid.variants.len(),
            grid.seeds.len()
        ))),
    }
}

/// Prints the table (unless `quiet` or an output goes to stdout) and writes the requested files.
fn emit_with(
    rep: &RunReport,
    out: &OutputArgs,
    table: String,
    quiet: bool,
    models: &[Model],
) -> Result<(), CliError> {
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
        let opt = crate::charts::load_options(out, models);
        files.push((
            output::Out::new("--svg", p),
            report::load_chart_with(rep, &opt)
                .map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.outcomes_svg {
        files.push((
            output::Out::new("--outcomes-svg", p),
            report::outcome_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.cdf_svg {
        files.push((
            output::Out::new("--cdf-svg", p),
            report::cdf_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
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
            report::tiers_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    let tiers_csv_to_stdout = out.tiers_csv.as_deref().is_some_and(is_stdout);
    if !json_to_stdout && !csv_to_stdout && !md_to_stdout && !tiers_csv_to_stdout {
        output::print(&format!("{} (seed {})\n{table}", rep.model, rep.seed))?;
    }
    for (o, text) in files {
        output::write(o, &text)?;
    }
    Ok(())
}

/// Whether the file declares variants (so that `run` needs `--variant` to pick one).
pub fn has_named_variants(s: &Scenario) -> bool {
    s.variants.len() > 1 || s.variants[0].name != s.base.name
}

/// Whether the base model is one of the rows of `compare`: a file without variants, or one with
/// a variant that sets nothing but its name.
pub fn base_is_a_variant(s: &Scenario) -> bool {
    if !has_named_variants(s) {
        return true;
    }
    let unnamed = |m: &Model| {
        let mut v = serde_json::to_value(m).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.remove("name");
        }
        v
    };
    let base = unnamed(&s.base);
    s.variants.iter().any(|m| unnamed(m) == base)
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// `1 run`, `2 runs`.
pub fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The run's base seed: `--seed`, else the model's `seed`. The one place it is decided.
pub fn base_seed(args: &ModelArgs, model: &Model) -> u64 {
    args.seed.unwrap_or(model.seed)
}
