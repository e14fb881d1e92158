//! The steps commands share before (and around) their runs, on the resolved options of
//! [`crate::model_args`]: `run` and `compare` check their outputs and `--trace`, then run one
//! seed or `--seeds N` into a report; `map` and `sensitivity` check their outputs, then study one
//! variant over a grid of `--vary` points.

use crate::args::{ModelArgs, OutputArgs, TraceArgs};
use crate::emit::{check_column_metrics, check_outputs, emit_replicated, emit_with, is_stdout};
use crate::model_args::{Resolved, pick_variant};
use crate::run::{replicate, run_all_traced};
use crate::trace::{outputs_traced, trace_one_seed, write_trace};
use crate::{error::CliError, output};
use retrystorm_core::model::Model;
use retrystorm_core::summary::{ReplicatedReport, RunReport, SCHEMA_VERSION};
use retrystorm_core::sweep::{Axis, Grid};
use retrystorm_core::trace::TraceOptions;
use std::path::PathBuf;

/// A `run` or `compare` once its flags are checked: its outputs (with `--trace`), what to trace
/// and the model resolved. Nothing has run yet.
pub struct Traced<'a> {
    pub outs: Vec<output::Out<'a>>,
    pub model: Resolved<'a>,
    output: &'a OutputArgs,
    trace_args: &'a TraceArgs,
    trace: Option<TraceOptions>,
}

/// Checks the `--metric` columns, the outputs and `--trace` (one seed only), then resolves the
/// model: every refusal before the first run, in the order both commands give them.
pub fn traced<'a>(
    output: &'a OutputArgs,
    trace_args: &'a TraceArgs,
    args: &'a ModelArgs,
) -> Result<Traced<'a>, CliError> {
    check_column_metrics(output)?;
    let outs = outputs_traced(output, trace_args);
    check_outputs(&outs, args)?;
    let trace = trace_one_seed(trace_args, args)?;
    let model = Resolved::read(args)?;
    Ok(Traced {
        outs,
        model,
        output,
        trace_args,
        trace,
    })
}

/// The table of one seed's report and the table of `--seeds N` replications.
pub struct Views<One, Many>
where
    One: FnOnce(&RunReport) -> String,
    Many: FnOnce(&ReplicatedReport) -> String,
{
    pub one: One,
    pub many: Many,
}

impl Traced<'_> {
    /// Runs `models` on `seed` (or its `--seeds N` replications), prints the table and writes
    /// every output and the trace. From the first run on, Ctrl-C stops the runs and the outputs
    /// hold what they simulated (exit 130).
    pub fn run_and_emit<One, Many>(
        &self,
        models: &[Model],
        seed: u64,
        views: Views<One, Many>,
    ) -> Result<(), CliError>
    where
        One: FnOnce(&RunReport) -> String,
        Many: FnOnce(&ReplicatedReport) -> String,
    {
        crate::charts::check_replicas_chart(self.output, models)?;
        crate::run::ctrl_c();
        crate::advice::warn_models(&models.iter().collect::<Vec<_>>());
        let (name, jobs) = (&self.model.scenario.name, self.model.args.jobs);
        if self.model.args.seeds > 1 {
            let rep = replicate(name, models, seed, self.model.args.seeds, jobs)?;
            let table = (views.many)(&rep);
            return emit_replicated(&rep, self.output, table, models);
        }
        let runs: Vec<(&Model, u64)> = models.iter().map(|m| (m, seed)).collect();
        let (results, logs) = run_all_traced(&runs, jobs, self.trace)?;
        let rep = RunReport {
            schema_version: SCHEMA_VERSION,
            model: name.clone(),
            seed,
            variants: results,
        };
        // A trace on stdout replaces the table there.
        let quiet = self.trace_args.trace.as_deref().is_some_and(is_stdout);
        let table = (views.one)(&rep);
        emit_with(&rep, self.output, table, quiet, models)?;
        write_trace(self.trace_args, &rep.variants, &logs)
    }
}

/// The output files of a study (`--json`, `--svg`, ...) given as `(flag, path)`, checked
/// before anything runs as every command checks them.
pub fn study_outputs<'a>(
    flags: &[(&'static str, &'a Option<PathBuf>)],
    args: &ModelArgs,
) -> Result<Vec<output::Out<'a>>, CliError> {
    let outs: Vec<output::Out<'a>> = flags
        .iter()
        .filter_map(|(flag, p)| p.as_ref().map(|p| output::Out::new(flag, p)))
        .collect();
    check_outputs(&outs, args)?;
    Ok(outs)
}

/// A study of one variant (`map`, `sensitivity`): the model resolved, the variant picked and
/// the grid of the `--vary` axes on the `--seeds` replication seeds.
pub struct VariantGrid<'a> {
    pub model: Resolved<'a>,
    /// `--variant`, as given.
    variant: Option<&'a str>,
    /// The variant at the model's own values (the grid's one variant).
    pub chosen: Model,
    pub grid: Grid,
}

/// Reads and resolves the model, picks `variant` and lays `axes` out as its grid.
pub fn variant_grid<'a>(
    args: &'a ModelArgs,
    variant: Option<&'a str>,
    axes: Vec<Axis>,
) -> Result<VariantGrid<'a>, CliError> {
    let model = Resolved::read_variant(args, variant)?;
    let chosen = pick_variant(&model.scenario, variant, &model.origin)?;
    let grid = Grid {
        axes,
        variants: vec![chosen.name.clone()],
        seeds: model.seeds(),
    };
    Ok(VariantGrid {
        model,
        variant,
        chosen,
        grid,
    })
}

impl VariantGrid<'_> {
    /// The chosen variant at `point` of the grid: resolved, and so validated, before any run.
    pub fn model_at(&self, point: u64) -> Result<Model, CliError> {
        self.model_in(&self.grid, point)
    }

    /// The chosen variant at `point` of another grid over the same keys, whose values may lie
    /// between this grid's (`map --adaptive` refines between its cells).
    pub fn model_in(&self, grid: &Grid, point: u64) -> Result<Model, CliError> {
        let s = self.model.at(grid, point)?;
        pick_variant(&s, self.variant, &self.model.origin)
    }
}

/// What a study (`map`, `sensitivity`) shows of its result.
pub trait StudyView {
    /// The table on stdout.
    fn table(&self) -> String;
    /// The `--json` document.
    fn json(&self) -> String;
    /// The `--svg` chart.
    fn svg(&self) -> Result<String, CliError>;
}

/// Prints a study's table (unless `--json` goes to stdout, where it replaces the table), then
/// writes its `--json` and `--svg`, in that order.
pub fn show(
    view: &impl StudyView,
    json: &Option<PathBuf>,
    svg: &Option<PathBuf>,
) -> Result<(), CliError> {
    if !json.as_deref().is_some_and(is_stdout) {
        output::print(&view.table())?;
    }
    if let Some(p) = json {
        output::write(output::Out::new("--json", p), &view.json())?;
    }
    if let Some(p) = svg {
        output::write(output::Out::new("--svg", p), &view.svg()?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::parse_axes;

    /// The grid of a study has the chosen variant alone, on the `--seeds` seeds from the base
    /// seed; a point's model is that variant with the point's values.
    #[test]
    fn a_variant_grid_resolves_the_chosen_variant_at_each_point() {
        let args = ModelArgs {
            model: concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../models/outage-recovery.toml"
            )
            .into(),
            seed: Some(40),
            sets: vec!["retry.cap=5s".into()],
            max_events: None,
            seeds: 3,
            jobs: None,
        };
        let axes = parse_axes(&["retry.max_attempts=2,4".into(), "retry.base=1s,2s".into()])
            .expect("two axes");
        let study = variant_grid(&args, Some("full-jitter"), axes).expect("a valid study");
        assert_eq!(study.chosen.name, "full-jitter");
        assert_eq!(study.grid.variants, ["full-jitter"]);
        assert_eq!(study.grid.seeds, [40, 41, 42]);
        let last = study.model_at(3).expect("a valid point");
        assert_eq!(last.name, "full-jitter");
        assert_eq!(last.retry.max_attempts, 4);
        assert_eq!(last.retry.backoff_spec.base.as_millis_f64(), 2000.0);
        assert_eq!(
            last.retry.backoff_spec.cap.as_millis_f64(),
            5000.0,
            "--set applies at every point"
        );
        let e = variant_grid(&args, Some("nope"), Vec::new())
            .err()
            .expect("no such variant")
            .to_string();
        assert!(e.starts_with("--variant nope: no such variant"), "{e}");
    }
}
