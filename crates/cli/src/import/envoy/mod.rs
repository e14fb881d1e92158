//! Envoy route `retry_policy` and cluster `circuit_breakers`, in YAML or JSON (envoy
//! `api/envoy/config/route/v3/route_components.proto`, `RetryPolicy` and `RouteAction.timeout`;
//! `api/envoy/config/cluster/v3/circuit_breaker.proto`, `CircuitBreakers.Thresholds`), and the
//! cluster's load balancing ([`cluster`]: `lb_policy`, `common_lb_config`, `outlier_detection`;
//! [`endpoints`]: `load_assignment`).
//!
//! The file is one YAML (or JSON, a subset of YAML) document: a route (`match`, `route:
//! {cluster, timeout, retry_policy}`), a `RouteAction` (`cluster`, `timeout`, `retry_policy`),
//! or a bare `retry_policy:`, optionally beside a cluster's `circuit_breakers:` and load
//! balancing fields (`type` and `connect_timeout` are named in a comment). Defaults as the
//! proto comments and the router give them: `num_retries` 1, `retry_back_off` base 25 ms and max
//! 10 x base, `rate_limited_retry_back_off.max_interval` 300 s, route `timeout` 15 s (the
//! per-try timeout when `per_try_timeout` is absent, as the proto says), `max_retries` 3 (the
//! circuit breaker applies even without a `circuit_breakers` block). An empty `retry_on`
//! retries nothing (`retry_on_ = 0` in `retry_state_impl.cc`).
//!
//! The YAML parser is `saphyr` (YAML 1.2, safe Rust); the document becomes a
//! `serde_json::Value` and is walked like the gRPC import's JSON (`docs/import.md`).

mod backoff;
mod breakers;
mod cluster;
mod endpoints;
mod retry;
mod yaml;

use breakers::circuit_breakers;
use retry::retry_policy;
use yaml::parse;

use super::grpc::{object, proto_duration};
use super::{Emit, Target, refuse};
use crate::error::CliError;
use retrystorm_core::time::Duration;
use serde_json::{Map, Value};

/// Route fields refused at the top and under `route:`, and why.
const ROUTE_REFUSED: [(&str, &str); 2] = [
    (
        "hedge_policy",
        "Envoy's hedging is not modelled by this import",
    ),
    (
        "retry_policy_typed_config",
        "retry policy extensions are not modelled",
    ),
];
/// A key to write only where it can act (the host selection and balancer keys need
/// `server.replicas > 1`): `[section] key = value  # comment`.
#[derive(Debug)]
pub(super) struct Pending {
    section: &'static str,
    key: String,
    value: String,
    comment: String,
}

/// `RouteAction.timeout` default ("If not specified, the default is 15s").
const DEFAULT_ROUTE_TIMEOUT: Duration = Duration::from_secs(15);

/// Checks `obj`'s keys: each in `allowed`, else refused naming why (from `why`) and what is
/// supported.
pub(super) fn keys(
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

/// A `google.protobuf.Duration` in Envoy's YAML/JSON (`"0.25s"`), read as whole milliseconds
/// the way Envoy's `PROTOBUF_GET_MS` reads it (truncated), with a note when it was not whole.
pub(super) fn millis(file: &str, at: &str, v: &Value) -> Result<(Duration, String), CliError> {
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

/// A `UInt32Value` field: a non-negative integer that fits 32 bits.
pub(super) fn uint32(file: &str, at: &str, v: &Value) -> Result<u64, CliError> {
    v.as_u64()
        .filter(|n| *n <= u64::from(u32::MAX))
        .ok_or_else(|| {
            refuse(
                file,
                at,
                format!("expected a non-negative integer, got {v}"),
            )
        })
}

/// Imports an Envoy route / retry policy / circuit breakers / cluster load balancing document.
pub fn import(file: &str, text: &str, target: Target) -> Result<Emit, CliError> {
    let root = parse(file, text)?;
    let root = object(file, "", &root)?;
    let mut allowed = vec![
        "retry_policy",
        "timeout",
        "circuit_breakers",
        "route",
        "match",
        "name",
        "cluster",
        "type",
        "connect_timeout",
    ];
    allowed.extend(cluster::FIELDS);
    let mut why = ROUTE_REFUSED.to_vec();
    why.extend(cluster::REFUSED);
    keys(file, "", root, &allowed, &why)?;
    if target == Target::RetryFrom
        && let Some(k) = cluster::present(root)
    {
        return Err(refuse(
            file,
            k,
            "the cluster's load balancing imports to [server], which retry.from does not write (a retry loop calls the tier below it, not its own server): run `retrystorm import envoy` on the file and put its [server] keys on the tier the retry calls, or keep the cluster in another file",
        ));
    }
    let mut e = Emit::default();
    e.note(format!(
        "Imported by `retrystorm import envoy {file}`: an Envoy route retry_policy (route_components.proto) and cluster circuit_breakers (circuit_breaker.proto)."
    ));
    if cluster::present(root).is_some() {
        e.note(
            "The cluster's load balancing: cluster.proto (lb_policy, *_lb_config), outlier_detection.proto, endpoint.proto (load_assignment).",
        );
    }
    let replicas = endpoints::count(file, root)?;
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
                &ROUTE_REFUSED,
            )?;
            (r, "route.")
        }
        None => (root, ""),
    };
    for k in ["match", "name", "type", "connect_timeout"] {
        if root.contains_key(k) {
            e.note(format!("{k}: not about retries, not imported."));
        }
    }
    if action.contains_key("cluster") {
        e.note(format!(
            "{at_prefix}cluster: the model's server (or the tier below) stands for it."
        ));
    }
    let route_timeout = route_timeout(file, action, at_prefix)?;
    let hosts = match action.get("retry_policy") {
        Some(rp) => retry_policy(
            file,
            &format!("{at_prefix}retry_policy"),
            rp,
            route_timeout,
            &mut e,
        )?,
        None => {
            if !root.contains_key("circuit_breakers") && cluster::present(root).is_none() {
                return Err(refuse(
                    file,
                    "",
                    "no retry_policy (at the top or under route:), circuit_breakers or cluster load balancing to import",
                ));
            }
            Vec::new()
        }
    };
    circuit_breakers(file, root.get("circuit_breakers"), &mut e)?;
    let balancing = cluster::balancing(file, root, &mut e)?;
    match target {
        // The model's own server decides; its checks name a host predicate without replicas.
        Target::RetryFrom => write(&mut e, hosts),
        Target::Model => replicated(&mut e, replicas, hosts, balancing),
    }
    Ok(e)
}

fn write(e: &mut Emit, lines: Vec<Pending>) {
    for l in lines {
        e.set(l.section, &l.key, l.value, l.comment);
    }
}

/// `server.replicas` from the endpoint count, and the keys that need it: written with two or
/// more endpoints, else named in a comment and a warning (the printed model must load).
fn replicated(e: &mut Emit, replicas: Option<u32>, hosts: Vec<Pending>, balancing: Vec<Pending>) {
    let n = replicas.unwrap_or(0);
    if n > 1 {
        write(e, hosts);
        e.set(
            "server",
            "replicas",
            n.to_string(),
            format!("load_assignment: {n} lb_endpoints, one replica each"),
        );
        write(e, balancing);
        return;
    }
    if let Some(n) = replicas {
        e.note(format!(
            "load_assignment: {n} lb_endpoint{}: the model's server is one replica (server.replicas is not written).",
            if n == 1 { "" } else { "s" }
        ));
    }
    let skipped: Vec<String> = hosts
        .iter()
        .chain(&balancing)
        .filter(|l| !(l.section == "server.outlier_detection" && l.key != "kind"))
        .map(|l| match l.section {
            "server.outlier_detection" => "[server.outlier_detection]".to_string(),
            s => format!("{s}.{} = {}", l.key, l.value),
        })
        .collect();
    if skipped.is_empty() {
        return;
    }
    let why = match replicas {
        None => "the file has no load_assignment to count endpoints in",
        Some(_) => "the cluster has fewer than two endpoints",
    };
    e.warn(format!(
        "not written, as they need server.replicas >= 2 and {why}: {}; set server.replicas to the number of hosts and add them",
        skipped.join(", ")
    ));
}

/// The route's `timeout` (Envoy's default 15 s when absent; 0 disables it), with its note.
fn route_timeout(
    file: &str,
    action: &Map<String, Value>,
    at_prefix: &str,
) -> Result<(Option<Duration>, String), CliError> {
    Ok(match action.get("timeout") {
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
    })
}
