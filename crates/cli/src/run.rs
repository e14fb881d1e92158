//! The one parallel runner: every command's runs go through [`Runner::map`] (or
//! [`Runner::stream`] for a sweep that writes as it goes) on the `--jobs` pool, one progress-bar
//! tick a run, results in input order; [`run_all`] and [`replicate`] are the runs of `run`,
//! `compare`, `check` and `report`.

use crate::{CliError, progress};
use indicatif::ProgressBar;
use rayon::prelude::*;
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::summary::{
    Ended, ReplicatedReport, ReplicatedVariant, Replications, SCHEMA_VERSION, VariantResult,
};
use retrystorm_core::time::Time;
use retrystorm_core::trace::{TraceLog, TraceOptions};

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
            _ => format!("reached the horizon at {} ms", s.end_ms),
        };
        let what = if s.unsettled == 0 {
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
/// order. A single run shows its progress in simulated time.
pub fn run_all(runs: &[(&Model, u64)], jobs: Option<u32>) -> Result<Vec<VariantResult>, CliError> {
    run_all_as(runs, jobs, |_| true, None).map(|(r, _)| r)
}

/// [`run_all`], with each run traced when `trace` is given (then one log per run, in order).
pub fn run_all_traced(
    runs: &[(&Model, u64)],
    jobs: Option<u32>,
    trace: Option<TraceOptions>,
) -> Result<(Vec<VariantResult>, Vec<TraceLog>), CliError> {
    run_all_as(runs, jobs, |_| true, trace)
}

/// As [`run_all_traced`]; a run `i` with `full(i)` false has only its summary (no series, no
/// CDFs, no trace).
fn run_all_as(
    runs: &[(&Model, u64)],
    jobs: Option<u32>,
    full: impl Fn(usize) -> bool + Sync,
    trace: Option<TraceOptions>,
) -> Result<(Vec<VariantResult>, Vec<TraceLog>), CliError> {
    let one = |m: &Model, seed: u64, progress: &mut dyn FnMut(Time)| match trace {
        None => (retrystorm_core::run_model(m, seed, progress), None),
        Some(opt) => {
            let (r, log) = retrystorm_core::run_model_traced(m, seed, progress, opt);
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
                (retrystorm_core::run_summary(m, *seed), None)
            }
        });
        bar.finish_and_clear();
        pairs
    };
    let (results, logs): (Vec<VariantResult>, Vec<Option<TraceLog>>) = pairs.into_iter().unzip();
    warn_truncated(&results);
    Ok((results, logs.into_iter().flatten().collect()))
}

/// Runs every model with every seed and aggregates each model's replications.
pub fn replicate(
    name: &str,
    models: &[Model],
    base_seed: u64,
    n: u32,
    jobs: Option<u32>,
) -> Result<ReplicatedReport, CliError> {
    let seeds = stats::replication_seeds(base_seed, n);
    let runs: Vec<(&Model, u64)> = models
        .iter()
        .flat_map(|m| seeds.iter().map(move |s| (m, *s)))
        .collect();
    // Only the first replication's series and CDFs are kept (the report draws them).
    let mut results = run_all_as(&runs, jobs, |i| i % seeds.len() == 0, None)?
        .0
        .into_iter();
    let variants = models
        .iter()
        .map(|_| {
            let reps: Vec<VariantResult> = results.by_ref().take(seeds.len()).collect();
            let summaries: Vec<&retrystorm_core::summary::Summary> =
                reps.iter().map(|r| &r.summary).collect();
            let agg = stats::aggregate(&summaries);
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
