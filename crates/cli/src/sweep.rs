//! `retrystorm sweep` and `retrystorm merge`: a grid of runs streamed to JSON Lines, resumable,
//! shardable, identical for any number of threads.
//!
//! The file's first line is a header (what was swept); then one line per run in grid order.
//! Every line is written whole with one `write` call and flushed, so a killed sweep leaves at
//! most a torn last line, which `--resume` cuts off before continuing.

use crate::args::{MergeArgs, SweepArgs, SweepChartArgs};
use crate::commands::{overrides, read_model};
use crate::{CliError, output, progress};
use rayon::prelude::*;
use retrystorm_core::load::{self, Override};
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::sweep::{
    Grid, SWEEP_SCHEMA_VERSION, SweepHeader, SweepRecord, fingerprint, parse_shard, parse_vary,
};
use retrystorm_report::sweep::{
    DEFAULT_METRIC, SweepLine, aggregate, header_line, parse_sweep_line, record_line, sweep_chart,
    sweep_table,
};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// A sweep file, read: its header and records (a torn last line is left out).
pub struct SweepFile {
    pub header: SweepHeader,
    pub records: Vec<SweepRecord>,
    /// Bytes up to the end of the last whole line.
    pub whole_len: u64,
    /// Whether a torn last line was found.
    pub torn: bool,
}

/// Reads a sweep file, refusing other schema versions and malformed lines (naming file:line).
pub fn read_sweep(path: &Path) -> Result<SweepFile, CliError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| CliError::Input(format!("{name}: {e}")))?;
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..whole])
        .map_err(|_| CliError::Input(format!("{name}: not UTF-8 text")))?;
    let mut header = None;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let parsed = parse_sweep_line(line)
            .map_err(|e| CliError::Input(format!("{name}:{}: {e}", i + 1)))?;
        match (i, parsed) {
            (0, SweepLine::Header(h)) => header = Some(h),
            (0, _) => {
                return Err(CliError::Input(format!(
                    "{name}:1: expected the sweep header line first"
                )));
            }
            (_, SweepLine::Run(r)) => records.push(*r),
            (_, SweepLine::Header(_)) => {
                return Err(CliError::Input(format!(
                    "{name}:{}: a second header line",
                    i + 1
                )));
            }
        }
    }
    let header = header
        .ok_or_else(|| CliError::Input(format!("{name}: empty; not a finished sweep header")))?;
    Ok(SweepFile {
        header,
        records,
        whole_len: whole as u64,
        torn: whole < bytes.len(),
    })
}

/// Whether `path` starts like a sweep file (for `report`).
pub fn looks_like_sweep(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(f), &mut first);
    matches!(parse_sweep_line(first.trim_end()), Ok(SweepLine::Header(_)))
        || first.contains("\"kind\":\"header\"")
}

fn differs(ours: &SweepHeader, theirs: &SweepHeader) -> Option<String> {
    if ours.model_hash != theirs.model_hash {
        return Some("the model file changed since".into());
    }
    if ours.sets != theirs.sets {
        return Some(format!(
            "its --set flags were {:?}, now {:?}",
            theirs.sets, ours.sets
        ));
    }
    if ours.grid != theirs.grid {
        return Some("its --vary, --seeds or --seed differ".into());
    }
    (ours != theirs).then(|| "its header differs".into())
}

/// Runs one grid point's variants: the model loaded with `--set` then the point's values.
fn point_models(
    origin: &str,
    text: &str,
    sets: &[Override],
    grid: &Grid,
    point: u64,
) -> Result<Vec<Model>, CliError> {
    let mut all = sets.to_vec();
    for (k, v) in grid.params(point) {
        all.push(Override::parse_as("--vary", &format!("{k}={v}"))?);
    }
    Ok(load::load(origin, text, &all)?.variants)
}

pub fn sweep(a: SweepArgs) -> Result<(), CliError> {
    let (origin, text) = read_model(&a.model)?;
    let sets = overrides(&a.model)?;
    let scenario = load::load(&origin, &text, &sets)?;
    let mut axes = Vec::new();
    for v in &a.vary {
        let axis = parse_vary(v).map_err(|e| CliError::Input(format!("--vary {v}: {e}")))?;
        if axes
            .iter()
            .any(|x: &retrystorm_core::sweep::Axis| x.key == axis.key)
        {
            return Err(CliError::Input(format!(
                "--vary {v}: {} is varied twice",
                axis.key
            )));
        }
        axes.push(axis);
    }
    let base_seed = a.model.seed.unwrap_or(scenario.base.seed);
    let grid = Grid {
        axes,
        variants: scenario.variants.iter().map(|m| m.name.clone()).collect(),
        seeds: stats::replication_seeds(base_seed, a.model.seeds),
    };
    let header = SweepHeader {
        schema_version: SWEEP_SCHEMA_VERSION,
        kind: "header".into(),
        model: scenario.name.clone(),
        model_hash: fingerprint(text.as_bytes()),
        sets: a.model.sets.clone(),
        jobs: grid.jobs(),
        grid: grid.clone(),
    };
    let (shard_i, shard_n) = match &a.shard {
        Some(s) => parse_shard(s).map_err(|e| CliError::Input(format!("--shard {s}: {e}")))?,
        None => (1, 1),
    };
    let jobs: Vec<u64> = grid.shard(shard_i, shard_n).collect();

    // Resolve (and so validate) every point this shard needs before running anything.
    let mut models: BTreeMap<u64, Vec<Model>> = BTreeMap::new();
    for j in &jobs {
        let p = grid.job(*j).point;
        if let std::collections::btree_map::Entry::Vacant(e) = models.entry(p) {
            e.insert(point_models(&origin, &text, &sets, &grid, p)?);
        }
    }

    // The output file: fresh, or resumed.
    let mut done: BTreeSet<u64> = BTreeSet::new();
    let mut kept: Vec<SweepRecord> = Vec::new();
    let mut file = None;
    if let Some(path) = &a.out {
        let name = path.display().to_string();
        let io = |e: std::io::Error| CliError::Output(format!("{name}: {e}"));
        let exists = path.exists();
        if exists && !a.resume {
            return Err(CliError::Input(format!(
                "--out {name}: the file exists; pass --resume to continue that sweep, or remove it"
            )));
        }
        // A file without one whole line (killed while writing the header) starts afresh.
        let resumable = exists
            && std::fs::read(path)
                .map(|b| b.contains(&b'\n'))
                .unwrap_or(false);
        let mut f = if resumable {
            let old = read_sweep(path)?;
            if let Some(why) = differs(&header, &old.header) {
                return Err(CliError::Input(format!(
                    "--resume: {name} was written by another sweep ({why}); use another --out"
                )));
            }
            let f = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(io)?;
            if old.torn {
                eprintln!("{name}: cut a torn last line (an interrupted write); it will be rerun");
                f.set_len(old.whole_len).map_err(io)?;
            }
            let ours: BTreeSet<u64> = jobs.iter().copied().collect();
            for r in old.records {
                if !ours.contains(&r.job) {
                    return Err(CliError::Input(format!(
                        "--resume: {name} holds run {} which is not in this shard",
                        r.job
                    )));
                }
                done.insert(r.job);
                kept.push(r);
            }
            f
        } else {
            let mut f = std::fs::File::create(path).map_err(io)?;
            f.write_all(header_line(&header).as_bytes()).map_err(io)?;
            f.flush().map_err(io)?;
            f
        };
        f.flush().map_err(io)?;
        file = Some(f);
    }
    let pending: Vec<u64> = jobs.iter().copied().filter(|j| !done.contains(j)).collect();
    if !done.is_empty() {
        eprintln!(
            "resuming: {} of {} runs already done, {} to go",
            done.len(),
            jobs.len(),
            pending.len()
        );
    }
    // Appending keeps grid order only when every kept run precedes every pending one.
    let in_order = match (done.last(), pending.first()) {
        (Some(d), Some(p)) => d < p,
        _ => true,
    };

    let threads = a
        .jobs
        .map(|j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::Input(format!("--jobs: {e}")))?;
    let bar = progress::bar(pending.len() as u64, "runs");
    let stop = AtomicBool::new(false);
    let limit = a.limit.unwrap_or(u64::MAX);
    let (tx, rx) = std::sync::mpsc::channel::<(u64, SweepRecord)>();
    let mut fresh: Vec<SweepRecord> = Vec::new();
    let mut write_err = None;
    std::thread::scope(|s| {
        let grid = &grid;
        let models = &models;
        let stop = &stop;
        let pending_ref = &pending;
        s.spawn(move || {
            pool.install(|| {
                pending_ref
                    .iter()
                    .copied()
                    .par_bridge()
                    .for_each_with(tx, |tx, j| {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let job = grid.job(j);
                        let m = &models[&job.point][job.variant];
                        let seed = grid.seeds[job.replication];
                        let r = retrystorm_core::run_model(m, seed, &mut |_| {});
                        let rec = SweepRecord {
                            schema_version: SWEEP_SCHEMA_VERSION,
                            kind: "run".into(),
                            job: j,
                            point: job.point,
                            params: grid.params(job.point),
                            variant: grid.variants[job.variant].clone(),
                            replication: job.replication,
                            seed,
                            summary: r.summary,
                        };
                        let _ = tx.send((j, rec));
                    });
            });
        });
        // Write in grid order: park early finishers until their turn.
        let mut parked: BTreeMap<u64, SweepRecord> = BTreeMap::new();
        let mut next = 0usize;
        let mut written = 0u64;
        'recv: for (j, rec) in rx.iter() {
            parked.insert(j, rec);
            while next < pending.len() {
                let Some(rec) = parked.remove(&pending[next]) else {
                    break;
                };
                if let Some(f) = file.as_mut() {
                    let line = record_line(&rec);
                    if let Err(e) = f.write_all(line.as_bytes()).and_then(|()| f.flush()) {
                        write_err = Some(e);
                        stop.store(true, Ordering::Relaxed);
                        break 'recv;
                    }
                }
                fresh.push(rec);
                next += 1;
                written += 1;
                bar.inc(1);
                if written >= limit {
                    stop.store(true, Ordering::Relaxed);
                    break 'recv;
                }
            }
        }
        // Let the workers finish: the receiver stays alive until the scope ends.
        drop(rx);
    });
    bar.finish_and_clear();
    if let Some(e) = write_err {
        return Err(CliError::Output(format!(
            "{}: {e}",
            a.out
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string())
        )));
    }
    let stopped = fresh.len() < pending.len();
    let mut all = kept;
    all.extend(fresh);
    all.sort_by_key(|r| r.job);
    if let (Some(path), false) = (&a.out, in_order) {
        // A resumed file whose kept runs were not a prefix: rewrite it whole, in grid order.
        let mut text = header_line(&header);
        for r in &all {
            text.push_str(&record_line(r));
        }
        output::write(path, &text)?;
    }
    if stopped {
        eprintln!(
            "stopped after {} runs (--limit); continue with --resume",
            all.len()
        );
        return Ok(());
    }
    let suffix = if shard_n > 1 {
        format!(" (shard {shard_i}/{shard_n}; join shards with `retrystorm merge`)")
    } else {
        String::new()
    };
    println!(
        "{}: {} runs ({} points x {} variants x {} seeds){suffix}",
        header.model,
        all.len(),
        grid.points(),
        grid.variants.len(),
        grid.seeds.len()
    );
    summarize(&header, &all, &a.chart)
}

/// The aggregated table on stdout and, with `--svg`, the sweep chart.
pub fn summarize(
    header: &SweepHeader,
    records: &[SweepRecord],
    chart: &SweepChartArgs,
) -> Result<(), CliError> {
    let metric = metric_name(chart)?;
    let rows = aggregate(header, records);
    print!("{}", sweep_table(header, &rows, &metric));
    if let Some(p) = &chart.svg {
        let svg = sweep_chart(header, &rows, &metric)
            .map_err(|e| CliError::Output(format!("svg: {e}")))?;
        output::write(p, &svg)?;
    }
    Ok(())
}

/// `--metric`, checked against the summary's metric names.
pub fn metric_name(chart: &SweepChartArgs) -> Result<String, CliError> {
    let m = chart
        .metric
        .clone()
        .unwrap_or_else(|| DEFAULT_METRIC.into());
    let names = retrystorm_core::expect::metric_names();
    if names.contains(&m)
        || m.contains('.') && names.iter().any(|n| m.starts_with(&format!("{n}.")))
    {
        return Ok(m);
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let hint = load::closest(&m, &refs)
        .map(|b| format!("; did you mean `{b}`?"))
        .unwrap_or_default();
    Err(CliError::Input(format!(
        "--metric {m}: unknown metric{hint}"
    )))
}

pub fn merge(a: MergeArgs) -> Result<(), CliError> {
    let mut header: Option<(SweepHeader, String)> = None;
    let mut runs: BTreeMap<u64, (SweepRecord, String)> = BTreeMap::new();
    for p in &a.inputs {
        let name = p.display().to_string();
        let f = read_sweep(p)?;
        if f.torn {
            eprintln!("{name}: ignoring a torn last line (an interrupted write)");
        }
        match &header {
            None => header = Some((f.header, name.clone())),
            Some((h, first)) => {
                if let Some(why) = differs(h, &f.header) {
                    return Err(CliError::Input(format!(
                        "{name} is not a shard of the same sweep as {first} ({why})"
                    )));
                }
            }
        }
        for r in f.records {
            match runs.get(&r.job) {
                Some((old, from)) if *old != r => {
                    return Err(CliError::Input(format!(
                        "run {} differs between {from} and {name}",
                        r.job
                    )));
                }
                Some(_) => {}
                None => {
                    runs.insert(r.job, (r, name.clone()));
                }
            }
        }
    }
    let (header, _) = header.expect("clap requires at least one input");
    let mut text = header_line(&header);
    for (r, _) in runs.values() {
        text.push_str(&record_line(r));
    }
    output::write(&a.out, &text)?;
    let missing = header.jobs - runs.len() as u64;
    if missing > 0 {
        eprintln!(
            "warning: {} of {} runs present; {missing} missing (a shard not merged or not finished)",
            runs.len(),
            header.jobs
        );
    }
    println!(
        "merged {} files: {} of {} runs into {}",
        a.inputs.len(),
        runs.len(),
        header.jobs,
        a.out.display()
    );
    Ok(())
}
