//! The `--vary` flags as a grid's axes, and the grid's size limit, as every grid command
//! (`compare --vary`, `sweep`, `tune`, `map`, `sensitivity`) checks them.

use crate::error::CliError;
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

/// The most runs one process holds or runs for a grid command (a sweep keeps its runs in memory
/// for the table at the end: a run holds about 14 KB (measured, `docs/performance.md`, "Memory
/// bounds"), so at most about 1.4 GB; a tune's first stage runs them before it says anything);
/// more are split with `--shard`.
pub const MAX_RUNS_PER_PROCESS: u64 = 100_000;

/// The memory one `tune` search may give its candidates (each holds its model, and a trace
/// model its own copy of the trace's arrivals), checked before the first is loaded.
pub const TUNE_CANDIDATE_BYTES: u64 = 1 << 30;

/// What one candidate holds: about 5 KB (measured, `docs/performance.md`, "Memory bounds"),
/// plus 20 bytes per trace row (its arrival and intent).
pub fn candidate_bytes(trace_rows: u64) -> u64 {
    5_000 + 20 * trace_rows
}

/// Refuses a search whose `candidates` (points x variants) would hold more than
/// [`TUNE_CANDIDATE_BYTES`].
pub fn check_candidates(points: u64, variants: u64, trace_rows: u64) -> Result<(), CliError> {
    let each = candidate_bytes(trace_rows);
    let k = points.saturating_mul(variants);
    let most = TUNE_CANDIDATE_BYTES / each;
    if k <= most {
        return Ok(());
    }
    let rows = if trace_rows > 0 {
        format!(", {trace_rows} trace rows each")
    } else {
        String::new()
    };
    Err(CliError::Input(format!(
        "--candidates: {k} candidates ({points} points x {variants} variants{rows}) would hold about {} MB; at most {most} fit in {} MB: lower --candidates, or pick one with --variant",
        k.saturating_mul(each) / 1_000_000,
        TUNE_CANDIDATE_BYTES / 1_000_000
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tune_candidates_are_bounded_by_their_memory() {
        assert!(check_candidates(100_000, 2, 0).is_ok());
        let e = check_candidates(100_000, 3, 0).unwrap_err().to_string();
        assert!(
            e.starts_with("--candidates: 300000 candidates (100000 points x 3 variants) would hold about 1500 MB; at most 214748 fit in 1073 MB"),
            "{e}"
        );
        // A trace model's candidates each hold its arrivals: a million rows, 20 MB each.
        assert!(check_candidates(53, 1, 1_000_000).is_ok());
        let e = check_candidates(64, 1, 1_000_000).unwrap_err().to_string();
        assert!(e.contains("1000000 trace rows each"), "{e}");
    }
}
