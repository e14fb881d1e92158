//! What a map's cell shows of its runs: the share that stays down after the trigger (a
//! recovery map) or the mean of a metric, and the table's columns for it.

use super::View;
use retrystorm_core::expect;
use retrystorm_core::map::Cell;
use retrystorm_core::stats::{self, Estimate};
use retrystorm_core::summary::Summary;
use retrystorm_report::fmt;
use serde_json::{Value, json};

/// A cell's verdict, as shown.
pub(super) enum Verdict {
    Recovery(Cell),
    Mean(Estimate),
}

impl Verdict {
    /// The number the heat map colours: the share that stays down, or the mean.
    pub(super) fn value(&self) -> f64 {
        match self {
            Verdict::Recovery(c) => c.share_down(),
            Verdict::Mean(e) => e.mean,
        }
    }
}

pub(super) fn verdict(view: &View, runs: &[&Summary]) -> Verdict {
    if view.recovery() {
        Verdict::Recovery(recovery(view, runs))
    } else {
        let xs: Vec<f64> = runs
            .iter()
            .map(|s| expect::metric(s, &view.metric).unwrap_or(f64::NAN))
            .collect();
        Verdict::Mean(Estimate::of(&xs))
    }
}

/// The recovery verdict of a cell's runs.
pub(super) fn recovery(view: &View, runs: &[&Summary]) -> Cell {
    let rec: Vec<Option<f64>> = runs.iter().map(|s| s.recovery_ms).collect();
    Cell::of(&rec, view.within_ms)
}

/// A cell's verdict as its JSON fields after its coordinates and runs.
pub(super) fn fields(v: &Verdict, o: &mut Value) {
    let num = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
    match v {
        Verdict::Recovery(cell) => {
            o["recovered"] = json!(cell.recovered);
            o["share_down"] = json!(cell.share_down());
            o["median_recovery_ms"] = json!(cell.median_ms);
            o["verdict"] = json!(cell.verdict());
        }
        Verdict::Mean(e) => {
            o["mean"] = num(e.mean);
            o["half_width"] = num(e.half_width);
        }
    }
}

/// A cell's verdict as the table's columns after its coordinates and runs.
pub(super) fn verdict_columns(v: &Verdict) -> Vec<String> {
    match v {
        Verdict::Recovery(cell) => vec![
            cell.recovered.to_string(),
            fmt::pct(cell.share_down()),
            {
                let down = (cell.runs - cell.recovered) as u32;
                let (lo, hi) = stats::wilson(down, cell.runs as u32);
                format!("{}-{}", fmt::pct(lo), fmt::pct(hi))
            },
            cell.median_ms.map_or("never".into(), fmt::duration),
            cell.verdict().to_string(),
        ],
        Verdict::Mean(e) => vec![if e.mean.is_nan() {
            "absent".into()
        } else {
            fmt::pm(e.mean, e.half_width.is_finite().then_some(e.half_width))
        }],
    }
}

/// The share of runs that stay down, for a recovery map.
pub(super) fn share_down(v: &Verdict) -> Option<f64> {
    match v {
        Verdict::Recovery(cell) => Some(cell.share_down()),
        Verdict::Mean(_) => None,
    }
}
