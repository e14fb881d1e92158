//! `retrystorm tune MODEL`: the candidates of the `--vary` grid (or a Latin hypercube of it), run
//! on common seeds and narrowed by Kim & Nelson's KN procedure (`retrystorm_core::tune`), as a
//! table, a TOML snippet of the recommendation, the Pareto chart and JSON.

use crate::args::TuneArgs;
use crate::commands::{check_outputs, is_stdout, load_with, parse_axes, plural, pool, read_model};
use crate::{CliError, output, progress};
use rayon::prelude::*;
use retrystorm_core::expect::{self, Expectation};
use retrystorm_core::load::Override;
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::Summary;
use retrystorm_core::sweep::{Grid, SWEEP_SCHEMA_VERSION, SweepHeader, SweepRecord, parse_shard};
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
    let scenario = load_with(&a.model, &origin, &text, &[])?;
    let only = match &a.variant {
        Some(v) => Some(crate::commands::pick_variant(&scenario, Some(v), &origin)?.name),
        None => None,
    };
    let keep = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let base_seed = crate::commands::base_seed(&a.model, &scenario.base);
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
    let pool = pool(a.model.jobs)?;
    // The first stage as a sweep: its header, and where each (candidate, replication) sits.
    let stage = Grid {
        seeds: stats::replication_seeds(base_seed, a.first_stage),
        ..grid.clone()
    };
    let jobs = stage.checked_jobs().unwrap_or(u64::MAX);
    let header = SweepHeader::new(&scenario.name, &text, &a.model.sets, &stage, jobs);
    let job_of = |c: &Candidate, r: usize| {
        (c.point * stage.variants.len() as u64 + c.variant_index as u64) * n0 as u64 + r as u64
    };
    if let Some(s) = &a.shard {
        return first_stage_shard(a.out.as_deref(), s, &header, &cands, n0, &job_of, &pool);
    }
    let stored = match &a.first_stage_from {
        Some(p) => first_stage_from(p, &header, &cands, n0, &job_of)?,
        None => BTreeMap::new(),
    };
    let bar = progress::bar(budget, "runs");
    let mut batch = |asked: &[(usize, usize)]| -> Vec<Vec<f64>> {
        pool.install(|| {
            asked
                .par_iter()
                .map(|(c, r)| {
                    let s = match stored.get(&job_of(&cands[*c], *r)) {
                        Some(s) => s.clone(),
                        None => {
                            let seed = base_seed.wrapping_add(*r as u64);
                            retrystorm_core::run_summary(&cands[*c].model, seed).summary
                        }
                    };
                    bar.inc(1);
                    metrics.iter().map(|m| value(&s, m)).collect()
                })
                .collect()
        })
    };
    let o = tune::search(k, &objectives, &constraints, &settings, &mut batch);
    bar.finish_and_clear();

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

/// `--shard I/N --out FILE`: runs slice `I` of the first stage (every candidate's first
/// `--first-stage` seeds, round-robin over the runs) and writes it as a sweep file; `merge` joins
/// the slices and `--first-stage-from MERGED.jsonl` continues the search from them.
fn first_stage_shard(
    out: Option<&Path>,
    shard: &str,
    header: &SweepHeader,
    cands: &[Candidate],
    n0: usize,
    job_of: &(dyn Fn(&Candidate, usize) -> u64 + Sync),
    pool: &rayon::ThreadPool,
) -> Result<(), CliError> {
    let (i, n) =
        parse_shard(shard).map_err(|e| CliError::Input(format!("--shard {shard}: {e}")))?;
    let out = out.ok_or_else(|| {
        CliError::Input(
            "--shard: a shard's first-stage runs go to a sweep file: give --out SHARD.jsonl, join the shards with `retrystorm merge`, then tune with --first-stage-from MERGED.jsonl".into(),
        )
    })?;
    let all: Vec<(usize, usize)> = (0..cands.len())
        .flat_map(|c| (0..n0).map(move |r| (c, r)))
        .collect();
    if i > all.len() as u64 {
        return Err(CliError::Input(format!(
            "--shard {shard}: the first stage has {}, so this shard would have none",
            plural(all.len() as u64, "run")
        )));
    }
    let mine: Vec<(usize, usize)> = all
        .into_iter()
        .enumerate()
        .filter(|(k, _)| *k as u64 % n == i - 1)
        .map(|(_, x)| x)
        .collect();
    let grid = &header.grid;
    let bar = progress::bar(mine.len() as u64, "runs");
    let mut records: Vec<SweepRecord> = pool.install(|| {
        mine.par_iter()
            .map(|(c, r)| {
                let cand = &cands[*c];
                let seed = grid.seeds[*r];
                let summary = retrystorm_core::run_model(&cand.model, seed, &mut |_| {}).summary;
                bar.inc(1);
                SweepRecord {
                    schema_version: SWEEP_SCHEMA_VERSION,
                    kind: "run".into(),
                    job: job_of(cand, *r),
                    point: cand.point,
                    params: cand.params.clone(),
                    variant: cand.variant.clone(),
                    replication: *r,
                    seed,
                    summary,
                }
            })
            .collect()
    });
    bar.finish_and_clear();
    records.sort_by_key(|r| r.job);
    let mut t = retrystorm_report::sweep::header_line(header);
    for r in &records {
        t.push_str(&retrystorm_report::sweep::record_line(r));
    }
    output::write(output::Out::new("--out", out), &t)?;
    output::print(&format!(
        "{}: tune first stage, shard {i}/{n}: {} into {}; join the shards with `retrystorm merge`, then run the same tune with --first-stage-from MERGED.jsonl\n",
        header.model,
        plural(records.len() as u64, "run"),
        out.display()
    ))
}

/// The first-stage runs of a merged sweep file written by `tune --shard`, by job; refused when
/// the file is another search's or lacks a run.
fn first_stage_from(
    path: &Path,
    header: &SweepHeader,
    cands: &[Candidate],
    n0: usize,
    job_of: &(dyn Fn(&Candidate, usize) -> u64 + Sync),
) -> Result<BTreeMap<u64, Summary>, CliError> {
    let name = path.display().to_string();
    let f = crate::sweep::read_sweep(path)?;
    if f.header != *header {
        return Err(CliError::Input(format!(
            "--first-stage-from {name}: written by another search (its model file, --set, --vary, --variant, --seed or --first-stage differ)"
        )));
    }
    let mut runs: BTreeMap<u64, Summary> =
        f.records.into_iter().map(|r| (r.job, r.summary)).collect();
    let wanted: Vec<u64> = cands
        .iter()
        .flat_map(|c| (0..n0).map(move |r| job_of(c, r)))
        .collect();
    let missing = wanted.iter().filter(|j| !runs.contains_key(j)).count();
    if missing > 0 {
        return Err(CliError::Input(format!(
            "--first-stage-from {name}: {} of the first stage's {} missing; merge every shard",
            plural(missing as u64, "run"),
            wanted.len()
        )));
    }
    runs.retain(|j, _| wanted.contains(j));
    Ok(runs)
}
