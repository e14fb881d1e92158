//! Envoy route `retry_policy` and cluster `circuit_breakers`, in YAML or JSON (envoy
//! `api/envoy/config/route/v3/route_components.proto`, `RetryPolicy` and `RouteAction.timeout`;
//! `api/envoy/config/cluster/v3/circuit_breaker.proto`, `CircuitBreakers.Thresholds`).
//!
//! The file is one YAML (or JSON, a subset of YAML) document: a route (`match`, `route:
//! {cluster, timeout, retry_policy}`), a `RouteAction` (`cluster`, `timeout`, `retry_policy`),
//! or a bare `retry_policy:`, optionally beside a cluster's `circuit_breakers:`. Defaults as the
//! proto comments and the router give them: `num_retries` 1, `retry_back_off` base 25 ms and max
//! 10 x base, `rate_limited_retry_back_off.max_interval` 300 s, route `timeout` 15 s (the
//! per-try timeout when `per_try_timeout` is absent, as the proto says), `max_retries` 3 (the
//! circuit breaker applies even without a `circuit_breakers` block). An empty `retry_on`
//! retries nothing (`retry_on_ = 0` in `retry_state_impl.cc`).
//!
//! The YAML parser is `saphyr` (YAML 1.2, safe Rust); the document becomes a
//! `serde_json::Value` and is walked like the gRPC import's JSON (`docs/import.md`).

use super::grpc::{object, proto_duration};
use super::{Emit, duration, float, quoted, refuse};
use crate::CliError;
use retrystorm_core::time::Duration;
use serde_json::{Map, Value};

/// Envoy's default `retry_back_off.base_interval` (`route_components.proto`, `retry_back_off`).
const DEFAULT_BASE: Duration = Duration::from_millis(25);
/// `rate_limited_retry_back_off.max_interval` default ("Defaults to 300 seconds").
const DEFAULT_RESET_MAX: Duration = Duration::from_secs(300);
/// `RouteAction.timeout` default ("If not specified, the default is 15s").
const DEFAULT_ROUTE_TIMEOUT: Duration = Duration::from_secs(15);

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
const UNSUPPORTED_POLICY: [(&str, &str); 5] = [
    (
        "host_selection_retry_max_attempts",
        "host selection: the model has one server per tier",
    ),
    (
        "retry_host_predicate",
        "host selection: the model has one server per tier",
    ),
    (
        "retry_priority",
        "priority levels: the model has one server per tier",
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
const POLICY_FIELDS: [&str; 6] = [
    "retry_on",
    "num_retries",
    "per_try_timeout",
    "retry_back_off",
    "rate_limited_retry_back_off",
    "retriable_status_codes",
];

/// Checks `obj`'s keys: each in `allowed`, else refused naming why (from `why`) and what is
/// supported.
fn keys(
    file: &str,
    at: &str,
    obj: &Map<String, Value>,
    allowed: &[&str],
    why: &[(&str, &str)],
) -> Result<(), CliError> {
    for k in obj.keys() {
        if allowed.contains(&k.as_str()) {
            continue;
        }
        let field = if at.is_empty() {
            k.clone()
        } else {
            format!("{at}.{k}")
        };
        let reason = why
            .iter()
            .find(|w| w.0 == k)
            .map_or("not supported by the import", |w| w.1);
        return Err(refuse(
            file,
            &field,
            format!("{reason}; supported here: {}", allowed.join(", ")),
        ));
    }
    Ok(())
}

/// A YAML document as JSON: mappings with string keys, scalars as YAML 1.2's core schema reads
/// them. Tags, aliases and non-string keys are refused.
fn to_json(file: &str, at: &str, y: &saphyr::Yaml<'_>) -> Result<Value, CliError> {
    use saphyr::{Scalar, Yaml};
    Ok(match y {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
        Yaml::Value(Scalar::FloatingPoint(f)) => serde_json::Number::from_f64(f.into_inner())
            .map(Value::Number)
            .ok_or_else(|| refuse(file, at, "a number that is not finite"))?,
        Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
        Yaml::Sequence(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| to_json(file, &format!("{at}[{i}]"), v))
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let Yaml::Value(Scalar::String(k)) = k else {
                    return Err(refuse(file, at, "a mapping key that is not a string"));
                };
                let here = if at.is_empty() {
                    k.to_string()
                } else {
                    format!("{at}.{k}")
                };
                out.insert(k.to_string(), to_json(file, &here, v)?);
            }
            Value::Object(out)
        }
        Yaml::Tagged(tag, _) => {
            return Err(refuse(
                file,
                at,
                format!("YAML tag {tag} is not supported; write plain values"),
            ));
        }
        Yaml::Alias(_) => {
            return Err(refuse(
                file,
                at,
                "YAML aliases (*name) are not supported; write the value out",
            ));
        }
        Yaml::Representation(..) | Yaml::BadValue => {
            return Err(refuse(file, at, "a value YAML cannot read"));
        }
    })
}

/// Parses `text` (YAML or JSON) into one JSON value.
pub fn parse(file: &str, text: &str) -> Result<Value, CliError> {
    use saphyr::LoadableYamlNode;
    // The loader expands aliases by copying (a few lines can become gigabytes), so they are
    // refused from the parser's events before anything is built.
    for event in saphyr_parser::Parser::new_from_str(text) {
        match event {
            Ok((saphyr_parser::Event::Alias(_), span)) => {
                return Err(refuse(
                    file,
                    "",
                    format!(
                        "line {}: YAML aliases (*name) are not supported; write the value out",
                        span.start.line()
                    ),
                ));
            }
            Ok(_) => {}
            Err(_) => break, // the loader reports it with its position
        }
    }
    let docs = saphyr::Yaml::load_from_str(text)
        .map_err(|e| refuse(file, "", format!("not valid YAML or JSON: {e}")))?;
    match docs.as_slice() {
        [one] => to_json(file, "", one),
        [] => Err(refuse(file, "", "the file is empty")),
        _ => Err(refuse(
            file,
            "",
            format!(
                "{} YAML documents; give one route or retry_policy",
                docs.len()
            ),
        )),
    }
}

/// A `google.protobuf.Duration` in Envoy's YAML/JSON (`"0.25s"`), read as whole milliseconds
/// the way Envoy's `PROTOBUF_GET_MS` reads it (truncated), with a note when it was not whole.
fn millis(file: &str, at: &str, v: &Value) -> Result<(Duration, String), CliError> {
    let d = proto_duration(file, at, v)?;
    let ms = d.as_nanos() / 1_000_000;
    let whole = Duration::from_millis(ms);
    let note = if whole == d {
        format!("{at} = {v}")
    } else {
        format!("{at} = {v}, whole ms as Envoy reads it")
    };
    Ok((whole, note))
}

fn list(classes: &[&str]) -> String {
    let q: Vec<String> = classes.iter().map(|c| quoted(c)).collect();
    format!("[{}]", q.join(", "))
}

/// Imports an Envoy route / retry policy / circuit breakers document.
pub fn import(file: &str, text: &str) -> Result<Emit, CliError> {
    let root = parse(file, text)?;
    let root = object(file, "", &root)?;
    keys(
        file,
        "",
        root,
        &[
            "retry_policy",
            "timeout",
            "circuit_breakers",
            "route",
            "match",
            "name",
            "cluster",
        ],
        &[
            (
                "hedge_policy",
                "Envoy's hedging is not modelled by this import",
            ),
            (
                "retry_policy_typed_config",
                "retry policy extensions are not modelled",
            ),
        ],
    )?;
    let mut e = Emit::default();
    e.note(format!(
        "Imported by `retrystorm import envoy {file}`: an Envoy route retry_policy (route_components.proto) and cluster circuit_breakers (circuit_breaker.proto)."
    ));
    // The route action: nested under `route:` in a Route, or the document itself.
    let (action, at_prefix) = match root.get("route") {
        Some(r) => {
            for k in ["retry_policy", "timeout", "cluster"] {
                if root.contains_key(k) {
                    return Err(refuse(
                        file,
                        k,
                        "given both at the top and under route:; give it once",
                    ));
                }
            }
            let r = object(file, "route", r)?;
            keys(
                file,
                "route",
                r,
                &["cluster", "timeout", "retry_policy"],
                &[
                    (
                        "hedge_policy",
                        "Envoy's hedging is not modelled by this import",
                    ),
                    (
                        "retry_policy_typed_config",
                        "retry policy extensions are not modelled",
                    ),
                ],
            )?;
            (r, "route.")
        }
        None => (root, ""),
    };
    for k in ["match", "name"] {
        if root.contains_key(k) {
            e.note(format!("{k}: not about retries, not imported."));
        }
    }
    if action.contains_key("cluster") {
        e.note(format!(
            "{at_prefix}cluster: the model's server (or the tier below) stands for it."
        ));
    }
    let route_timeout = match action.get("timeout") {
        Some(t) => {
            let at = format!("{at_prefix}timeout");
            let (d, note) = millis(file, &at, t)?;
            (
                (d > Duration::ZERO).then_some(d),
                if d == Duration::ZERO {
                    format!("{note} (0 disables the route timeout)")
                } else {
                    note
                },
            )
        }
        None => (
            Some(DEFAULT_ROUTE_TIMEOUT),
            format!("{at_prefix}timeout absent: Envoy's default 15s"),
        ),
    };
    match action.get("retry_policy") {
        Some(rp) => retry_policy(
            file,
            &format!("{at_prefix}retry_policy"),
            rp,
            route_timeout,
            &mut e,
        )?,
        None => {
            if !root.contains_key("circuit_breakers") {
                return Err(refuse(
                    file,
                    "",
                    "no retry_policy (at the top or under route:) or circuit_breakers to import",
                ));
            }
        }
    }
    circuit_breakers(file, root.get("circuit_breakers"), &mut e)?;
    Ok(e)
}

fn retry_policy(
    file: &str,
    at: &str,
    rp: &Value,
    route_timeout: (Option<Duration>, String),
    e: &mut Emit,
) -> Result<(), CliError> {
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
    rate_limited_backoff(file, at, rp, e)
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

/// `retry_back_off`: Envoy's fully jittered doubling from `base_interval` up to `max_interval`.
fn backoff(file: &str, at: &str, rp: &Map<String, Value>, e: &mut Emit) -> Result<(), CliError> {
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

    Ok(())
}

/// `rate_limited_retry_back_off`: Retry-After honoured (in seconds) up to `max_interval`.
fn rate_limited_backoff(
    file: &str,
    at: &str,
    rp: &Map<String, Value>,
    e: &mut Emit,
) -> Result<(), CliError> {
    let f = |k: &str| format!("{at}.{k}");
    // rate_limited_retry_back_off.
    match rp.get("rate_limited_retry_back_off") {
        None => e.set(
            "retry",
            "retry_after",
            quoted("ignore"),
            "no rate_limited_retry_back_off: Envoy ignores Retry-After",
        ),
        Some(r) => {
            let rat = f("rate_limited_retry_back_off");
            let r = object(file, &rat, r)?;
            keys(file, &rat, r, &["reset_headers", "max_interval"], &[])?;
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
                    format!(
                        "{rat}.max_interval absent: Envoy's default 300s; longer hints are discarded"
                    ),
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
        }
    }
    Ok(())
}

fn circuit_breakers(file: &str, cb: Option<&Value>, e: &mut Emit) -> Result<(), CliError> {
    e.set(
        "budget",
        "kind",
        quoted("envoy"),
        "the cluster's retry circuit breaker (circuit_breaker.proto)",
    );
    e.set(
        "budget",
        "scope",
        quoted("client"),
        "one Envoy per client process (a sidecar); \"shared\" for one front proxy",
    );
    let Some(cb) = cb else {
        e.set(
            "budget",
            "max_retries",
            "3".into(),
            "no circuit_breakers: Envoy's default max_retries 3",
        );
        return Ok(());
    };
    let cb = object(file, "circuit_breakers", cb)?;
    keys(
        file,
        "circuit_breakers",
        cb,
        &["thresholds"],
        &[(
            "per_host_thresholds",
            "per-host limits: the model has one server per tier",
        )],
    )?;
    let list: &[Value] = match cb.get("thresholds") {
        None => &[],
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(refuse(
                file,
                "circuit_breakers.thresholds",
                "expected a list",
            ));
        }
    };
    let mut chosen: Option<(usize, &Map<String, Value>)> = None;
    for (i, t) in list.iter().enumerate() {
        let at = format!("circuit_breakers.thresholds[{i}]");
        let t = object(file, &at, t)?;
        let priority = t
            .get("priority")
            .and_then(Value::as_str)
            .unwrap_or("DEFAULT");
        if priority != "DEFAULT" {
            return Err(refuse(
                file,
                &format!("{at}.priority"),
                format!(
                    "{priority:?}: the model routes every request at DEFAULT priority, so this threshold cannot act; supported: DEFAULT"
                ),
            ));
        }
        if chosen.is_some() {
            return Err(refuse(
                file,
                &at,
                "a second DEFAULT-priority threshold; give one",
            ));
        }
        keys(
            file,
            &at,
            t,
            &["priority", "max_retries", "retry_budget"],
            &[
                (
                    "max_connections",
                    "connection limits: the model has no connection pool",
                ),
                (
                    "max_pending_requests",
                    "the model has no connection pool to queue on; use server.queue",
                ),
                (
                    "max_requests",
                    "not modelled as an Envoy limit; use server.capacity or a concurrency limit",
                ),
                ("max_connection_pools", "the model has no connection pools"),
                ("track_remaining", "statistics only, nothing to model"),
            ],
        )?;
        chosen = Some((i, t));
    }
    let Some((i, t)) = chosen else {
        e.set(
            "budget",
            "max_retries",
            "3".into(),
            "no DEFAULT threshold: Envoy's default max_retries 3",
        );
        return Ok(());
    };
    let at = format!("circuit_breakers.thresholds[{i}]");
    if t.contains_key("retry_budget") {
        if let Some(v) = t.get("max_retries") {
            e.note(format!(
                "{at}.max_retries = {v}: not used, Envoy's retry_budget replaces it."
            ));
        }
    } else {
        match t.get("max_retries") {
            None => e.set(
                "budget",
                "max_retries",
                "3".into(),
                format!("{at}.max_retries absent: Envoy's default 3"),
            ),
            Some(v) => {
                let n = v
                    .as_u64()
                    .filter(|n| *n <= u64::from(u32::MAX))
                    .ok_or_else(|| {
                        refuse(
                            file,
                            &format!("{at}.max_retries"),
                            format!("expected a non-negative integer, got {v}"),
                        )
                    })?;
                e.set(
                    "budget",
                    "max_retries",
                    n.to_string(),
                    format!("{at}.max_retries = {v}"),
                );
            }
        }
    }
    if let Some(rb) = t.get("retry_budget") {
        let rat = format!("{at}.retry_budget");
        let rb = object(file, &rat, rb)?;
        keys(
            file,
            &rat,
            rb,
            &["budget_percent", "min_retry_concurrency"],
            &[],
        )?;
        // Envoy: an empty retry_budget is the defaults 20 % and 3.
        let pct = match rb.get("budget_percent") {
            None => None,
            Some(p) => {
                let pat = format!("{rat}.budget_percent");
                let p = object(file, &pat, p)?;
                keys(file, &pat, p, &["value"], &[])?;
                let v = p.get("value").and_then(Value::as_f64).unwrap_or(0.0);
                if !(0.0..=100.0).contains(&v) {
                    return Err(refuse(
                        file,
                        &format!("{pat}.value"),
                        format!("a percentage in [0, 100] (type.v3.Percent), got {v}"),
                    ));
                }
                Some(v)
            }
        };
        let min = match rb.get("min_retry_concurrency") {
            None => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|n| *n <= u64::from(u32::MAX))
                    .ok_or_else(|| {
                        refuse(
                            file,
                            &format!("{rat}.min_retry_concurrency"),
                            format!("expected a non-negative integer, got {v}"),
                        )
                    })?,
            ),
        };
        let (pct, pnote) = match pct {
            Some(p) => (p, format!("{rat}.budget_percent.value = {p}")),
            None => (
                20.0,
                format!("{rat}.budget_percent absent: Envoy's default 20"),
            ),
        };
        let (min, mnote) = match min {
            Some(m) => (m, format!("{rat}.min_retry_concurrency = {m}")),
            None => (
                3,
                format!("{rat}.min_retry_concurrency absent: Envoy's default 3"),
            ),
        };
        e.set("budget", "budget_percent", float(pct), pnote);
        e.set("budget", "min_retry_concurrency", min.to_string(), mnote);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json_read_alike() {
        let y = parse("f", "a: {b: [1, 2.5, \"0.1s\", true, null]}\n").unwrap();
        let j = parse("f", r#"{"a": {"b": [1, 2.5, "0.1s", true, null]}}"#).unwrap();
        assert_eq!(y, j);
        assert!(
            parse("f", "a: &x 1\nb: *x\n")
                .unwrap_err()
                .to_string()
                .contains("alias")
        );
        assert!(
            parse("f", "a: 1\n---\nb: 2\n")
                .unwrap_err()
                .to_string()
                .contains("2 YAML documents")
        );
        assert!(parse("f", "a: [\n").is_err());
    }
}
