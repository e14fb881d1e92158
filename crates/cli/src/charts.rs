//! What the charts need from the model besides the run's results: the windows to shade.

use crate::args::OutputArgs;
use retrystorm_core::model::Model;
use retrystorm_report::{ChartOptions, LoadOptions, model_windows};

/// The load chart's options from the flags, with every model's outage, capacity-drop and
/// load-spike windows (one list per variant, in the report's order) and the number of seeds
/// (`--seeds N`) the numbers are the means of.
pub fn load_options(out: &OutputArgs, models: &[Model], seeds: u32) -> LoadOptions {
    LoadOptions {
        overlay: out.overlay,
        log_y: out.log_y,
        linear_y: out.linear_y,
        by_attempt: out.by_attempt,
        windows: models.iter().map(model_windows).collect(),
        seeds,
    }
}

/// The other charts' options: the windows to shade on a time axis and the number of seeds.
pub fn chart_options(models: &[Model], seeds: u32) -> ChartOptions {
    ChartOptions {
        seeds,
        windows: models.iter().map(model_windows).collect(),
    }
}
