//! What `tune` prints: the table and recommendation, and `--json`.

use super::{Candidate, HALVING_FIRST_SEEDS};
use crate::args::TuneArgs;
use crate::text::plural;
use retrystorm_core::expect::Expectation;
use retrystorm_core::sweep::Grid;
use retrystorm_core::tune::{self, Objective, Outcome, sample};
use retrystorm_report::{fmt, text_table};
use serde_json::json;

#[allow(clippy::too_many_arguments)]
pub(super) fn text_view(
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
    out.push_str(&closing(cands, grid, o, label));
    out
}

/// After the table: the recommendation (or its absence), the undecided pairs, and the snippet
/// to paste or the closest candidate.
fn closing(
    cands: &[Candidate],
    grid: &Grid,
    o: &Outcome,
    label: &dyn Fn(usize) -> String,
) -> String {
    let mut out = String::new();
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

pub(super) fn json_view(
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
