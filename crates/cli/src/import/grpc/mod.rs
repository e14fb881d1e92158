//! gRPC service config JSON (gRFC A6 "gRPC Retry Design"; grpc/grpc-proto
//! `grpc/service_config/service_config.proto`): `methodConfig[].retryPolicy` to `[retry]`,
//! `hedgingPolicy` to `[hedge]`, `retryThrottling` to `[budget] kind = "grpc"`.
//!
//! Backoff as gRFC A6 and grpc-go (`stream.go`, `retryThrottling`/`shouldRetry`): the n-th retry
//! waits `random(0, min(initialBackoff * backoffMultiplier^(n-1), maxBackoff))`, i.e. exponential
//! backoff with full jitter from `base = initialBackoff`. `maxAttempts` above 5 is treated as 5
//! by every gRPC library (A6, "Maximum Number of Retries"), so the import caps it and says so.
//! `timeout` is the whole call's deadline (A6: "the timeout applies to the overall RPC"), so it
//! is `retry.deadline`; `perAttemptRecvTimeout` (A6 addendum) is `retry.timeout`.

mod codes;

use super::{Emit, decimal_seconds, duration, float, quoted, refuse};
use crate::error::CliError;
use codes::{classes, list};
use retrystorm_core::time::Duration;
use serde_json::{Map, Value};

/// gRPC's own cap on `maxAttempts` (retries and hedges alike).
const GRPC_MAX_ATTEMPTS: u64 = 5;

/// Checks that `obj` has only `allowed` keys.
pub(super) fn only(
    file: &str,
    at: &str,
    obj: &Map<String, Value>,
    allowed: &[&str],
) -> Result<(), CliError> {
    for k in obj.keys() {
        if !allowed.contains(&k.as_str()) {
            let field = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            return Err(refuse(
                file,
                &field,
                format!(
                    "not supported by the import (it has no meaning in the model); supported here: {}",
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn object<'a>(
    file: &str,
    at: &str,
    v: &'a Value,
) -> Result<&'a Map<String, Value>, CliError> {
    v.as_object()
        .ok_or_else(|| refuse(file, at, "expected a JSON object"))
}

/// A proto3 JSON `google.protobuf.Duration`: decimal seconds with an `s` suffix, `"0.1s"`.
pub(super) fn proto_duration(file: &str, at: &str, v: &Value) -> Result<Duration, CliError> {
    v.as_str()
        .and_then(|s| s.strip_suffix('s'))
        .and_then(decimal_seconds)
        .ok_or_else(|| {
            refuse(
                file,
                at,
                format!("expected a proto JSON duration like \"0.1s\", got {v}"),
            )
        })
}

fn positive_duration(file: &str, at: &str, v: &Value) -> Result<Duration, CliError> {
    let d = proto_duration(file, at, v)?;
    if d == Duration::ZERO {
        return Err(refuse(file, at, "must be greater than 0 (gRFC A6)"));
    }
    Ok(d)
}

fn attempts(file: &str, at: &str, v: &Value, e: &mut Emit, section: &str) -> Result<(), CliError> {
    let n = v.as_u64().filter(|n| *n >= 2).ok_or_else(|| {
        refuse(
            file,
            at,
            format!("must be an integer >= 2 (gRFC A6), got {v}"),
        )
    })?;
    let (used, note) = if n > GRPC_MAX_ATTEMPTS {
        (
            GRPC_MAX_ATTEMPTS,
            format!("{at} = {n}, capped at {GRPC_MAX_ATTEMPTS} as gRPC does"),
        )
    } else {
        (
            n,
            format!("{at} = {n} (gRPC caps it at {GRPC_MAX_ATTEMPTS})"),
        )
    };
    e.set(section, "max_attempts", used.to_string(), note);
    Ok(())
}

/// `service/method` (or `service/` for a whole service, `/` for the default) of a name entry.
fn name_of(n: &Value) -> String {
    let s = n.get("service").and_then(Value::as_str).unwrap_or("");
    let m = n.get("method").and_then(Value::as_str).unwrap_or("");
    format!("{s}/{m}")
}

/// A name given twice (in one `methodConfig` or two): gRPC rejects such a service config, and
/// the lookup would only ever reach the first.
fn refuse_duplicate_names(file: &str, names: &[(usize, Vec<String>)]) -> Result<(), CliError> {
    let mut seen: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for (i, ns) in names {
        for (k, n) in ns.iter().enumerate() {
            if let Some((fi, fk)) = seen.insert(n, (*i, k)) {
                return Err(refuse(
                    file,
                    &format!("methodConfig[{i}].name[{k}]"),
                    format!(
                        "has no effect: {n} is named already by methodConfig[{fi}].name[{fk}], which gRPC would use (it rejects a service config with a name twice); give each name once"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Imports `text` (a service config), picking `method` among several `methodConfig` entries.
pub fn import(file: &str, text: &str, method: Option<&str>) -> Result<Emit, CliError> {
    // A UTF-8 byte-order mark (Windows editors write one) is no part of the JSON.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root: Value =
        serde_json::from_str(text).map_err(|e| refuse(file, "", format!("not valid JSON: {e}")))?;
    let root = object(file, "", &root)?;
    only(file, "", root, &["methodConfig", "retryThrottling"])?;
    let mut e = Emit::default();
    e.note(format!(
        "Imported by `retrystorm import grpc {file}`: a gRPC service config (gRFC A6)."
    ));

    let configs: &[Value] = match root.get("methodConfig") {
        None => &[],
        Some(Value::Array(a)) => a,
        Some(_) => return Err(refuse(file, "methodConfig", "expected a list")),
    };
    let names: Vec<(usize, Vec<String>)> = configs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let ns = c
                .get("name")
                .and_then(Value::as_array)
                .map_or(Vec::new(), |a| a.iter().map(name_of).collect());
            (i, ns)
        })
        .collect();
    refuse_duplicate_names(file, &names)?;
    if let Some(i) = choose(file, configs.len(), &names, method)? {
        method_config(file, i, &configs[i], &names[i].1, &mut e)?;
    }
    if let Some(t) = root.get("retryThrottling") {
        throttling(file, t, &mut e)?;
    }
    if e.sections.is_empty() {
        return Err(refuse(
            file,
            "",
            "no retryPolicy, hedgingPolicy, timeout or retryThrottling to import",
        ));
    }
    Ok(e)
}

/// The `methodConfig` entry `--method` picks, in gRPC's own lookup order (the exact method,
/// then the service, then the default); the only one without `--method`; none in a file
/// without any.
fn choose(
    file: &str,
    count: usize,
    names: &[(usize, Vec<String>)],
    method: Option<&str>,
) -> Result<Option<usize>, CliError> {
    match (count, method) {
        (0, None) => return Ok(None),
        (0, Some(m)) => {
            return Err(refuse(
                file,
                "methodConfig",
                format!("--method {m}: the file has no methodConfig"),
            ));
        }
        (1, None) => return Ok(Some(0)),
        _ => {}
    }
    let all: Vec<String> = names.iter().flat_map(|(_, n)| n.clone()).collect();
    let Some(m) = method else {
        return Err(refuse(
            file,
            "methodConfig",
            format!(
                "{count} entries; pick one with --method SERVICE/METHOD: {}",
                all.join(", ")
            ),
        ));
    };
    let service = m.split_once('/').map_or(m, |(s, _)| s);
    let wanted = [m.to_string(), format!("{service}/"), "/".to_string()];
    let hit = wanted
        .iter()
        .find_map(|w| names.iter().find(|(_, n)| n.contains(w)).map(|(i, _)| *i));
    match hit {
        Some(i) => Ok(Some(i)),
        None => Err(refuse(
            file,
            "methodConfig",
            format!(
                "--method {m} matches no name; the names are: {}",
                all.join(", ")
            ),
        )),
    }
}

/// `methodConfig[i]`, named `names`: its deadline and its retry or hedging policy.
fn method_config(
    file: &str,
    i: usize,
    config: &Value,
    names: &[String],
    e: &mut Emit,
) -> Result<(), CliError> {
    let at = format!("methodConfig[{i}]");
    let mc = object(file, &at, config)?;
    only(
        file,
        &at,
        mc,
        &[
            "name",
            "timeout",
            "retryPolicy",
            "hedgingPolicy",
            "waitForReady",
        ],
    )?;
    if !names.is_empty() {
        e.note(format!("{at} applies to {}.", names.join(", ")));
    }
    if let Some(w) = mc.get("waitForReady") {
        if w != &Value::Bool(false) {
            return Err(refuse(
                file,
                &format!("{at}.waitForReady"),
                "only false is supported: the model has no connection state to wait for",
            ));
        }
    }
    if mc.contains_key("retryPolicy") && mc.contains_key("hedgingPolicy") {
        return Err(refuse(
            file,
            &at,
            "retryPolicy and hedgingPolicy are mutually exclusive (gRFC A6)",
        ));
    }
    if let Some(t) = mc.get("timeout") {
        let d = positive_duration(file, &format!("{at}.timeout"), t)?;
        e.set(
            "retry",
            "deadline",
            duration(d),
            format!("{at}.timeout = {t} (the whole call, every attempt)"),
        );
    }
    if let Some(rp) = mc.get("retryPolicy") {
        retry_policy(file, &format!("{at}.retryPolicy"), rp, e)?;
    }
    if let Some(hp) = mc.get("hedgingPolicy") {
        hedging_policy(file, &format!("{at}.hedgingPolicy"), hp, e)?;
    }
    Ok(())
}

/// `retryThrottling` as `[budget] kind = "grpc"`, one token count per client.
fn throttling(file: &str, t: &Value, e: &mut Emit) -> Result<(), CliError> {
    let t = object(file, "retryThrottling", t)?;
    only(file, "retryThrottling", t, &["maxTokens", "tokenRatio"])?;
    let (Some(max), Some(ratio)) = (t.get("maxTokens"), t.get("tokenRatio")) else {
        return Err(refuse(
            file,
            "retryThrottling",
            "needs maxTokens and tokenRatio (gRFC A6)",
        ));
    };
    let max_f = max
        .as_f64()
        .filter(|m| *m > 0.0 && *m <= 1000.0 && m.fract() == 0.0)
        .ok_or_else(|| {
            refuse(
                file,
                "retryThrottling.maxTokens",
                format!("must be an integer in (0, 1000] (gRFC A6), got {max}"),
            )
        })?;
    let ratio_f = ratio.as_f64().filter(|r| *r > 0.0).ok_or_else(|| {
        refuse(
            file,
            "retryThrottling.tokenRatio",
            format!("must be > 0 (gRFC A6), got {ratio}"),
        )
    })?;
    e.set(
        "budget",
        "kind",
        quoted("grpc"),
        "retryThrottling: gRPC retry throttling",
    );
    e.set(
        "budget",
        "max_tokens",
        float(max_f),
        format!("retryThrottling.maxTokens = {max}"),
    );
    e.set(
        "budget",
        "token_ratio",
        float(ratio_f),
        format!("retryThrottling.tokenRatio = {ratio} (gRPC keeps 3 decimals)"),
    );
    e.set(
        "budget",
        "scope",
        quoted("client"),
        "gRPC keeps one token count per client channel (per server name)",
    );
    Ok(())
}

fn retry_policy(file: &str, at: &str, rp: &Value, e: &mut Emit) -> Result<(), CliError> {
    let rp = object(file, at, rp)?;
    only(
        file,
        at,
        rp,
        &[
            "maxAttempts",
            "initialBackoff",
            "maxBackoff",
            "backoffMultiplier",
            "retryableStatusCodes",
            "perAttemptRecvTimeout",
        ],
    )?;
    let need = |k: &str| {
        rp.get(k)
            .ok_or_else(|| refuse(file, &format!("{at}.{k}"), "required by gRFC A6"))
    };
    attempts(
        file,
        &format!("{at}.maxAttempts"),
        need("maxAttempts")?,
        e,
        "retry",
    )?;
    let backoff = Backoff::read(file, at, rp)?;
    let codes = classes(
        file,
        &format!("{at}.retryableStatusCodes"),
        need("retryableStatusCodes")?,
    )?;
    if codes.is_empty() {
        return Err(refuse(
            file,
            &format!("{at}.retryableStatusCodes"),
            "must not be empty (gRFC A6)",
        ));
    }
    backoff.emit(at, rp, e);
    e.set(
        "retry",
        "retry_on",
        list(&codes),
        format!("{at}.retryableStatusCodes (docs/import.md has the table)"),
    );
    e.set(
        "retry",
        "retry_after",
        quoted("honour"),
        "gRFC A6: grpc-retry-pushback-ms replaces the backoff",
    );
    if let Some(t) = rp.get("perAttemptRecvTimeout") {
        let d = positive_duration(file, &format!("{at}.perAttemptRecvTimeout"), t)?;
        e.set(
            "retry",
            "timeout",
            duration(d),
            format!("{at}.perAttemptRecvTimeout = {t}"),
        );
    }
    Ok(())
}

/// A `retryPolicy`'s backoff (gRFC A6): `initialBackoff * backoffMultiplier^(n-1)`, at most
/// `maxBackoff`, each delay drawn at random below it.
struct Backoff {
    base: Duration,
    cap: Duration,
    multiplier: f64,
}

impl Backoff {
    /// Reads the three keys (each required), refusing a shrinking backoff or a cap below the base.
    fn read(file: &str, at: &str, rp: &Map<String, Value>) -> Result<Backoff, CliError> {
        let need = |k: &str| {
            rp.get(k)
                .ok_or_else(|| refuse(file, &format!("{at}.{k}"), "required by gRFC A6"))
        };
        let base = positive_duration(
            file,
            &format!("{at}.initialBackoff"),
            need("initialBackoff")?,
        )?;
        let cap = positive_duration(file, &format!("{at}.maxBackoff"), need("maxBackoff")?)?;
        let mult_v = need("backoffMultiplier")?;
        let multiplier = mult_v.as_f64().filter(|m| *m > 0.0).ok_or_else(|| {
            refuse(
                file,
                &format!("{at}.backoffMultiplier"),
                format!("must be > 0, got {mult_v}"),
            )
        })?;
        if multiplier < 1.0 {
            return Err(refuse(
                file,
                &format!("{at}.backoffMultiplier"),
                format!(
                    "{multiplier} < 1 (a shrinking backoff) is not supported; retry.multiplier must be >= 1"
                ),
            ));
        }
        if cap < base {
            return Err(refuse(
                file,
                &format!("{at}.maxBackoff"),
                "is below initialBackoff; retry.cap must be >= retry.base",
            ));
        }
        Ok(Backoff {
            base,
            cap,
            multiplier,
        })
    }

    /// As `[retry]` keys, each naming the field of `rp` (at `at`) it came from.
    fn emit(&self, at: &str, rp: &Map<String, Value>, e: &mut Emit) {
        e.set(
            "retry",
            "backoff",
            quoted("exponential"),
            "gRFC A6: initialBackoff * backoffMultiplier^(n-1)",
        );
        e.set(
            "retry",
            "jitter",
            quoted("full"),
            "gRFC A6: the delay is random(0, that)",
        );
        e.set(
            "retry",
            "base",
            duration(self.base),
            format!("{at}.initialBackoff = {}", rp["initialBackoff"]),
        );
        e.set(
            "retry",
            "cap",
            duration(self.cap),
            format!("{at}.maxBackoff = {}", rp["maxBackoff"]),
        );
        e.set(
            "retry",
            "multiplier",
            float(self.multiplier),
            format!("{at}.backoffMultiplier = {}", rp["backoffMultiplier"]),
        );
        e.set(
            "retry",
            "first_exponent",
            "0".into(),
            "the first retry's window is initialBackoff",
        );
    }
}

fn hedging_policy(file: &str, at: &str, hp: &Value, e: &mut Emit) -> Result<(), CliError> {
    let hp = object(file, at, hp)?;
    only(
        file,
        at,
        hp,
        &["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"],
    )?;
    let max = hp
        .get("maxAttempts")
        .ok_or_else(|| refuse(file, &format!("{at}.maxAttempts"), "required by gRFC A6"))?;
    attempts(file, &format!("{at}.maxAttempts"), max, e, "retry")?;
    // A6: hedgingDelay defaults to 0s, every copy at once; the model needs a positive delay.
    let delay = match hp.get("hedgingDelay") {
        Some(d) => positive_duration(file, &format!("{at}.hedgingDelay"), d)?,
        None => {
            return Err(refuse(
                file,
                &format!("{at}.hedgingDelay"),
                "absent means 0s (every copy at once), which the model does not support; give a positive delay",
            ));
        }
    };
    e.set(
        "hedge",
        "delay",
        duration(delay),
        format!("{at}.hedgingDelay = {}", hp["hedgingDelay"]),
    );
    let codes = match hp.get("nonFatalStatusCodes") {
        Some(v) => classes(file, &format!("{at}.nonFatalStatusCodes"), v)?,
        None => Vec::new(),
    };
    e.set(
        "retry",
        "retry_on",
        list(&codes),
        format!("{at}.nonFatalStatusCodes: a non-fatal failure sends the next copy at once"),
    );
    Ok(())
}

#[cfg(test)]
mod tests;
