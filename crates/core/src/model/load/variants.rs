//! `[[variant]]` and `[[expect]]` tables: taken out of the file, checked, and the warnings
//! about overrides that replace what a variant set.

use super::*;

/// Takes the `[[expect]]` tables out of the file's table, with the line each starts on.
pub(super) fn take_expects(
    doc: &Doc,
    table: &mut Table,
) -> Result<(Vec<Table>, Vec<usize>), LoadError> {
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
pub(super) fn variant_layers(
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
pub(super) fn check_expects(
    doc: &Doc,
    origin: &str,
    names: &[String],
    expect: &[Table],
    expect_lines: &[usize],
) -> Result<(), LoadError> {
    // The `[[expect]]` tables are part of the file: every command refuses the same bad ones.
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    for (i, (t, line)) in expect.iter().zip(expect_lines).enumerate() {
        let e = crate::result::expect::Expectation::from_table(origin, *line, t)
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

/// One warning per override that replaces a key some variants set: the variants keep their
/// names but no longer differ in that key, which a reader of the table would not guess.
pub(super) fn shadowed_variants(
    sets: &[Override],
    layers: &[(Option<usize>, Table)],
) -> Vec<String> {
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

pub(super) fn variant_span(doc: &Doc, i: usize, path: &[String]) -> Option<usize> {
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

pub(super) fn expect_line(doc: &Doc, i: usize) -> usize {
    doc.spans
        .as_ref()
        .and_then(|d| d.get("expect")?.as_array_of_tables()?.get(i)?.span())
        .map(|s| doc.line_col(s.start).0)
        .unwrap_or(0)
}
