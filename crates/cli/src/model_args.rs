//! The model a command reads: the file's text, its `--set` overrides, `--max-events`, the
//! variant picked and the base seed, resolved once for every command.

use crate::args::ModelArgs;
use crate::{error::CliError, output};
use retrystorm_core::load::{self, Override, Scenario};
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::sweep::Grid;
use retrystorm_report::sweep::header::fingerprint;
use std::collections::BTreeMap;

/// Reads the model file's text, naming it in errors: a regular file of at most 4 MiB in UTF-8.
pub fn read_model(args: &ModelArgs) -> Result<(String, String), CliError> {
    let origin = args.model.display().to_string();
    let text = output::read_text(&args.model, "the model file", output::MAX_MODEL_BYTES)?;
    Ok((origin, text))
}

/// Refuses a `--set`/`--vary` argument that spans several lines: a value is one value (a TOML
/// value after `KEY=` would otherwise bring its own tables along).
pub fn one_line(flag: &str, text: &str) -> Result<(), CliError> {
    if text.contains(['\n', '\r']) {
        return Err(CliError::Input(format!(
            "{flag} {}: a value is one value on one line; give one {flag} per field",
            text.escape_debug()
        )));
    }
    Ok(())
}

/// The key of a `KEY=VALUE` flag, trimmed.
fn key_of(text: &str) -> &str {
    text.split_once('=').map_or(text, |(k, _)| k).trim()
}

/// The `--set` flags, parsed (all but `--set name=...`, see [`renamed`]), then `--max-events`.
pub fn overrides(args: &ModelArgs) -> Result<Vec<Override>, CliError> {
    let mut sets = Vec::new();
    for s in &args.sets {
        one_line("--set", s)?;
        if key_of(s) != "name" {
            sets.push(Override::parse(s)?);
        }
    }
    if let Some(n) = args.max_events {
        sets.push(Override::parse_as(
            "--max-events",
            &format!("max_events={n}"),
        )?);
    }
    Ok(sets)
}

/// The name given with `--set name=NAME` (the last one), if any. It renames the model (its
/// tables, JSON and sweep header), not its variants.
pub fn renamed(args: &ModelArgs) -> Option<String> {
    args.sets
        .iter()
        .rev()
        .filter(|s| key_of(s) == "name")
        .find_map(|s| s.split_once('='))
        .map(|(_, v)| {
            let v = v.trim();
            // A quoted TOML string loses its quotes; anything else is the name as written.
            match load::parse_value(v) {
                x if x.is_str() => x.as_str().unwrap_or(v).to_string(),
                _ => v.to_string(),
            }
        })
}

/// The largest trace file a model may replay: its text and its rows' strings stay in memory
/// while it is parsed (the rows themselves are bounded by `replay::MAX_ROWS`).
const MAX_TRACE_BYTES: u64 = 256 << 20;

/// Loads the model with its `--set` flags and `extra` overrides (a `--vary` point), and applies
/// `--set name=`.
pub fn load_with(
    args: &ModelArgs,
    origin: &str,
    text: &str,
    extra: &[Override],
) -> Result<Scenario, CliError> {
    load_reading(
        args,
        origin,
        text,
        extra,
        &std::sync::Mutex::new(BTreeMap::new()),
        None,
    )
}

/// As [`load_with`], and the files the model reads besides its own (`workload.trace`,
/// `retry.from`), by their reference (`trace:t.csv`, `envoy:route.yaml`), each with the
/// fingerprint (FNV-1a 64, hex) of what was read from it: what a sweep file's header records.
pub fn load_inputs(
    args: &ModelArgs,
    origin: &str,
    text: &str,
    only: Option<&str>,
) -> Result<(Scenario, BTreeMap<String, String>), CliError> {
    let read = std::sync::Mutex::new(BTreeMap::new());
    let s = load_reading(args, origin, text, &[], &read, only)?;
    Ok((s, read.into_inner().unwrap_or_else(|e| e.into_inner())))
}

fn load_reading(
    args: &ModelArgs,
    origin: &str,
    text: &str,
    extra: &[Override],
    read: &std::sync::Mutex<BTreeMap<String, String>>,
    only: Option<&str>,
) -> Result<Scenario, CliError> {
    let mut sets = overrides(args)?;
    sets.extend(extra.iter().cloned());
    let resolve = |r: &str| match r.strip_prefix("trace:") {
        // `workload.trace`: the file's text, relative to the model file; the core parses it.
        Some(file) => {
            let dir = std::path::Path::new(origin)
                .parent()
                .unwrap_or(std::path::Path::new(""));
            crate::output::read_text(&dir.join(file), "the trace file", MAX_TRACE_BYTES)
                .map_err(|e| e.to_string())
        }
        None => crate::import::resolve_from(origin, r),
    };
    let resolve = |r: &str| {
        let got = resolve(r)?;
        read.lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(r.to_string(), fingerprint(got.as_bytes()));
        Ok(got)
    };
    let mut s = load::load_variant(origin, text, &sets, &resolve, only)?;
    for w in &s.warnings {
        warn_once(w);
    }
    for n in &s.notes {
        note_once(n);
    }
    if let Some(name) = renamed(args) {
        if name.trim().is_empty() {
            return Err(CliError::Input(
                "--set name=: the model's name must not be empty".into(),
            ));
        }
        let named = has_named_variants(&s);
        s.name = name.clone();
        s.base.name = name.clone();
        if !named {
            s.variants[0].name = name;
        }
    }
    Ok(s)
}

/// Prints a load warning on stderr once per process, whatever the value: a sweep loads the
/// model once per point, and `--vary retry.jitter=a,b` would otherwise warn at every point.
fn warn_once(w: &str) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let key = w.split(": ").next().unwrap_or(w).to_string();
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.contains(&key) {
        eprintln!("warning: {w}");
        seen.push(key);
    }
}

/// Prints a load note on stderr once per process (a sweep loads the model once per point), not
/// with `--quiet`.
fn note_once(n: &str) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|s| s == n) {
        crate::progress::note(&format!("note: {n}"));
        seen.push(n.to_string());
    }
}

/// Reads and resolves the model file with its `--set` overrides.
pub fn load_model(args: &ModelArgs) -> Result<Scenario, CliError> {
    let (origin, text) = read_model(args)?;
    load_with(args, &origin, &text, &[])
}

/// The variant named `v` (or the base model), with a listing of the names when there is none.
pub fn pick_variant(scenario: &Scenario, v: Option<&str>, file: &str) -> Result<Model, CliError> {
    match v {
        None => Ok(scenario.base.clone()),
        Some(v) => scenario
            .variants
            .iter()
            .find(|m| m.name == v)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = scenario.variants.iter().map(|m| m.name.as_str()).collect();
                let hint = load::closest(v, &names)
                    .map(|b| format!("did you mean `{b}`? "))
                    .unwrap_or_default();
                CliError::Input(format!(
                    "--variant {v}: no such variant in {file}; {hint}variants: {}",
                    names.join(", ")
                ))
            }),
    }
}

/// Whether the file declares variants (so that `run` needs `--variant` to pick one).
pub fn has_named_variants(s: &Scenario) -> bool {
    s.variants.len() > 1 || s.variants[0].name != s.base.name
}

/// Whether the base model is one of the rows of `compare`: a file without variants, or one with
/// a variant that sets nothing but its name.
pub fn base_is_a_variant(s: &Scenario) -> bool {
    if !has_named_variants(s) {
        return true;
    }
    let unnamed = |m: &Model| {
        let mut v = serde_json::to_value(m).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.remove("name");
        }
        v
    };
    let base = unnamed(&s.base);
    s.variants.iter().any(|m| unnamed(m) == base)
}

/// The run's base seed: `--seed`, else the model's `seed`. The one place it is decided.
pub fn base_seed(args: &ModelArgs, model: &Model) -> u64 {
    args.seed.unwrap_or(model.seed)
}

/// The model of a study (`sweep`, `map`, `tune`, `sensitivity`), resolved once from its flags:
/// the file's text, the scenario with `--set`, the files it reads and the base seed. Each `--vary`
/// point is loaded from it with [`Resolved::at`].
pub struct Resolved<'a> {
    pub args: &'a ModelArgs,
    /// The model file's path, as given.
    pub origin: String,
    pub text: String,
    pub scenario: Scenario,
    /// The files the model reads besides its own, fingerprinted (see [`load_inputs`]).
    pub inputs: BTreeMap<String, String>,
    /// `--seed`, else the model's `seed` ([`base_seed`]).
    pub base_seed: u64,
    /// The one variant resolved (`--variant` of `map`, `tune`, `sensitivity`), if any: the
    /// others are not, so an override only it can take fails on none of them.
    only: Option<String>,
}

impl<'a> Resolved<'a> {
    /// Reads and loads the model (refusing it as [`read_model`] and [`load_with`] do).
    pub fn read(args: &'a ModelArgs) -> Result<Resolved<'a>, CliError> {
        Resolved::read_variant(args, None)
    }

    /// As [`Resolved::read`], resolving the variant `only` alone when the file has one of
    /// that name (see [`load::load_variant`]).
    pub fn read_variant(args: &'a ModelArgs, only: Option<&str>) -> Result<Resolved<'a>, CliError> {
        let (origin, text) = read_model(args)?;
        Resolved::load(args, origin, text, only)
    }

    /// Loads the model from `text` already read (`origin` names it in messages).
    pub fn from_text(
        args: &'a ModelArgs,
        origin: String,
        text: String,
    ) -> Result<Resolved<'a>, CliError> {
        Resolved::load(args, origin, text, None)
    }

    /// Loads `text` (every variant, or `only`) with the files it reads and its base seed.
    fn load(
        args: &'a ModelArgs,
        origin: String,
        text: String,
        only: Option<&str>,
    ) -> Result<Resolved<'a>, CliError> {
        let (scenario, inputs) = load_inputs(args, &origin, &text, only)?;
        let base_seed = base_seed(args, &scenario.base);
        Ok(Resolved {
            args,
            origin,
            text,
            scenario,
            inputs,
            base_seed,
            only: only.map(str::to_string),
        })
    }

    /// The scenario at `point` of `grid`: the model with `--set`, then the point's values.
    pub fn at(&self, grid: &Grid, point: u64) -> Result<Scenario, CliError> {
        let mut extra = Vec::new();
        for kv in grid.sets(point) {
            extra.push(Override::parse_as("--vary", &kv)?);
        }
        load_reading(
            self.args,
            &self.origin,
            &self.text,
            &extra,
            &std::sync::Mutex::new(BTreeMap::new()),
            self.only.as_deref(),
        )
    }

    /// The `--seeds N` replication seeds from the base seed.
    pub fn seeds(&self) -> Vec<u64> {
        stats::replication_seeds(self.base_seed, self.args.seeds)
    }
}
