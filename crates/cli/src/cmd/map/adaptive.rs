//! `map --adaptive`: seeds are spent where a cell's verdict is unclear. Every cell runs the
//! map's seeds in fixed rounds (`retrystorm_core::map::adaptive`), in the map's order, and stops
//! once its 95% interval for the share that stays down lies wholly above or below half, or at
//! `--seeds`; so its runs are the first ones of the full map's cell, seed for seed. Then
//! `--refine N` bisects, N times, each edge between neighbouring cells whose verdicts differ,
//! adding cells between them (listed after the map; the chart keeps the map's grid).

use super::shown::{Verdict, recovery, verdict_columns};
use super::{View, record, refuse_untriggered};
use crate::args::MapArgs;
use crate::prepare::VariantGrid;
use crate::run::Runner;
use crate::text::plural;
use crate::{error::CliError, progress};
use indicatif::ProgressBar;
use retrystorm_core::map::Cell;
use retrystorm_core::map::adaptive::{Edge, ROUND, Side, next_round};
use retrystorm_core::model::Model;
use retrystorm_core::summary::Summary;
use retrystorm_core::sweep::{Axis, Grid};
use retrystorm_report::sweep::format::SweepRecord;
use retrystorm_report::{fmt, text_table};
use serde_json::{Value, json};

/// `--refine` without a number: each edge where the verdict changes is bisected once.
pub const REFINE: u32 = 1;

/// `--adaptive`'s refinement levels (`None` without it); refused with another `--metric`, a
/// shard or `--out`, and `--refine` without `--adaptive`.
pub(super) fn levels(a: &MapArgs, view: &View) -> Result<Option<u32>, CliError> {
    let refuse = |why: &str| Err(CliError::Input(why.into()));
    if !a.adaptive {
        return match a.refine {
            Some(_) => refuse(
                "--refine bisects the edges between an adaptive map's cells whose verdicts differ: add --adaptive",
            ),
            None => Ok(None),
        };
    }
    if !view.recovery() {
        return refuse(
            "--adaptive stops a cell once the share of its runs that stays down is clear: it maps recovery, not another --metric",
        );
    }
    if a.shard.is_some() {
        return refuse(
            "--adaptive decides each cell's next runs from its last ones, so it cannot be split into shards: run the whole map without --shard",
        );
    }
    if a.out.is_some() {
        return refuse(
            "--adaptive runs only some of each cell's seeds, and `map FILE` needs them all: drop --out (the map's --json holds every cell)",
        );
    }
    Ok(Some(a.refine.unwrap_or(REFINE)))
}

/// What `--adaptive` spent and added, for the table and the JSON.
pub(super) struct Spent {
    levels: u32,
    /// `--seeds`: the most runs a cell takes.
    cap: usize,
    /// The runs the full map takes.
    full: u64,
    /// The cells `--refine` added, level by level.
    added: Vec<Added>,
}

/// A cell added between two neighbouring cells whose verdicts differ.
struct Added {
    x: String,
    y: String,
    level: u32,
    cell: Cell,
}

/// One cell being run: its model and its runs so far, in seed order.
struct Probe<'m> {
    model: &'m Model,
    runs: Vec<Summary>,
}

impl Probe<'_> {
    /// A probe of each model, with no run yet.
    fn none_run(models: &[Model]) -> Vec<Probe<'_>> {
        let probe = |model| Probe {
            model,
            runs: Vec::new(),
        };
        models.iter().map(probe).collect()
    }

    fn cell(&self, view: &View) -> Cell {
        let runs: Vec<&Summary> = self.runs.iter().collect();
        recovery(view, &runs)
    }
}

/// Runs the map's cells adaptively, then `levels` of refinement: the map's runs as sweep
/// records (each one the full map's record of that run) and what was spent and added.
pub(super) fn run(
    a: &MapArgs,
    study: &VariantGrid,
    models: &[Model],
    view: &View,
    levels: u32,
) -> Result<(Vec<SweepRecord>, Spent), CliError> {
    let grid = &study.grid;
    let cap = grid.seeds.len();
    let runner = Runner::new(a.model.jobs)?;
    let bar = progress::bar(grid.points() * cap as u64, "runs");
    let mut probes = Probe::none_run(models);
    rounds(&runner, &bar, &grid.seeds, view, &mut probes);
    let downs: Vec<bool> = probes.iter().map(|p| p.cell(view).down()).collect();
    let (xs, ys) = (&grid.axes[0].values, &grid.axes[1].values);
    let mut edges = Edge::changes(xs, ys, |i, j| downs[i * ys.len() + j]);
    let mut added = Vec::new();
    for level in 1..=levels {
        let middles: Vec<(Edge, (String, String))> = edges
            .into_iter()
            .filter_map(|e| e.middle().map(|m| (e, m)))
            .collect();
        let mut cell_models = Vec::new();
        for (_, (x, y)) in &middles {
            let one = one_point(grid, [x, y]);
            let m = study.model_in(&one, 0)?;
            let at = format!(" at {}", one.sets(0).join(" "));
            refuse_untriggered(&m, &study.model.origin, &at)?;
            cell_models.push(m);
        }
        bar.inc_length((middles.len() * cap) as u64);
        let mut more = Probe::none_run(&cell_models);
        rounds(&runner, &bar, &grid.seeds, view, &mut more);
        edges = Vec::new();
        for ((edge, (x, y)), p) in middles.into_iter().zip(&more) {
            let cell = p.cell(view);
            let value = if edge.axis == 0 { &x } else { &y };
            edges.push(edge.half(value, cell.down()));
            added.push(Added { x, y, level, cell });
        }
    }
    bar.finish_and_clear();
    let records = probes
        .into_iter()
        .enumerate()
        .flat_map(|(p, probe)| {
            let point = p as u64;
            (probe.runs.into_iter().enumerate()).map(move |(r, s)| record(grid, point, r, s))
        })
        .collect();
    let full = grid.points() * cap as u64;
    let spent = Spent {
        levels,
        cap,
        full,
        added,
    };
    Ok((records, spent))
}

/// The grid of one point over the map's axes, at values that may lie between the map's.
fn one_point(grid: &Grid, values: [&str; 2]) -> Grid {
    let axes = grid.axes.iter().zip(values);
    Grid {
        axes: axes
            .map(|(a, v)| Axis {
                key: a.key.clone(),
                values: vec![v.to_string()],
            })
            .collect(),
        ..grid.clone()
    }
}

/// Runs rounds of every open cell's next seeds, all cells' rounds in parallel, until no cell
/// is open. Which cells stay open depends only on their runs, so the thread count changes
/// nothing.
fn rounds(runner: &Runner, bar: &ProgressBar, seeds: &[u64], view: &View, probes: &mut [Probe]) {
    let cap = seeds.len();
    loop {
        let jobs: Vec<(usize, usize)> = probes
            .iter()
            .enumerate()
            .filter(|(_, p)| p.cell(view).open(cap))
            .flat_map(|(i, p)| next_round(p.runs.len(), cap).map(move |r| (i, r)))
            .collect();
        if jobs.is_empty() {
            return;
        }
        let done = runner.map(&jobs, bar, |&(i, r)| {
            retrystorm_core::run_model(probes[i].model, seeds[r], &mut |_| {}).summary
        });
        for (&(i, _), s) in jobs.iter().zip(done) {
            probes[i].runs.push(s);
        }
        // A cell that closed early leaves its unrun seeds off the bar.
        let open = probes.iter().filter(|p| p.cell(view).open(cap));
        let left: usize = open.map(|p| cap - p.runs.len()).sum();
        bar.set_length(bar.position() + left as u64);
    }
}

/// The title's seeds: `30 seeds`, or with `--adaptive` `at most 30 seeds (adaptive)`.
pub(super) fn seeds(spent: Option<&Spent>, n: usize) -> String {
    let seeds = plural(n as u64, "seed");
    match spent {
        Some(_) => format!("at most {seeds} in rounds of {ROUND} (adaptive)"),
        None => seeds,
    }
}

/// Where a cell's interval lies, for a recovery map.
fn side(v: &Verdict) -> Option<Side> {
    match v {
        Verdict::Recovery(cell) => Some(cell.side()),
        Verdict::Mean(_) => None,
    }
}

/// The table's `decided` header (none without `--adaptive`).
pub(super) fn headers(spent: Option<&Spent>) -> Vec<String> {
    spent.map(|_| "decided".to_string()).into_iter().collect()
}

/// A cell's `decided` column: `stays down`, `recovers` or `unclear`.
pub(super) fn columns(spent: Option<&Spent>, v: &Verdict) -> Vec<String> {
    let name = side(v).map_or("-", Side::name);
    spent.map(|_| name.to_string()).into_iter().collect()
}

/// A cell's `decided` JSON field.
pub(super) fn fields(spent: Option<&Spent>, v: &Verdict, o: &mut Value) {
    if let (Some(_), Some(s)) = (spent, side(v)) {
        o["decided"] = json!(s.name());
    }
}

impl Spent {
    /// The runs the map's cells and the added cells took.
    fn runs(&self, verdicts: &[Verdict]) -> (usize, usize) {
        let on_map = verdicts.iter().filter_map(|v| match v {
            Verdict::Recovery(c) => Some(c.runs),
            Verdict::Mean(_) => None,
        });
        let added = self.added.iter().map(|a| a.cell.runs);
        (on_map.sum(), added.sum())
    }

    /// The table's closing lines: the runs spent against the full map's, how many cells were
    /// decided, and the added cells.
    pub(super) fn table(&self, verdicts: &[Verdict], axes: (&Axis, &Axis)) -> String {
        let (on_map, added) = self.runs(verdicts);
        let unclear = verdicts
            .iter()
            .filter(|v| side(v) == Some(Side::Unclear))
            .count();
        let mut t = format!(
            "adaptive: {} on the map's cells and {} on {} added by --refine {}: {} of the full map's {} ({})\n{} of {} decided, {unclear} unclear at {}\n",
            plural(on_map as u64, "run"),
            fmt::int(added as u64),
            plural(self.added.len() as u64, "cell"),
            self.levels,
            fmt::int((on_map + added) as u64),
            fmt::int(self.full),
            fmt::pct((on_map + added) as f64 / self.full as f64),
            verdicts.len() - unclear,
            plural(verdicts.len() as u64, "cell"),
            plural(self.cap as u64, "seed"),
        );
        if self.added.is_empty() {
            return t;
        }
        let headers: Vec<String> = [axes.0.key.as_str(), axes.1.key.as_str(), "level", "runs"]
            .into_iter()
            .chain(["recovered", "stay down", "95% interval"])
            .chain(["median recovery", "verdict", "decided"])
            .map(String::from)
            .collect();
        let rows: Vec<Vec<String>> = self
            .added
            .iter()
            .map(|a| {
                let mut row = vec![a.x.clone(), a.y.clone(), a.level.to_string()];
                row.push(a.cell.runs.to_string());
                row.extend(verdict_columns(&Verdict::Recovery(a.cell.clone())));
                row.push(a.cell.side().name().to_string());
                row
            })
            .collect();
        t.push_str("\ncells added between neighbouring cells whose verdicts differ:\n\n");
        t.push_str(&text_table(&headers, &rows));
        t
    }

    /// The JSON's `adaptive` object: the rounds, the levels, the runs against the full map's,
    /// and the added cells with their verdicts.
    pub(super) fn json(&self, verdicts: &[Verdict]) -> Value {
        let (on_map, on_added) = self.runs(verdicts);
        let added: Vec<Value> = self
            .added
            .iter()
            .map(|a| {
                let mut o = json!({"x": a.x, "y": a.y, "level": a.level, "runs": a.cell.runs});
                super::shown::fields(&Verdict::Recovery(a.cell.clone()), &mut o);
                o["decided"] = json!(a.cell.side().name());
                o
            })
            .collect();
        json!({
            "round": ROUND,
            "refine": self.levels,
            "runs": on_map + on_added,
            "full_runs": self.full,
            "added": added,
        })
    }
}
