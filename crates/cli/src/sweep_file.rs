//! The sweep file on disk, as `sweep`, `merge`, `tune`, `map` and `report` read, open, lock and
//! summarize it. What the file holds (its lines, header and merge) is the report crate's
//! `retrystorm_report::sweep`, the one home of the format; this is its I/O.
//!
//! The file's first line is a header (what was swept); then one line per run in grid order.
//! Every line is written whole with one `write` call and flushed, so a killed sweep leaves at
//! most a torn last line, which `--resume` cuts off before continuing.

use crate::args::SweepChartArgs;
use crate::{error::CliError, output, progress};
use retrystorm_core::sweep::{Grid, parse_shard};
use retrystorm_report::sweep::chart::sweep_chart;
use retrystorm_report::sweep::format::{
    Record, SweepFile, SweepLine, SweepRecord, header_line, parse_records, parse_sweep,
    parse_sweep_line, starts_like_sweep,
};
use retrystorm_report::sweep::header::{
    Mismatch, SweepHeader, VERSION, input_name, made_by, mismatch, stamped,
};
use retrystorm_report::sweep::table::{DEFAULT_METRIC, aggregate, sweep_table};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Reads a sweep file of plain runs ([`read_records`]).
pub fn read_sweep(path: &Path) -> Result<SweepFile, CliError> {
    read_records(path)
}

/// Reads a sweep file of `R` records, refusing other schema versions, other kinds of file and
/// malformed lines (naming file:line). It must be a regular file (checked before opening it,
/// so a FIFO cannot block).
pub fn read_records<R: Record>(path: &Path) -> Result<SweepFile<R>, CliError> {
    let name = path.display().to_string();
    let mut bytes = Vec::new();
    output::open_input(path, "the sweep file")?
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Input(format!("{name}: {e}")))?;
    parse_records(&name, &bytes).map_err(CliError::Input)
}

/// The first line of a regular file (`None` for anything else: a FIFO would block).
fn first_line(path: &Path) -> Option<String> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let f = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(f), &mut first);
    Some(first)
}

/// Whether `path` starts like a sweep file (for `report`).
pub fn looks_like_sweep(path: &Path) -> bool {
    // A corrupt sweep file is still one (its error names the line, not TOML).
    first_line(path).is_some_and(|first| {
        starts_like_sweep(&first) || path.extension().is_some_and(|e| e == "jsonl")
    })
}

/// Whether `path` is the sweep file of a `rare` study (its header says so).
pub fn holds_rare(path: &Path) -> bool {
    first_line(path).is_some_and(|first| {
        matches!(parse_sweep_line::<SweepRecord>(first.trim_end()), Ok(SweepLine::Header(h)) if h.rare.is_some())
    })
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

/// `--out` must be a regular file (it is appended to and resumed) or not exist yet; an existing
/// one needs `--resume`.
pub fn check_stream_target(path: &Path, resume: bool) -> Result<(), CliError> {
    let name = path.display();
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(CliError::Input(format!(
            "--out {name}: is not a regular file; a sweep streams its runs into a regular file (.jsonl)"
        ))),
        Ok(_) if !resume => Err(CliError::Input(format!(
            "--out {name}: the file exists; pass --resume to continue that sweep, or remove it"
        ))),
        _ => Ok(()),
    }
}

/// Why `--resume` cannot continue the file `name`.
fn not_resumable(name: &str, m: &Mismatch) -> String {
    match m {
        Mismatch::Version(_, theirs) => format!(
            "--resume: {name} was begun by {}; this is retrystorm {VERSION}; finish it with that version, or use another --out",
            made_by(theirs)
        ),
        Mismatch::Input(r) => format!(
            "--resume: {} changed since {name} was begun; restore it, or use another --out",
            input_name(r)
        ),
        Mismatch::Sweep(why) => {
            format!("--resume: {name} was written by another sweep ({why}); use another --out")
        }
    }
}

/// The `--out` file, fresh or resumed, locked while this sweep writes it.
pub struct OutFile {
    pub file: Option<std::fs::File>,
    /// The runs a resumed file already holds.
    pub done: BTreeSet<u64>,
    pub kept: Vec<SweepRecord>,
}

/// Opens `--out` (if given): a fresh file gets the header; a resumed one is checked against
/// this sweep, its torn last line cut, and its runs kept.
pub fn open_stream(
    out: Option<&Path>,
    resume: bool,
    header: &SweepHeader,
    jobs: &[u64],
) -> Result<OutFile, CliError> {
    let mut s = OutFile {
        file: None,
        done: BTreeSet::new(),
        kept: Vec::new(),
    };
    let Some(path) = out else {
        return Ok(s);
    };
    let name = path.display().to_string();
    let io = |e: std::io::Error| CliError::Output(format!("--out {name}: {e}"));
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true);
    if resume {
        opts.create(true);
    } else {
        opts.create_new(true);
    }
    // A symbolic link is followed, also to a file not there yet: `O_EXCL` on the link itself
    // would call a dangling link "the file exists".
    let target = match output::resolve(path) {
        Ok(output::Dest::Replace(t)) => t,
        _ => path.to_path_buf(),
    };
    let mut f = opts.open(&target).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::Input(format!(
                "--out {name}: the file exists; pass --resume to continue that sweep, or remove it"
            ))
        } else {
            io(e)
        }
    })?;
    lock(&f, &name)?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(io)?;
    // A file without one whole line (killed while writing the header) starts afresh.
    if bytes.contains(&b'\n') {
        let old = parse_sweep(&name, &bytes).map_err(CliError::Input)?;
        if let Some(m) = mismatch(header, &old.header) {
            return Err(CliError::Input(not_resumable(&name, &m)));
        }
        if old.torn {
            progress::note(&format!(
                "{name}: cut a torn last line (an interrupted write); it will be rerun"
            ));
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
            s.done.insert(r.job);
            s.kept.push(r);
        }
        f.seek(SeekFrom::End(0)).map_err(io)?;
    } else {
        f.set_len(0).map_err(io)?;
        f.seek(SeekFrom::Start(0)).map_err(io)?;
        f.write_all(header_line(header).as_bytes()).map_err(io)?;
    }
    f.flush().map_err(io)?;
    s.file = Some(f);
    Ok(s)
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

/// A study's `--shard I/N` and `--out` (`map`, `rare`): which slice of the grid's runs it runs,
/// and the sweep file they go to, claimed before the first run for a shard, so two shards given
/// one `--out` cannot both write it.
pub struct Slice<'a> {
    pub i: u64,
    pub n: u64,
    /// `map` or `rare`: the command that reads the merged file.
    command: &'static str,
    out: Option<&'a Path>,
    claim: Option<output::Claim>,
}

impl<'a> Slice<'a> {
    /// `--shard` (1/1 without it); a shard of several needs `--out`, where its runs go.
    pub fn new(
        command: &'static str,
        shard: Option<&str>,
        out: Option<&'a Path>,
    ) -> Result<Slice<'a>, CliError> {
        let (i, n) = match shard {
            Some(s) => parse_shard(s).map_err(|e| CliError::Input(format!("--shard {s}: {e}")))?,
            None => (1, 1),
        };
        if n > 1 && out.is_none() {
            return Err(CliError::Input(format!(
                "--shard: a shard's runs go to a sweep file: give --out SHARD.jsonl, join the shards with `retrystorm merge`, then `retrystorm {command} MERGED.jsonl`"
            )));
        }
        Ok(Slice {
            i,
            n,
            command,
            out,
            claim: None,
        })
    }

    /// Refuses a shard past the `total` runs (`what` names them: "the map has 4 runs").
    pub fn check(&self, total: u64, what: impl FnOnce() -> String) -> Result<(), CliError> {
        if self.i > total {
            return Err(CliError::Input(format!(
                "--shard {}/{}: {}, so this shard would have none",
                self.i,
                self.n,
                what()
            )));
        }
        Ok(())
    }

    /// Claims a shard's `--out`: call before the runs.
    pub fn claim(&mut self) -> Result<(), CliError> {
        if let (Some(p), true) = (self.out, self.n > 1) {
            self.claim = Some(output::claim(
                output::Out::new("--out", p),
                "a shard's runs go to a new file: remove it (merged already?), or give another --out",
            )?);
        }
        Ok(())
    }

    /// Writes the file's `text` to `--out`, if given; for a shard, says so (`done`: "2 runs of
    /// 8") and returns true: the command then stops.
    pub fn write(self, model: &str, text: &str, done: &str) -> Result<bool, CliError> {
        match (self.claim, self.out) {
            (Some(c), _) => c.write(text)?,
            (None, Some(p)) => output::write(output::Out::new("--out", p), text)?,
            (None, None) => {}
        }
        if self.n == 1 {
            return Ok(false);
        }
        output::print(&format!(
            "{model}: {} shard {}/{}, {done} into {}; join the shards with `retrystorm merge`, then `retrystorm {} MERGED.jsonl`\n",
            self.command,
            self.i,
            self.n,
            self.out.expect("checked").display(),
            self.command
        ))?;
        Ok(true)
    }
}
