//! `retrystorm sweep`: a grid of runs streamed to JSON Lines (see [`crate::sweep_file`]),
//! resumable, shardable, identical for any number of threads.
//!
//! The file's first line is a header (what was swept); then one line per run in grid order.
//! Every line is written whole with one `write` call and flushed, so a killed sweep leaves at
//! most a torn last line, which `--resume` cuts off before continuing.

use crate::args::SweepArgs;
use crate::model_args::Resolved;
use crate::prepare::study_outputs;
use crate::run::Runner;
use crate::sweep_file::{check_stream_target, metric_name, open_stream, summarize_with};
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_core::model::Model;
use retrystorm_core::sweep::{Grid, parse_shard};
use retrystorm_report::sweep::format::{SweepRecord, record_line, sweep_text};
use retrystorm_report::sweep::header::SweepHeader;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::grid::MAX_RUNS_PER_PROCESS;

/// Up to this many grid points, each point's models are resolved once and kept.
const MODEL_CACHE_POINTS: u64 = 4096;

/// What a sweep will run, every refusable input checked: the outputs, the metric, the model,
/// the grid and this process's shard of it.
struct Plan<'a> {
    outs: Vec<output::Out<'a>>,
    metric: String,
    model: Resolved<'a>,
    grid: Grid,
    header: SweepHeader,
    shard_i: u64,
    shard_n: u64,
    /// This shard's runs, in grid order.
    jobs: Vec<u64>,
}

/// Checks everything that can be refused before the first run: the outputs, the metric, the
/// model, the axes, the grid's size and the shard.
fn plan(a: &SweepArgs) -> Result<Plan<'_>, CliError> {
    let outs = study_outputs(&[("--out", &a.out), ("--svg", &a.chart.svg)], &a.model)?;
    if let Some(p) = &a.out {
        check_stream_target(p, a.resume)?;
    }
    let metric = metric_name(&a.chart)?;
    let model = Resolved::read(&a.model)?;
    let (grid, total, header) = crate::sweep_file::plan(&model, &a.vary)?;
    let (shard_i, shard_n) = match &a.shard {
        Some(s) => parse_shard(s).map_err(|e| CliError::Input(format!("--shard {s}: {e}")))?,
        None => (1, 1),
    };
    if shard_i > total {
        return Err(CliError::Input(format!(
            "--shard {shard_i}/{shard_n}: the grid has {total} run{}, so this shard would have none; use at most {total} shards",
            if total == 1 { "" } else { "s" }
        )));
    }
    // Every run of this process stays in memory until the table at the end.
    let ours = (total - shard_i) / shard_n + 1;
    if ours > MAX_RUNS_PER_PROCESS {
        return Err(CliError::Input(format!(
            "--vary: this sweep would hold {ours} runs in memory (about 14 KB each) for its table; at most {MAX_RUNS_PER_PROCESS} per process: split it with --shard I/{}",
            shard_n * ours.div_ceil(MAX_RUNS_PER_PROCESS)
        )));
    }
    let jobs: Vec<u64> = grid.shard(shard_i, shard_n).collect();
    Ok(Plan {
        outs,
        metric,
        model,
        grid,
        header,
        shard_i,
        shard_n,
        jobs,
    })
}

/// Resolves (and so validates) every point the shard needs before running anything. The
/// models are kept for small grids; a large one resolves each point again when it runs it, so
/// that memory does not grow with the grid.
fn resolve_points(p: &Plan<'_>) -> Result<BTreeMap<u64, Vec<Model>>, CliError> {
    let mut models: BTreeMap<u64, Vec<Model>> = BTreeMap::new();
    let keep = p.grid.points() <= MODEL_CACHE_POINTS;
    let mut last = None;
    for j in &p.jobs {
        let point = p.grid.job(*j).point;
        if last == Some(point) || models.contains_key(&point) {
            continue;
        }
        last = Some(point);
        let m = p.model.at(&p.grid, point)?.variants;
        if keep {
            models.insert(point, m);
        }
    }
    Ok(models)
}

/// What running the pending runs gave: the runs finished (in grid order), and why it stopped
/// early, if it did.
struct Ran {
    fresh: Vec<SweepRecord>,
    write_err: Option<std::io::Error>,
    resolve_err: Option<CliError>,
}

/// Runs `pending` on `--jobs` threads; each finished run's line goes to `file` (in grid
/// order) and its record is kept for the table. Stops after `limit` runs.
fn run_pending(
    p: &Plan<'_>,
    models: &BTreeMap<u64, Vec<Model>>,
    pending: &[u64],
    mut file: Option<&mut std::fs::File>,
    jobs: Option<u32>,
    limit: u64,
) -> Result<Ran, CliError> {
    let runner = Runner::new(jobs)?;
    let bar = progress::bar(pending.len() as u64, "runs");
    let stop = AtomicBool::new(false);
    // Each worker writes its record's JSON line, so the writer thread only puts lines in order.
    let (tx, rx) = std::sync::mpsc::channel::<(u64, SweepRecord, Option<String>)>();
    let lines = file.is_some();
    let mut fresh: Vec<SweepRecord> = Vec::new();
    let mut write_err = None;
    let resolve_err: std::sync::Mutex<Option<CliError>> = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        let stop = &stop;
        let resolve_err = &resolve_err;
        let runner = &runner;
        s.spawn(move || {
            runner.stream(pending, tx, stop, |j| {
                let r = run_one(p, models, j, stop, resolve_err)?;
                let line = lines.then(|| record_line(&r));
                Some((j, r, line))
            });
        });
        // Write in grid order: park early finishers until their turn.
        let mut parked: BTreeMap<u64, (SweepRecord, Option<String>)> = BTreeMap::new();
        let mut next = 0usize;
        'recv: for (j, rec, line) in rx.iter() {
            parked.insert(j, (rec, line));
            while next < pending.len() {
                let Some((rec, line)) = parked.remove(&pending[next]) else {
                    break;
                };
                if let (Some(f), Some(line)) = (file.as_mut(), line) {
                    if let Err(e) = f.write_all(line.as_bytes()).and_then(|()| f.flush()) {
                        write_err = Some(e);
                        stop.store(true, Ordering::Relaxed);
                        break 'recv;
                    }
                }
                fresh.push(rec);
                next += 1;
                bar.inc(1);
                if fresh.len() as u64 >= limit {
                    stop.store(true, Ordering::Relaxed);
                    break 'recv;
                }
            }
        }
        // Let the workers finish: the receiver stays alive until the scope ends.
        drop(rx);
    });
    bar.finish_and_clear();
    Ok(Ran {
        fresh,
        write_err,
        resolve_err: resolve_err.into_inner().ok().flatten(),
    })
}

/// Run `j` of the grid, as its record; `None` (and `stop` set, the error kept in
/// `resolve_err`) when its point no longer resolves.
fn run_one(
    p: &Plan<'_>,
    models: &BTreeMap<u64, Vec<Model>>,
    j: u64,
    stop: &AtomicBool,
    resolve_err: &std::sync::Mutex<Option<CliError>>,
) -> Option<SweepRecord> {
    let grid = &p.grid;
    let job = grid.job(j);
    let seed = grid.seeds[job.replication];
    let r = match models.get(&job.point) {
        Some(ms) => retrystorm_core::run_summary(&ms[job.variant], seed),
        None => match p.model.at(grid, job.point) {
            Ok(s) => retrystorm_core::run_summary(&s.variants[job.variant], seed),
            Err(e) => {
                // Validated before the first run, so not expected.
                stop.store(true, Ordering::Relaxed);
                if let Ok(mut slot) = resolve_err.lock() {
                    slot.get_or_insert(e);
                }
                return None;
            }
        },
    };
    Some(SweepRecord::run(grid, j, r.summary))
}

pub fn sweep(a: SweepArgs) -> Result<(), CliError> {
    let p = plan(&a)?;
    let models = resolve_points(&p)?;
    output::refuse_inputs(&p.outs)?;
    let mut out = open_stream(a.out.as_deref(), a.resume, &p.header, &p.jobs)?;
    let done = &out.done;
    let pending: Vec<u64> = p
        .jobs
        .iter()
        .copied()
        .filter(|j| !done.contains(j))
        .collect();
    if !done.is_empty() {
        progress::note(&format!(
            "resuming: {} of {} runs already done, {} to go",
            done.len(),
            p.jobs.len(),
            pending.len()
        ));
    }
    // Appending keeps grid order only when every kept run precedes every pending one.
    let in_order = match (done.last(), pending.first()) {
        (Some(d), Some(first)) => d < first,
        _ => true,
    };
    let limit = a.limit.unwrap_or(u64::MAX);
    let ran = run_pending(
        &p,
        &models,
        &pending,
        out.file.as_mut(),
        a.model.jobs,
        limit,
    )?;
    if let Some(e) = ran.resolve_err {
        return Err(e);
    }
    if let Some(e) = ran.write_err {
        return Err(CliError::Output(format!(
            "--out {}: cannot write: {e}",
            a.out
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        )));
    }
    let stopped = ran.fresh.len() < pending.len();
    let mut all = out.kept;
    all.extend(ran.fresh);
    all.sort_by_key(|r| r.job);
    finish(&a, &p, &all, in_order, stopped)
}

/// The end of a sweep: a resumed file rewritten in grid order when it must be, then the note
/// of a stop, or the summary line and the table.
fn finish(
    a: &SweepArgs,
    p: &Plan<'_>,
    all: &[SweepRecord],
    in_order: bool,
    stopped: bool,
) -> Result<(), CliError> {
    if let (Some(path), false) = (&a.out, in_order) {
        // A resumed file whose kept runs were not a prefix: rewrite it whole, in grid order.
        output::write(output::Out::new("--out", path), &sweep_text(&p.header, all))?;
    }
    if stopped {
        progress::note(&format!(
            "stopped after {} (--limit); continue with --resume",
            plural(all.len() as u64, "run")
        ));
        return Ok(());
    }
    let (shard_i, shard_n) = (p.shard_i, p.shard_n);
    let suffix = if shard_n > 1 {
        format!(" (shard {shard_i}/{shard_n}; join shards with `retrystorm merge`)")
    } else {
        String::new()
    };
    let grid = &p.grid;
    output::print(&format!(
        "{}: {} ({} x {} x {}){suffix}\n",
        p.header.model,
        plural(all.len() as u64, "run"),
        plural(grid.points(), "point"),
        plural(grid.variants.len() as u64, "variant"),
        plural(grid.seeds.len() as u64, "seed"),
    ))?;
    summarize_with(&p.header, all, &a.chart, &p.metric)
}
