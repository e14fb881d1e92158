//! Loading a model file: TOML in, resolved [`Model`]s out, or an error that points at the line.
//!
//! A file holds the base model and optional `[[variant]]` tables. A variant has a `name` and any
//! model keys (dotted keys or sub-tables) that override the base, merged key by key. `--set
//! KEY=VALUE` overrides apply last, to the base and to every variant. Every error names the file,
//! line and column (or the flag) and the field, and says what is allowed; unknown fields get a
//! "did you mean" suggestion.

pub use crate::base::diagnostics::{LoadError, closest};
pub use crate::model::table::merge;
use crate::model::{Invalid, Model};
use toml::{Table, Value};

mod doc;
mod messages;
mod overrides;
mod variants;

use doc::*;
pub use messages::with_suggestion;
use messages::*;
use overrides::*;
pub use overrides::{Override, key_segment, parse_value, set_path};
use variants::*;

/// A loaded model file: its variants resolved (a file without variants yields one, the base).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    /// The model without any variant's overrides (`--set` applied).
    pub base: Model,
    /// The variants in file order; the base alone when the file declares none.
    pub variants: Vec<Model>,
    /// The raw `[[expect]]` tables, for the assertions layer.
    pub expect: Vec<Table>,
    /// Where each `[[expect]]` table starts (line), parallel to `expect`.
    pub expect_lines: Vec<usize>,
    /// Things the user should know that are not errors: a `--set` or `--vary` that replaces a
    /// value some variants set (overrides apply to the base and to every variant).
    pub warnings: Vec<String>,
    /// Informational lines, not warnings: a trace file put in time order.
    pub notes: Vec<String>,
}

/// Loads a model file. `origin` is how errors name it (usually its path). A `retry.from`
/// reference is refused: use [`load_resolved`] with a resolver that reads files.
pub fn load(origin: &str, text: &str, sets: &[Override]) -> Result<Scenario, LoadError> {
    load_resolved(origin, text, sets, &crate::model::preset::no_files)
}

/// As [`load`], resolving `retry.from = "SOURCE:FILE"` with `resolve` (the imported sections
/// fill in under the keys written beside `from`).
pub fn load_resolved(
    origin: &str,
    text: &str,
    sets: &[Override],
    resolve: crate::model::preset::Resolver<'_>,
) -> Result<Scenario, LoadError> {
    load_variant(origin, text, sets, resolve, None)
}

/// As [`load_resolved`]; with `only`, the name of one of the file's `[[variant]]`s, that variant
/// alone is resolved (and is the scenario's base and only variant), so that an override that
/// only it can take (`--vary server.slow_windows[0].factor=...` where only it has slow windows)
/// fails on no variant the command does not run, and warns of none. A name that is no variant
/// resolves them all (the caller names the variants it has).
pub fn load_variant(
    origin: &str,
    text: &str,
    sets: &[Override],
    resolve: crate::model::preset::Resolver<'_>,
    only: Option<&str>,
) -> Result<Scenario, LoadError> {
    let doc = Doc {
        origin,
        text,
        spans: toml_edit::Document::parse(text).ok(),
    };
    let (mut table, variants) = parse_file(&doc, origin)?;
    let (expect, expect_lines) = take_expects(&doc, &mut table)?;
    let name = table
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("model")
        .to_string();

    let mut layers = variant_layers(&doc, variants)?;
    // Every variant's name, for the `[[expect]]` tables, whichever are resolved.
    let names: Vec<String> = layers
        .iter()
        .filter(|(vi, _)| vi.is_some() || layers.len() == 1)
        .map(|(_, t)| {
            t.get("name")
                .and_then(Value::as_str)
                .unwrap_or(&name)
                .to_string()
        })
        .collect();
    let is_only = |t: &Table| only.is_some() && t.get("name").and_then(Value::as_str) == only;
    if layers.iter().any(|(vi, t)| vi.is_some() && is_only(t)) {
        layers.retain(|(vi, t)| vi.is_some() && is_only(t));
    }
    let warnings = shadowed_variants(sets, &layers);
    let mut models = Vec::with_capacity(layers.len());
    let mut traces = Vec::new();
    let mut notes = Vec::new();
    for (vi, overrides) in layers {
        let layer = |sets: &[Override]| resolve_layer(&doc, &table, vi, &overrides, sets, resolve);
        let mut model = layer(sets).map_err(|e| blame_sets(e, sets, &layer))?;
        if model.workload.kind == crate::model::WorkloadKind::Trace {
            let from = Source {
                doc: &doc,
                sets,
                variant: vi,
                overrides: &overrides,
            };
            model.workload.replay = replay(origin, &model, resolve, &mut traces, &mut notes)
                .map_err(|e| e.unwrap_or_else(|m| from.locate("workload.trace", m)))?;
        }
        models.push(model);
    }
    let base = models.remove(0);
    if models.is_empty() {
        models.push(base.clone());
    }
    check_expects(&doc, origin, &names, &expect, &expect_lines)?;
    Ok(Scenario {
        name,
        base,
        variants: models,
        expect,
        expect_lines,
        warnings,
        notes,
    })
}

/// One layer (the base, or a `[[variant]]` at `vi` with its `overrides`) with `sets` applied,
/// resolved and validated; errors point at the flag, the variant's line or the base's line.
fn resolve_layer(
    doc: &Doc,
    table: &Table,
    vi: Option<usize>,
    overrides: &Table,
    sets: &[Override],
    resolve: crate::model::preset::Resolver<'_>,
) -> Result<Model, LoadError> {
    let mut merged = table.clone();
    merge(&mut merged, overrides.clone());
    for s in sets {
        set_path(&mut merged, &s.key, s.value.clone()).map_err(|m| set_error(s, None, m))?;
    }
    let from = Source {
        doc,
        sets,
        variant: vi,
        overrides,
    };
    let locate = |path: &str, message: String| from.locate(path, message);
    // `retry.mode`: the SDK's settings under the user's own keys.
    crate::model::preset::expand_model_from(&mut merged, resolve)
        .map_err(|(p, m)| locate(&p, m))?;
    let kept = merged.clone();
    let model: Model = serde_path_to_error::deserialize(Value::Table(merged)).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let msg = type_message(&kept, &path, &e.inner().to_string())
            .unwrap_or_else(|| with_suggestion(&e.inner().to_string()));
        // `[[retry]]` where `[retry]` belongs: the error is about `retry`, not `retry[0]`.
        let path = match path.rfind('[') {
            Some(i) if msg.starts_with("an array") => path[..i].to_string(),
            _ => path,
        };
        locate(&path, msg)
    })?;
    model
        .validate()
        .and_then(|()| model.check_written(&kept))
        .map_err(|Invalid { path, message }| locate(&path, name_defaults(&kept, message)))?;
    Ok(model)
}

/// An error the file's line was blamed for, though the file alone is fine: a `--set`/`--vary`
/// value broke the rule (`--set server.replicas=1` leaves a `balancer` with no effect). The flag
/// whose removal mends it is named with its value, and the file's line after the message.
fn blame_sets(
    e: LoadError,
    sets: &[Override],
    layer: &dyn Fn(&[Override]) -> Result<Model, LoadError>,
) -> LoadError {
    if sets.is_empty() || e.line.is_none() || layer(&[]).is_err() {
        return e;
    }
    let without = |i: usize| -> Vec<Override> {
        let mut v = sets.to_vec();
        v.remove(i);
        v
    };
    let culprit = (0..sets.len())
        .rev()
        .find(|&i| layer(&without(i)).is_ok())
        .unwrap_or(sets.len() - 1);
    let at = match (e.line, e.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", e.origin),
        (Some(l), None) => format!("{}:{l}", e.origin),
        _ => e.origin.clone(),
    };
    LoadError {
        origin: sets[culprit].flag.clone(),
        line: None,
        column: None,
        field: e.field,
        message: format!(
            "{} (written at {at}, which is valid without this flag)",
            e.message
        ),
    }
}

/// The line (1-based) where `path` (`retry`, `tier[0].retry`, `server`) is written for the
/// `[[variant]]` at `variant`: the variant's own key when it sets one under `path`'s first
/// segment, else the deepest key along `path` in the base; none when the text has neither (a
/// default). For pointing a finding about a resolved model at its source (`explain --sarif`).
pub fn key_line(text: &str, variant: Option<usize>, path: &str) -> Option<usize> {
    let doc = Doc {
        origin: "",
        text,
        spans: toml_edit::Document::parse(text).ok(),
    };
    let (raw, segs) = path_segments(path);
    let in_variant = variant.filter(|&i| {
        doc.spans.as_ref().is_some_and(|d| {
            d.get("variant")
                .and_then(|v| v.as_array_of_tables())
                .and_then(|a| a.get(i))
                .is_some_and(|t| segs.first().is_some_and(|s| t.contains_key(s)))
        })
    });
    let at = match in_variant {
        Some(i) => variant_span(&doc, i, &segs),
        None => doc.find(&raw),
    }?;
    Some(doc.line_col(at).0)
}

/// A dotted path's segments as written (`tier[0]`) and without their indices (`tier`).
fn path_segments(path: &str) -> (Vec<String>, Vec<String>) {
    let raw: Vec<String> = path
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let segs = raw
        .iter()
        .map(|s| s.split('[').next().unwrap_or(s).to_string())
        .collect();
    (raw, segs)
}

/// The file parsed: its table (with a `name`, from the file's stem when it has none) and its
/// `[[variant]]` tables, taken out; refused when it nests too deep or is not TOML.
fn parse_file(doc: &Doc, origin: &str) -> Result<(Table, Option<Vec<Value>>), LoadError> {
    let text = doc.text;
    if let Some((at, depth)) = too_deep(text) {
        return Err(doc.error(
            Some(at),
            None,
            format!(
                "keys or tables nested {depth} levels deep; a model file nests at most {MAX_DEPTH} (its deepest field, `tier.server.rate_limit.rate`, has 4)"
            ),
        ));
    }
    let mut table: Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map(|s| s.start);
        let (field, message) = syntax_message(text, at, e.message().trim());
        doc.error(at, field, message)
    })?;
    let default_name = std::path::Path::new(origin)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .to_string();
    if !table.contains_key("name") {
        table.insert("name".into(), Value::String(default_name));
    }
    let variants = match table.remove("variant") {
        None => None,
        Some(Value::Array(a)) if a.is_empty() => {
            return Err(doc.error(
                doc.find(&["variant".into()]),
                Some("variant".into()),
                "an empty variant list; give at least one [[variant]] with a name, or none at all"
                    .into(),
            ));
        }
        Some(Value::Array(a)) => Some(a),
        Some(_) => {
            return Err(doc.error(
                doc.find(&["variant".into()]),
                Some("variant".into()),
                "expected [[variant]] tables".into(),
            ));
        }
    };
    Ok((table, variants))
}

/// Where the value at a path of one variant's merged table came from: a `--set` flag, the
/// variant's own keys, or the base.
struct Source<'a> {
    doc: &'a Doc<'a>,
    sets: &'a [Override],
    variant: Option<usize>,
    overrides: &'a Table,
}

impl Source<'_> {
    /// An error about `path`, pointing at the flag, the variant's line, or the base's line.
    fn locate(&self, path: &str, message: String) -> LoadError {
        let (raw, segs) = path_segments(path);
        if let Some(s) = self
            .sets
            .iter()
            .rev()
            .find(|s| path_overlaps(&s.key, &segs))
        {
            return set_error(s, Some(path.to_string()), message);
        }
        let field = Some(path.to_string());
        if let Some(i) = self.variant
            && has_path(self.overrides, &segs)
        {
            let name = self
                .overrides
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("?");
            return self.doc.error(
                variant_span(self.doc, i, &segs),
                field,
                format!("{message} (in variant {name:?})"),
            );
        }
        // A base value that only fails beside this variant's keys: say which variant.
        let message = match self.variant {
            Some(_) => {
                let name = self
                    .overrides
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                format!("{message} (with variant {name:?})")
            }
            None => message,
        };
        self.doc.error(self.doc.find(&raw), field, message)
    }
}

/// The arrivals of a trace workload: `resolve("trace:FILE")` gives the file's text (the core
/// reads no file), parsed once per file for all variants. Errors are the trace's own (file, line,
/// column) or a message about `workload.trace`. A file whose rows were out of time order adds
/// a note naming how many rows moved.
fn replay(
    origin: &str,
    model: &Model,
    resolve: crate::model::preset::Resolver<'_>,
    cache: &mut Vec<(String, std::sync::Arc<crate::model::replay::Trace>)>,
    notes: &mut Vec<String>,
) -> Result<std::sync::Arc<crate::model::replay::Trace>, Result<LoadError, String>> {
    let file = model.workload.trace.clone().unwrap_or_default();
    if let Some((_, t)) = cache.iter().find(|(f, _)| *f == file) {
        return Ok(t.clone());
    }
    let text = resolve(&format!("trace:{file}")).map_err(Err)?;
    let shown = std::path::Path::new(origin)
        .parent()
        .unwrap_or(std::path::Path::new(""))
        .join(&file);
    let t = std::sync::Arc::new(
        crate::model::replay::Trace::parse(&shown.display().to_string(), &text).map_err(Ok)?,
    );
    if let Some(r) = t.reordered {
        notes.push(format!(
            "{}: the rows are not in time order (line {} is earlier than the row before it); replayed in time order, {} of {} rows moved",
            shown.display(),
            r.first_line,
            r.moved,
            r.rows
        ));
    }
    cache.push((file, t.clone()));
    Ok(t)
}

#[cfg(test)]
mod tests;
