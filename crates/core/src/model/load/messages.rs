//! serde's messages about a model in words: the allowed words of an enum, a table written
//! as an array of tables, the type a field expects, and a did-you-mean for unknown keys.

use super::*;

/// A type error in words, found by asking the model what the field would accept: the allowed
/// words of an enum (`kind = 5`), or a table where an array was given (`[[retry]]`).
pub(super) fn type_message(merged: &Table, path: &str, msg: &str) -> Option<String> {
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
pub(super) fn error_path(t: &Table) -> Option<String> {
    serde_path_to_error::deserialize::<_, Model>(Value::Table(t.clone()))
        .err()
        .map(|e| e.path().to_string())
}

/// Splits `a.b[2].c` into `(name, index)` segments.
pub(super) fn segments(path: &str) -> Vec<(&str, Option<usize>)> {
    path.split('.')
        .filter(|s| !s.is_empty())
        .map(|s| match s.split_once('[') {
            Some((n, i)) => (n, i.trim_end_matches(']').parse().ok()),
            None => (s, None),
        })
        .collect()
}

pub(super) fn value_at<'a>(t: &'a Table, path: &str) -> Option<&'a Value> {
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

pub(super) fn replace_at(t: &mut Table, path: &str, value: Value) -> bool {
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
pub(super) fn expected_in_words(msg: &str) -> String {
    let Some((head, ty)) = msg.rsplit_once(", expected ") else {
        return msg.to_string();
    };
    let words = match ty {
        // A bound below TOML's own (2^63 - 1) is named: `4294967296` is a whole number >= 0.
        "u8" => format!("a whole number from 0 to {}", u8::MAX),
        "u16" => format!("a whole number from 0 to {}", u16::MAX),
        "u32" => format!("a whole number from 0 to {} (2^32 - 1)", u32::MAX),
        "u64" | "usize" => "a whole number >= 0".to_string(),
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

/// A check that names another field's value ("must be >= retry.base (100ms)") says when that
/// value is the default, not something the user wrote in `merged` (the file, the variant, the
/// flags): "(100ms, the default)".
pub(super) fn name_defaults(merged: &Table, message: String) -> String {
    for lead in ["must be >= ", "must be longer than "] {
        let Some(rest) = message.strip_prefix(lead) else {
            continue;
        };
        let Some((path, after)) = rest.split_once(" (") else {
            continue;
        };
        let Some(close) = after.find(')') else {
            continue;
        };
        let field = path.starts_with(|c: char| c.is_ascii_lowercase()) && path.contains('.');
        if field && !path.contains(' ') && value_at(merged, path).is_none() {
            return format!(
                "{lead}{path} ({}, the default{}",
                &after[..close],
                &after[close..]
            );
        }
    }
    message
}
