//! The sweep file (JSON Lines) as the CLI reads, locks and summarizes it; `sweep`, `merge`,
//! `tune`, `map` and `report` share it. Its line types live in the core (`study::sweep`), their
//! JSON in the report crate (`retrystorm_report::sweep`).
//!
//! The file's first line is a header (what was swept); then one line per run in grid order.
//! Every line is written whole with one `write` call and flushed, so a killed sweep leaves at
//! most a torn last line, which `--resume` cuts off before continuing.

use crate::args::SweepChartArgs;
use crate::{error::CliError, output, progress};
use retrystorm_core::sweep::{Grid, SweepHeader, SweepRecord};
use retrystorm_report::sweep::{
    DEFAULT_METRIC, SweepLine, aggregate, header_line, parse_sweep_line, record_line, sweep_chart,
    sweep_table,
};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

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
/// It must be a regular file (checked before opening it, so a FIFO cannot block).
pub fn read_sweep(path: &Path) -> Result<SweepFile, CliError> {
    let name = path.display().to_string();
    let mut bytes = Vec::new();
    output::open_input(path, "the sweep file")?
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Input(format!("{name}: {e}")))?;
    parse_sweep(&name, &bytes)
}

/// Parses the bytes of a sweep file; every run must sit in its place of the header's grid.
pub fn parse_sweep(name: &str, bytes: &[u8]) -> Result<SweepFile, CliError> {
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..whole])
        .map_err(|_| CliError::Input(format!("{name}: not UTF-8 text")))?;
    let mut header: Option<SweepHeader> = None;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let parsed = parse_sweep_line(line)
            .map_err(|e| CliError::Input(format!("{name}:{}: {e}", i + 1)))?;
        let at = |m: String| CliError::Input(format!("{name}:{}: {m}", i + 1));
        match (i, parsed) {
            (0, SweepLine::Header(h)) => {
                if let Some(why) = h.grid.invalid() {
                    return Err(at(format!("a header that no sweep writes: {why}")));
                }
                if h.grid.checked_jobs() != Some(h.jobs) {
                    return Err(at(format!(
                        "the header says {} runs but its grid has {}",
                        h.jobs,
                        h.grid.jobs()
                    )));
                }
                header = Some(*h);
            }
            (0, _) => return Err(at("expected the sweep header line first".into())),
            (_, SweepLine::Run(r)) => {
                let h = header.as_ref().expect("line 0 is the header");
                if let Some(why) = misplaced(&h.grid, h.jobs, &r) {
                    return Err(at(why));
                }
                records.push(*r);
            }
            (_, SweepLine::Header(_)) => return Err(at("a second header line".into())),
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

/// Why a run does not belong where it says in the grid, if it does not.
fn misplaced(grid: &Grid, jobs: u64, r: &SweepRecord) -> Option<String> {
    if r.job >= jobs {
        return Some(format!(
            "run {} is outside the header's grid of {jobs} runs (0..={})",
            r.job,
            jobs - 1
        ));
    }
    let j = grid.job(r.job);
    let ok = j.point == r.point
        && j.replication == r.replication
        && grid.variants.get(j.variant) == Some(&r.variant)
        && grid.seeds.get(j.replication) == Some(&r.seed)
        && grid.params(j.point) == r.params;
    (!ok).then(|| {
        format!(
            "run {} does not match its place in the header's grid (point {}, variant {}, seed {})",
            r.job, j.point, grid.variants[j.variant], grid.seeds[j.replication]
        )
    })
}

/// Whether `path` starts like a sweep file (for `report`).
pub fn looks_like_sweep(path: &Path) -> bool {
    // Only a regular file is opened: a FIFO would block.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(f), &mut first);
    // A corrupt sweep file is still one (its error names the line, not TOML): a `.jsonl` name,
    // or a first line that is JSON (no TOML line starts with `{`).
    matches!(parse_sweep_line(first.trim_end()), Ok(SweepLine::Header(_)))
        || first.contains("\"kind\":\"header\"")
        || first.trim_start().starts_with('{')
        || path.extension().is_some_and(|e| e == "jsonl")
}

/// The version of retrystorm that writes sweep files: the one a header records.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The header with what it was made from: this retrystorm's version and the fingerprints of the
/// files the model reads besides its own (see [`crate::model_args::load_inputs`]).
pub fn stamped(header: SweepHeader, inputs: BTreeMap<String, String>) -> SweepHeader {
    SweepHeader {
        retrystorm: Some(VERSION.to_string()),
        inputs: Some(inputs),
        ..header
    }
}

/// Why two headers are not of one sweep, most telling first.
#[derive(Debug, PartialEq)]
pub enum Mismatch {
    /// Made by different retrystorm versions (`None`: a file of before the header recorded it).
    Version(Option<String>, Option<String>),
    /// A file the model reads (by its reference, `trace:t.csv`) was read with other contents.
    Input(String),
    /// The model file, `--set`, `--vary`, `--seeds` or `--seed` differ: why.
    Sweep(String),
}

/// What makes `theirs` another sweep than `ours`, if anything.
pub fn mismatch(ours: &SweepHeader, theirs: &SweepHeader) -> Option<Mismatch> {
    if ours.retrystorm != theirs.retrystorm || ours.inputs.is_some() != theirs.inputs.is_some() {
        return Some(Mismatch::Version(
            ours.retrystorm.clone(),
            theirs.retrystorm.clone(),
        ));
    }
    if ours.model != theirs.model {
        return Some(Mismatch::Sweep(format!(
            "it is a sweep of another model ({:?}, not {:?})",
            theirs.model, ours.model
        )));
    }
    if ours.model_hash != theirs.model_hash {
        return Some(Mismatch::Sweep(
            "its model file's text differs (the file was edited since, or it is another file of the same name)".into(),
        ));
    }
    if ours.sets != theirs.sets {
        return Some(Mismatch::Sweep(format!(
            "its --set flags were {:?}, now {:?}",
            theirs.sets, ours.sets
        )));
    }
    if ours.grid != theirs.grid {
        return Some(Mismatch::Sweep(
            "its --vary, --seeds or --seed differ".into(),
        ));
    }
    if let (Some(a), Some(b)) = (&ours.inputs, &theirs.inputs)
        && let Some(r) = a.keys().chain(b.keys()).find(|r| a.get(*r) != b.get(*r))
    {
        return Some(Mismatch::Input(r.clone()));
    }
    (ours != theirs).then(|| Mismatch::Sweep("its header differs".into()))
}

/// How a version reads in messages: "retrystorm 0.1.0", or what an older file lacks.
pub fn made_by(v: &Option<String>) -> String {
    match v {
        Some(v) => format!("retrystorm {v}"),
        None => "a retrystorm that did not record its version and input files".into(),
    }
}

/// What an input reference is, for messages: "the trace file t.csv", "the imported
/// configuration envoy:route.yaml".
pub fn input_name(reference: &str) -> String {
    match reference.strip_prefix("trace:") {
        Some(file) => format!("the trace file {file}"),
        None => format!("the imported configuration {reference}"),
    }
}

/// A note for files whose headers predate the version and input fingerprints: what was not
/// checked.
pub fn unchecked_note(name: &str, h: &SweepHeader) {
    if h.retrystorm.is_none() {
        progress::note(&format!(
            "note: {name} was made by a retrystorm that recorded neither its version nor its input files (trace, imports); they were not checked"
        ));
    }
}

/// Takes the sweep file's exclusive lock, so two sweeps never write one file at once. Released
/// when the process ends, however it ends.
#[cfg(unix)]
pub fn lock(f: &File, name: &str) -> Result<(), CliError> {
    use rustix::fs::{FlockOperation, flock};
    match flock(f, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Err(CliError::Input(format!(
            "--out {name}: another sweep is writing this file (it holds its lock); wait for it to finish, or give another --out"
        ))),
        Err(e) => {
            progress::note(&format!(
                "{name}: cannot lock the file ({}); make sure no other sweep writes it",
                std::io::Error::from(e)
            ));
            Ok(())
        }
    }
}

#[cfg(not(unix))]
pub fn lock(_: &File, _: &str) -> Result<(), CliError> {
    Ok(())
}

/// The aggregated table on stdout and, with `--svg`, the sweep chart.
pub fn summarize(
    header: &SweepHeader,
    records: &[SweepRecord],
    chart: &SweepChartArgs,
) -> Result<(), CliError> {
    let metric = metric_name(chart)?;
    summarize_with(header, records, chart, &metric)
}

pub fn summarize_with(
    header: &SweepHeader,
    records: &[SweepRecord],
    chart: &SweepChartArgs,
    metric: &str,
) -> Result<(), CliError> {
    let rows = aggregate(header, records, metric);
    output::print(&sweep_table(header, &rows, metric))?;
    if let Some(p) = &chart.svg {
        let svg = sweep_chart(header, &rows, metric)
            .map_err(|e| CliError::Output(format!("svg: {e}")))?;
        output::write(output::Out::new("--svg", p), &svg)?;
    }
    Ok(())
}

/// `--metric`, checked against the summary's metric names (with a suggestion).
pub fn metric_name(chart: &SweepChartArgs) -> Result<String, CliError> {
    let m = chart
        .metric
        .clone()
        .unwrap_or_else(|| DEFAULT_METRIC.into());
    retrystorm_core::expect::check_metric(&m)
        .map_err(|e| CliError::Input(format!("--metric {m}: {e}")))?;
    Ok(m)
}

/// The sweep file's text: its header line, then one line per run.
pub fn sweep_text<'a>(
    header: &SweepHeader,
    records: impl IntoIterator<Item = &'a SweepRecord>,
) -> String {
    let mut text = header_line(header);
    for r in records {
        text.push_str(&record_line(r));
    }
    text
}

/// A sweep's plan over `vary`: the grid (every variant, `--seeds`), its run count (refused past
/// the limit) and the file header stamped with the version and the inputs.
pub fn plan(
    model: &crate::model_args::Resolved,
    vary: &[String],
) -> Result<(Grid, u64, SweepHeader), crate::error::CliError> {
    let grid = Grid {
        axes: crate::grid::parse_axes(vary)?,
        variants: model
            .scenario
            .variants
            .iter()
            .map(|m| m.name.clone())
            .collect(),
        seeds: model.seeds(),
    };
    let total = crate::grid::check_grid_size(&grid)?;
    let header = SweepHeader::new(
        &model.scenario.name,
        &model.text,
        &model.args.sets,
        &grid,
        total,
    );
    Ok((grid, total, stamped(header, model.inputs.clone())))
}
