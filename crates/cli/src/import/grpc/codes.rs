//! gRPC status codes as the answer classes of the model (docs/import.md has the table).

use super::super::{quoted, refuse};
use crate::error::CliError;
use serde_json::Value;

/// gRPC status code (name, number) to the answer class it stands for here.
const CODES: [(&str, u64, &str); 6] = [
    ("UNAVAILABLE", 14, "503"),
    ("RESOURCE_EXHAUSTED", 8, "429"),
    ("DEADLINE_EXCEEDED", 4, "timeout"),
    ("INTERNAL", 13, "5xx"),
    ("UNKNOWN", 2, "5xx"),
    ("ABORTED", 10, "409"),
];

/// Codes a gRPC server sends that have no class in the model (a client error, a success, ...).
const UNMAPPED: [(&str, u64); 11] = [
    ("OK", 0),
    ("CANCELLED", 1),
    ("INVALID_ARGUMENT", 3),
    ("NOT_FOUND", 5),
    ("ALREADY_EXISTS", 6),
    ("PERMISSION_DENIED", 7),
    ("FAILED_PRECONDITION", 9),
    ("OUT_OF_RANGE", 11),
    ("UNIMPLEMENTED", 12),
    ("DATA_LOSS", 15),
    ("UNAUTHENTICATED", 16),
];

/// A status code (name in any case, or number) to its class.
fn class_of(file: &str, at: &str, v: &Value) -> Result<&'static str, CliError> {
    let name = match v {
        Value::String(s) => s.to_ascii_uppercase(),
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| {
                CODES
                    .iter()
                    .map(|c| (c.0, c.1))
                    .chain(UNMAPPED)
                    .find(|c| c.1 == n)
            })
            .map(|c| c.0.to_string())
            .unwrap_or_else(|| n.to_string()),
        _ => String::new(),
    };
    if let Some(c) = CODES.iter().find(|c| c.0 == name) {
        return Ok(c.2);
    }
    let mapped: Vec<String> = CODES.iter().map(|c| format!("{} ({})", c.0, c.2)).collect();
    let why = if UNMAPPED.iter().any(|c| c.0 == name) {
        "has no answer class in the model"
    } else {
        "is not a gRPC status code"
    };
    Err(refuse(
        file,
        at,
        format!("{v} {why}; supported: {}", mapped.join(", ")),
    ))
}

/// The status code list at `at` as classes (duplicates folded, first-seen order).
pub(super) fn classes(file: &str, at: &str, v: &Value) -> Result<Vec<&'static str>, CliError> {
    let list = v
        .as_array()
        .ok_or_else(|| refuse(file, at, "expected a list of status codes"))?;
    let mut out: Vec<&'static str> = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let class = class_of(file, &format!("{at}[{i}]"), c)?;
        if !out.contains(&class) {
            out.push(class);
        }
    }
    Ok(out)
}

/// Classes as a TOML list of strings.
pub(super) fn list(classes: &[&str]) -> String {
    let q: Vec<String> = classes.iter().map(|c| quoted(c)).collect();
    format!("[{}]", q.join(", "))
}
