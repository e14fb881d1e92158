//! What the charts need from the model besides the run's results: the windows to shade.

use crate::args::OutputArgs;
use crate::error::CliError;
use retrystorm_core::model::Model;
use retrystorm_report::{ChartOptions, LoadOptions, model_windows, replica_windows};

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

/// The replicas chart's options: as [`chart_options`], its windows with the server's failure
/// windows too (each strikes one replica, or all).
pub fn replica_chart_options(models: &[Model], seeds: u32) -> ChartOptions {
    ChartOptions {
        seeds,
        windows: models.iter().map(replica_windows).collect(),
    }
}

/// Whether a model has a replicated tier (`server.replicas > 1` at some tier of its path).
fn has_replicas(m: &Model) -> bool {
    m.server.replicas > 1 || m.tiers.iter().any(|t| t.server.replicas > 1)
}

/// `--replicas-svg` draws the replicas of a replicated tier: refused, before anything runs,
/// when no variant has one.
pub fn check_replicas_chart(out: &OutputArgs, models: &[Model]) -> Result<(), CliError> {
    if out.replicas_svg.is_some() && !models.iter().any(has_replicas) {
        return Err(CliError::Input(
            "--replicas-svg: no tier of the model has replicas (server.replicas > 1); the replicas chart has nothing to draw".into(),
        ));
    }
    Ok(())
}
