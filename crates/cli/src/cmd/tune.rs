//! `retrystorm tune MODEL`: the candidates of the `--vary` grid (or a Latin hypercube of it), run
//! on common seeds and narrowed by Kim & Nelson's KN procedure (`retrystorm_core::tune`), as a
//! table, a TOML snippet of the recommendation, the Pareto chart and JSON.

use crate::args::TuneArgs;
use crate::emit::{check_outputs, is_stdout};
use crate::grid::parse_axes;
use crate::model_args::{base_seed, load_inputs, load_with, pick_variant, read_model};
use crate::run::Runner;
use crate::sweep_file::{input_name, stamped, sweep_text};
use crate::text::plural;
use crate::{CliError, output, progress};
use retrystorm_core::expect::{self, Expectation};
use retrystorm_core::load::Override;
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::Summary;
use retrystorm_core::sweep::{
    Grid, SWEEP_SCHEMA_VERSION, SweepHeader, SweepRecord, parse_shard, shard_slice,
};
use retrystorm_core::tune::{self, Objective, Outcome, Settings, sample};
use retrystorm_report::{ParetoPoint, fmt, pareto_chart, text_table};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

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

/// Seeds per candidate in the first stage of successive halving (the fewest that give a
/// confidence interval).
const HALVING_FIRST_SEEDS: usize = 2;

fn value(s: &retrystorm_core::summary::Summary, m: &str) -> f64 {
    expect::metric(s, m).unwrap_or(f64::NAN)
}

pub fn tune(a: TuneArgs) -> Result<(), CliError> {
    // Everything that can be refused is refused before the first run.
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
    let objectives = objectives(&a)?;
    if a.svg.is_some() && objectives.len() < 2 {
        return Err(CliError::Input(
            "--svg draws the Pareto front of two objectives; give a second --minimize or --maximize".into(),
        ));
    }
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
    let indifference = tune::parse_indifference(&a.indifference, &objectives[0].metric)
        .map_err(|e| CliError::Input(format!("--indifference {}: {e}", a.indifference)))?;
    let (origin, text) = read_model(&a.model)?;
    let (scenario, inputs) = load_inputs(&a.model, &origin, &text)?;
    let only = match &a.variant {
        Some(v) => Some(pick_variant(&scenario, Some(v), &origin)?.name),
        None => None,
    };
    let keep = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let base_seed = base_seed(&a.model, &scenario.base);
    let grid = Grid {
        axes: parse_axes(&a.vary)?,
        variants: scenario
            .variants
            .iter()
            .map(|m| m.name.clone())
            .filter(|n| keep(n))
            .collect(),
        seeds: vec![base_seed],
    };
    // Without --vary the candidates are the file's variants; with one, nothing is searched and
    // the recommendation would be empty.
    if grid.axes.is_empty() && grid.variants.len() < 2 {
        return Err(CliError::Input(
            "tune needs settings to search: --vary KEY=V1,V2,... or KEY=FROM..TO:STEP (e.g. --vary retry.base=10ms..1s:10ms), or a model with several [[variant]]s; with one candidate there is nothing to recommend (has no effect)".into(),
        ));
    }
    let (sampling, points) = sample::candidates(&grid, a.candidates, base_seed);
    let mut cands = Vec::new();
    for p in points {
        let params = grid.params(p);
        let mut extra = Vec::new();
        for kv in grid.sets(p) {
            extra.push(Override::parse_as("--vary", &kv)?);
        }
        let models = load_with(&a.model, &origin, &text, &extra)?.variants;
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
    output::refuse_inputs(&outs)?;
    let k = cands.len();
    let n0 = a.first_stage as usize;
    let budget = a.budget.unwrap_or(20 * k as u64);
    let halving = a.halving.then_some(tune::halving::Halving {
        eta: a.eta as usize,
        r0: HALVING_FIRST_SEEDS,
    });
    // Without halving every candidate gets the first stage; with it, stage 1 and the top-up of
    // its survivors to the first stage.
    let (first, seeds) = match &halving {
        None => (k * n0, n0),
        Some(h) => (k * h.r0 + k.div_ceil(h.eta) * n0.saturating_sub(h.r0), h.r0),
    };
    if budget < first as u64 {
        return Err(CliError::Input(format!(
            "--budget {budget}: the first stage alone needs {} ({} x {seeds} seeds{})",
            plural(first as u64, "run"),
            plural(k as u64, "candidate"),
            if halving.is_some() {
                " and its survivors' top-up"
            } else {
                ""
            }
        )));
    }
    let settings = Settings {
        n0,
        alpha: 0.05,
        indifference,
        budget,
        halving,
    };
    let metrics = tune::metrics(&objectives, &constraints);
    let runner = Runner::new(a.model.jobs)?;
    let values_of = |s: &Summary| -> Vec<f64> { metrics.iter().map(|m| value(s, m)).collect() };
    let from = match &a.first_stage_from {
        Some(p) => Some(read_runs(
            p,
            &a,
            &scenario.name,
            &text,
            &grid,
            base_seed,
            inputs.clone(),
        )?),
        None => None,
    };
    let stored = |c: usize, r: usize| -> Option<&Summary> {
        let runs = &from.as_ref()?.runs;
        runs.get(&(cands[c].point, cands[c].variant_index, r))
    };
    if let Some(s) = &a.shard {
        let header = stamped(
            search_header(&a, &scenario.name, &text, &grid, base_seed)?,
            inputs,
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
    let ran_here = ran_here.into_inner();
    if let (Some(f), true) = (&from, ran_here > 0) {
        progress::note(&format!(
            "--first-stage-from {}: {} of the search's {} not in it; ran them here (merge every shard of a stage to spare them)",
            f.name,
            plural(ran_here, "run"),
            o.runs
        ));
    }

    let label = |c: usize| -> String {
        let mut parts: Vec<String> = cands[c]
            .params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if grid.variants.len() > 1 {
            parts.push(format!("variant {}", cands[c].variant));
        }
        format!("#{} {}", c + 1, parts.join(" "))
    };
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
        let (ox, oy) = (&objectives[0], &objectives[1]);
        let pts: Vec<ParetoPoint> = (0..k)
            .filter(|c| {
                o.feasibility[*c]
                    .iter()
                    .all(|f| *f == tune::Feasibility::Feasible)
            })
            .filter(|c| o.status[*c] != tune::Status::Infeasible)
            .map(|c| ParetoPoint {
                label: format!("#{}", c + 1),
                x: o.estimate(c, &ox.metric).map_or(f64::NAN, |e| e.mean),
                y: o.estimate(c, &oy.metric).map_or(f64::NAN, |e| e.mean),
                front: o.pareto.contains(&c),
                best: o.best == Some(c),
            })
            .collect();
        let dir = |o: &Objective| {
            format!(
                "{} ({})",
                o.metric,
                if o.maximize { "maximise" } else { "minimise" }
            )
        };
        let svg = pareto_chart(
            &format!("{}: Pareto front of the feasible candidates", scenario.name),
            &dir(ox),
            &dir(oy),
            &pts,
        )
        .map_err(|e| CliError::Output(format!("--svg: {e}")))?;
        output::write(output::Out::new("--svg", p), &svg)?;
    }
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

#[allow(clippy::too_many_arguments)]
fn text_view(
    a: &TuneArgs,
    model: &str,
    cands: &[Candidate],
    grid: &Grid,
    objectives: &[Objective],
    constraints: &[Expectation],
    o: &Outcome,
    sampling: sample::Sampling,
    budget: u64,
    label: &dyn Fn(usize) -> String,
) -> String {
    let k = cands.len();
    let halving = if a.halving {
        format!(
            ", successive halving (eta {}, from {HALVING_FIRST_SEEDS} seeds)",
            a.eta
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "{model}: tune over {} ({}){halving}, {} first-stage seeds, KN at 95%, indifference {} {}\n{} of a budget of {}\n\n",
        plural(k as u64, "candidate"),
        sampling.as_str(),
        a.first_stage,
        fmt::num(o.delta),
        objectives[0].metric,
        plural(o.runs, "run"),
        fmt::int(budget),
    );
    let mut headers: Vec<String> = vec!["#".into()];
    headers.extend(grid.axes.iter().map(|x| x.key.clone()));
    if grid.variants.len() > 1 {
        headers.push("variant".into());
    }
    headers.push("seeds".into());
    headers.extend(o.metrics.iter().cloned());
    headers.push("verdict".into());
    let mut rows = Vec::new();
    for (c, cand) in cands.iter().enumerate() {
        let mut row = vec![format!("{}", c + 1)];
        row.extend(cand.params.iter().map(|(_, v)| v.clone()));
        if grid.variants.len() > 1 {
            row.push(cand.variant.clone());
        }
        row.push(o.values[c][0].len().to_string());
        for m in &o.metrics {
            let e = o.estimate(c, m).expect("measured");
            row.push(if e.mean.is_nan() {
                "absent".into()
            } else {
                fmt::pm(e.mean, e.half_width.is_finite().then_some(e.half_width))
            });
        }
        let mut verdict = o.status[c].as_str().to_string();
        if let Some(s) = o.halved[c] {
            verdict.push_str(&format!(" at stage {s}"));
        }
        let undecided: Vec<&str> = constraints
            .iter()
            .zip(&o.feasibility[c])
            .filter(|(_, f)| **f == tune::Feasibility::Undecided)
            .map(|(e, _)| e.metric.as_str())
            .collect();
        if o.status[c] != tune::Status::Infeasible && !undecided.is_empty() {
            verdict.push_str(&format!(" (undecided: {})", undecided.join(", ")));
        }
        if o.pareto.contains(&c) && objectives.len() > 1 {
            verdict.push_str(", pareto");
        }
        row.push(verdict);
        rows.push(row);
    }
    out.push_str(&text_table(&headers, &rows));
    out.push('\n');
    match o.best {
        Some(b) => {
            out.push_str(&format!("recommended: {}\n", label(b)));
            if o.resolved() {
                out.push_str("every decision made at 95% confidence within the budget\n");
            }
        }
        None => out.push_str("no candidate meets every constraint\n"),
    }
    for (x, y) in &o.open {
        if x == y {
            out.push_str(&format!(
                "open: {} leads but its constraints are undecided\n",
                label(*x)
            ));
        } else {
            out.push_str(&format!(
                "open: {} vs {}: not separated within the budget (raise --budget or widen --indifference)\n",
                label(*x),
                label(*y)
            ));
        }
    }
    if let Some(b) = o.best {
        out.push_str("\n# paste into the model");
        if grid.variants.len() > 1 {
            out.push_str(&format!(" (on top of variant {})", cands[b].variant));
        }
        out.push('\n');
        out.push_str(&tune::snippet(&cands[b].params));
    } else if let Some(c) = o.closest {
        out.push_str(&format!("closest: {}\n", label(c)));
    }
    out
}

fn json_view(
    model: &str,
    cands: &[Candidate],
    objectives: &[Objective],
    constraints: &[Expectation],
    o: &Outcome,
    sampling: sample::Sampling,
    budget: u64,
) -> serde_json::Value {
    let num = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
    let candidates: Vec<serde_json::Value> = (0..cands.len())
        .map(|c| {
            let metrics: serde_json::Map<String, serde_json::Value> = o
                .metrics
                .iter()
                .map(|m| {
                    let e = o.estimate(c, m).expect("measured");
                    (m.clone(), json!({"mean": num(e.mean), "half_width": num(e.half_width)}))
                })
                .collect();
            let mut v = json!({
                "id": c + 1,
                "params": cands[c].params,
                "variant": cands[c].variant,
                "seeds": o.values[c][0].len(),
                "metrics": metrics,
                "constraints": constraints.iter().zip(&o.feasibility[c]).map(|(e, f)| json!({"constraint": e.to_string(), "verdict": f.as_str()})).collect::<Vec<_>>(),
                "status": o.status[c].as_str(),
                "pareto": o.pareto.contains(&c),
            });
            if let Some(s) = o.halved[c] {
                v["halving_stage"] = json!(s);
            }
            v
        })
        .collect();
    json!({
        "schema_version": 1,
        "kind": "tune",
        "model": model,
        "sampling": sampling.as_str(),
        "procedure": if o.halved.iter().any(Option::is_some) { "successive-halving+kim-nelson-kn" } else { "kim-nelson-kn" },
        "confidence": 0.95,
        "objectives": objectives.iter().map(|x| json!({"metric": x.metric, "goal": if x.maximize {"maximize"} else {"minimize"}})).collect::<Vec<_>>(),
        "constraints": constraints.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        "indifference": num(o.delta),
        "budget": budget,
        "runs": o.runs,
        "resolved": o.resolved(),
        "best": o.best.map(|b| b + 1),
        "closest": o.closest.map(|b| b + 1),
        "recommended_toml": o.best.map(|b| tune::snippet(&cands[b].params)),
        "pareto": o.pareto.iter().map(|c| c + 1).collect::<Vec<_>>(),
        "open": o.open.iter().map(|(x, y)| [x + 1, y + 1]).collect::<Vec<_>>(),
        "candidates": candidates,
    })
}

/// The replications a file of a search's runs has room for per candidate: the most any search
/// asks for, whatever its `--first-stage` and `--budget`.
const SEARCH_SEEDS: usize = tune::MAX_REPLICATIONS;

/// The runs of `--first-stage-from`, by grid point, variant (its index in the grid) and
/// replication.
struct Runs {
    name: String,
    runs: BTreeMap<(u64, usize, usize), Summary>,
    /// Written by `tune --shard` (merged), so the next stage's shards merge with it; otherwise
    /// a sweep of the same grid, or the first stage of an older `tune --shard`.
    search: bool,
}

/// The flags a run's result depends on beyond the model file and the grid: `--set`, and
/// `--max-events` as the `max_events=N` it stands for.
fn run_sets(a: &TuneArgs) -> Vec<String> {
    let mut sets = a.model.sets.clone();
    if let Some(n) = a.model.max_events {
        sets.push(format!("max_events={n}"));
    }
    sets
}

/// The header of the file of a search's runs (`tune --shard`): the model file, [`run_sets`],
/// the `--vary` axes, the variants searched and room for [`SEARCH_SEEDS`] seeds from the base
/// seed. The search's other flags are not in it, as a run's result does not depend on them.
fn search_header(
    a: &TuneArgs,
    model: &str,
    text: &str,
    grid: &Grid,
    base_seed: u64,
) -> Result<SweepHeader, CliError> {
    let g = Grid {
        seeds: stats::replication_seeds(base_seed, SEARCH_SEEDS as u32),
        ..grid.clone()
    };
    let jobs = g.checked_jobs().ok_or_else(|| {
        CliError::Input(format!(
            "--vary: the grid is too large to number its runs in a file (its points x variants x {SEARCH_SEEDS} seeds pass 2^64); --shard and --first-stage-from need fewer points"
        ))
    })?;
    Ok(SweepHeader::new(model, text, &run_sets(a), &g, jobs).of_search("tune"))
}

/// What makes `theirs` the runs of another search than `ours` (with the `--set` flags `sets`),
/// if anything: a different model file, flags, axes, variants or seeds.
fn other_search(ours: &SweepHeader, theirs: &SweepHeader, sets: &[String]) -> Option<String> {
    if ours.model_hash != theirs.model_hash || ours.model != theirs.model {
        return Some("the model file differs".into());
    }
    if theirs.sets != sets {
        return Some(format!(
            "its --set (and --max-events) flags were {:?}, now {sets:?}",
            theirs.sets
        ));
    }
    if ours.grid.axes != theirs.grid.axes {
        return Some("its --vary axes differ".into());
    }
    if ours.grid.variants != theirs.grid.variants {
        return Some(format!(
            "its variants were {:?}, now {:?} (--variant)",
            theirs.grid.variants, ours.grid.variants
        ));
    }
    let base = ours.grid.seeds[0];
    if theirs.grid.seeds.first() != Some(&base) {
        return Some(format!(
            "its seeds start at {}, now at {base} (--seed)",
            theirs.grid.seeds[0]
        ));
    }
    let n = theirs.grid.seeds.len();
    if theirs.grid.seeds != stats::replication_seeds(base, n as u32) {
        return Some("its seeds are not SEED, SEED+1, ...".into());
    }
    // Where the runs came from, when both headers say it (an older file does not).
    if let (Some(v), Some(t)) = (&ours.retrystorm, &theirs.retrystorm)
        && v != t
    {
        return Some(format!(
            "it was made by retrystorm {t}, this is retrystorm {v}"
        ));
    }
    if let (Some(a), Some(b)) = (&ours.inputs, &theirs.inputs)
        && let Some(r) = a.keys().chain(b.keys()).find(|r| a.get(*r) != b.get(*r))
    {
        return Some(format!("{} changed since", input_name(r)));
    }
    let ours = SweepHeader {
        retrystorm: theirs.retrystorm.clone(),
        inputs: theirs.inputs.clone(),
        ..ours.clone()
    };
    (theirs.search.is_some() && ours != *theirs).then(|| "its header differs".into())
}

/// Reads `--first-stage-from`: the merged runs of `tune --shard` for this search, or a sweep
/// of the same grid (the first stage of an older `tune --shard` is one), refused when written
/// for another model, flags, axes, variants or seed.
fn read_runs(
    path: &Path,
    a: &TuneArgs,
    model: &str,
    text: &str,
    grid: &Grid,
    base_seed: u64,
    inputs: BTreeMap<String, String>,
) -> Result<Runs, CliError> {
    let name = path.display().to_string();
    let ours = stamped(search_header(a, model, text, grid, base_seed)?, inputs);
    let f = crate::sweep_file::read_sweep(path)?;
    let search = f.header.search.is_some();
    let sets = if search {
        ours.sets.clone()
    } else {
        a.model.sets.clone()
    };
    if let Some(why) = other_search(&ours, &f.header, &sets) {
        return Err(CliError::Input(format!(
            "--first-stage-from {name}: written by another search ({why}); give this search's merged runs, or run without --first-stage-from"
        )));
    }
    if f.torn {
        progress::note(&format!(
            "{name}: ignoring a torn last line (an interrupted write)"
        ));
    }
    let g = &f.header.grid;
    // A run given twice must be the same run, as `merge` requires: otherwise which one the
    // search took would decide its result.
    let mut seen: BTreeMap<u64, &SweepRecord> = BTreeMap::new();
    for r in &f.records {
        match seen.get(&r.job) {
            Some(old) if *old != r => {
                return Err(CliError::Input(format!(
                    "--first-stage-from {name}: run {} is in it twice with different results; merge refuses such runs too: rerun or remerge the shards",
                    r.job
                )));
            }
            Some(_) => {}
            None => {
                seen.insert(r.job, r);
            }
        }
    }
    let runs = f
        .records
        .iter()
        .map(|r| {
            let j = g.job(r.job);
            ((j.point, j.variant, j.replication), r.summary.clone())
        })
        .collect();
    Ok(Runs { name, runs, search })
}

/// What a stage is, for the messages of `--shard`.
fn stage_name(stage: tune::Stage, a: &TuneArgs, contenders: usize) -> String {
    match stage {
        tune::Stage::Halving(s) => format!("successive-halving stage {s}"),
        tune::Stage::First if a.halving => format!(
            "KN's first stage (the survivors' top-up to {} seeds)",
            a.first_stage
        ),
        tune::Stage::First => "the first stage".into(),
        tune::Stage::Kn(r) => format!(
            "KN stage {} ({} at seed {})",
            r + 1,
            plural(contenders as u64, "contender"),
            r + 1
        ),
    }
}

/// `--shard I/N --out FILE`: replays the search against `--first-stage-from`'s runs (none
/// without it), takes the first stage it cannot complete, runs slice `I` of `N` of that stage's
/// missing runs (positions `j` with `j mod N = I - 1`) and writes them as a sweep file with the
/// search's header; `merge` joins them with the runs so far, and the next round takes the
/// merged file. With every run there it says the search is complete and writes nothing.
fn shard_stage(
    a: &TuneArgs,
    shard: &str,
    header: &SweepHeader,
    from: Option<&Runs>,
    cands: &[Candidate],
    replay: tune::Replay,
    runner: &Runner,
) -> Result<(), CliError> {
    let (i, n) =
        parse_shard(shard).map_err(|e| CliError::Input(format!("--shard {shard}: {e}")))?;
    let out = a.out.as_deref().ok_or_else(|| {
        CliError::Input(
            "--shard: a shard's runs go to a sweep file: give --out SHARD.jsonl, join the shards with `retrystorm merge`, then tune with --first-stage-from MERGED.jsonl".into(),
        )
    })?;
    if let Some(f) = from.filter(|f| !f.search) {
        return Err(CliError::Input(format!(
            "--first-stage-from {}: a sweep file (or an older `tune --shard` first stage), not the runs of `tune --shard`, so the next stage's shards would not merge with it; finish the search from it without --shard, or shard the search afresh",
            f.name
        )));
    }
    let (stage, batch, missing) = match replay {
        tune::Replay::Done(o) => {
            output::print(&format!(
                "{}: the tune search is complete: {} holds all {} it asks for; nothing to shard\n",
                header.model,
                from.map_or("the file", |f| f.name.as_str()),
                plural(o.runs, "run")
            ))?;
            progress::note("next: run the same tune without --shard and --out for the result");
            return Ok(());
        }
        tune::Replay::Needs {
            stage,
            batch,
            missing,
        } => (stage, batch, missing),
    };
    let what = stage_name(stage, a, batch.len());
    if from.is_none() && i > missing.len() as u64 {
        return Err(CliError::Input(format!(
            "--shard {shard}: {what} has {}, so this shard would have none",
            plural(missing.len() as u64, "run")
        )));
    }
    let mine = shard_slice(&missing, i, n);
    // Claimed before the runs: two shards given one --out cannot both write it.
    let claim = output::claim(
        output::Out::new("--out", out),
        "a shard's runs go to a new file: remove it (merged already?), or give another --out",
    )?;
    let grid = &header.grid;
    let variants = grid.variants.len() as u64;
    let bar = progress::bar(mine.len() as u64, "runs");
    let mut records: Vec<SweepRecord> = runner.map(&mine, &bar, |(c, r)| {
        let cand = &cands[*c];
        let seed = grid.seeds[*r];
        let summary = retrystorm_core::run_summary(&cand.model, seed).summary;
        SweepRecord {
            schema_version: SWEEP_SCHEMA_VERSION,
            kind: "run".into(),
            job: (cand.point * variants + cand.variant_index as u64) * SEARCH_SEEDS as u64
                + *r as u64,
            point: cand.point,
            params: cand.params.clone(),
            variant: cand.variant.clone(),
            replication: *r,
            seed,
            summary,
        }
    });
    bar.finish_and_clear();
    records.sort_by_key(|r| r.job);
    claim.write(&sweep_text(header, &records))?;
    let stored = batch.len() - missing.len();
    let of = match from {
        Some(f) if stored > 0 => format!(
            "{} missing ({stored} more already in {})",
            plural(missing.len() as u64, "run"),
            f.name
        ),
        _ => plural(missing.len() as u64, "run"),
    };
    output::print(&format!(
        "{}: tune, {what}: shard {i}/{n}: {} of its {of} into {}\n",
        header.model,
        plural(records.len() as u64, "run"),
        out.display(),
    ))?;
    let next = match from {
        Some(f) => format!(
            "`retrystorm merge {0} SHARD.jsonl... -o {0}` (the runs so far and this stage's), then the same tune with --first-stage-from {0}",
            f.name
        ),
        None => "`retrystorm merge SHARD.jsonl... -o MERGED.jsonl`, then the same tune with --first-stage-from MERGED.jsonl".into(),
    };
    progress::note(&format!(
        "next: when the {n} shards of this stage are done, {next}: with --shard I/{n} for the next stage (it says when the search is complete), or without --shard to finish it here"
    ));
    Ok(())
}
