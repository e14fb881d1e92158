//! The entry points that run one model with one seed: the direct path when it applies
//! ([`direct`](super::direct)), else the event loop ([`PathSim`]); then whether the run was cut
//! short. The crate's root re-exports them for users (`retrystorm_core::run_model`).

use super::PathSim;
use super::direct::run_until as run_direct_until;
use crate::base::time::Time;
use crate::model::Model;
use crate::result::summary::{Ended, Summary, VariantResult};
use crate::sim::trace::{TraceLog, TraceOptions};
use std::sync::atomic::AtomicBool;

/// Runs one resolved model with `seed`: the single entry point every front end calls. `progress` is called now and then with the simulated clock.
pub fn run_model(model: &Model, seed: u64, progress: &mut dyn FnMut(Time)) -> VariantResult {
    run_engine(model, seed, progress, true, None)
}

/// [`run_model`] that stops early once `stop` is set (by another thread, a signal handler or
/// `progress` itself). The engine reads the flag only where it calls `progress` (every 65,536
/// events), so a run that is not stopped costs nothing more and gives the same result. A
/// stopped run ends at the time it reached: its summary says `ended` =
/// [`Ended::Interrupted`] and `truncated`, and covers what was simulated so far (the
/// direct path's intents run so far; the event loop's events up to `end_ms`). Setting the flag
/// from `progress` at the same call stops the same run at the same place, every time.
///
/// ```
/// use retrystorm_core::load::load;
/// use retrystorm_core::summary::Ended;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// let text = "horizon = \"10s\"\n[workload]\nkind = \"open\"\nrate = \"20000/s\"\n[server]\ncapacity = 4\nservice = \"100us\"\n";
/// let model = load("open.toml", text, &[]).unwrap().base;
/// let stop = AtomicBool::new(false);
/// let r = retrystorm_core::run_model_until(&model, 1, &mut |_| stop.store(true, Ordering::Relaxed), &stop);
/// assert_eq!(r.summary.ended, Ended::Interrupted);
/// assert!(r.summary.truncated && r.summary.end_ms < 10_000.0);
/// ```
pub fn run_model_until(
    model: &Model,
    seed: u64,
    progress: &mut dyn FnMut(Time),
    stop: &AtomicBool,
) -> VariantResult {
    run_engine(model, seed, progress, true, Some(stop))
}

/// [`run_model`] with a [`Tracer`](crate::sim::trace::Tracer) recording a few intents' events:
/// the same result, and the trace.
pub fn run_model_traced(
    model: &Model,
    seed: u64,
    progress: &mut dyn FnMut(Time),
    trace: TraceOptions,
) -> (VariantResult, TraceLog) {
    run_model_traced_until(model, seed, progress, trace, None)
}

/// [`run_model_traced`], stopping early once `stop` is set, as [`run_model_until`] does.
pub fn run_model_traced_until(
    model: &Model,
    seed: u64,
    progress: &mut dyn FnMut(Time),
    trace: TraceOptions,
    stop: Option<&AtomicBool>,
) -> (VariantResult, TraceLog) {
    let mut sim = PathSim::new(model, seed);
    if let Some(stop) = stop {
        sim = sim.with_stop(stop);
    }
    let (mut result, log) = sim.run_traced(&model.name, progress, trace);
    mark_truncated(model, &mut result.summary);
    (result, log)
}

/// As [`run_model`] without progress, for the summary only: the series and CDFs are left empty
/// (not built). Sweeps, `tune` and the replications past the first keep nothing else, and for a
/// small model building them costs more than the run itself.
pub fn run_summary(model: &Model, seed: u64) -> VariantResult {
    run_engine(model, seed, &mut |_| {}, false, None)
}

/// [`run_summary`], stopping early once `stop` is set, as [`run_model_until`] does.
pub fn run_summary_until(model: &Model, seed: u64, stop: &AtomicBool) -> VariantResult {
    run_engine(model, seed, &mut |_| {}, false, Some(stop))
}

/// The direct path when it applies, else the event loop; `full`: the series and CDFs too.
fn run_engine(
    model: &Model,
    seed: u64,
    progress: &mut dyn FnMut(Time),
    full: bool,
    stop: Option<&AtomicBool>,
) -> VariantResult {
    let mut result = match run_direct_until(model, seed, progress, full, stop) {
        Some(r) => r,
        None => {
            let mut sim = PathSim::new(model, seed);
            if let Some(stop) = stop {
                sim = sim.with_stop(stop);
            }
            if full {
                sim.run(&model.name, progress)
            } else {
                sim.run_summary(&model.name)
            }
        }
    };
    mark_truncated(model, &mut result.summary);
    result
}

/// Whether the run was cut before its workload finished.
fn mark_truncated(model: &Model, s: &mut Summary) {
    s.truncated = match s.ended {
        Ended::MaxEvents | Ended::Interrupted => true,
        // A finite workload is cut when an intent is still open or was never started (a burst
        // whose `start` or `spread` runs past the horizon).
        Ended::Horizon => model
            .planned_intents()
            .is_some_and(|n| s.unsettled > 0 || s.intents < n),
        Ended::Settled => false,
    };
    // A workload cut short never drained.
    if s.truncated {
        s.drain_ms = None;
    }
}

/// Runs `model` with `seed` and returns its result, named after the model: [`run_model`]
/// without progress.
pub fn run(model: &Model, seed: u64) -> VariantResult {
    run_model(model, seed, &mut |_| {})
}
