//! The model's key tables (`retrystorm_core::model::KEY_TABLES`) against what is built or written
//! apart from them: the loader's `expected one of` list, the schema's properties, and the docs'
//! key tables, whose rows must be the tables' (name, default, doc line).
//! `UPDATE_MODEL_KEYS=1 cargo test --test cli model_keys` writes the docs' rows from the tables
//! first: each key's row rewritten, a missing key's row added after the key before it.

use crate::errors_doc::cells;
use assert_cmd::Command;
use retrystorm_core::base::keys::{Key, KeyTable};
use retrystorm_core::model::KEY_TABLES;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// Every key a table documents: the loader's and the ones it expands first.
fn all(t: &KeyTable) -> impl Iterator<Item = &'static Key> {
    t.keys().chain(t.expanded)
}

/// The keys a docs row names: its first cell, when that is a list of keys in backticks (a
/// remark in parentheses may follow: "`replica` (in `outages`, ...)").
fn row_keys(cell: &str) -> Vec<String> {
    let head = cell.split(" (").next().unwrap_or(cell);
    let names: Vec<Option<String>> = head
        .split(", ")
        .map(|s| Some(s.strip_prefix('`')?.strip_suffix('`')?.to_string()))
        .collect();
    names.into_iter().collect::<Option<_>>().unwrap_or_default()
}

/// One docs row: the keys it names, its default and meaning cells, and where it is.
struct Row {
    keys: Vec<String>,
    default: String,
    doc: String,
    file: &'static str,
    line: usize,
}

fn read(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
}

/// The line numbers (0-based) of the rows of the first table after the line that starts with
/// `heading`.
fn table_lines(file: &str, text: &str, heading: &str) -> std::ops::Range<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with(heading))
        .unwrap_or_else(|| panic!("{file}: no heading {heading:?}"));
    let first = (start..lines.len())
        .find(|&i| lines[i].starts_with('|'))
        .unwrap_or_else(|| panic!("{file}: no table after {heading:?}"));
    let end = (first..lines.len())
        .find(|&i| !lines[i].starts_with('|'))
        .unwrap_or(lines.len());
    first + 2..end
}

/// The rows documenting `t`'s keys.
fn rows(t: &KeyTable) -> Vec<Row> {
    let mut out = Vec::new();
    for &(file, heading) in t.docs {
        let text = read(file);
        let lines: Vec<&str> = text.lines().collect();
        for i in table_lines(file, &text, heading) {
            let c = cells(lines[i]);
            out.push(Row {
                keys: row_keys(&c[0]),
                default: c.get(1).cloned().unwrap_or_default(),
                doc: c.last().cloned().unwrap_or_default(),
                file,
                line: i + 1,
            });
        }
    }
    out
}

#[test]
fn the_loader_lists_each_tables_keys_in_order() {
    for t in KEY_TABLES {
        let text = match t.section {
            "layer" | "tier" => format!("[[{}]]\nnot_a_key = 1\n", t.section),
            s => format!("[{s}]\nnot_a_key = 1\n"),
        };
        let e = match retrystorm_core::load::load("m.toml", &text, &[]) {
            Ok(_) => panic!("{text:?} loaded"),
            Err(e) => e.to_string(),
        };
        // serde words the list "expected `a`", "expected `a` or `b`", "expected one of `a`, ...".
        let list = e
            .split_once(", expected ")
            .unwrap_or_else(|| panic!("{text:?}: {e}"))
            .1;
        let list = list.split(';').next().unwrap_or(list);
        let listed: Vec<&str> = list.split('`').skip(1).step_by(2).collect();
        let table: Vec<&str> = t.keys().map(|k| k.name).collect();
        assert_eq!(listed, table, "[{}]: {e}", t.section);
    }
}

#[test]
fn the_schema_lists_each_tables_keys() {
    let o = Command::cargo_bin("retrystorm")
        .unwrap()
        .arg("schema")
        .output()
        .unwrap();
    let schema: Value = serde_json::from_slice(&o.stdout).unwrap();
    for t in KEY_TABLES {
        let props = schema["$defs"][t.schema]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("the schema has no {}", t.schema));
        let listed: BTreeSet<&str> = props.keys().map(String::as_str).collect();
        let table: BTreeSet<&str> = all(&t).map(|k| k.name).collect();
        assert_eq!(listed, table, "[{}] against $defs.{}", t.section, t.schema);
    }
}

#[test]
fn the_docs_name_each_tables_keys_with_its_doc_line() {
    if std::env::var_os("UPDATE_MODEL_KEYS").is_some() {
        update_docs();
    }
    // A row naming several keys (`[[layer]]`'s backoff keys, "as `[retry]`") is checked where
    // each of them has a row of its own.
    let alone: Vec<(String, String)> = KEY_TABLES
        .iter()
        .flat_map(rows)
        .filter(|r| r.keys.len() == 1)
        .map(|r| (r.keys[0].clone(), r.doc))
        .collect();
    let mut wrong = Vec::new();
    for t in KEY_TABLES {
        let rows = rows(&t);
        let listed: BTreeSet<&str> = rows
            .iter()
            .flat_map(|r| &r.keys)
            .map(String::as_str)
            .collect();
        let table: BTreeSet<&str> = all(&t).map(|k| k.name).collect();
        for k in table.difference(&listed) {
            wrong.push(format!("[{}]: the docs have no row for `{k}`", t.section));
        }
        for k in listed.difference(&table) {
            wrong.push(format!(
                "[{}]: the docs name `{k}`, which its table has not",
                t.section
            ));
        }
        for r in &rows {
            let keys: Vec<&Key> = all(&t)
                .filter(|k| r.keys.iter().any(|n| n == k.name))
                .collect();
            match keys[..] {
                [k] if r.keys.len() == 1 && (k.default, k.doc) != (&r.default, &r.doc) => wrong
                    .push(format!(
                        "{}:{}: `{}`'s row is not its table's:\n  docs:  {} | {}\n  table: {} | {}",
                        r.file, r.line, k.name, r.default, r.doc, k.default, k.doc
                    )),
                _ if r.keys.len() > 1 => {
                    for k in keys {
                        if !alone
                            .iter()
                            .any(|(name, doc)| name == k.name && doc == k.doc)
                        {
                            wrong.push(format!(
                                "{}:{}: `{}` has no row of its own (with its doc line) in another section's table",
                                r.file, r.line, k.name
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\n(UPDATE_MODEL_KEYS=1 writes the docs' rows from the tables)",
        wrong.join("\n")
    );
}

/// A key's docs row.
fn row_of(k: &Key) -> String {
    format!("| `{}` | {} | {} |", k.name, k.default, k.doc)
}

/// Writes each key's docs row from its table, and adds the rows of keys the docs miss (in the
/// first place a table names) after the row of the key before it.
fn update_docs() {
    for t in KEY_TABLES {
        let documented: BTreeSet<String> = rows(&t).into_iter().flat_map(|r| r.keys).collect();
        for (n, &(file, heading)) in t.docs.iter().enumerate() {
            let text = read(file);
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            let range = table_lines(file, &text, heading);
            let mut table: Vec<String> = lines[range.clone()].to_vec();
            let names = |line: &str| row_keys(&cells(line)[0]);
            for line in &mut table {
                if let [name] = &names(line)[..]
                    && let Some(k) = all(&t).find(|k| k.name == name)
                {
                    *line = row_of(k);
                }
            }
            let mut after = 0;
            for k in all(&t).filter(|_| n == 0) {
                if documented.contains(k.name) {
                    if let Some(i) = table
                        .iter()
                        .position(|l| names(l).iter().any(|x| x == k.name))
                    {
                        after = i + 1;
                    }
                } else {
                    table.insert(after, row_of(k));
                    after += 1;
                }
            }
            lines.splice(range, table);
            let mut out = lines.join("\n");
            out.push('\n');
            std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join(file), out).unwrap();
        }
    }
}
