//! The sweep file's lines (JSON Lines): a header, then one record per run in grid order. The
//! lines' JSON, a whole file's bytes parsed and checked against its header's grid, and a file's
//! text written whole. A record is a plain run's summary ([`SweepRecord`]: `sweep`, `map`,
//! `tune`) or one seed's splitting run (`rare`'s [`SplitRecord`](crate::sweep::split::SplitRecord)),
//! so every study's shards are read, merged and resumed by the same code.

use crate::sweep::header::{SWEEP_SCHEMA_VERSION, SweepHeader};
use retrystorm_core::summary::Summary;
use retrystorm_core::sweep::Grid;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// What a sweep file holds after its header, one line per run of the grid.
pub trait Record: Serialize + DeserializeOwned + Clone + PartialEq {
    /// The lines' `kind`.
    const KIND: &'static str;
    /// The run's index in the grid (the file's order).
    fn job(&self) -> u64;
    /// Why the run does not sit where it says in the grid (its index is in range), if it does not.
    fn misplaced(&self, grid: &Grid) -> Option<String>;
    /// Why a file of this header does not hold this kind of record, if it does not.
    fn refused(header: &SweepHeader) -> Option<String>;
}

/// One line per run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRecord {
    pub schema_version: u32,
    pub kind: String,
    /// The run's index in the grid (the file's order).
    pub job: u64,
    pub point: u64,
    /// `[key, value]` per axis, in `--vary` order.
    pub params: Vec<(String, String)>,
    pub variant: String,
    pub replication: usize,
    pub seed: u64,
    pub summary: Summary,
}

impl Record for SweepRecord {
    const KIND: &'static str = "run";

    fn job(&self) -> u64 {
        self.job
    }

    fn misplaced(&self, grid: &Grid) -> Option<String> {
        let j = grid.job(self.job);
        let ok = j.point == self.point
            && j.replication == self.replication
            && grid.variants.get(j.variant) == Some(&self.variant)
            && grid.seeds.get(j.replication) == Some(&self.seed)
            && grid.params(j.point) == self.params;
        (!ok).then(|| {
            format!(
                "run {} does not match its place in the header's grid (point {}, variant {}, seed {})",
                self.job, j.point, grid.variants[j.variant], grid.seeds[j.replication]
            )
        })
    }

    fn refused(header: &SweepHeader) -> Option<String> {
        header.rare.as_ref().map(|_| {
            "a `rare` study's file (its runs are splitting runs, not plain runs): `retrystorm rare FILE` reads it".to_string()
        })
    }
}

impl SweepRecord {
    /// The line of run `job` of `grid`: its point, variant and replication, and the summary it
    /// gave. One constructor for the `sweep` command and the Python embed, so the two write the
    /// same lines.
    pub fn run(grid: &Grid, job: u64, summary: Summary) -> SweepRecord {
        let at = grid.job(job);
        SweepRecord {
            schema_version: SWEEP_SCHEMA_VERSION,
            kind: "run".into(),
            job,
            point: at.point,
            params: grid.params(at.point),
            variant: grid.variants[at.variant].clone(),
            replication: at.replication,
            seed: grid.seeds[at.replication],
            summary,
        }
    }
}

/// One line of a sweep file, with the schema version checked first.
pub fn parse_sweep_line<R: Record>(line: &str) -> Result<SweepLine<R>, String> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not a JSON line: {e}"))?;
    match v.get("schema_version").and_then(serde_json::Value::as_u64) {
        Some(n) if n == u64::from(SWEEP_SCHEMA_VERSION) => {}
        Some(n) => {
            return Err(format!(
                "written by sweep schema version {n}; this retrystorm reads version {SWEEP_SCHEMA_VERSION} (rerun the sweep with this version)"
            ));
        }
        None => return Err("not a retrystorm sweep line (no `schema_version`)".into()),
    }
    match v.get("kind").and_then(serde_json::Value::as_str) {
        Some("header") => serde_json::from_value(v)
            .map(|h| SweepLine::Header(Box::new(h)))
            .map_err(|e| format!("invalid sweep header: {e}")),
        Some(k) if k == R::KIND => serde_json::from_value(v)
            .map(|r| SweepLine::Run(Box::new(r)))
            .map_err(|e| format!("invalid sweep record: {e}")),
        other => Err(format!("unknown line kind {other:?}")),
    }
}

/// A parsed line.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepLine<R = SweepRecord> {
    Header(Box<SweepHeader>),
    Run(Box<R>),
}

/// The bytes of a header line (with its newline).
pub fn header_line(h: &SweepHeader) -> String {
    let mut s = serde_json::to_string(h).expect("a header serializes");
    s.push('\n');
    s
}

/// The bytes of a record line (with its newline).
pub fn record_line(r: &impl Record) -> String {
    let mut s = serde_json::to_string(r).expect("a record serializes");
    s.push('\n');
    s
}

/// A sweep file, read: its header and records (a torn last line is left out).
pub struct SweepFile<R = SweepRecord> {
    pub header: SweepHeader,
    pub records: Vec<R>,
    /// Bytes up to the end of the last whole line.
    pub whole_len: u64,
    /// Whether a torn last line was found.
    pub torn: bool,
}

/// Parses the bytes of a sweep file of plain runs ([`parse_records`]).
pub fn parse_sweep(name: &str, bytes: &[u8]) -> Result<SweepFile, String> {
    parse_records(name, bytes)
}

/// Parses the bytes of a file of `R` records; every run must sit in its place of the header's
/// grid.
pub fn parse_records<R: Record>(name: &str, bytes: &[u8]) -> Result<SweepFile<R>, String> {
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let text =
        std::str::from_utf8(&bytes[..whole]).map_err(|_| format!("{name}: not UTF-8 text"))?;
    let mut header: Option<SweepHeader> = None;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let parsed = parse_sweep_line::<R>(line).map_err(|e| format!("{name}:{}: {e}", i + 1))?;
        let at = |m: String| format!("{name}:{}: {m}", i + 1);
        match (i, parsed) {
            (0, SweepLine::Header(h)) => {
                if let Some(why) = h.grid.invalid() {
                    return Err(at(format!("a header that no sweep writes: {why}")));
                }
                if let Some(why) = R::refused(&h) {
                    return Err(at(why));
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
                if r.job() >= h.jobs {
                    return Err(at(format!(
                        "run {} is outside the header's grid of {} runs (0..={})",
                        r.job(),
                        h.jobs,
                        h.jobs - 1
                    )));
                }
                if let Some(why) = r.misplaced(&h.grid) {
                    return Err(at(why));
                }
                records.push(*r);
            }
            (_, SweepLine::Header(_)) => return Err(at("a second header line".into())),
        }
    }
    let header = header.ok_or_else(|| format!("{name}: empty; not a finished sweep header"))?;
    Ok(SweepFile {
        header,
        records,
        whole_len: whole as u64,
        torn: whole < bytes.len(),
    })
}

/// The sweep file's text: its header line, then one line per run.
pub fn sweep_text<'a, R: Record + 'a>(
    header: &SweepHeader,
    records: impl IntoIterator<Item = &'a R>,
) -> String {
    let mut text = header_line(header);
    for r in records {
        text.push_str(&record_line(r));
    }
    text
}

/// Whether the first line of a file says it is a sweep file, even a corrupt one (its error then
/// names the line, not TOML): a header, or a JSON line (no TOML line starts with `{`).
pub fn starts_like_sweep(first: &str) -> bool {
    matches!(
        parse_sweep_line::<SweepRecord>(first.trim_end()),
        Ok(SweepLine::Header(_))
    ) || first.contains("\"kind\":\"header\"")
        || first.trim_start().starts_with('{')
}
