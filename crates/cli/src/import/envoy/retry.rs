//! `retry_policy`: what it retries (`retry_on`, `retriable_status_codes`), how often
//! (`num_retries`) and how long each try and the whole call may take.

use super::super::grpc::object;
use super::super::{Emit, duration, quoted, refuse};
use super::backoff::backoff;
use super::{Pending, keys, millis};
use crate::error::CliError;
use retrystorm_core::time::Duration;
use serde_json::{Map, Value};

/// `retry_on` conditions (`x-envoy-retry-on` and `x-envoy-retry-grpc-on` values) and the
/// answer classes they retry here.
const RETRY_ON: [(&str, &[&str], &str); 10] = [
    (
        "5xx",
        &["503", "5xx", "timeout", "connection"],
        "any 5xx, a reset or a per-try timeout",
    ),
    (
        "gateway-error",
        &["503", "timeout", "connection"],
        "502/503/504, a reset or a per-try timeout",
    ),
    (
        "reset",
        &["connection", "timeout"],
        "a disconnect, reset or read timeout",
    ),
    ("connect-failure", &["connection"], "a connection failure"),
    ("retriable-4xx", &["409"], "409 Conflict"),
    (
        "retriable-status-codes",
        &[],
        "the codes in retriable_status_codes",
    ),
    ("unavailable", &["503"], "gRPC UNAVAILABLE"),
    ("resource-exhausted", &["429"], "gRPC RESOURCE_EXHAUSTED"),
    ("deadline-exceeded", &["timeout"], "gRPC DEADLINE_EXCEEDED"),
    ("internal", &["5xx"], "gRPC INTERNAL"),
];

/// `retry_on` values Envoy has that cannot act in the model, and why.
const REFUSED_ON: [(&str, &str); 6] = [
    (
        "refused-stream",
        "the model has no HTTP/2 streams to refuse",
    ),
    (
        "envoy-ratelimited",
        "the model's servers send no x-envoy-ratelimited",
    ),
    (
        "retriable-headers",
        "the model's answers carry no headers to match",
    ),
    (
        "reset-before-request",
        "the model cannot tell a reset before the request from one after",
    ),
    (
        "http3-post-connect-failure",
        "the model has no HTTP/3 connections",
    ),
    ("cancelled", "the model's servers never answer CANCELLED"),
];

/// HTTP status codes in `retriable_status_codes` and their classes.
const STATUS: [(u64, &str); 4] = [(503, "503"), (429, "429"), (500, "5xx"), (409, "409")];

/// `RetryPolicy` fields that cannot act in the model, and why.
const UNSUPPORTED_POLICY: [(&str, &str); 3] = [
    (
        "retry_priority",
        "priority levels: the model's replicas are one priority level",
    ),
    (
        "retriable_headers",
        "the model's answers carry no headers to match",
    ),
    (
        "retriable_request_headers",
        "the model's requests carry no headers to match",
    ),
];

/// The `RetryPolicy` fields the import maps.
const POLICY_FIELDS: [&str; 8] = [
    "retry_on",
    "num_retries",
    "per_try_timeout",
    "retry_back_off",
    "rate_limited_retry_back_off",
    "retriable_status_codes",
    "retry_host_predicate",
    "host_selection_retry_max_attempts",
];

/// The one retry host predicate the model has (`envoy.extensions.retry.host.previous_hosts.v3`).
const PREVIOUS_HOSTS: &str = "envoy.retry_host_predicates.previous_hosts";
/// Its `typed_config` type, an empty message.
const PREVIOUS_HOSTS_TYPE: &str =
    "type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate";
/// Other retry host predicates Envoy has, and why they cannot act.
const OTHER_PREDICATES: [(&str, &str); 2] = [
    (
        "envoy.retry_host_predicates.omit_canary_hosts",
        "the model's replicas are no canaries",
    ),
    (
        "envoy.retry_host_predicates.omit_host_metadata",
        "the model's replicas carry no metadata to match",
    ),
];

fn list(classes: &[&str]) -> String {
    let q: Vec<String> = classes.iter().map(|c| quoted(c)).collect();
    format!("[{}]", q.join(", "))
}

/// The retry policy's `[retry]` keys into `e`; its host selection keys (which need a replicated
/// tier) are returned to be written or not by the caller.
pub(super) fn retry_policy(
    file: &str,
    at: &str,
    rp: &Value,
    route_timeout: (Option<Duration>, String),
    e: &mut Emit,
) -> Result<Vec<Pending>, CliError> {
    let rp = object(file, at, rp)?;
    let mut why: Vec<(&str, &str)> = UNSUPPORTED_POLICY.to_vec();
    why.push((
        "per_try_idle_timeout",
        "the model's replies arrive whole, there is no idle stream to time",
    ));
    keys(file, at, rp, &POLICY_FIELDS, &why)?;

    let (classes, on_text) = retry_on(file, at, rp)?;
    attempts(file, at, rp, &classes, &on_text, e)?;
    timeouts(file, at, rp, route_timeout, e)?;
    backoff(file, at, rp, e)?;
    host_selection(file, at, rp)
}

/// `retry_host_predicate` (only `previous_hosts`) and `host_selection_retry_max_attempts`
/// (int64; 0, the proto3 default, is Envoy's "retrying once").
fn host_selection(file: &str, at: &str, rp: &Map<String, Value>) -> Result<Vec<Pending>, CliError> {
    let f = |k: &str| format!("{at}.{k}");
    let mut out = Vec::new();
    let retry = |key: &str, value: String, comment: String| Pending {
        section: "retry",
        key: key.to_string(),
        value,
        comment,
    };
    let predicates: &[Value] = match rp.get("retry_host_predicate") {
        None => &[],
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(refuse(
                file,
                &f("retry_host_predicate"),
                "expected a list of {name, typed_config}",
            ));
        }
    };
    for (i, p) in predicates.iter().enumerate() {
        let pat = format!("{}[{i}]", f("retry_host_predicate"));
        let p = object(file, &pat, p)?;
        keys(file, &pat, p, &["name", "typed_config"], &[])?;
        let name = p.get("name").and_then(Value::as_str).unwrap_or("");
        if name != PREVIOUS_HOSTS {
            let why = OTHER_PREDICATES
                .iter()
                .find(|o| o.0 == name)
                .map_or("is not a retry host predicate this import knows", |o| o.1);
            return Err(refuse(
                file,
                &format!("{pat}.name"),
                format!("{name:?}: {why}; supported: {PREVIOUS_HOSTS}"),
            ));
        }
        if let Some(tc) = p.get("typed_config") {
            let tat = format!("{pat}.typed_config");
            let tc = object(file, &tat, tc)?;
            keys(file, &tat, tc, &["@type"], &[])?;
            if let Some(t) = tc.get("@type")
                && t.as_str() != Some(PREVIOUS_HOSTS_TYPE)
            {
                return Err(refuse(
                    file,
                    &format!("{tat}.@type"),
                    format!("{t}: previous_hosts takes {PREVIOUS_HOSTS_TYPE:?}"),
                ));
            }
        }
    }
    if !predicates.is_empty() {
        out.push(retry(
            "retry_host_predicate",
            quoted("previous-hosts"),
            format!("{} = {PREVIOUS_HOSTS}", f("retry_host_predicate")),
        ));
    }
    let Some(v) = rp.get("host_selection_retry_max_attempts") else {
        return Ok(out);
    };
    let hat = f("host_selection_retry_max_attempts");
    // int64: a number, or a string in proto3 JSON.
    let n = match v {
        Value::String(s) => s.parse::<i64>().ok(),
        v => v.as_i64(),
    }
    .ok_or_else(|| refuse(file, &hat, format!("expected an integer, got {v}")))?;
    if predicates.is_empty() {
        return Err(refuse(
            file,
            &hat,
            "acts only with a retry_host_predicate (Envoy reselects a host only when a predicate rejects it); add envoy.retry_host_predicates.previous_hosts or remove it",
        ));
    }
    if !(0..=100).contains(&n) {
        return Err(refuse(
            file,
            &hat,
            format!("the model takes 0..=100 (each is one more pick per retry), got {n}"),
        ));
    }
    if n > 0 {
        out.push(retry(
            "host_selection_retry_max_attempts",
            n.to_string(),
            format!("{hat} = {v}"),
        ));
    }
    Ok(out)
}

/// `retry_on` (with `retriable_status_codes`): the model's answer classes it retries, and the
/// conditions as written.
fn retry_on(
    file: &str,
    at: &str,
    rp: &Map<String, Value>,
) -> Result<(Vec<&'static str>, String), CliError> {
    let f = |k: &str| format!("{at}.{k}");
    // retry_on: a comma-separated string; empty or absent retries nothing.
    let on_text = match rp.get("retry_on") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => {
            return Err(refuse(
                file,
                &f("retry_on"),
                format!("expected a comma-separated string like \"5xx,reset\", got {v}"),
            ));
        }
    };
    let mut classes: Vec<&'static str> = Vec::new();
    let mut status_codes_on = false;
    for cond in on_text.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        if let Some((_, cs, _)) = RETRY_ON.iter().find(|r| r.0 == cond) {
            status_codes_on |= cond == "retriable-status-codes";
            for c in cs.iter() {
                if !classes.contains(c) {
                    classes.push(c);
                }
            }
            continue;
        }
        let supported: Vec<String> = RETRY_ON
            .iter()
            .map(|r| format!("{} ({})", r.0, r.2))
            .collect();
        let why = REFUSED_ON
            .iter()
            .find(|r| r.0 == cond)
            .map_or("is not an Envoy retry_on condition".to_string(), |r| {
                format!("cannot act: {}", r.1)
            });
        return Err(refuse(
            file,
            &f("retry_on"),
            format!("{cond:?} {why}; supported: {}", supported.join(", ")),
        ));
    }
    match rp.get("retriable_status_codes") {
        Some(codes) => {
            if !status_codes_on {
                return Err(refuse(
                    file,
                    &f("retriable_status_codes"),
                    "acts only with retriable-status-codes in retry_on (Envoy ignores it otherwise); add it there or remove the list",
                ));
            }
            let list = codes.as_array().ok_or_else(|| {
                refuse(
                    file,
                    &f("retriable_status_codes"),
                    "expected a list of HTTP status codes",
                )
            })?;
            for (i, c) in list.iter().enumerate() {
                let hit = c
                    .as_u64()
                    .and_then(|n| STATUS.iter().find(|s| s.0 == n))
                    .ok_or_else(|| {
                        let ok: Vec<String> = STATUS
                            .iter()
                            .map(|s| format!("{} ({})", s.0, s.1))
                            .collect();
                        refuse(
                            file,
                            &format!("{at}.retriable_status_codes[{i}]"),
                            format!(
                                "{c} has no answer class in the model; supported: {}",
                                ok.join(", ")
                            ),
                        )
                    })?;
                if !classes.contains(&hit.1) {
                    classes.push(hit.1);
                }
            }
        }
        None if status_codes_on => {
            return Err(refuse(
                file,
                &f("retry_on"),
                "retriable-status-codes without a retriable_status_codes list retries nothing; give the list",
            ));
        }
        None => {}
    }

    Ok((classes, on_text))
}

/// `num_retries` (UInt32Value, default 1): `max_attempts`, and `retry_on` as classes.
fn attempts(
    file: &str,
    at: &str,
    rp: &Map<String, Value>,
    classes: &[&str],
    on_text: &str,
    e: &mut Emit,
) -> Result<(), CliError> {
    let f = |k: &str| format!("{at}.{k}");
    // num_retries (UInt32Value, default 1).
    let num = match rp.get("num_retries") {
        None => 1,
        Some(v) => v.as_u64().filter(|n| *n <= 1000).ok_or_else(|| {
            refuse(
                file,
                &f("num_retries"),
                format!("expected an integer in [0, 1000], got {v}"),
            )
        })?,
    };
    let num_note = match rp.get("num_retries") {
        None => format!(
            "{} absent: Envoy's default 1, plus the first try",
            f("num_retries")
        ),
        Some(v) => format!("{} = {v}, plus the first try", f("num_retries")),
    };
    if classes.is_empty() {
        e.set(
            "retry",
            "max_attempts",
            "1".into(),
            format!("{} is empty: Envoy retries nothing", f("retry_on")),
        );
    } else {
        e.set("retry", "max_attempts", (num + 1).to_string(), num_note);
        e.set(
            "retry",
            "retry_on",
            list(classes),
            format!("{} = {on_text:?}", f("retry_on")),
        );
    }

    Ok(())
}

/// `per_try_timeout`, else the route timeout, per try; the route timeout bounds the whole call.
fn timeouts(
    file: &str,
    at: &str,
    rp: &Map<String, Value>,
    route_timeout: (Option<Duration>, String),
    e: &mut Emit,
) -> Result<(), CliError> {
    let f = |k: &str| format!("{at}.{k}");
    // Timeouts: per_try_timeout, else the route timeout; the route timeout bounds the whole call.
    let (route, route_note) = route_timeout;
    match rp.get("per_try_timeout") {
        Some(v) => {
            let (d, note) = millis(file, &f("per_try_timeout"), v)?;
            if d == Duration::ZERO {
                return Err(refuse(
                    file,
                    &f("per_try_timeout"),
                    "must be a non-zero duration (route_components.proto)",
                ));
            }
            e.set("retry", "timeout", duration(d), note);
        }
        None => {
            if let Some(r) = route {
                e.set(
                    "retry",
                    "timeout",
                    duration(r),
                    format!("no per_try_timeout: each try gets the route timeout ({route_note})"),
                );
            }
        }
    }
    if let Some(r) = route {
        e.set(
            "retry",
            "deadline",
            duration(r),
            format!("{route_note}: the whole request, every try"),
        );
    }

    Ok(())
}
