//! The search's runs as sweep files: `--first-stage-from` (read) and `--shard` (one stage's
//! slice of runs, written).

use super::Candidate;
use crate::args::TuneArgs;
use crate::grid::MAX_RUNS_PER_PROCESS;
use crate::run::Runner;
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_core::stats;
use retrystorm_core::summary::Summary;
use retrystorm_core::sweep::{Grid, parse_shard, shard_slice};
use retrystorm_core::tune;
use retrystorm_report::sweep::format::{SweepRecord, sweep_text};
use retrystorm_report::sweep::header::{SWEEP_SCHEMA_VERSION, SweepHeader, input_name, stamped};
use std::collections::BTreeMap;
use std::path::Path;

/// The replications a file of a search's runs has room for per candidate: the most any search
/// asks for, whatever its `--first-stage` and `--budget`.
const SEARCH_SEEDS: usize = tune::MAX_REPLICATIONS;

/// The runs of `--first-stage-from`, by grid point, variant (its index in the grid) and
/// replication.
pub(super) struct Runs {
    pub(super) name: String,
    pub(super) runs: BTreeMap<(u64, usize, usize), Summary>,
    /// Written by `tune --shard` (merged), so the next stage's shards merge with it; otherwise
    /// a sweep of the same grid, or the first stage of an older `tune --shard`.
    search: bool,
}

/// The flags a run's result depends on beyond the model file and the grid: `--set`, and
/// `--max-events` as the `max_events=N` it stands for.
fn run_sets(a: &TuneArgs) -> Vec<String> {
    let mut sets = a.model.sets.clone();
    if let Some(n) = a.model.max_events {
        sets.push(format!("max_events={n}"));
    }
    sets
}

/// The header of the file of a search's runs (`tune --shard`): the model file, [`run_sets`],
/// the `--vary` axes, the variants searched and room for [`SEARCH_SEEDS`] seeds from the base
/// seed. The search's other flags are not in it, as a run's result does not depend on them.
pub(super) fn search_header(
    a: &TuneArgs,
    model: &str,
    text: &str,
    grid: &Grid,
    base_seed: u64,
) -> Result<SweepHeader, CliError> {
    let g = Grid {
        seeds: stats::replication_seeds(base_seed, SEARCH_SEEDS as u32),
        ..grid.clone()
    };
    let jobs = g.checked_jobs().ok_or_else(|| {
        CliError::Input(format!(
            "--vary: the grid is too large to number its runs in a file (its points x variants x {SEARCH_SEEDS} seeds pass 2^64); --shard and --first-stage-from need fewer points"
        ))
    })?;
    Ok(SweepHeader::new(model, text, &run_sets(a), &g, jobs).of_search("tune"))
}

/// What makes `theirs` the runs of another search than `ours` (with the `--set` flags `sets`),
/// if anything: a different model file, flags, axes, variants or seeds.
fn other_search(ours: &SweepHeader, theirs: &SweepHeader, sets: &[String]) -> Option<String> {
    if ours.model_hash != theirs.model_hash || ours.model != theirs.model {
        return Some("the model file differs".into());
    }
    if theirs.sets != sets {
        return Some(format!(
            "its --set (and --max-events) flags were {:?}, now {sets:?}",
            theirs.sets
        ));
    }
    if ours.grid.axes != theirs.grid.axes {
        return Some("its --vary axes differ".into());
    }
    if ours.grid.variants != theirs.grid.variants {
        return Some(format!(
            "its variants were {:?}, now {:?} (--variant)",
            theirs.grid.variants, ours.grid.variants
        ));
    }
    let base = ours.grid.seeds[0];
    if theirs.grid.seeds.first() != Some(&base) {
        return Some(format!(
            "its seeds start at {}, now at {base} (--seed)",
            theirs.grid.seeds[0]
        ));
    }
    let n = theirs.grid.seeds.len();
    if theirs.grid.seeds != stats::replication_seeds(base, n as u32) {
        return Some("its seeds are not SEED, SEED+1, ...".into());
    }
    // Where the runs came from, when both headers say it (an older file does not).
    if let (Some(v), Some(t)) = (&ours.retrystorm, &theirs.retrystorm)
        && v != t
    {
        return Some(format!(
            "it was made by retrystorm {t}, this is retrystorm {v}"
        ));
    }
    if let (Some(a), Some(b)) = (&ours.inputs, &theirs.inputs)
        && let Some(r) = a.keys().chain(b.keys()).find(|r| a.get(*r) != b.get(*r))
    {
        return Some(format!("{} changed since", input_name(r)));
    }
    let ours = SweepHeader {
        retrystorm: theirs.retrystorm.clone(),
        inputs: theirs.inputs.clone(),
        ..ours.clone()
    };
    (theirs.search.is_some() && ours != *theirs).then(|| "its header differs".into())
}

/// Reads `--first-stage-from`: the merged runs of `tune --shard` for this search, or a sweep
/// of the same grid (the first stage of an older `tune --shard` is one), refused when written
/// for another model, flags, axes, variants or seed.
pub(super) fn read_runs(
    path: &Path,
    a: &TuneArgs,
    model: &str,
    text: &str,
    grid: &Grid,
    base_seed: u64,
    inputs: BTreeMap<String, String>,
) -> Result<Runs, CliError> {
    let name = path.display().to_string();
    let ours = stamped(search_header(a, model, text, grid, base_seed)?, inputs);
    let f = crate::sweep_file::read_sweep(path)?;
    let search = f.header.search.is_some();
    let sets = if search {
        ours.sets.clone()
    } else {
        a.model.sets.clone()
    };
    if let Some(why) = other_search(&ours, &f.header, &sets) {
        return Err(CliError::Input(format!(
            "--first-stage-from {name}: written by another search ({why}); give this search's merged runs, or run without --first-stage-from"
        )));
    }
    if f.torn {
        progress::note(&format!(
            "{name}: ignoring a torn last line (an interrupted write)"
        ));
    }
    let g = &f.header.grid;
    // A run given twice must be the same run, as `merge` requires: otherwise which one the
    // search took would decide its result.
    let mut seen: BTreeMap<u64, &SweepRecord> = BTreeMap::new();
    for r in &f.records {
        match seen.get(&r.job) {
            Some(old) if *old != r => {
                return Err(CliError::Input(format!(
                    "--first-stage-from {name}: run {} is in it twice with different results; merge refuses such runs too: rerun or remerge the shards",
                    r.job
                )));
            }
            Some(_) => {}
            None => {
                seen.insert(r.job, r);
            }
        }
    }
    let runs = f
        .records
        .iter()
        .map(|r| {
            let j = g.job(r.job);
            ((j.point, j.variant, j.replication), r.summary.clone())
        })
        .collect();
    Ok(Runs { name, runs, search })
}

/// What a stage is, for the messages of `--shard`.
fn stage_name(stage: tune::Stage, a: &TuneArgs, contenders: usize) -> String {
    match stage {
        tune::Stage::Halving(s) => format!("successive-halving stage {s}"),
        tune::Stage::First if a.halving => format!(
            "KN's first stage (the survivors' top-up to {} seeds)",
            a.first_stage
        ),
        tune::Stage::First => "the first stage".into(),
        tune::Stage::Kn(r) => format!(
            "KN stage {} ({} at seed {})",
            r + 1,
            plural(contenders as u64, "contender"),
            r + 1
        ),
    }
}

/// `--shard I/N --out FILE`: replays the search against `--first-stage-from`'s runs (none
/// without it), takes the first stage it cannot complete, runs slice `I` of `N` of that stage's
/// missing runs (positions `j` with `j mod N = I - 1`) and writes them as a sweep file with the
/// search's header; `merge` joins them with the runs so far, and the next round takes the
/// merged file. With every run there it says the search is complete and writes nothing.
pub(super) fn shard_stage(
    a: &TuneArgs,
    shard: &str,
    header: &SweepHeader,
    from: Option<&Runs>,
    cands: &[Candidate],
    replay: tune::Replay,
    runner: &Runner,
) -> Result<(), CliError> {
    let (i, n) =
        parse_shard(shard).map_err(|e| CliError::Input(format!("--shard {shard}: {e}")))?;
    let out = a.out.as_deref().ok_or_else(|| {
        CliError::Input(
            "--shard: a shard's runs go to a sweep file: give --out SHARD.jsonl, join the shards with `retrystorm merge`, then tune with --first-stage-from MERGED.jsonl".into(),
        )
    })?;
    if let Some(f) = from.filter(|f| !f.search) {
        return Err(CliError::Input(format!(
            "--first-stage-from {}: a sweep file (or an older `tune --shard` first stage), not the runs of `tune --shard`, so the next stage's shards would not merge with it; finish the search from it without --shard, or shard the search afresh",
            f.name
        )));
    }
    let (stage, batch, missing) = match replay {
        tune::Replay::Done(o) => return search_complete(header, from, o.runs),
        tune::Replay::Needs {
            stage,
            batch,
            missing,
        } => (stage, batch, missing),
    };
    let what = stage_name(stage, a, batch.len());
    if from.is_none() && i > missing.len() as u64 {
        return Err(CliError::Input(format!(
            "--shard {shard}: {what} has {}, so this shard would have none",
            plural(missing.len() as u64, "run")
        )));
    }
    let mine = shard_slice(&missing, i, n);
    if mine.len() as u64 > MAX_RUNS_PER_PROCESS {
        return Err(CliError::Input(format!(
            "--shard {shard}: this shard would run {} of {what}; at most {MAX_RUNS_PER_PROCESS} per process: split it into more shards (--shard I/{})",
            plural(mine.len() as u64, "run"),
            (missing.len() as u64).div_ceil(MAX_RUNS_PER_PROCESS)
        )));
    }
    // Claimed before the runs: two shards given one --out cannot both write it.
    let claim = output::claim(
        output::Out::new("--out", out),
        "a shard's runs go to a new file: remove it (merged already?), or give another --out",
    )?;
    let records = run_slice(&mine, header, cands, runner);
    claim.write(&sweep_text(header, &records))?;
    let stored = batch.len() - missing.len();
    let of = match from {
        Some(f) if stored > 0 => format!(
            "{} missing ({stored} more already in {})",
            plural(missing.len() as u64, "run"),
            f.name
        ),
        _ => plural(missing.len() as u64, "run"),
    };
    output::print(&format!(
        "{}: tune, {what}: shard {i}/{n}: {} of its {of} into {}\n",
        header.model,
        plural(records.len() as u64, "run"),
        out.display(),
    ))?;
    next_step(from, n);
    Ok(())
}

/// Every run the search asks for is in the file (`runs` of them): nothing to shard; the next
/// step is the same tune without `--shard`.
fn search_complete(header: &SweepHeader, from: Option<&Runs>, runs: u64) -> Result<(), CliError> {
    output::print(&format!(
        "{}: the tune search is complete: {} holds all {} it asks for; nothing to shard\n",
        header.model,
        from.map_or("the file", |f| f.name.as_str()),
        plural(runs, "run")
    ))?;
    progress::note("next: run the same tune without --shard and --out for the result");
    Ok(())
}

/// Runs this shard's `(candidate, replication)` pairs as sweep records, in job order; a run's
/// job number leaves room for [`SEARCH_SEEDS`] replications per candidate, so every stage's
/// shards merge into one file.
fn run_slice(
    mine: &[(usize, usize)],
    header: &SweepHeader,
    cands: &[Candidate],
    runner: &Runner,
) -> Vec<SweepRecord> {
    let grid = &header.grid;
    let variants = grid.variants.len() as u64;
    let bar = progress::bar(mine.len() as u64, "runs");
    let mut records: Vec<SweepRecord> = runner.map(mine, &bar, |(c, r)| {
        let cand = &cands[*c];
        let seed = grid.seeds[*r];
        let summary = retrystorm_core::run_summary(&cand.model, seed).summary;
        SweepRecord {
            schema_version: SWEEP_SCHEMA_VERSION,
            kind: "run".into(),
            job: (cand.point * variants + cand.variant_index as u64) * SEARCH_SEEDS as u64
                + *r as u64,
            point: cand.point,
            params: cand.params.clone(),
            variant: cand.variant.clone(),
            replication: *r,
            seed,
            summary,
        }
    });
    bar.finish_and_clear();
    records.sort_by_key(|r| r.job);
    records
}

/// The note on stderr after a shard: merge this stage's `n` shards (with the runs so far), then
/// shard the next stage or finish.
fn next_step(from: Option<&Runs>, n: u64) {
    let next = match from {
        Some(f) => format!(
            "`retrystorm merge {0} SHARD.jsonl... -o {0}` (the runs so far and this stage's), then the same tune with --first-stage-from {0}",
            f.name
        ),
        None => "`retrystorm merge SHARD.jsonl... -o MERGED.jsonl`, then the same tune with --first-stage-from MERGED.jsonl".into(),
    };
    progress::note(&format!(
        "next: when the {n} shards of this stage are done, {next}: with --shard I/{n} for the next stage (it says when the search is complete), or without --shard to finish it here"
    ));
}
