//! `tune --svg`: the Pareto front of the first two objectives, or with one objective each
//! candidate's mean and interval of it (against the tuned parameter when there is one).

use super::Candidate;
use crate::{error::CliError, output};
use retrystorm_core::sweep::{Axis, Grid};
use retrystorm_core::tune::{Feasibility, Objective, Outcome, Status};
use retrystorm_report::sweep::chart::axis_name;
use retrystorm_report::{CandidatePoint, ParetoPoint, objective_chart, pareto_chart};
use std::path::Path;

/// Writes the chart to `p`: the Pareto chart with two objectives or more, else the chart of
/// the one objective.
pub(super) fn write_chart(
    p: &Path,
    model: &str,
    objectives: &[Objective],
    o: &Outcome,
    cands: &[Candidate],
    grid: &Grid,
) -> Result<(), CliError> {
    let svg = match objectives {
        [ox, oy, ..] => pareto(model, ox, oy, o),
        [one] => one_objective(model, one, o, cands, grid),
        [] => unreachable!("objectives() refuses a search without one"),
    }
    .map_err(|e| CliError::Output(format!("--svg: {e}")))?;
    output::write(output::Out::new("--svg", p), &svg)?;
    Ok(())
}

/// An objective as an axis names it: the metric and its direction.
fn direction(o: &Objective) -> String {
    format!(
        "{} ({})",
        o.metric,
        if o.maximize { "maximise" } else { "minimise" }
    )
}

/// The worst of candidate `c`'s verdicts: infeasible if a constraint fails, else undecided if
/// one is, else feasible.
fn feasibility(o: &Outcome, c: usize) -> Feasibility {
    let f = &o.feasibility[c];
    if o.status[c] == Status::Infeasible || f.contains(&Feasibility::Infeasible) {
        Feasibility::Infeasible
    } else if f.contains(&Feasibility::Undecided) {
        Feasibility::Undecided
    } else {
        Feasibility::Feasible
    }
}

/// The Pareto front of the first two objectives over the feasible candidates.
fn pareto(
    model: &str,
    ox: &Objective,
    oy: &Objective,
    o: &Outcome,
) -> Result<String, retrystorm_report::ReportError> {
    let pts: Vec<ParetoPoint> = (0..o.status.len())
        .filter(|c| feasibility(o, *c) == Feasibility::Feasible)
        .map(|c| ParetoPoint {
            label: format!("#{}", c + 1),
            x: o.estimate(c, &ox.metric).map_or(f64::NAN, |e| e.mean),
            y: o.estimate(c, &oy.metric).map_or(f64::NAN, |e| e.mean),
            front: o.pareto.contains(&c),
            best: o.best == Some(c),
        })
        .collect();
    pareto_chart(
        &format!("{}: Pareto front of the feasible candidates", model),
        &direction(ox),
        &direction(oy),
        &pts,
    )
}

/// Every candidate with a value of the objective: against the tuned parameter when one
/// numeric parameter is tuned over one variant, else in order of the objective.
fn one_objective(
    model: &str,
    obj: &Objective,
    o: &Outcome,
    cands: &[Candidate],
    grid: &Grid,
) -> Result<String, retrystorm_report::ReportError> {
    let axis = match grid.axes.as_slice() {
        [a] if a.numeric() && grid.variants.len() <= 1 => Some(a),
        _ => None,
    };
    let pts: Vec<CandidatePoint> = cands
        .iter()
        .enumerate()
        .filter_map(|(c, cand)| {
            let e = o.estimate(c, &obj.metric)?;
            e.mean.is_finite().then(|| CandidatePoint {
                label: format!("#{}", c + 1),
                x: axis.and_then(|_| Axis::x(&cand.params.first()?.1)),
                mean: e.mean,
                half_width: e.half_width,
                feasibility: feasibility(o, c),
                best: o.best == Some(c),
            })
        })
        .collect();
    objective_chart(
        &format!("{model}: {} of every candidate", obj.metric),
        axis.map(axis_name).as_deref(),
        &direction(obj),
        &pts,
    )
}
