//! What a map's cell shows of its runs: the share that stays down after the trigger (a
//! recovery map) or the mean of a metric, and the table's columns for it.

use super::View;
use retrystorm_core::expect;
use retrystorm_core::map::Cell;
use retrystorm_core::stats::{self, Estimate};
use retrystorm_core::summary::Summary;
use retrystorm_report::fmt;

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
        let rec: Vec<Option<f64>> = runs.iter().map(|s| s.recovery_ms).collect();
        Verdict::Recovery(Cell::of(&rec, view.within_ms))
    } else {
        let xs: Vec<f64> = runs
            .iter()
            .map(|s| expect::metric(s, &view.metric).unwrap_or(f64::NAN))
            .collect();
        Verdict::Mean(Estimate::of(&xs))
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
