//! The cluster's `circuit_breakers`: Envoy's retry circuit breaker and `retry_budget` as the
//! model's `[budget] kind = "envoy"`.

use super::super::grpc::object;
use super::super::{Emit, float, quoted, refuse};
use super::{keys, uint32};
use crate::error::CliError;
use serde_json::{Map, Value};

pub(super) fn circuit_breakers(
    file: &str,
    cb: Option<&Value>,
    e: &mut Emit,
) -> Result<(), CliError> {
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
    let Some((i, t)) = default_threshold(file, list)? else {
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
                let n = uint32(file, &format!("{at}.max_retries"), v)?;
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
        retry_budget(file, &at, rb, e)?;
    }
    Ok(())
}

/// A threshold of `circuit_breakers.thresholds`: its index and its fields.
type Threshold<'a> = (usize, &'a Map<String, Value>);

/// The one DEFAULT-priority threshold of `thresholds` (others are refused), with its index.
fn default_threshold<'a>(file: &str, list: &'a [Value]) -> Result<Option<Threshold<'a>>, CliError> {
    let mut chosen: Option<Threshold<'a>> = None;
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
    Ok(chosen)
}

/// A threshold's `retry_budget` (Envoy's defaults 20 % and 3 where a field is absent).
fn retry_budget(file: &str, at: &str, rb: &Value, e: &mut Emit) -> Result<(), CliError> {
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
        Some(v) => Some(uint32(file, &format!("{rat}.min_retry_concurrency"), v)?),
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
    Ok(())
}
