//! `retrystorm compare MODEL`: every variant of the file (crossed with `--vary`) side by side.

use crate::args::{CompareArgs, ModelArgs};
use crate::emit::{check_column_metrics, check_outputs, emit_replicated, emit_with, is_stdout};
use crate::grid::{check_grid_size, parse_axes};
use crate::model_args::{
    base_is_a_variant, base_seed, has_named_variants, load_model, load_with, read_model,
};
use crate::run::{replicate, run_all_traced};
use crate::text::plural;
use crate::trace::{outputs_traced, trace_one_seed, write_trace};
use crate::{CliError, output};
use retrystorm_core::load::{Override, Scenario};
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_core::sweep::Grid;
use retrystorm_report as report;

pub fn compare(a: CompareArgs) -> Result<(), CliError> {
    check_column_metrics(&a.output)?;
    let outs = outputs_traced(&a.output, &a.trace);
    check_outputs(&outs, &a.model)?;
    let trace = trace_one_seed(&a.trace, &a.model)?;
    let scenario = load_model(&a.model)?;
    let models = vary(&scenario, &a.vary, &a.model)?;
    crate::trace::check_total(&a.trace, models.len())?;
    output::refuse_inputs(&outs)?;
    if !base_is_a_variant(&scenario) {
        crate::progress::note(&format!(
            "note: {} runs its {}, not its base by itself; to have the base as a row, add a [[variant]] with only a name, e.g. name = \"base\"",
            a.model.model.display(),
            plural(scenario.variants.len() as u64, "variant")
        ));
    }
    // From here on Ctrl-C stops the runs and the outputs hold what they simulated (exit 130).
    crate::run::ctrl_c();
    crate::advice::warn_models(&models.iter().collect::<Vec<_>>());
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

/// The most rows `compare --vary` builds: every row is a resolved model and a result with its
/// series, all held for the table (a sweep keeps one line of numbers per run instead).
pub const MAX_COMPARE_ROWS: u64 = 10_000;

/// The file's variants crossed with every `--vary KEY=V1,V2` (or a range, as `sweep` takes it;
/// each value re-validated). A key varied twice, a value listed twice, a grid over [`MAX_RUNS`](retrystorm_core::sweep::MAX_RUNS)
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
