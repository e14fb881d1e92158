//! `retrystorm map MODEL --vary A --vary B`: the vulnerable region. Every cell of the two axes
//! runs on the same seeds; its verdict is the share of runs that recover within `--within`
//! (`retrystorm_core::map`), as a table, a heat map and JSON. The runs are sweep records, so
//! `--shard I/N --out FILE` writes a sweep shard, `merge` joins the shards and `map MERGED.jsonl`
//! draws the map from the merged file.

use crate::args::MapArgs;
use crate::grid::{check_grid_size, parse_axes};
use crate::prepare::{StudyView, VariantGrid, show, study_outputs, variant_grid};
use crate::run::Runner;
use crate::sweep_file::{Slice, looks_like_sweep, read_sweep};
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_core::expect;
use retrystorm_core::model::Model;
use retrystorm_core::summary::Summary;
use retrystorm_core::sweep::{Axis, Grid};
use retrystorm_core::time::Duration;
use retrystorm_report::sweep::format::{SweepRecord, sweep_text};
use retrystorm_report::sweep::header::{SWEEP_SCHEMA_VERSION, SweepHeader, stamped};
use retrystorm_report::{Heatmap, fmt, heatmap_chart, text_table};
use serde_json::json;

mod adaptive; // --adaptive: seeds spent where a cell's verdict is unclear, and --refine
mod analytic; // --verdict: each cell's analytic verdict beside the simulation
mod shown; // what a cell shows of its runs: the share that stays down, or a metric's mean
use shown::{Verdict, verdict, verdict_columns};

/// The verdict metric by default: whether and how fast each run recovered.
pub const RECOVERED: &str = "recovered";

/// The most cells one map may have.
pub const MAX_CELLS: u64 = 10_000;

/// What a map shows, decided from the flags before anything runs.
struct View {
    metric: String,
    within_ms: Option<f64>,
}

impl View {
    fn recovery(&self) -> bool {
        self.metric == RECOVERED
    }
}

fn view(a: &MapArgs) -> Result<View, CliError> {
    if a.metric != RECOVERED {
        expect::check_metric(&a.metric).map_err(|e| {
            CliError::Input(format!(
                "--metric {}: {e} (or `recovered`, the default: the share of runs that recover)",
                a.metric
            ))
        })?;
    }
    let within_ms = match &a.within {
        None => None,
        Some(_) if a.metric != RECOVERED => {
            return Err(CliError::Input(format!(
                "--within is the recovery limit; it does not apply to --metric {}",
                a.metric
            )));
        }
        Some(t) => Some(
            Duration::parse(t)
                .map_err(|e| {
                    CliError::Input(format!("--within {t}: {e} (a duration such as 10s)"))
                })?
                .as_millis_f64(),
        ),
    };
    Ok(View {
        metric: a.metric.clone(),
        within_ms,
    })
}

pub fn map(a: MapArgs) -> Result<(), CliError> {
    let outs = study_outputs(
        &[("--json", &a.json), ("--svg", &a.svg), ("--out", &a.out)],
        &a.model,
    )?;
    let view = view(&a)?;
    if looks_like_sweep(&a.model.model) {
        analytic::refuse_sweep_file(a.verdict)?;
        return from_file(&a, &view);
    }
    let axes = two_axes(&a.study.vary)?;
    let refine = adaptive::levels(&a, &view)?;
    let mut slice = Slice::new("map", a.shard.as_deref(), a.out.as_deref())?;
    let study = variant_grid(&a.model, a.study.variant.as_deref(), axes)?;
    let (model, grid) = (&study.model, &study.grid);
    let total = check_size(grid, &slice)?;
    let models = cell_models(&study, &view)?;
    let judged = analytic::judged(a.verdict, &models);
    let header = stamped(
        SweepHeader::new(
            &model.scenario.name,
            &model.text,
            &a.model.sets,
            grid,
            total,
        ),
        model.inputs.clone(),
    );
    let jobs: Vec<u64> = grid.shard(slice.i, slice.n).collect();
    output::refuse_inputs(&outs)?;
    if let Some(levels) = refine {
        let (records, spent) = adaptive::run(&a, &study, &models, &view, levels)?;
        let variant = &grid.variants[0];
        return render(&a, &view, &header, variant, &records, judged, Some(&spent));
    }
    slice.claim()?;
    let records = run_cells(&a, grid, &models, &jobs)?;
    let done = format!(
        "{} of {}",
        plural(records.len() as u64, "run"),
        fmt::int(total)
    );
    if slice.write(&header.model, &sweep_text(&header, &records), &done)? {
        return Ok(());
    }
    render(
        &a,
        &view,
        &header,
        &grid.variants[0],
        &records,
        judged,
        None,
    )
}

/// The two `--vary` axes of a map, x then y; any other number is refused.
fn two_axes(vary: &[String]) -> Result<Vec<Axis>, CliError> {
    let axes = parse_axes(vary)?;
    if axes.len() != 2 {
        return Err(CliError::Input(format!(
            "map needs two --vary axes (x then y), e.g. --vary server.outages[0].to=10s..30s:5s --vary workload.rate=600/s,800/s; got {}",
            axes.len()
        )));
    }
    Ok(axes)
}

/// Refuses a map of more than [`MAX_CELLS`] cells, or a shard with no runs; the map's runs.
fn check_size(grid: &Grid, slice: &Slice) -> Result<u64, CliError> {
    let total = check_grid_size(grid)?;
    if grid.points() > MAX_CELLS {
        return Err(CliError::Input(format!(
            "--vary: a map of {} cells; at most {MAX_CELLS} (a heat map of more cannot be read): use larger steps",
            grid.points()
        )));
    }
    slice.check(total, || format!("the map has {}", plural(total, "run")))?;
    Ok(total)
}

/// Every cell's model, resolved (and so validated) before the first run; a recovery map
/// refuses a cell without a trigger.
fn cell_models(study: &VariantGrid, view: &View) -> Result<Vec<Model>, CliError> {
    let (origin, grid) = (&study.model.origin, &study.grid);
    let mut models: Vec<Model> = Vec::new();
    for p in 0..grid.points() {
        let m = study.model_at(p)?;
        if view.recovery() {
            let at = if p == 0 {
                String::new()
            } else {
                format!(" at {}", grid.sets(p).join(" "))
            };
            refuse_untriggered(&m, origin, &at)?;
        }
        models.push(m);
    }
    Ok(models)
}

/// Refuses a cell of a recovery map whose model (at `at`, in words) has no trigger.
fn refuse_untriggered(m: &Model, origin: &str, at: &str) -> Result<(), CliError> {
    match m.trigger() {
        Some(_) => Ok(()),
        None => Err(CliError::Input(format!(
            "{origin}: map's verdict is recovery after a trigger, and {} has none{at}: add server.outages, server.capacity_drops, server.slow_windows, a workload spike or [recovery] trigger, or map another --metric",
            m.name,
        ))),
    }
}

/// Runs the `jobs` of the grid (this shard's) in parallel, as sweep records.
fn run_cells(
    a: &MapArgs,
    grid: &Grid,
    models: &[Model],
    jobs: &[u64],
) -> Result<Vec<SweepRecord>, CliError> {
    let runner = Runner::new(a.model.jobs)?;
    let bar = progress::bar(jobs.len() as u64, "runs");
    let records: Vec<SweepRecord> = runner.map(jobs, &bar, |j| {
        let job = grid.job(*j);
        let seed = grid.seeds[job.replication];
        let r = retrystorm_core::run_model(&models[job.point as usize], seed, &mut |_| {});
        record(grid, job.point, job.replication, r.summary)
    });
    bar.finish_and_clear();
    Ok(records)
}

/// The sweep record of the run of `point` (of a one-variant grid) on seed `replication`.
fn record(grid: &Grid, point: u64, replication: usize, summary: Summary) -> SweepRecord {
    SweepRecord {
        schema_version: SWEEP_SCHEMA_VERSION,
        kind: "run".into(),
        job: point * grid.seeds.len() as u64 + replication as u64,
        point,
        params: grid.params(point),
        variant: grid.variants[0].clone(),
        replication,
        seed: grid.seeds[replication],
        summary,
    }
}

/// `map MERGED.jsonl`: the map of a finished sweep file of two axes.
fn from_file(a: &MapArgs, view: &View) -> Result<(), CliError> {
    let name = a.model.model.display().to_string();
    let given: Vec<&str> = [
        (!a.study.vary.is_empty()).then_some("--vary"),
        a.shard.as_ref().map(|_| "--shard"),
        a.out.as_ref().map(|_| "--out"),
        (!a.model.sets.is_empty()).then_some("--set"),
        a.model.seed.map(|_| "--seed"),
        (a.model.seeds != 1).then_some("--seeds"),
        a.adaptive.then_some("--adaptive"),
        a.refine.map(|_| "--refine"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !given.is_empty() {
        return Err(CliError::Input(format!(
            "{name} is a sweep file: its header fixes the axes, seeds and model, so {} cannot apply",
            given.join(", ")
        )));
    }
    let f = read_sweep(&a.model.model)?;
    let g = &f.header.grid;
    if g.axes.len() != 2 {
        return Err(CliError::Input(format!(
            "{name}: a map needs a sweep of two --vary axes; this one has {}",
            g.axes.len()
        )));
    }
    let variant = match (&a.study.variant, g.variants.as_slice()) {
        (Some(v), vs) if vs.contains(v) => v.clone(),
        (Some(v), vs) => {
            return Err(CliError::Input(format!(
                "--variant {v}: {name} has no such variant; it has {}",
                vs.join(", ")
            )));
        }
        (None, [one]) => one.clone(),
        (None, vs) => {
            return Err(CliError::Input(format!(
                "{name} holds {} variants; pick one with --variant ({})",
                vs.len(),
                vs.join(", ")
            )));
        }
    };
    let records: Vec<SweepRecord> = f
        .records
        .into_iter()
        .filter(|r| r.variant == variant)
        .collect();
    let expected = g.points() * g.seeds.len() as u64;
    if (records.len() as u64) < expected {
        return Err(CliError::Input(format!(
            "{name}: {} of variant {variant} of {expected} present; merge every shard (`retrystorm merge`) before mapping",
            plural(records.len() as u64, "run"),
        )));
    }
    if view.recovery() && records.iter().any(|r| r.summary.trigger_to_ms.is_none()) {
        return Err(CliError::Input(format!(
            "{name}: its runs have no trigger (an outage, a capacity drop, a spike), so nothing recovers; map another --metric"
        )));
    }
    render(a, view, &f.header, &variant, &records, None, None)
}

/// One cell's runs, by seed.
struct CellRuns<'a> {
    x: usize,
    y: usize,
    runs: Vec<&'a Summary>,
    /// `--verdict`: the cell judged without a run.
    analytic: Option<analytic::Analytic>,
}

fn cells<'a>(grid: &Grid, records: &'a [SweepRecord]) -> Vec<CellRuns<'a>> {
    let mut out: Vec<CellRuns> = (0..grid.points())
        .map(|p| {
            let c = grid.coords(p);
            CellRuns {
                x: c[0],
                y: c[1],
                runs: Vec::new(),
                analytic: None,
            }
        })
        .collect();
    let mut sorted: Vec<&SweepRecord> = records.iter().collect();
    sorted.sort_by_key(|r| (r.point, r.replication));
    for r in sorted {
        out[r.point as usize].runs.push(&r.summary);
    }
    out
}

/// Prints the map's table (unless `--json` goes to stdout) and writes its JSON and heat map.
fn render(
    a: &MapArgs,
    view: &View,
    header: &SweepHeader,
    variant: &str,
    records: &[SweepRecord],
    judged: Option<Vec<analytic::Analytic>>,
    adaptive: Option<&adaptive::Spent>,
) -> Result<(), CliError> {
    let mut cells = cells(&header.grid, records);
    analytic::attach(&mut cells, judged);
    let verdicts: Vec<Verdict> = cells.iter().map(|c| verdict(view, &c.runs)).collect();
    let within = view
        .within_ms
        .map_or("before the horizon".to_string(), |t| {
            format!("within {}", fmt::duration(t))
        });
    let what = if view.recovery() {
        format!("recovery {within}")
    } else {
        format!("mean {}", view.metric)
    };
    let title = format!(
        "{}{}: {what} over {}",
        header.model,
        if variant == header.model {
            String::new()
        } else {
            format!(" ({variant})")
        },
        adaptive::seeds(adaptive, header.grid.seeds.len())
    );
    let shown = Shown {
        view,
        header,
        variant,
        cells,
        verdicts,
        title,
        within,
        adaptive,
    };
    show(&shown, &a.json, &a.svg)
}

/// A map as shown: its cells with their verdicts, and its title.
struct Shown<'s> {
    view: &'s View,
    header: &'s SweepHeader,
    variant: &'s str,
    cells: Vec<CellRuns<'s>>,
    verdicts: Vec<Verdict>,
    title: String,
    /// The recovery limit in words (`within 10 s`, `before the horizon`).
    within: String,
    /// `--adaptive`: the runs it spent and the cells it added.
    adaptive: Option<&'s adaptive::Spent>,
}

impl StudyView for Shown<'_> {
    /// The table of cells, with a closing count of the cells that stay down.
    fn table(&self) -> String {
        let (view, grid) = (self.view, &self.header.grid);
        let (ax, ay) = (&grid.axes[0], &grid.axes[1]);
        let mut headers = vec![ax.key.clone(), ay.key.clone(), "runs".into()];
        if view.recovery() {
            headers.extend(
                [
                    "recovered",
                    "stay down",
                    "95% interval",
                    "median recovery",
                    "verdict",
                ]
                .map(String::from),
            );
        } else {
            headers.push(view.metric.clone());
        }
        headers.extend(adaptive::headers(self.adaptive));
        headers.extend(analytic::headers(&self.cells));
        let rows: Vec<Vec<String>> = self
            .cells
            .iter()
            .zip(&self.verdicts)
            .map(|(c, v)| {
                let mut row = vec![
                    ax.values[c.x].clone(),
                    ay.values[c.y].clone(),
                    c.runs.len().to_string(),
                ];
                row.extend(verdict_columns(v));
                row.extend(adaptive::columns(self.adaptive, v));
                row.extend(analytic::columns(c, v));
                row
            })
            .collect();
        let mut t = format!("{}, {}\n\n", self.title, plural(grid.points(), "cell"));
        t.push_str(&text_table(&headers, &rows));
        if view.recovery() {
            let down = self
                .verdicts
                .iter()
                .filter(|v| matches!(v, Verdict::Recovery(c) if c.recovered == 0))
                .count();
            let mixed = self
                .verdicts
                .iter()
                .filter(|v| matches!(v, Verdict::Recovery(c) if c.verdict() == "mixed"))
                .count();
            t.push_str(&format!(
                "\n{down} of {} stay down in every run, {mixed} mixed\n",
                plural(grid.points(), "cell"),
            ));
        }
        t.push_str(&analytic::agreement(&self.cells, &self.verdicts));
        if let Some(spent) = self.adaptive {
            t.push_str(&spent.table(&self.verdicts, (ax, ay)));
        }
        t
    }

    /// The JSON document (`docs/tune.md`), pretty-printed.
    fn json(&self) -> String {
        let (view, grid) = (self.view, &self.header.grid);
        let (ax, ay) = (&grid.axes[0], &grid.axes[1]);
        let cells_json: Vec<serde_json::Value> = self
            .cells
            .iter()
            .zip(&self.verdicts)
            .map(|(c, v)| {
                let mut o = json!({
                    "x": ax.values[c.x],
                    "y": ay.values[c.y],
                    "runs": c.runs.len(),
                });
                shown::fields(v, &mut o);
                adaptive::fields(self.adaptive, v, &mut o);
                analytic::fields(c, v, &mut o);
                o
            })
            .collect();
        let mut v = json!({
            "schema_version": 1,
            "kind": "map",
            "model": self.header.model,
            "variant": self.variant,
            "metric": view.metric,
            "within_ms": view.within_ms,
            "seeds": grid.seeds,
            "x": {"key": ax.key, "values": ax.values},
            "y": {"key": ay.key, "values": ay.values},
            "cells": cells_json,
        });
        if let Some(spent) = self.adaptive {
            v["adaptive"] = spent.json(&self.verdicts);
        }
        let mut t = serde_json::to_string_pretty(&v).expect("JSON of plain values");
        t.push('\n');
        t
    }

    /// The heat map: the share that stays down (or the metric's mean) per cell.
    fn svg(&self) -> Result<String, CliError> {
        let grid = &self.header.grid;
        let (ax, ay) = (&grid.axes[0], &grid.axes[1]);
        let mut grid_cells =
            vec![vec![(f64::NAN, String::new()); ax.values.len()]; ay.values.len()];
        for (c, v) in self.cells.iter().zip(&self.verdicts) {
            let label = match v {
                Verdict::Recovery(cell) => fmt::pct(cell.share_down()),
                Verdict::Mean(e) if e.mean.is_nan() => "absent".into(),
                Verdict::Mean(e) => fmt::num(e.mean),
            };
            grid_cells[c.y][c.x] = (v.value(), analytic::label(c, v, label));
        }
        let (scale, scale_labels, mut legend) = self.scale();
        legend.push_str(analytic::legend(&self.cells));
        heatmap_chart(&Heatmap {
            title: self.title.clone(),
            x_name: axis_name(&ax.key),
            y_name: axis_name(&ay.key),
            x_values: ax.values.clone(),
            y_values: ay.values.clone(),
            cells: grid_cells,
            legend,
            scale,
            scale_labels,
        })
        .map_err(|e| CliError::Output(format!("--svg: {e}")))
    }
}

impl Shown<'_> {
    /// The heat map's colour scale, the labels of its ends and its legend: 0-100% of runs for
    /// a recovery map, the metric's range over the cells otherwise.
    fn scale(&self) -> ((f64, f64), (String, String), String) {
        if self.view.recovery() {
            (
                (0.0, 1.0),
                ("0%".to_string(), "100%".to_string()),
                // A duration's space does not break.
                format!(
                    "share of runs that stay down (no recovery {})",
                    self.within
                        .replace(" s", "\u{a0}s")
                        .replace(" ms", "\u{a0}ms")
                ),
            )
        } else {
            let finite = self
                .verdicts
                .iter()
                .map(Verdict::value)
                .filter(|x| x.is_finite());
            let lo = finite.clone().fold(f64::INFINITY, f64::min);
            let hi = finite.fold(f64::NEG_INFINITY, f64::max);
            let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
            (
                (lo, hi),
                (fmt::num(lo), fmt::num(hi)),
                format!("mean {} over the seeds", self.view.metric),
            )
        }
    }
}

/// An axis's name on the chart: its key, or for linked keys (`a+b`) the first and how many more.
fn axis_name(key: &str) -> String {
    let keys: Vec<&str> = key.split('+').collect();
    match keys.len() {
        1 => key.to_string(),
        n => format!("{} (and {} linked)", keys[0], n - 1),
    }
}
