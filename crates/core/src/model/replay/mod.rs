//! Production traffic replay (`workload.kind = "trace"`): arrival times read from an access log
//! export, CSV or JSON Lines, parsed here from text the command line read (the core does no I/O).
//!
//! Each row is one request: `timestamp` (required), `class` (optional: the caller the request came
//! from, e.g. a client service; each distinct class is one client process, the unit of `scope =
//! "client"` budgets, breakers and rate limits) and `key` (optional: the request's idempotency
//! key: rows sharing one are one intent, see `path::keyed`). A timestamp is a number of seconds
//! (`1733280000.125`, epoch or relative), an RFC 3339 date-time (`2026-12-04T13:00:00.125Z`, as
//! access logs write them) or a duration with a unit (`"1.5s"`, `"250ms"`); times
//! are taken relative to the earliest one, in integer nanoseconds, and rows are replayed in time
//! order (ties in file order; a file out of order is put in order, and [`Trace::reordered`] says
//! how much moved, for a note). A negative number of seconds is refused. `workload.speed` divides the offsets: 2.0 replays the same traffic
//! in half the time, twice the load. Any other column is refused, naming file, line and column.

use crate::base::diagnostics::{LoadError, closest};
use crate::base::time::Duration;

/// One arrival of a trace: its offset from the trace's first timestamp and its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceArrival {
    /// Offset from the earliest timestamp, before `workload.speed`.
    pub at: Duration,
    /// Index into [`Trace::classes`], or 0 without a class column.
    pub class: u32,
    /// The row's intent: rows with the same `key` share one ([`Trace::intents`]); a row
    /// without a key has its own. Numbered in time order; 0 without a key column.
    pub intent: u32,
}

/// A parsed trace, sorted by time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub arrivals: Vec<TraceArrival>,
    /// The distinct `class` values in order of first appearance (empty without the column).
    pub classes: Vec<String>,
    /// Distinct `key` values (0 without the column).
    pub keys: u64,
    /// With a key column: how many rows each intent has (indexed by [`TraceArrival::intent`]);
    /// empty without one, when every row is an intent of its own.
    pub intents: Vec<u32>,
    /// When the file's rows were not in time order: how they were put in order.
    pub reordered: Option<Reordered>,
}

/// A trace whose rows were not in time order, replayed in time order all the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reordered {
    /// Rows whose place in time order is not their place in the file.
    pub moved: usize,
    /// The file line of the first row earlier than the row before it.
    pub first_line: usize,
    /// The rows in all.
    pub rows: usize,
}

/// The columns a trace may have.
pub const COLUMNS: [&str; 3] = ["timestamp", "class", "key"];

/// The most rows a trace may hold (one intent each): about 160 bytes of memory a row while
/// loading and running (`docs/performance.md`, "Memory bounds"), so at most about 0.8 GB;
/// reading stops at the first row beyond it.
pub const MAX_ROWS: usize = 5_000_000;

/// Refuses the row at `line` when `held` rows are read already and there is no room for it.
fn too_many(origin: &str, line: usize, held: usize) -> Result<(), LoadError> {
    if held < MAX_ROWS {
        return Ok(());
    }
    Err(err(
        origin,
        Some(line),
        None,
        None,
        format!(
            "more than {MAX_ROWS} rows; a trace may have at most {MAX_ROWS} (about 160 bytes of memory each): replay a part of it"
        ),
    ))
}

impl Trace {
    /// Parses `text`, JSON Lines when `origin` ends in `.jsonl` or `.ndjson` or the first
    /// non-blank character is `{`, CSV with a header row otherwise. `origin` names the file in
    /// errors.
    pub fn parse(origin: &str, text: &str) -> Result<Trace, LoadError> {
        let lower = origin.to_ascii_lowercase();
        let jsonl = lower.ends_with(".jsonl")
            || lower.ends_with(".ndjson")
            || (!lower.ends_with(".csv") && text.trim_start().starts_with('{'));
        let rows = if jsonl {
            jsonl_rows(origin, text)?
        } else {
            csv_rows(origin, text)?
        };
        if rows.is_empty() {
            return Err(err(
                origin,
                None,
                None,
                None,
                "the trace has no rows".into(),
            ));
        }
        let first = rows.iter().map(|r| r.ns).min().unwrap_or(0);
        let mut classes: Vec<String> = Vec::new();
        let mut arrivals = Vec::with_capacity(rows.len());
        for r in &rows {
            let class = match &r.class {
                None => 0,
                Some(c) => match classes.iter().position(|x| x == c) {
                    Some(i) => i as u32,
                    None => {
                        classes.push(c.clone());
                        (classes.len() - 1) as u32
                    }
                },
            };
            let at = u64::try_from(r.ns - first).unwrap_or(u64::MAX);
            arrivals.push(TraceArrival {
                at: Duration(at),
                class,
                intent: 0,
            });
        }
        if classes.len() as u64 > crate::model::limits::MAX_POLICY_INSTANCES {
            return Err(err(
                origin,
                None,
                None,
                Some("class"),
                format!(
                    "{} distinct classes; at most {} (each is a client process)",
                    classes.len(),
                    crate::model::limits::MAX_POLICY_INSTANCES
                ),
            ));
        }
        // Stable: rows at the same time keep their file order.
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| arrivals[i].at);
        let reordered = rows
            .windows(2)
            .find(|w| w[1].ns < w[0].ns)
            .map(|w| Reordered {
                moved: order.iter().enumerate().filter(|(p, i)| p != *i).count(),
                first_line: w[1].line,
                rows: rows.len(),
            });
        let mut arrivals: Vec<TraceArrival> = order.iter().map(|&i| arrivals[i]).collect();
        let mut keys = 0;
        let mut intents = Vec::new();
        if rows.iter().any(|r| r.key.is_some()) {
            // Intents numbered by first appearance in time order; a BTreeMap, so nothing
            // depends on hashing.
            let mut of_key: std::collections::BTreeMap<&str, u32> = Default::default();
            for (a, &i) in arrivals.iter_mut().zip(&order) {
                let next = intents.len() as u32;
                a.intent = match rows[i].key.as_deref() {
                    Some(k) => *of_key.entry(k).or_insert(next),
                    None => next,
                };
                if a.intent == next {
                    intents.push(0);
                }
                intents[a.intent as usize] += 1;
            }
            keys = of_key.len() as u64;
        }
        Ok(Trace {
            arrivals,
            classes,
            keys,
            intents,
            reordered,
        })
    }

    /// The client processes of the replay: one per class, or `processes` without classes.
    pub fn processes(&self, processes: u64) -> u64 {
        if self.classes.is_empty() {
            processes.max(1)
        } else {
            self.classes.len() as u64
        }
    }
}

/// A row as read: nanoseconds since the epoch of the file's clock, and its optional columns.
struct Row {
    ns: i128,
    line: usize,
    class: Option<String>,
    key: Option<String>,
}

fn err(
    origin: &str,
    line: Option<usize>,
    column: Option<usize>,
    field: Option<&str>,
    message: String,
) -> LoadError {
    LoadError {
        origin: origin.to_string(),
        line,
        column,
        field: field.map(str::to_string),
        message,
    }
}

/// A timestamp in integer nanoseconds: decimal seconds (no float on the way) or a duration.
fn timestamp_ns(text: &str) -> Result<i128, String> {
    let s = text.trim();
    let allowed = "a number of seconds (1733280000.125), an RFC 3339 date-time (\"2026-12-04T13:00:00.125Z\") or a duration with a unit (\"1.5s\")";
    if s.is_empty() {
        return Err(format!("empty; expected {allowed}"));
    }
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let is_num = |p: &str| p.chars().all(|c| c.is_ascii_digit());
    let number = (!whole.is_empty() || !frac.is_empty()) && is_num(whole) && is_num(frac);
    if number {
        if frac.len() > 9 {
            return Err(format!(
                "{s:?} has more than 9 decimals (nanoseconds are the finest)"
            ));
        }
        let w: i128 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| format!("{s:?} is too large"))?
        };
        let f: i128 = if frac.is_empty() {
            0
        } else {
            format!("{frac:0<9}").parse().unwrap_or(0)
        };
        let ns = w
            .checked_mul(1_000_000_000)
            .and_then(|x| x.checked_add(f))
            .filter(|x| *x <= i128::from(u64::MAX))
            .ok_or_else(|| format!("{s:?} is too large"))?;
        if neg && ns > 0 {
            return Err(format!(
                "{s:?} is negative; a timestamp is seconds since the epoch or since the trace's start, >= 0"
            ));
        }
        return Ok(ns);
    }
    if looks_like_date(s) {
        return rfc3339_ns(s);
    }
    Duration::parse(s)
        .map(|d| i128::from(d.0))
        .map_err(|_| format!("{s:?}: expected {allowed}"))
}

/// Whether `s` starts as a date does (`YYYY-MM-DD`), so a malformed one gets the RFC 3339 error.
fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
}

/// An RFC 3339 date-time (`2026-12-04T13:00:00.125Z`, `2026-12-04 14:00:00+01:00`) in integer
/// nanoseconds since the Unix epoch, by chrono's `parse_from_rfc3339` (RFC 3339 §5.6: a `T` or a
/// space between date and time, `Z` or a numeric offset required, up to 9 fraction digits). A
/// leap second (`23:59:60`) counts as the second before the next minute, as chrono reads it.
fn rfc3339_ns(s: &str) -> Result<i128, String> {
    // chrono truncates a longer fraction; a trace's clock is not silently rounded.
    if let Some((_, frac)) = s.split_once('.') {
        if frac.bytes().take_while(u8::is_ascii_digit).count() > 9 {
            return Err(format!(
                "{s:?} has more than 9 decimals in its RFC 3339 seconds (nanoseconds are the finest)"
            ));
        }
    }
    let t = chrono::DateTime::parse_from_rfc3339(s).map_err(|e| {
        format!(
            "{s:?} is not an RFC 3339 date-time ({e}); expected e.g. \"2026-12-04T13:00:00.125Z\" (with `Z` or an offset such as +01:00)"
        )
    })?;
    Ok(i128::from(t.timestamp()) * 1_000_000_000 + i128::from(t.timestamp_subsec_nanos()))
}

fn csv_rows(origin: &str, text: &str) -> Result<Vec<Row>, LoadError> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = r
        .headers()
        .map_err(|e| err(origin, Some(1), None, None, e.to_string()))?
        .clone();
    let mut idx = [None; 3];
    for (i, h) in headers.iter().enumerate() {
        match COLUMNS.iter().position(|c| *c == h) {
            Some(k) if idx[k].is_some() => {
                return Err(err(
                    origin,
                    Some(1),
                    Some(csv_column(&headers, i)),
                    Some(h),
                    "a column may appear once".into(),
                ));
            }
            Some(k) => idx[k] = Some(i),
            None => {
                let hint = closest(h, &COLUMNS)
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(err(
                    origin,
                    Some(1),
                    Some(csv_column(&headers, i)),
                    Some(h),
                    format!(
                        "unknown column; a trace has `timestamp` and optionally `class` and `key`{hint}"
                    ),
                ));
            }
        }
    }
    let Some(ts) = idx[0] else {
        let found: Vec<&str> = headers.iter().collect();
        return Err(err(
            origin,
            Some(1),
            Some(1),
            None,
            format!(
                "the header row ({}) has no `timestamp` column; a trace has `timestamp` and optionally `class` and `key`",
                found.join(", ")
            ),
        ));
    };
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize);
            let msg = match e.kind() {
                csv::ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => format!("{len} fields where the header has {expected_len}"),
                _ => e.to_string(),
            };
            err(origin, line, None, None, msg)
        })?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let ns = timestamp_ns(&rec[ts]).map_err(|m| {
            err(
                origin,
                Some(line),
                Some(csv_column(&rec, ts)),
                Some("timestamp"),
                m,
            )
        })?;
        let opt = |k: usize| idx[k].map(|i| rec[i].to_string()).filter(|s| !s.is_empty());
        too_many(origin, line, rows.len())?;
        rows.push(Row {
            ns,
            line,
            class: opt(1),
            key: opt(2),
        });
    }
    Ok(rows)
}

/// The 1-based character column where field `i` of an unquoted record starts.
fn csv_column(rec: &csv::StringRecord, i: usize) -> usize {
    rec.iter()
        .take(i)
        .map(|f| f.chars().count() + 1)
        .sum::<usize>()
        + 1
}

fn jsonl_rows(origin: &str, text: &str) -> Result<Vec<Row>, LoadError> {
    use serde_json::Value;
    let mut rows = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let at = |e: &str| raw.find(&format!("\"{e}\"")).map(|c| c + 1);
        let v: JsonLine = serde_json::from_str(raw)
            .map_err(|e| err(origin, Some(line), Some(e.column()), None, e.to_string()))?;
        let JsonLine::Object(members) = v else {
            return Err(err(
                origin,
                Some(line),
                Some(1),
                None,
                "expected one JSON object per line, e.g. {\"timestamp\": 1.5}".into(),
            ));
        };
        let mut o = serde_json::Map::new();
        for (k, v) in members {
            if o.contains_key(&k) {
                // The column of the second occurrence.
                let quoted = format!("\"{k}\"");
                let col = raw
                    .match_indices(&quoted)
                    .nth(1)
                    .map(|(c, _)| c + 1)
                    .or(at(&k));
                return Err(err(
                    origin,
                    Some(line),
                    col,
                    Some(&k),
                    "has no effect: given twice in one row, and a JSON object keeps only one of the values; give each field once".into(),
                ));
            }
            o.insert(k, v);
        }
        if let Some(k) = o.keys().find(|k| !COLUMNS.contains(&k.as_str())) {
            let hint = closest(k, &COLUMNS)
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err(err(
                origin,
                Some(line),
                at(k),
                Some(k),
                format!(
                    "unknown field; a trace row has `timestamp` and optionally `class` and `key`{hint}"
                ),
            ));
        }
        let ns = match o.get("timestamp") {
            None => Err("missing; every row needs a timestamp".to_string()),
            Some(Value::Number(x)) => timestamp_ns(&x.to_string()),
            Some(Value::String(s)) => timestamp_ns(s),
            Some(other) => Err(format!(
                "expected a number of seconds, an RFC 3339 date-time or a duration string, got {other}"
            )),
        }
        .map_err(|m| {
            err(
                origin,
                Some(line),
                at("timestamp").or(Some(1)),
                Some("timestamp"),
                m,
            )
        })?;
        let text_of = |k: &str| -> Result<Option<String>, LoadError> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(Value::Number(x)) => Ok(Some(x.to_string())),
                Some(other) => Err(err(
                    origin,
                    Some(line),
                    at(k),
                    Some(k),
                    format!("expected a string or a number, got {other}"),
                )),
            }
        };
        too_many(origin, line, rows.len())?;
        rows.push(Row {
            ns,
            line,
            class: text_of("class")?,
            key: text_of("key")?,
        });
    }
    Ok(rows)
}

/// One line of a JSON Lines trace: an object's members in file order (a key given twice is
/// kept twice, to be refused), or any other JSON value.
enum JsonLine {
    Object(Vec<(String, serde_json::Value)>),
    Other,
}

impl<'de> serde::Deserialize<'de> for JsonLine {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct Line;
        impl<'de> Visitor<'de> for Line {
            type Value = JsonLine;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<JsonLine, A::Error> {
                let mut members = Vec::new();
                while let Some(kv) = m.next_entry::<String, serde_json::Value>()? {
                    members.push(kv);
                }
                Ok(JsonLine::Object(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<JsonLine, A::Error> {
                while s.next_element::<IgnoredAny>()?.is_some() {}
                Ok(JsonLine::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<JsonLine, E> {
                Ok(JsonLine::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<JsonLine, E> {
                Ok(JsonLine::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<JsonLine, E> {
                Ok(JsonLine::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<JsonLine, E> {
                Ok(JsonLine::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<JsonLine, E> {
                Ok(JsonLine::Other)
            }
            fn visit_unit<E>(self) -> Result<JsonLine, E> {
                Ok(JsonLine::Other)
            }
        }
        d.deserialize_any(Line)
    }
}

#[cfg(test)]
mod tests;
