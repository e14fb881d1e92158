//! The `--vary` flags as a grid's axes, and the grid's size limit, as every grid command
//! (`compare --vary`, `sweep`, `tune`, `map`, `sensitivity`) checks them.

use crate::CliError;
use crate::model_args::one_line;
use retrystorm_core::sweep::{Axis, Grid, MAX_RUNS, parse_vary};

/// The `--vary` flags as axes: each one line, a key at most once, not the model's name.
pub fn parse_axes(varies: &[String]) -> Result<Vec<Axis>, CliError> {
    let mut axes: Vec<Axis> = Vec::new();
    for v in varies {
        one_line("--vary", v)?;
        let axis = parse_vary(v).map_err(|e| CliError::Input(format!("--vary {v}: {e}")))?;
        if axis.key == "name" {
            return Err(CliError::Input(format!(
                "--vary {v}: the model's name is not a parameter; vary a model field such as retry.base"
            )));
        }
        if let Some(first) = axes.iter().find(|x| x.key == axis.key) {
            return Err(CliError::Input(format!(
                "--vary {v}: {} is varied twice (first with {}); give its values in one --vary",
                axis.key,
                first.values.join(",")
            )));
        }
        axes.push(axis);
    }
    Ok(axes)
}

/// Refuses a grid of more than [`MAX_RUNS`] runs (counted without overflow), before anything is
/// allocated for it.
pub fn check_grid_size(grid: &Grid) -> Result<u64, CliError> {
    match grid.checked_jobs() {
        Some(n) if n <= MAX_RUNS => Ok(n),
        n => Err(CliError::Input(format!(
            "--vary: the grid has {} runs ({} points x {} variants x {} seeds); the limit is {MAX_RUNS} runs",
            n.map_or_else(
                || "more than 18446744073709551615".to_string(),
                |n| n.to_string()
            ),
            grid.checked_points()
                .map_or_else(|| "too many".to_string(), |n| n.to_string()),
            grid.variants.len(),
            grid.seeds.len()
        ))),
    }
}
