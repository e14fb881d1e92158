//! `retrystorm tune MODEL`: the candidates of the `--vary` grid (or a Latin hypercube of it), run
//! on common seeds and narrowed by Kim & Nelson's KN procedure (`retrystorm_core::tune`), as a
//! table, a TOML snippet of the recommendation, the Pareto chart and JSON.

mod chart;
mod shard;
mod view;

use crate::args::TuneArgs;
use crate::emit::{check_outputs, is_stdout};
use crate::grid::{MAX_RUNS_PER_PROCESS, parse_axes};
use crate::model_args::{Resolved, pick_variant};
use crate::run::Runner;
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_core::expect::{self, Expectation};
use retrystorm_core::model::Model;
use retrystorm_core::summary::Summary;
use retrystorm_core::sweep::Grid;
use retrystorm_core::tune::{self, Objective, Outcome, Settings, sample};
use retrystorm_report::sweep::header::stamped;
use shard::{read_runs, search_header, shard_stage};
use view::{json_view, text_view};

/// One candidate: a grid point and a variant of the file.
struct Candidate {
    params: Vec<(String, String)>,
    variant: String,
    model: Model,
    /// Its grid point and variant index: its place in the first stage's sweep file.
    point: u64,
    variant_index: usize,
}

/// The objectives in order: every `--minimize`, then every `--maximize`; names checked.
fn objectives(a: &TuneArgs) -> Result<Vec<Objective>, CliError> {
    let mut out = Vec::new();
    for (flag, list, maximize) in [
        ("--minimize", &a.minimize, false),
        ("--maximize", &a.maximize, true),
    ] {
        for m in list {
            expect::check_metric(m).map_err(|e| CliError::Input(format!("{flag} {m}: {e}")))?;
            if let Some(w) = fails_fast_warning(flag, m, maximize) {
                eprintln!("warning: {w}");
            }
            out.push(Objective {
                metric: m.clone(),
                maximize,
            });
        }
    }
    if out.is_empty() {
        return Err(CliError::Input(
            "tune needs an objective: --minimize METRIC or --maximize METRIC, e.g. --minimize amplification".into(),
        ));
    }
    Ok(out)
}

/// `completion_ms` times every intent, the failed ones too (when their client gave up): a
/// candidate that gives up sooner completes sooner, so minimising it recommends failing fast.
fn fails_fast_warning(flag: &str, metric: &str, maximize: bool) -> Option<String> {
    let rest = metric.strip_prefix("completion_ms.")?;
    (!maximize).then(|| {
        format!(
            "{flag} {metric}: completion_ms counts failed intents too (they complete when their client gives up), so the candidate that fails fastest can win; to minimise the time to a success use success_ms.{rest}, with a constraint on failed"
        )
    })
}

/// Seeds per candidate in the first stage of successive halving (the fewest that give a
/// confidence interval).
const HALVING_FIRST_SEEDS: usize = 2;

fn value(s: &retrystorm_core::summary::Summary, m: &str) -> f64 {
    expect::metric(s, m).unwrap_or(f64::NAN)
}

pub fn tune(a: TuneArgs) -> Result<(), CliError> {
    // Everything that can be refused is refused before the first run.
    let outs = outputs(&a)?;
    let objectives = objectives(&a)?;
    let constraints = constraints(&a)?;
    let indifference = tune::parse_indifference(&a.indifference, &objectives[0].metric)
        .map_err(|e| CliError::Input(format!("--indifference {}: {e}", a.indifference)))?;
    let model = Resolved::read_variant(&a.model, a.study.variant.as_deref())?;
    let (scenario, text, base_seed) = (&model.scenario, &model.text, model.base_seed);
    let (grid, sampling, cands) = candidates(&a, &model)?;
    output::refuse_inputs(&outs)?;
    let k = cands.len();
    let settings = settings(&a, k, indifference)?;
    let budget = settings.budget;
    let metrics = tune::metrics(&objectives, &constraints);
    let runner = Runner::new(a.model.jobs)?;
    let values_of = |s: &Summary| -> Vec<f64> { metrics.iter().map(|m| value(s, m)).collect() };
    let from = match &a.first_stage_from {
        Some(p) => Some(read_runs(
            p,
            &a,
            &scenario.name,
            text,
            &grid,
            base_seed,
            model.inputs.clone(),
        )?),
        None => None,
    };
    let stored = |c: usize, r: usize| -> Option<&Summary> {
        let runs = &from.as_ref()?.runs;
        runs.get(&(cands[c].point, cands[c].variant_index, r))
    };
    if let Some(s) = &a.shard {
        let header = stamped(
            search_header(&a, &scenario.name, text, &grid, base_seed)?,
            model.inputs.clone(),
        );
        let lookup = |c: usize, r: usize| stored(c, r).map(values_of);
        let replay = tune::replay(k, &objectives, &constraints, &settings, &lookup);
        return shard_stage(&a, s, &header, from.as_ref(), &cands, replay, &runner);
    }
    let bar = progress::bar(budget, "runs");
    let ran_here = std::sync::atomic::AtomicU64::new(0);
    let mut batch = |asked: &[(usize, usize)]| -> Vec<Vec<f64>> {
        runner.map(asked, &bar, |(c, r)| match stored(*c, *r) {
            Some(s) => values_of(s),
            None => {
                ran_here.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let seed = base_seed.wrapping_add(*r as u64);
                values_of(&retrystorm_core::run_summary(&cands[*c].model, seed).summary)
            }
        })
    };
    let o = tune::search(k, &objectives, &constraints, &settings, &mut batch);
    bar.finish_and_clear();
    if let Some(f) = &from {
        note_ran_here(f, ran_here.into_inner(), o.runs);
    }

    let label = |c: usize| label(&cands, &grid, c);
    let json_to_stdout = a.json.as_deref().is_some_and(is_stdout);
    if !json_to_stdout {
        output::print(&text_view(
            &a,
            &scenario.name,
            &cands,
            &grid,
            &objectives,
            &constraints,
            &o,
            sampling,
            budget,
            &label,
        ))?;
    }
    if let Some(p) = &a.json {
        let v = json_view(
            &scenario.name,
            &cands,
            &objectives,
            &constraints,
            &o,
            sampling,
            budget,
        );
        let mut t = serde_json::to_string_pretty(&v).expect("JSON of plain values");
        t.push('\n');
        output::write(output::Out::new("--json", p), &t)?;
    }
    if let Some(p) = &a.svg {
        chart::write_chart(p, &scenario.name, &objectives, &o, &cands, &grid)?;
    }
    verdict(&o, &label)
}

/// With `--first-stage-from`: how many of the search's runs were not in the file and ran here.
fn note_ran_here(f: &shard::Runs, ran_here: u64, runs: u64) {
    if ran_here > 0 {
        progress::note(&format!(
            "--first-stage-from {}: {} of the search's {runs} not in it; ran them here (merge every shard of a stage to spare them)",
            f.name,
            plural(ran_here, "run"),
        ));
    }
}

/// The files `tune` writes, checked (and `--seeds`, which tune decides itself, refused).
fn outputs(a: &TuneArgs) -> Result<Vec<output::Out<'_>>, CliError> {
    let mut outs = Vec::new();
    if let Some(p) = &a.json {
        outs.push(output::Out::new("--json", p));
    }
    if let Some(p) = &a.svg {
        outs.push(output::Out::new("--svg", p));
    }
    if let Some(p) = &a.out {
        outs.push(output::Out::new("--out", p));
    }
    check_outputs(&outs, &a.model)?;
    if let Some(p) = &a.first_stage_from {
        output::check(&outs, &[("the --first-stage-from runs file", p.as_path())])?;
    }
    if a.model.seeds != 1 {
        return Err(CliError::Input(
            "tune adds seeds itself; give the first stage with --first-stage N, not --seeds".into(),
        ));
    }
    Ok(outs)
}

/// The `--constraint` flags: each holds for every candidate on the mean over seeds.
fn constraints(a: &TuneArgs) -> Result<Vec<Expectation>, CliError> {
    let mut constraints = Vec::new();
    for c in &a.constraints {
        let e = Expectation::parse_from(&format!("--constraint {c:?}"), c)?;
        if e.variant.is_some() || e.over != expect::Over::All {
            return Err(CliError::Input(format!(
                "--constraint {c:?}: a constraint holds for every candidate on the mean over seeds; drop variant= and over="
            )));
        }
        constraints.push(e);
    }
    Ok(constraints)
}

/// The search's settings for `k` candidates: the first stage fits `--budget` (20 runs a
/// candidate by default).
fn settings(
    a: &TuneArgs,
    k: usize,
    indifference: tune::Indifference,
) -> Result<Settings, CliError> {
    let budget = a.budget.unwrap_or(20 * k as u64);
    let (first, seeds, halving) = first_stage(a, k);
    if budget < first {
        return Err(CliError::Input(format!(
            "--budget {budget}: the first stage alone needs {} ({} x {seeds} seeds{})",
            plural(first, "run"),
            plural(k as u64, "candidate"),
            if halving.is_some() {
                " and its survivors' top-up"
            } else {
                ""
            }
        )));
    }
    let settings = Settings {
        n0: a.first_stage as usize,
        alpha: 0.05,
        indifference,
        budget,
        halving,
    };
    Ok(settings)
}

/// The first stage of a search of `k` candidates: its runs, the seeds a candidate gets in it,
/// and the halving that shapes it. Without halving every candidate gets the first stage; with
/// it, stage 1 and the top-up of its survivors to the first stage.
fn first_stage(a: &TuneArgs, k: usize) -> (u64, usize, Option<tune::halving::Halving>) {
    let n0 = a.first_stage as usize;
    let halving = a.halving.then_some(tune::halving::Halving {
        eta: a.eta as usize,
        r0: HALVING_FIRST_SEEDS,
    });
    let (first, seeds) = match &halving {
        None => (k * n0, n0),
        Some(h) => (k * h.r0 + k.div_ceil(h.eta) * n0.saturating_sub(h.r0), h.r0),
    };
    (first as u64, seeds, halving)
}

/// Refuses, before any candidate is loaded, a first stage of more than
/// [`MAX_RUNS_PER_PROCESS`] runs in this process (unsharded, it all runs before the search says
/// anything), saying how to split it.
fn check_first_stage_size(a: &TuneArgs, points: usize, variants: usize) -> Result<(), CliError> {
    let k = points * variants;
    let (first, seeds, _) = first_stage(a, k);
    if a.shard.is_some() || a.first_stage_from.is_some() || first <= MAX_RUNS_PER_PROCESS {
        return Ok(());
    }
    Err(CliError::Input(format!(
        "{}: the first stage would run {} ({} x {seeds} seeds) in this process; at most {MAX_RUNS_PER_PROCESS} per process: split it with --shard I/{} --out SHARD.jsonl, `retrystorm merge` the shards, then tune with --first-stage-from MERGED.jsonl (or search fewer candidates)",
        if points as u64 == a.candidates {
            format!("--candidates {}", a.candidates)
        } else {
            "--vary".to_string()
        },
        plural(first, "run"),
        plural(k as u64, "candidate"),
        first.div_ceil(MAX_RUNS_PER_PROCESS)
    )))
}

/// The candidates: the `--vary` grid's points (all, or `--candidates` of them by Latin
/// hypercube) crossed with the file's variants (or `--variant`), each loaded.
fn candidates(
    a: &TuneArgs,
    model: &Resolved,
) -> Result<(Grid, sample::Sampling, Vec<Candidate>), CliError> {
    let only = match &a.study.variant {
        Some(v) => Some(pick_variant(&model.scenario, Some(v), &model.origin)?.name),
        None => None,
    };
    let keep = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let grid = Grid {
        axes: parse_axes(&a.study.vary)?,
        variants: model
            .scenario
            .variants
            .iter()
            .map(|m| m.name.clone())
            .filter(|n| keep(n))
            .collect(),
        seeds: vec![model.base_seed],
    };
    // Without --vary the candidates are the file's variants; with one, nothing is searched and
    // the recommendation would be empty.
    if grid.axes.is_empty() && grid.variants.len() < 2 {
        return Err(CliError::Input(
            "tune needs settings to search: --vary KEY=V1,V2,... or KEY=FROM..TO:STEP (e.g. --vary retry.base=10ms..1s:10ms), or a model with several [[variant]]s; with one candidate there is nothing to recommend (has no effect)".into(),
        ));
    }
    let (sampling, points) = sample::candidates(&grid, a.candidates, model.base_seed);
    let rows = model.scenario.base.workload.replay.arrivals.len() as u64;
    crate::grid::check_candidates(points.len() as u64, grid.variants.len() as u64, rows)?;
    check_first_stage_size(a, points.len(), grid.variants.len())?;
    let mut cands = Vec::new();
    for p in points {
        let params = grid.params(p);
        let models = model.at(&grid, p)?.variants;
        for m in models.into_iter().filter(|m| keep(&m.name)) {
            cands.push(Candidate {
                params: params.clone(),
                variant_index: grid.variants.iter().position(|v| *v == m.name).unwrap_or(0),
                variant: m.name.clone(),
                model: m,
                point: p,
            });
        }
    }
    Ok((grid, sampling, cands))
}

/// A candidate as the messages name it: `#N key=value ... [variant V]`.
fn label(cands: &[Candidate], grid: &Grid, c: usize) -> String {
    let mut parts: Vec<String> = cands[c]
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if grid.variants.len() > 1 {
        parts.push(format!("variant {}", cands[c].variant));
    }
    format!("#{} {}", c + 1, parts.join(" "))
}

/// The exit: a recommendation, else the closest candidate or the budget's shortfall.
fn verdict(o: &Outcome, label: &dyn Fn(usize) -> String) -> Result<(), CliError> {
    match (o.best, o.closest) {
        (Some(_), _) => Ok(()),
        (None, Some(c)) => Err(CliError::Failed(format!(
            "no candidate meets every constraint; the closest is {}",
            label(c)
        ))),
        (None, None) => Err(CliError::Failed(
            "no candidate is known to meet every constraint within the budget (see the undecided ones); raise --budget".into(),
        )),
    }
}
