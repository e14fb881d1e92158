//! `--set KEY=VALUE`: parsing an override and applying it at a dotted path.

use super::*;

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

    pub(super) fn dotted(&self) -> String {
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
pub(super) fn split_index(seg: &str) -> (&str, Option<usize>) {
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

pub(super) fn set_error(s: &Override, field: Option<String>, message: String) -> LoadError {
    LoadError {
        origin: s.flag.clone(),
        line: None,
        column: None,
        field: field.or_else(|| Some(s.dotted())),
        message,
    }
}

pub(super) fn path_overlaps(set: &[String], path: &[String]) -> bool {
    let n = set.len().min(path.len());
    n > 0
        && set[..n]
            .iter()
            .zip(&path[..n])
            .all(|(a, b)| split_index(a).0 == split_index(b).0)
}

pub(super) fn has_path(t: &Table, path: &[String]) -> bool {
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
pub(super) fn entry_at<'a>(
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
