//! `retry_back_off` and `rate_limited_retry_back_off`: the delays between tries.

use super::super::grpc::{object, proto_duration};
use super::super::{Emit, duration, quoted, refuse};
use super::{keys, millis};
use crate::error::CliError;
use retrystorm_core::time::Duration;
use serde_json::{Map, Value};

/// Envoy's default `retry_back_off.base_interval` (`route_components.proto`, `retry_back_off`).
const DEFAULT_BASE: Duration = Duration::from_millis(25);
/// `rate_limited_retry_back_off.max_interval` default ("Defaults to 300 seconds").
const DEFAULT_RESET_MAX: Duration = Duration::from_secs(300);

/// `retry_back_off`: Envoy's fully jittered doubling from `base_interval` up to `max_interval`;
/// then `rate_limited_retry_back_off`.
pub(super) fn backoff(
    file: &str,
    at: &str,
    rp: &Map<String, Value>,
    e: &mut Emit,
) -> Result<(), CliError> {
    let f = |k: &str| format!("{at}.{k}");
    // retry_back_off.
    let (base, base_note, cap, cap_note) = match rp.get("retry_back_off") {
        None => (
            DEFAULT_BASE,
            format!("{} absent: Envoy's default 25ms", f("retry_back_off")),
            Duration::from_millis(250),
            "Envoy's default max_interval, 10 x base".to_string(),
        ),
        Some(b) => {
            let bat = f("retry_back_off");
            let b = object(file, &bat, b)?;
            keys(file, &bat, b, &["base_interval", "max_interval"], &[])?;
            let bv = b.get("base_interval").ok_or_else(|| {
                refuse(
                    file,
                    &format!("{bat}.base_interval"),
                    "required when retry_back_off is given (route_components.proto)",
                )
            })?;
            let raw = proto_duration(file, &format!("{bat}.base_interval"), bv)?;
            if raw == Duration::ZERO {
                return Err(refuse(
                    file,
                    &format!("{bat}.base_interval"),
                    "must be greater than zero (route_components.proto)",
                ));
            }
            let (mut base, mut bnote) = millis(file, &format!("{bat}.base_interval"), bv)?;
            if base < Duration::from_millis(1) {
                base = Duration::from_millis(1);
                bnote = format!("{bat}.base_interval = {bv}, rounded up to 1ms as Envoy does");
            }
            let (cap, cnote) = match b.get("max_interval") {
                None => (
                    Duration::from_nanos(base.as_nanos() * 10),
                    format!("{bat}.max_interval absent: Envoy's default, 10 x base_interval"),
                ),
                Some(mv) => {
                    let (m, n) = millis(file, &format!("{bat}.max_interval"), mv)?;
                    if m < base {
                        return Err(refuse(
                            file,
                            &format!("{bat}.max_interval"),
                            "must be >= base_interval (route_components.proto)",
                        ));
                    }
                    (m, n)
                }
            };
            (base, bnote, cap, cnote)
        }
    };
    e.set(
        "retry",
        "backoff",
        quoted("envoy"),
        "Envoy's fully jittered doubling (JitteredExponentialBackOffStrategy)",
    );
    e.set("retry", "base", duration(base), base_note);
    e.set("retry", "cap", duration(cap), cap_note);
    match rp.get("rate_limited_retry_back_off") {
        None => e.set(
            "retry",
            "retry_after",
            quoted("ignore"),
            "no rate_limited_retry_back_off: Envoy ignores Retry-After",
        ),
        Some(r) => rate_limited(file, &f("rate_limited_retry_back_off"), r, e)?,
    }
    Ok(())
}

/// `rate_limited_retry_back_off` (at `rat`): Retry-After honoured (in seconds) up to
/// `max_interval`.
fn rate_limited(file: &str, rat: &str, r: &Value, e: &mut Emit) -> Result<(), CliError> {
    let r = object(file, rat, r)?;
    keys(file, rat, r, &["reset_headers", "max_interval"], &[])?;
    let headers = r
        .get("reset_headers")
        .and_then(Value::as_array)
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            refuse(
                file,
                &format!("{rat}.reset_headers"),
                "required: a non-empty list of {name, format} (route_components.proto)",
            )
        })?;
    for (i, h) in headers.iter().enumerate() {
        let hat = format!("{rat}.reset_headers[{i}]");
        let h = object(file, &hat, h)?;
        keys(file, &hat, h, &["name", "format"], &[])?;
        let name = h.get("name").and_then(Value::as_str).unwrap_or("");
        let format = h.get("format").and_then(Value::as_str).unwrap_or("SECONDS");
        if !name.eq_ignore_ascii_case("retry-after") || format != "SECONDS" {
            return Err(refuse(
                file,
                &hat,
                format!(
                    "{name:?} ({format}) cannot act: the model's servers send only Retry-After in seconds; supported: {{name: Retry-After, format: SECONDS}}"
                ),
            ));
        }
    }
    let (max, mnote) = match r.get("max_interval") {
        None => (
            DEFAULT_RESET_MAX,
            format!("{rat}.max_interval absent: Envoy's default 300s; longer hints are discarded"),
        ),
        Some(v) => {
            let (m, n) = millis(file, &format!("{rat}.max_interval"), v)?;
            if m == Duration::ZERO {
                return Err(refuse(
                    file,
                    &format!("{rat}.max_interval"),
                    "must be greater than zero (route_components.proto)",
                ));
            }
            (m, format!("{n}; longer hints are discarded"))
        }
    };
    e.set(
        "retry",
        "retry_after",
        quoted("envoy"),
        format!("{rat}.reset_headers = Retry-After (SECONDS): U[hint, 1.5 hint)"),
    );
    e.set("retry", "retry_after_cap", duration(max), mnote);
    Ok(())
}
