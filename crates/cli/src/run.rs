//! The one parallel runner: every command's runs go through [`Runner::map`] (or
//! [`Runner::stream`] for a sweep that writes as it goes) on the `--jobs` pool, one progress-bar
//! tick a run, results in input order; [`run_all`] and [`replicate`] are the runs of `run`,
//! `compare`, `check` and `report`.

use crate::{error::CliError, progress};
use indicatif::ProgressBar;
use rayon::prelude::*;
use retrystorm_core::model::Model;
use retrystorm_core::summary::{
    Ended, ReplicatedReport, ReplicatedVariant, Replications, SCHEMA_VERSION, VariantResult,
};
use retrystorm_core::time::Time;
use retrystorm_core::trace::{TraceLog, TraceOptions};
use retrystorm_core::{aggregate, stats};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by Ctrl-C (SIGINT) once [`ctrl_c`] has installed its handler.
static CTRL_C: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    // Async-signal-safe: one atomic store.
    CTRL_C.store(true, Ordering::Relaxed);
}

/// The stop flag of the command line's runs: the first Ctrl-C sets it (the runs stop at their
/// next progress point and their outputs are written, truncated); the handler then resets
/// itself, so a second Ctrl-C ends the process at once. Installed on first use, by the
/// commands whose runs go through [`run_all`] and [`replicate`]; a SIGINT the process was
/// started ignoring (a background job of a script) stays ignored.
pub fn ctrl_c() -> &'static AtomicBool {
    #[cfg(unix)]
    {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        // SAFETY: `sigaction` with a zeroed, then filled, struct; the handler only stores to an
        // atomic.
        INSTALL.call_once(|| unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                return;
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        });
    }
    &CTRL_C
}

/// Whether Ctrl-C stopped the runs of this process.
pub fn interrupted() -> bool {
    CTRL_C.load(Ordering::Relaxed)
}

/// The worker pool of `--jobs`: the one place runs are spread over threads.
pub struct Runner {
    pool: rayon::ThreadPool,
}

impl Runner {
    /// The pool of `--jobs` threads (every core by default).
    pub fn new(jobs: Option<u32>) -> Result<Runner, CliError> {
        let threads = jobs
            .map(|j| j as usize)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| CliError::Input(format!("--jobs {threads}: {e}")))?;
        Ok(Runner { pool })
    }

    /// Runs `f` on every item in parallel, ticking `bar` once per item; the results are in the
    /// items' order, whatever the number of threads.
    pub fn map<T: Sync, R: Send>(
        &self,
        items: &[T],
        bar: &ProgressBar,
        f: impl Fn(&T) -> R + Sync + Send,
    ) -> Vec<R> {
        self.pool.install(|| {
            items
                .par_iter()
                .map(|x| {
                    let r = f(x);
                    bar.inc(1);
                    r
                })
                .collect()
        })
    }

    /// Runs `f` on every item in parallel, roughly in the items' order, and sends each result
    /// (when `f` gives one) on `tx` as it finishes: the receiver puts them in order. Stops taking
    /// new items once `stop` is set.
    pub fn stream<T: Copy + Send + Sync, R: Send>(
        &self,
        items: &[T],
        tx: std::sync::mpsc::Sender<R>,
        stop: &std::sync::atomic::AtomicBool,
        f: impl Fn(T) -> Option<R> + Sync + Send,
    ) {
        self.pool.install(|| {
            items
                .iter()
                .copied()
                .par_bridge()
                .for_each_with(tx, |tx, x| {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                    if let Some(r) = f(x) {
                        let _ = tx.send(r);
                    }
                });
        });
    }
}

/// Says on stderr which runs stopped before their workload finished.
fn warn_truncated(results: &[VariantResult]) {
    for r in results.iter().filter(|r| r.summary.truncated) {
        let s = &r.summary;
        let why = match s.ended {
            Ended::MaxEvents => {
                format!("stopped at the max_events guard after {} events", s.events)
            }
            Ended::Interrupted => format!(
                "truncated by Ctrl-C at {} ms",
                retrystorm_report::fmt::ms(s.end_ms)
            ),
            _ => format!("reached the horizon at {} ms", s.end_ms),
        };
        let what = if s.ended == Ended::Interrupted {
            format!(
                "with {} of {} intents unsettled",
                retrystorm_report::fmt::int(s.unsettled),
                retrystorm_report::fmt::int(s.intents)
            )
        } else if s.unsettled == 0 {
            format!(
                "after starting only {} intents (the workload's start or spread runs past the horizon)",
                s.intents
            )
        } else {
            format!("with {} of {} intents unsettled", s.unsettled, s.intents)
        };
        eprintln!(
            "warning: {}: {why} {what}; its summary is partial (\"truncated\": true)",
            r.name
        );
    }
}

/// Runs every `(model, seed)` in parallel on `--jobs` threads; the result order is the input
/// order. A single run shows its progress in simulated time. Ctrl-C stops the runs ([`ctrl_c`]).
pub fn run_all(runs: &[(&Model, u64)], jobs: Option<u32>) -> Result<Vec<VariantResult>, CliError> {
    run_all_until(runs, jobs, ctrl_c())
}

/// [`run_all`], stopping the runs once `stop` is set (an embedder's flag; no signal handler).
pub fn run_all_until(
    runs: &[(&Model, u64)],
    jobs: Option<u32>,
    stop: &AtomicBool,
) -> Result<Vec<VariantResult>, CliError> {
    run_all_as(runs, jobs, |_| true, None, stop).map(|(r, _)| r)
}

/// [`run_all`], with each run traced when `trace` is given (then one log per run, in order).
pub fn run_all_traced(
    runs: &[(&Model, u64)],
    jobs: Option<u32>,
    trace: Option<TraceOptions>,
) -> Result<(Vec<VariantResult>, Vec<TraceLog>), CliError> {
    run_all_as(runs, jobs, |_| true, trace, ctrl_c())
}

/// As [`run_all_traced`]; a run `i` with `full(i)` false has only its summary (no series, no
/// CDFs, no trace). Once `stop` is set, every run stops at its next progress point (one not
/// started yet at its first) and ends `interrupted`.
fn run_all_as(
    runs: &[(&Model, u64)],
    jobs: Option<u32>,
    full: impl Fn(usize) -> bool + Sync,
    trace: Option<TraceOptions>,
    stop: &AtomicBool,
) -> Result<(Vec<VariantResult>, Vec<TraceLog>), CliError> {
    let one = |m: &Model, seed: u64, progress: &mut dyn FnMut(Time)| match trace {
        None => (
            retrystorm_core::run_model_until(m, seed, progress, stop),
            None,
        ),
        Some(opt) => {
            let (r, log) =
                retrystorm_core::run_model_traced_until(m, seed, progress, opt, Some(stop));
            (r, Some(log))
        }
    };
    let pairs: Vec<(VariantResult, Option<TraceLog>)> = if let [(m, seed)] = runs {
        let horizon = m.horizon.as_millis_f64().max(1.0) as u64;
        let bar = progress::sim_bar(horizon, m.planned_intents().is_some());
        let r = one(m, *seed, &mut |t| {
            bar.set_position((t.as_millis_f64() as u64).min(horizon));
        });
        bar.finish_and_clear();
        vec![r]
    } else {
        let runner = Runner::new(jobs)?;
        let bar = progress::bar(runs.len() as u64, "runs");
        let numbered: Vec<(usize, &(&Model, u64))> = runs.iter().enumerate().collect();
        let pairs = runner.map(&numbered, &bar, |(i, (m, seed))| {
            if full(*i) {
                one(m, *seed, &mut |_| {})
            } else {
                (retrystorm_core::run_summary_until(m, *seed, stop), None)
            }
        });
        bar.finish_and_clear();
        pairs
    };
    let (results, logs): (Vec<VariantResult>, Vec<Option<TraceLog>>) = pairs.into_iter().unzip();
    warn_truncated(&results);
    Ok((results, logs.into_iter().flatten().collect()))
}

/// Runs every model with every seed and aggregates each model's replications. Ctrl-C stops the
/// runs ([`ctrl_c`]).
pub fn replicate(
    name: &str,
    models: &[Model],
    base_seed: u64,
    n: u32,
    jobs: Option<u32>,
) -> Result<ReplicatedReport, CliError> {
    replicate_until(name, models, base_seed, n, jobs, ctrl_c())
}

/// [`replicate`], stopping the runs once `stop` is set (an embedder's flag; no signal handler).
/// A variant some of whose replications were stopped is marked `interrupted` and `truncated`.
pub fn replicate_until(
    name: &str,
    models: &[Model],
    base_seed: u64,
    n: u32,
    jobs: Option<u32>,
    stop: &AtomicBool,
) -> Result<ReplicatedReport, CliError> {
    let seeds = stats::replication_seeds(base_seed, n);
    let runs: Vec<(&Model, u64)> = models
        .iter()
        .flat_map(|m| seeds.iter().map(move |s| (m, *s)))
        .collect();
    // Only the first replication's series and CDFs are kept (the report draws them).
    let mut results = run_all_as(&runs, jobs, |i| i % seeds.len() == 0, None, stop)?
        .0
        .into_iter();
    let variants = models
        .iter()
        .map(|_| {
            let reps: Vec<VariantResult> = results.by_ref().take(seeds.len()).collect();
            let summaries: Vec<&retrystorm_core::summary::Summary> =
                reps.iter().map(|r| &r.summary).collect();
            let mut agg = aggregate::aggregate(&summaries);
            if summaries.iter().any(|s| s.ended == Ended::Interrupted) {
                agg.summary.ended = Ended::Interrupted;
                agg.summary.truncated = true;
            }
            let mut replications = Replications {
                n,
                ..Replications::default()
            };
            for (k, e) in &agg.estimates {
                if e.mean.is_finite() {
                    replications.mean.insert(k.clone(), e.mean);
                }
                if e.half_width.is_finite() {
                    replications.ci95.insert(k.clone(), e.half_width);
                }
            }
            replications.shares = agg.shares;
            let first = reps.into_iter().next().expect("at least one seed");
            ReplicatedVariant {
                result: VariantResult {
                    summary: agg.summary,
                    ..first
                },
                replications,
            }
        })
        .collect();
    Ok(ReplicatedReport {
        schema_version: SCHEMA_VERSION,
        model: name.to_string(),
        seed: base_seed,
        variants,
        seeds,
    })
}
