//! The sweep file's header: what was swept (the model's fingerprint, `--set`, the grid), stamped
//! with the retrystorm version and the fingerprints of the files the model reads; and how two
//! headers differ, which decides whether files are one sweep (`merge`, `--resume`).

use retrystorm_core::sweep::Grid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON Lines layout, which the header and every line carry; readers refuse
/// other versions.
pub const SWEEP_SCHEMA_VERSION: u32 = 1;

/// The first line of a sweep file: what was swept. Shards of one sweep have equal headers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepHeader {
    pub schema_version: u32,
    pub kind: String,
    pub model: String,
    /// FNV-1a 64 of the model file's bytes, in hex: a resumed or merged sweep must match.
    pub model_hash: String,
    /// The retrystorm version that wrote the file (set by the CLI; absent from older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrystorm: Option<String>,
    /// Every other file the model reads (`workload.trace`, `retry.from` imports), by its
    /// reference (`trace:t.csv`), with the FNV-1a 64 of what was read from it (set by the CLI;
    /// absent from older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<BTreeMap<String, String>>,
    /// The `--set` flags, as given.
    pub sets: Vec<String>,
    #[serde(flatten)]
    pub grid: Grid,
    /// Total runs in the grid.
    pub jobs: u64,
    /// `"tune"` in a file of a sequential search's runs (`tune --shard`): its grid bounds the
    /// replications the search may ask for and holds only the runs it asked for, so runs
    /// missing from it are not a shard left out. Absent from a sweep's header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// The `rare` study whose splitting runs the file holds, one a seed (absent from a sweep's
    /// header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rare: Option<RareStudy>,
}

/// What a `rare` study estimated: its flags as given (the file is read back through the same
/// parsing), and with `--fixed-levels` the pilot's levels every shard must share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RareStudy {
    pub event: String,
    pub score: Option<String>,
    pub score_from: Option<String>,
    pub excess: bool,
    pub until_empty: bool,
    pub particles: u32,
    pub pilot: Option<PilotLevels>,
}

/// The levels a pilot run placed (`--fixed-levels`): its seed, the levels, and its events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PilotLevels {
    pub seed: u64,
    pub levels: Vec<u64>,
    pub events: u64,
}

impl SweepHeader {
    /// The header of a sweep of `grid` over the model file `text` (named `model`) with the
    /// `--set` flags `sets`, of `jobs` runs in all.
    pub fn new(model: &str, text: &str, sets: &[String], grid: &Grid, jobs: u64) -> SweepHeader {
        SweepHeader {
            schema_version: SWEEP_SCHEMA_VERSION,
            kind: "header".into(),
            model: model.to_string(),
            model_hash: fingerprint(text.as_bytes()),
            retrystorm: None,
            inputs: None,
            sets: sets.to_vec(),
            grid: grid.clone(),
            jobs,
            search: None,
            rare: None,
        }
    }

    /// The header of the runs of the sequential search `command` (`tune`): see
    /// [`SweepHeader::search`].
    pub fn of_search(self, command: &str) -> SweepHeader {
        SweepHeader {
            search: Some(command.to_string()),
            ..self
        }
    }
}

/// FNV-1a 64, as 16 hex digits: a stable fingerprint of a model file.
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The version of retrystorm that writes sweep files: the one a header records.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The header with what it was made from: this retrystorm's version and the fingerprints of the
/// files the model reads besides its own (the CLI collects them as the model loads).
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
    if ours.rare != theirs.rare {
        return Some(Mismatch::Sweep(
            "its rare study differs: the event, score, particles or levels".into(),
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
