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

/// One `--set KEY=VALUE` override.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub key: Vec<String>,
    pub value: Value,
    /// The flag as the user wrote it, for error messages.
    pub flag: String,
}

impl Override {
    /// Parses `KEY=VALUE`. The value is read as TOML (`5000`, `true`, `0.15`, `[...]`) when it
    /// parses as such, otherwise as a string (`full`, `30ms`).
    pub fn parse(text: &str) -> Result<Override, LoadError> {
        Self::parse_as("--set", text)
    }

    /// As [`Override::parse`], naming `flag` in errors.
    pub fn parse_as(flag: &str, text: &str) -> Result<Override, LoadError> {
        let origin = format!("{flag} {text}");
        let err = |m: String| LoadError {
            origin: origin.clone(),
            line: None,
            column: None,
            field: None,
            message: m,
        };
        let (k, v) = text
            .split_once('=')
            .ok_or_else(|| err("expected KEY=VALUE, e.g. retry.jitter=full".into()))?;
        let key: Vec<String> = k.trim().split('.').map(|s| s.trim().to_string()).collect();
        if !key.iter().all(|s| key_segment(s)) {
            return Err(err(format!(
                "{k:?} is not a dotted key like retry.jitter (or server.outages[0].to for an entry of an array)"
            )));
        }
        Ok(Override {
            key,
            value: parse_value(v.trim()),
            flag: origin,
        })
    }

    fn dotted(&self) -> String {
        self.key.join(".")
    }
}

/// Whether `s` is one segment of a dotted key: a name (`retry`), or a name with the index of an
/// array entry (`outages[0]`).
pub fn key_segment(s: &str) -> bool {
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    match s.split_once('[') {
        None => name_ok(s),
        Some((n, rest)) => {
            name_ok(n)
                && rest
                    .strip_suffix(']')
                    .is_some_and(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()))
        }
    }
}

/// Splits a key segment into its name and the array index it names, if any.
fn split_index(seg: &str) -> (&str, Option<usize>) {
    match seg.split_once('[') {
        Some((n, rest)) => (n, rest.trim_end_matches(']').parse().ok()),
        None => (seg, None),
    }
}

/// Reads a command-line value as TOML when it is one, else as a string.
pub fn parse_value(v: &str) -> Value {
    match format!("v = {v}").parse::<Table>() {
        Ok(mut t) => match t.remove("v") {
            Some(Value::Float(f)) if !f.is_finite() => Value::String(v.to_string()),
            Some(x) => x,
            None => Value::String(v.to_string()),
        },
        Err(_) => Value::String(v.to_string()),
    }
}

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

struct Doc<'a> {
    origin: &'a str,
    text: &'a str,
    spans: Option<toml_edit::Document<&'a str>>,
}

impl Doc<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rfind('\n')
            .map_or(before.len(), |p| before.len() - p - 1)
            + 1;
        (line, col)
    }

    /// The span of the deepest existing key along `path`; a segment `name[i]` descends into the
    /// `i`-th table of an array of tables (`[[tier]]`) or of an inline array.
    fn find(&self, path: &[String]) -> Option<usize> {
        let doc = self.spans.as_ref()?;
        let mut table: Option<&dyn toml_edit::TableLike> = Some(doc.as_table());
        let mut best = None;
        for seg in path {
            let (name, index) = match seg.split_once('[') {
                Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
                None => (seg.as_str(), None),
            };
            let Some(t) = table else { break };
            let Some((key, item)) = t.get_key_value(name) else {
                break;
            };
            best = key
                .span()
                .map(|s| s.start)
                .or(item.span().map(|s| s.start))
                .or(best);
            table = match (item, index) {
                (toml_edit::Item::ArrayOfTables(a), Some(i)) => a.get(i).map(|t| {
                    best = t.span().map(|s| s.start).or(best);
                    t as &dyn toml_edit::TableLike
                }),
                (toml_edit::Item::Value(toml_edit::Value::Array(a)), Some(i)) => {
                    a.get(i).and_then(|v| v.as_inline_table()).map(|t| {
                        best = t.span().map(|s| s.start).or(best);
                        t as &dyn toml_edit::TableLike
                    })
                }
                (it, None) => it.as_table_like(),
                _ => None,
            };
        }
        best
    }

    fn error(&self, at: Option<usize>, field: Option<String>, message: String) -> LoadError {
        let (line, column) = match at {
            Some(o) => {
                let (l, c) = self.line_col(o);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        LoadError {
            origin: self.origin.to_string(),
            line,
            column,
            field,
            message,
        }
    }
}

fn get_key<'i>(item: &'i toml_edit::Item, k: &str) -> Option<(Option<usize>, &'i toml_edit::Item)> {
    match item {
        toml_edit::Item::Table(t) => t
            .get_key_value(k)
            .map(|(key, it)| (key.span().map(|s| s.start), it)),
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => t
            .get_key_value(k)
            .map(|(key, it)| (key.span().map(|s| s.start), it)),
        _ => None,
    }
}

/// Loads a model file. `origin` is how errors name it (usually its path). A `retry.from`
/// reference is refused: use [`load_resolved`] with a resolver that reads files.
pub fn load(origin: &str, text: &str, sets: &[Override]) -> Result<Scenario, LoadError> {
    load_resolved(origin, text, sets, &crate::preset::no_files)
}

/// As [`load`], resolving `retry.from = "SOURCE:FILE"` with `resolve` (the imported sections
/// fill in under the keys written beside `from`).
pub fn load_resolved(
    origin: &str,
    text: &str,
    sets: &[Override],
    resolve: crate::preset::Resolver<'_>,
) -> Result<Scenario, LoadError> {
    let doc = Doc {
        origin,
        text,
        spans: toml_edit::Document::parse(text).ok(),
    };
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
    let (expect, expect_lines) = take_expects(&doc, &mut table)?;
    let name = table
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("model")
        .to_string();

    let layers = variant_layers(&doc, variants)?;
    let warnings = shadowed_variants(sets, &layers);
    let mut models = Vec::with_capacity(layers.len());
    let mut traces = Vec::new();
    let mut notes = Vec::new();
    for (vi, overrides) in layers {
        let mut merged = table.clone();
        merge(&mut merged, overrides.clone());
        for s in sets {
            set_path(&mut merged, &s.key, s.value.clone()).map_err(|m| set_error(s, None, m))?;
        }
        // Where did the value at `path` come from: a --set flag, the variant, or the base?
        let locate = |path: &str, message: String| -> LoadError {
            let raw: Vec<String> = path
                .split('.')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let segs: Vec<String> = raw
                .iter()
                .map(|s| s.split('[').next().unwrap_or(s).to_string())
                .collect();
            if let Some(s) = sets.iter().rev().find(|s| path_overlaps(&s.key, &segs)) {
                return set_error(s, Some(path.to_string()), message);
            }
            let field = Some(path.to_string());
            if let Some(i) = vi
                && has_path(&overrides, &segs)
            {
                let name = overrides.get("name").and_then(Value::as_str).unwrap_or("?");
                return doc.error(
                    variant_span(&doc, i, &segs),
                    field,
                    format!("{message} (in variant {name:?})"),
                );
            }
            // A base value that only fails beside this variant's keys: say which variant.
            let message = match vi {
                Some(_) => {
                    let name = overrides.get("name").and_then(Value::as_str).unwrap_or("?");
                    format!("{message} (with variant {name:?})")
                }
                None => message,
            };
            doc.error(doc.find(&raw), field, message)
        };
        // `retry.mode`: the SDK's settings under the user's own keys.
        crate::preset::expand_model_from(&mut merged, resolve).map_err(|(p, m)| locate(&p, m))?;
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
            .map_err(|Invalid { path, message }| locate(&path, message))?;
        let mut model = model;
        if model.workload.kind == crate::model::WorkloadKind::Trace {
            model.workload.replay = replay(origin, &model, resolve, &mut traces, &mut notes)
                .map_err(|e| e.unwrap_or_else(|m| locate("workload.trace", m)))?;
        }
        models.push(model);
    }
    let base = models.remove(0);
    if models.is_empty() {
        models.push(base.clone());
    }
    check_expects(&doc, origin, &models, &expect, &expect_lines)?;
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

/// Takes the `[[expect]]` tables out of the file's table, with the line each starts on.
fn take_expects(doc: &Doc, table: &mut Table) -> Result<(Vec<Table>, Vec<usize>), LoadError> {
    match table.remove("expect") {
        None => Ok((Vec::new(), Vec::new())),
        Some(Value::Array(a)) => {
            let mut tables = Vec::new();
            let mut lines = Vec::new();
            for (i, v) in a.into_iter().enumerate() {
                let line = expect_line(doc, i);
                match v {
                    Value::Table(t) => {
                        tables.push(t);
                        lines.push(line);
                    }
                    _ => {
                        return Err(doc.error(
                            None,
                            Some(format!("expect[{i}]")),
                            "expected [[expect]] tables".into(),
                        ));
                    }
                }
            }
            Ok((tables, lines))
        }
        Some(_) => Err(doc.error(
            None,
            Some("expect".into()),
            "expected [[expect]] tables".into(),
        )),
    }
}

/// The base (no overrides) and each `[[variant]]`'s table of overrides, its `name` checked.
fn variant_layers(
    doc: &Doc,
    variants: Option<Vec<Value>>,
) -> Result<Vec<(Option<usize>, Table)>, LoadError> {
    let mut layers: Vec<(Option<usize>, Table)> = vec![(None, Table::new())];
    match variants {
        None => {}
        Some(list) => {
            let mut seen: Vec<String> = Vec::new();
            for (i, v) in list.into_iter().enumerate() {
                let at = |p: &[String]| variant_span(doc, i, p);
                let Value::Table(mut t) = v else {
                    return Err(doc.error(
                        None,
                        Some(format!("variant[{i}]")),
                        "expected a [[variant]] table".into(),
                    ));
                };
                let vname = match t.remove("name") {
                    Some(Value::String(s)) if !s.trim().is_empty() => s,
                    Some(_) => {
                        return Err(doc.error(
                            at(&["name".into()]),
                            Some(format!("variant[{i}].name")),
                            "must be a non-empty string".into(),
                        ));
                    }
                    None => {
                        return Err(doc.error(
                            at(&[]),
                            Some(format!("variant[{i}]")),
                            "every [[variant]] needs a `name`".into(),
                        ));
                    }
                };
                if seen.contains(&vname) {
                    return Err(doc.error(
                        at(&["name".into()]),
                        Some(format!("variant[{i}].name")),
                        format!("duplicate variant name {vname:?}; names must be unique"),
                    ));
                }
                if t.contains_key("seed") {
                    return Err(doc.error(
                        at(&["seed".into()]),
                        Some(format!("variant[{i}].seed")),
                        format!(
                            "a variant cannot set `seed` (in variant {vname:?}): every variant runs with the run's seed, so their differences come from the model and not from the random numbers (common random numbers); set `seed` at the top of the file or pass --seed"
                        ),
                    ));
                }
                seen.push(vname.clone());
                t.insert("name".into(), Value::String(vname));
                layers.push((Some(i), t));
            }
        }
    }

    Ok(layers)
}

/// Checks the `[[expect]]` tables against the variants' names: every command refuses the same
/// bad ones.
fn check_expects(
    doc: &Doc,
    origin: &str,
    models: &[Model],
    expect: &[Table],
    expect_lines: &[usize],
) -> Result<(), LoadError> {
    // The `[[expect]]` tables are part of the file: every command refuses the same bad ones.
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    for (i, (t, line)) in expect.iter().zip(expect_lines).enumerate() {
        let e = crate::expect::Expectation::from_table(origin, *line, t)
            .and_then(|e| e.check_variant(&names).map(|()| e))
            .map_err(|mut e| {
                // Point at the key itself when the error is about one.
                let key = e.field.as_deref().and_then(|f| f.strip_prefix("expect."));
                let key = key.or((e.field.as_deref() == Some("variant")).then_some("variant"));
                if let Some(at) = key.and_then(|k| doc.find(&[format!("expect[{i}]"), k.into()])) {
                    let (l, c) = doc.line_col(at);
                    (e.line, e.column) = (Some(l), Some(c));
                    e.origin = origin.to_string();
                    e.field = key.map(|k| format!("expect.{k}"));
                }
                e
            });
        e?;
    }
    Ok(())
}

/// The arrivals of a trace workload: `resolve("trace:FILE")` gives the file's text (the core
/// reads no file), parsed once per file for all variants. Errors are the trace's own (file, line,
/// column) or a message about `workload.trace`. A file whose rows were out of time order adds
/// a note naming how many rows moved.
fn replay(
    origin: &str,
    model: &Model,
    resolve: crate::preset::Resolver<'_>,
    cache: &mut Vec<(String, std::sync::Arc<crate::replay::Trace>)>,
    notes: &mut Vec<String>,
) -> Result<std::sync::Arc<crate::replay::Trace>, Result<LoadError, String>> {
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
        crate::replay::Trace::parse(&shown.display().to_string(), &text).map_err(Ok)?,
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

/// One warning per override that replaces a key some variants set: the variants keep their
/// names but no longer differ in that key, which a reader of the table would not guess.
fn shadowed_variants(sets: &[Override], layers: &[(Option<usize>, Table)]) -> Vec<String> {
    let mut out = Vec::new();
    for s in sets {
        let names: Vec<String> = layers
            .iter()
            .filter(|(vi, t)| vi.is_some() && has_path(t, &s.key))
            .map(|(_, t)| format!("{:?}", t.get("name").and_then(Value::as_str).unwrap_or("?")))
            .collect();
        if names.is_empty() {
            continue;
        }
        let flag = s.flag.split_whitespace().next().unwrap_or("--set");
        let (one, these) = if names.len() == 1 {
            ("variant", "it now runs")
        } else {
            ("variants", "they now all run")
        };
        let key = s.dotted();
        let with = if flag == "--vary" {
            format!("the point's {key}")
        } else {
            format!("{key} = {}", s.value)
        };
        out.push(format!(
            "{flag} {key}: replaces the value that {one} {list} set{s_}; {flag} applies to the base and to every variant, so {these} with {with}",
            list = names.join(", "),
            s_ = if names.len() == 1 { "s" } else { "" },
        ));
    }
    out
}

fn variant_span(doc: &Doc, i: usize, path: &[String]) -> Option<usize> {
    let d = doc.spans.as_ref()?;
    let aot = d.get("variant")?.as_array_of_tables()?;
    let t = aot.get(i)?;
    let mut item_span = t.span().map(|s| s.start);
    let mut cur: Option<&toml_edit::Item> = None;
    for (n, seg) in path.iter().enumerate() {
        let found = if n == 0 {
            t.get_key_value(seg)
                .map(|(k, it)| (k.span().map(|s| s.start), it))
        } else {
            cur.and_then(|c| get_key(c, seg))
        };
        match found {
            Some((span, it)) => {
                item_span = span.or(item_span);
                cur = Some(it);
            }
            None => break,
        }
    }
    item_span
}

fn expect_line(doc: &Doc, i: usize) -> usize {
    doc.spans
        .as_ref()
        .and_then(|d| d.get("expect")?.as_array_of_tables()?.get(i)?.span())
        .map(|s| doc.line_col(s.start).0)
        .unwrap_or(0)
}

fn set_error(s: &Override, field: Option<String>, message: String) -> LoadError {
    LoadError {
        origin: s.flag.clone(),
        line: None,
        column: None,
        field: field.or_else(|| Some(s.dotted())),
        message,
    }
}

fn path_overlaps(set: &[String], path: &[String]) -> bool {
    let n = set.len().min(path.len());
    n > 0
        && set[..n]
            .iter()
            .zip(&path[..n])
            .all(|(a, b)| split_index(a).0 == split_index(b).0)
}

fn has_path(t: &Table, path: &[String]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    match t.get(split_index(first).0) {
        None => false,
        Some(Value::Table(sub)) if !rest.is_empty() => {
            has_path(sub, rest) || !rest.is_empty() && sub.is_empty()
        }
        Some(_) => true,
    }
}

/// The array entry `seg` (`name[i]`) names in `t`: it must exist, an override cannot grow an
/// array.
fn entry_at<'a>(
    t: &'a mut Table,
    name: &str,
    i: usize,
    key: &[String],
    n: usize,
) -> Result<&'a mut Value, String> {
    let mut shown: Vec<String> = key[..n].to_vec();
    shown.push(name.to_string());
    match t.get_mut(name) {
        Some(Value::Array(a)) => {
            let len = a.len();
            a.get_mut(i).ok_or_else(|| {
                format!(
                    "`{}` has {len} entr{}; [{i}] is not one of them (an override changes an entry, it does not add one)",
                    shown.join("."),
                    if len == 1 { "y" } else { "ies" }
                )
            })
        }
        Some(_) => Err(format!(
            "`{}` is not an array: cannot set entry [{i}] of it",
            shown.join(".")
        )),
        None => Err(format!(
            "`{}` is not set in the model, so it has no entry [{i}] to change; give the whole array instead",
            shown.join(".")
        )),
    }
}

/// Sets `value` at a dotted path, creating tables on the way. A segment `name[i]` descends into
/// entry `i` of an existing array (`server.outages[0].to`).
pub fn set_path(t: &mut Table, key: &[String], value: Value) -> Result<(), String> {
    let (last, parents) = key.split_last().ok_or("empty key")?;
    let mut cur = t;
    for (n, p) in parents.iter().enumerate() {
        let entry = match split_index(p) {
            (name, Some(i)) => entry_at(cur, name, i, key, n)?,
            _ => cur
                .entry(p.clone())
                .or_insert_with(|| Value::Table(Table::new())),
        };
        cur = match entry {
            Value::Table(sub) => sub,
            _ => {
                return Err(format!(
                    "`{}` is a value, not a section: cannot set `{}` inside it",
                    key[..=n].join("."),
                    key.join(".")
                ));
            }
        };
    }
    match split_index(last) {
        (name, Some(i)) => *entry_at(cur, name, i, key, parents.len())? = value,
        _ => {
            cur.insert(last.clone(), value);
        }
    }
    Ok(())
}

/// A TOML syntax error in words: the key of a duplicate, the field of a number out of range.
/// The deepest nesting a model file may have (dotted key segments plus open brackets); the TOML
/// parser gives up far deeper with a bare "recursion limit" that names no line.
const MAX_DEPTH: usize = 32;

/// Where the text first nests deeper than [`MAX_DEPTH`] (byte offset, depth): a dotted key or
/// header of many segments, or brackets and braces inside one another. Quoted strings and
/// comments are skipped.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let mut brackets = 0usize;
    let mut dots = 0usize;
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut in_key = true;
    for (i, c) in text.char_indices() {
        if comment {
            if c == '\n' {
                comment = false;
            } else {
                continue;
            }
        }
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '#' => comment = true,
            '[' | '{' => brackets += 1,
            ']' | '}' => brackets = brackets.saturating_sub(1),
            '.' if in_key => dots += 1,
            '=' | ',' => {
                in_key = c == ',';
                dots = 0;
            }
            '\n' => {
                in_key = true;
                dots = 0;
            }
            _ => {}
        }
        if c == '{' {
            in_key = true;
        }
        let depth = brackets + dots + 1;
        if depth > MAX_DEPTH {
            return Some((i, depth));
        }
    }
    None
}

fn syntax_message(text: &str, at: Option<usize>, msg: &str) -> (Option<String>, String) {
    let msg = msg.lines().next().unwrap_or(msg).trim_end();
    let Some(at) = at.filter(|a| *a <= text.len()) else {
        return (None, msg.to_string());
    };
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    // The dotted key of `key = value` on this line, under the last `[table]` header above it.
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let header = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| {
            l.trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        });
    let field = key.as_ref().map(|k| match &header {
        Some(h) if !h.is_empty() => format!("{h}.{k}"),
        _ => k.clone(),
    });
    if msg == "duplicate key" {
        let what = key.or_else(|| {
            let l = line.trim();
            l.starts_with('[')
                .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        });
        let header = line.trim_start().starts_with('[');
        return match what {
            Some(k) if header => (
                None,
                format!(
                    "duplicate table `[{k}]`: a table may be opened once (move these keys into the first `[{k}]`)"
                ),
            ),
            Some(k) => (
                field,
                format!(
                    "duplicate key `{k}`: a key may be given once per table (remove one, or use a [[variant]] to try another value)"
                ),
            ),
            None => (None, msg.to_string()),
        };
    }
    if msg.contains(" as i128") || msg.contains("integer number overflowed") {
        let number = msg.split('`').nth(1).unwrap_or("the number");
        return (
            field,
            format!(
                "{number} is too large: TOML integers are at most {} (2^63 - 1)",
                i64::MAX
            ),
        );
    }
    (field, msg.to_string())
}

/// A type error in words, found by asking the model what the field would accept: the allowed
/// words of an enum (`kind = 5`), or a table where an array was given (`[[retry]]`).
fn type_message(merged: &Table, path: &str, msg: &str) -> Option<String> {
    if !msg.starts_with("invalid type:") {
        return None;
    }
    // `[[retry]]` for `[retry]`: the error is about an element of an array, and the model
    // accepts a table in the array's place.
    if path.ends_with(']') {
        let head = &path[..path.rfind('[')?];
        let Some(Value::Array(a)) = value_at(merged, head) else {
            return None;
        };
        let first = a.first().cloned()?;
        let mut probe = merged.clone();
        if matches!(first, Value::Table(_)) && replace_at(&mut probe, head, first) {
            let still = error_path(&probe).is_some_and(|p| p.starts_with(head));
            if !still {
                let name: String = segments(head)
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(".");
                return Some(format!(
                    "an array of tables where one table belongs: write `[{name}]` (single brackets), not `[[{name}]]`"
                ));
            }
        }
        return None;
    }
    // An enum given a value that is not a string: the model's error for an unknown word lists
    // the allowed ones.
    let got = value_at(merged, path)?;
    if matches!(got, Value::String(_) | Value::Table(_)) {
        return None;
    }
    let mut probe = merged.clone();
    replace_at(&mut probe, path, Value::String("\u{1}".into()));
    let e = serde_path_to_error::deserialize::<_, Model>(Value::Table(probe)).err()?;
    if e.path().to_string() != path {
        return None;
    }
    let inner = e.inner().to_string();
    let allowed = inner
        .lines()
        .next()?
        .split_once("expected ")?
        .1
        .trim()
        .to_string();
    if !inner.starts_with("unknown variant") {
        return None;
    }
    let what = match got {
        Value::Integer(_) => "the integer",
        Value::Float(_) => "the number",
        Value::Boolean(_) => "the boolean",
        Value::Datetime(_) => "the date",
        Value::Array(_) => "the array",
        _ => "",
    };
    Some(format!("expected {allowed} (a string), got {what} {got}"))
}

/// Where deserializing `t` as a model fails, if it does.
fn error_path(t: &Table) -> Option<String> {
    serde_path_to_error::deserialize::<_, Model>(Value::Table(t.clone()))
        .err()
        .map(|e| e.path().to_string())
}

/// Splits `a.b[2].c` into `(name, index)` segments.
fn segments(path: &str) -> Vec<(&str, Option<usize>)> {
    path.split('.')
        .filter(|s| !s.is_empty())
        .map(|s| match s.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse().ok()),
            None => (s, None),
        })
        .collect()
}

fn value_at<'a>(t: &'a Table, path: &str) -> Option<&'a Value> {
    let mut cur: Option<&Value> = None;
    for (n, (name, index)) in segments(path).into_iter().enumerate() {
        let table = match cur {
            None if n == 0 => t,
            Some(Value::Table(sub)) => sub,
            _ => return None,
        };
        let mut v = table.get(name)?;
        if let Some(i) = index {
            v = v.as_array()?.get(i)?;
        }
        cur = Some(v);
    }
    cur
}

fn replace_at(t: &mut Table, path: &str, value: Value) -> bool {
    let segs = segments(path);
    let Some(((last, last_index), parents)) = segs.split_last() else {
        return false;
    };
    let mut cur = t;
    for (name, index) in parents {
        let mut v = match cur.get_mut(*name) {
            Some(v) => v,
            None => return false,
        };
        if let Some(i) = index {
            v = match v.as_array_mut().and_then(|a| a.get_mut(*i)) {
                Some(v) => v,
                None => return false,
            };
        }
        cur = match v {
            Value::Table(sub) => sub,
            _ => return false,
        };
    }
    match last_index {
        None => {
            cur.insert((*last).to_string(), value);
            true
        }
        Some(i) => match cur
            .get_mut(*last)
            .and_then(Value::as_array_mut)
            .and_then(|a| a.get_mut(*i))
        {
            Some(slot) => {
                *slot = value;
                true
            }
            None => false,
        },
    }
}

/// Serde's names for the types a field expects, in words.
fn expected_in_words(msg: &str) -> String {
    let Some((head, ty)) = msg.rsplit_once(", expected ") else {
        return msg.to_string();
    };
    let words = match ty {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number >= 0".to_string(),
        "i8" | "i16" | "i32" | "i64" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        t if t.starts_with("struct ") => "a table of keys (a `[section]`)".to_string(),
        t if t.starts_with("a sequence") => "an array `[...]`".to_string(),
        _ => return msg.to_string(),
    };
    format!("{head}, expected {words}")
}

/// Adds "did you mean `x`?" to serde's unknown field / variant messages.
pub fn with_suggestion(msg: &str) -> String {
    // The toml deserializer appends "in `section`" on a new line; the path already says it.
    let msg = msg.lines().next().unwrap_or(msg).trim_end();
    if msg.starts_with("invalid type:") || msg.starts_with("invalid value:") {
        return expected_in_words(msg);
    }
    let Some(rest) = msg
        .strip_prefix("unknown field `")
        .or_else(|| msg.strip_prefix("unknown variant `"))
    else {
        return msg.to_string();
    };
    let Some((got, tail)) = rest.split_once('`') else {
        return msg.to_string();
    };
    let allowed: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    match closest(got, &allowed) {
        Some(best) => format!("{msg}; did you mean `{best}`?"),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HERD: &str = r#"
name = "herd"
bucket = "10ms"

[workload]
clients = 100

[retry]
max_attempts = 6
jitter = "none"

[[variant]]
name = "full"
retry.jitter = "full"

[[variant]]
name = "equal"
[variant.retry]
jitter = "equal"
"#;

    #[test]
    fn variants_merge_over_the_base() {
        let s = load("herd.toml", HERD, &[]).unwrap();
        assert_eq!(s.variants.len(), 2);
        assert_eq!(s.variants[0].name, "full");
        assert_eq!(s.variants[0].retry.jitter, crate::backoff::Jitter::Full);
        assert_eq!(s.variants[1].retry.jitter, crate::backoff::Jitter::Equal);
        assert_eq!(s.variants[1].retry.max_attempts, 6);
        assert_eq!(s.variants[1].workload.clients, 100);
    }

    #[test]
    fn set_applies_to_every_variant() {
        let sets = [
            Override::parse("workload.clients=5000").unwrap(),
            Override::parse("retry.base=5ms").unwrap(),
        ];
        let s = load("herd.toml", HERD, &sets).unwrap();
        assert!(
            s.variants
                .iter()
                .all(|m| m.workload.clients == 5000 && m.retry.base.0 == 5_000_000)
        );
    }

    #[test]
    fn unknown_field_points_at_the_line_with_a_suggestion() {
        let e = load(
            "m.toml",
            "[retry]\nmax_attempts = 3\njiter = \"full\"\n",
            &[],
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (Some(3), Some(1)), "{e}");
        assert!(e.to_string().contains("did you mean `jitter`?"), "{e}");
        assert!(e.to_string().starts_with("m.toml:3:1: retry"), "{e}");
    }

    #[test]
    fn bad_value_in_a_variant_names_the_variant() {
        let text = "[retry]\nbase = \"10ms\"\n\n[[variant]]\nname = \"x\"\nretry.cap = \"1ms\"\n";
        let e = load("m.toml", text, &[]).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.to_string().contains("retry.cap"), "{e}");
        assert!(e.to_string().contains("variant \"x\""), "{e}");
    }

    #[test]
    fn an_override_changes_one_entry_of_an_array() {
        let text = "[server]\noutages = [{ from = \"10s\", to = \"15s\" }]\n";
        let s = load(
            "m.toml",
            text,
            &[Override::parse("server.outages[0].to=20s").unwrap()],
        )
        .unwrap();
        let o = &s.base.server.outages[0];
        assert_eq!((o.from.0, o.to.0), (10_000_000_000, 20_000_000_000));
        let bad = |k: &str| {
            load("m.toml", text, &[Override::parse(k).unwrap()])
                .unwrap_err()
                .to_string()
        };
        assert!(
            bad("server.outages[1].to=20s").contains("has 1 entry"),
            "{}",
            bad("server.outages[1].to=20s")
        );
        assert!(bad("server.capacity[0]=3").contains("not set in the model"));
        assert!(
            bad("server.outages[0].too=20s").contains("did you mean `to`"),
            "{}",
            bad("server.outages[0].too=20s")
        );
        assert!(Override::parse("server.outages[x].to=1s").is_err());
        assert!(Override::parse("server.outages[0.to=1s").is_err());
    }

    #[test]
    fn set_errors_name_the_flag() {
        let e = load(
            "m.toml",
            "",
            &[Override::parse("retry.jitterr=full").unwrap()],
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("--set retry.jitterr=full"), "{e}");
        assert!(e.to_string().contains("did you mean `jitter`"), "{e}");
        let e = load("m.toml", "", &[Override::parse("retry.base=-5ms").unwrap()]).unwrap_err();
        assert!(e.to_string().contains("negative"), "{e}");
    }

    #[test]
    fn duplicate_and_empty_variants_are_refused() {
        let e = load(
            "m.toml",
            "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n",
            &[],
        )
        .unwrap_err();
        assert!(e.message.contains("duplicate"), "{e}");
        assert_eq!(e.line, Some(4));
        let e = load("m.toml", "variant = []\n", &[]).unwrap_err();
        assert!(e.message.contains("empty variant list"), "{e}");
    }

    #[test]
    fn malformed_toml_has_a_line() {
        let e = load("m.toml", "[retry\n", &[]).unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
    }

    #[test]
    fn unitless_and_negative_durations() {
        let e = load("m.toml", "[retry]\nbase = 100\n", &[]).unwrap_err();
        assert!(e.to_string().contains("m.toml:2:1: retry.base"), "{e}");
        assert!(e.message.contains("unit"), "{e}");
        let e = load("m.toml", "[workload]\nclients = 0\n", &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("workload.clients: must be at least 1"),
            "{e}"
        );
    }
}
