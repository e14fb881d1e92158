//! The cluster's load balancing: `lb_policy` with `least_request_lb_config`,
//! `common_lb_config.healthy_panic_threshold` and `outlier_detection`, as `[server]` keys
//! (`balancer`, `choice_count`, `panic_threshold`) and `[server.outlier_detection]` (envoy
//! `api/envoy/config/cluster/v3/cluster.proto`, `outlier_detection.proto`). The endpoints of
//! `load_assignment`, which give `replicas`, are counted in [`super::endpoints`].
//!
//! A field the document does not give is not written: the model's defaults are Envoy's. The
//! balancer keys mean something only with `server.replicas > 1`, which the endpoint count gives;
//! a cluster of one endpoint (or without `load_assignment`) gets them as a comment and a warning
//! instead, so that the printed model still loads.

use super::super::grpc::object;
use super::super::{Emit, duration, quoted, refuse};
use super::{Pending, keys, millis, uint32};
use crate::error::CliError;
use retrystorm_core::time::Duration;
use serde_json::{Map, Value};

/// The cluster fields read here and in `endpoints`, at the top of the document beside
/// `circuit_breakers`.
pub(super) const FIELDS: [&str; 7] = [
    "lb_policy",
    "least_request_lb_config",
    "ring_hash_lb_config",
    "maglev_lb_config",
    "common_lb_config",
    "outlier_detection",
    "load_assignment",
];

/// Cluster fields refused at the top, and why.
pub(super) const REFUSED: [(&str, &str); 5] = [
    (
        "load_balancing_policy",
        "typed load balancing policy extensions are not read by this import (it reads no typed configs); give the cluster's lb_policy",
    ),
    (
        "round_robin_lb_config",
        "slow start is not modelled: a replica takes its full share at once",
    ),
    (
        "health_checks",
        "active health checking is not modelled; outlier_detection (passive) is",
    ),
    (
        "original_dst_lb_config",
        "original destination routing has no replicas to balance",
    ),
    (
        "lb_subset_config",
        "subsets need endpoint metadata, which the model's replicas do not carry",
    ),
];

/// `lb_policy` values and the `server.balancer` each stands for.
const POLICIES: [(&str, &str); 3] = [
    ("ROUND_ROBIN", "round-robin"),
    ("RANDOM", "random"),
    ("LEAST_REQUEST", "least-request"),
];

/// `outlier_detection` fields that are durations, in the model's order.
const OD_DURATIONS: [&str; 4] = [
    "interval",
    "base_ejection_time",
    "max_ejection_time",
    "max_ejection_time_jitter",
];

/// `outlier_detection` fields that are `UInt32Value`s (`true`: a percentage, `lte: 100`), in the
/// model's order after the durations and `max_ejection_percent`.
const OD_COUNTS: [(&str, bool); 13] = [
    ("consecutive_5xx", false),
    ("enforcing_consecutive_5xx", true),
    ("consecutive_gateway_failure", false),
    ("enforcing_consecutive_gateway_failure", true),
    ("success_rate_minimum_hosts", false),
    ("success_rate_request_volume", false),
    ("success_rate_stdev_factor", false),
    ("enforcing_success_rate", true),
    ("failure_percentage_threshold", true),
    ("failure_percentage_minimum_hosts", false),
    ("failure_percentage_request_volume", false),
    ("enforcing_failure_percentage", true),
    ("max_ejection_percent", true),
];

/// `outlier_detection` fields refused, and why.
const OD_REFUSED: [(&str, &str); 7] = [
    (
        "consecutive_local_origin_failure",
        "acts only with split_external_local_origin_errors, which the model does not have",
    ),
    (
        "enforcing_consecutive_local_origin_failure",
        "acts only with split_external_local_origin_errors, which the model does not have",
    ),
    (
        "enforcing_local_origin_success_rate",
        "acts only with split_external_local_origin_errors, which the model does not have",
    ),
    (
        "enforcing_failure_percentage_local_origin",
        "acts only with split_external_local_origin_errors, which the model does not have",
    ),
    (
        "successful_active_health_check_uneject_host",
        "acts only with active health checking, which the model does not have",
    ),
    (
        "monitors",
        "outlier detection monitor extensions are not modelled",
    ),
    (
        "split_external_local_origin_errors",
        "the model does not tell local-origin errors (resets, timeouts) from the server's 5xx, as Envoy does by default (false)",
    ),
];

/// Whether `root` holds any cluster field this module reads.
pub(super) fn present(root: &Map<String, Value>) -> Option<&'static str> {
    FIELDS.iter().copied().find(|k| root.contains_key(*k))
}

/// The cluster's load balancing keys, to be written only beside `server.replicas > 1`.
pub(super) fn balancing(
    file: &str,
    root: &Map<String, Value>,
    e: &mut Emit,
) -> Result<Vec<Pending>, CliError> {
    let mut out = Vec::new();
    lb_policy(file, root, e, &mut out)?;
    common_lb_config(file, root, &mut out)?;
    if let Some(od) = root.get("outlier_detection") {
        outlier_detection(file, od, &mut out)?;
    }
    Ok(out)
}

fn server(key: &str, value: String, from: impl Into<String>) -> Pending {
    Pending {
        section: "server",
        key: key.to_string(),
        value,
        comment: from.into(),
    }
}

/// `lb_policy` (and the `*_lb_config` that goes with it).
fn lb_policy(
    file: &str,
    root: &Map<String, Value>,
    e: &mut Emit,
    out: &mut Vec<Pending>,
) -> Result<(), CliError> {
    let policy = match root.get("lb_policy") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(v) => {
            return Err(refuse(
                file,
                "lb_policy",
                format!("expected a name like \"LEAST_REQUEST\", got {v}"),
            ));
        }
    };
    // A config block beside another policy: Envoy ignores it, so the import refuses it.
    for (block, needs) in [
        ("least_request_lb_config", "LEAST_REQUEST"),
        ("ring_hash_lb_config", "RING_HASH"),
        ("maglev_lb_config", "MAGLEV"),
    ] {
        if root.contains_key(block) && policy != Some(needs) {
            return Err(refuse(
                file,
                block,
                format!(
                    "acts only with lb_policy: {needs} (Envoy ignores it otherwise); set it or remove the block"
                ),
            ));
        }
    }
    let Some(policy) = policy else {
        return Ok(());
    };
    if let Some((_, kind)) = POLICIES.iter().find(|p| p.0 == policy) {
        out.push(server(
            "balancer",
            quoted(kind),
            format!("lb_policy = {policy}"),
        ));
        if policy == "LEAST_REQUEST" {
            least_request(file, root, out)?;
        }
        return Ok(());
    }
    match policy {
        "RING_HASH" | "MAGLEV" => {
            let block = if policy == "RING_HASH" {
                "ring_hash_lb_config"
            } else {
                "maglev_lb_config"
            };
            let _ = root
                .get(block)
                .map(|b| object(file, block, b))
                .transpose()?;
            e.warn(format!(
                "lb_policy = {policy}: consistent hashing is not modelled (the model's requests carry no hash key); imported as balancer = \"random\", which is how a ring spreads requests of many distinct keys, but not how it pins one key to one replica{}",
                if root.contains_key(block) {
                    format!("; {block} not imported")
                } else {
                    String::new()
                }
            ));
            out.push(server(
                "balancer",
                quoted("random"),
                format!(
                    "lb_policy = {policy}: not modelled, random picks stand for it (warning above)"
                ),
            ));
            Ok(())
        }
        _ => {
            let mut ok: Vec<&str> = POLICIES.iter().map(|p| p.0).collect();
            ok.extend(["RING_HASH (as RANDOM, with a warning)", "MAGLEV (likewise)"]);
            let why = match policy {
                "CLUSTER_PROVIDED" => "the cluster's own balancer is not modelled",
                "LOAD_BALANCING_POLICY_CONFIG" => {
                    "typed load_balancing_policy extensions are not read by this import"
                }
                _ => "is not an lb_policy this import knows",
            };
            Err(refuse(
                file,
                "lb_policy",
                format!("{policy:?}: {why}; supported: {}", ok.join(", ")),
            ))
        }
    }
}

/// `least_request_lb_config.choice_count` (UInt32Value, at least 2; default 2).
fn least_request(
    file: &str,
    root: &Map<String, Value>,
    out: &mut Vec<Pending>,
) -> Result<(), CliError> {
    let Some(c) = root.get("least_request_lb_config") else {
        return Ok(());
    };
    let at = "least_request_lb_config";
    let c = object(file, at, c)?;
    keys(
        file,
        at,
        c,
        &["choice_count"],
        &[
            (
                "active_request_bias",
                "acts only when endpoint weights differ, and the model's replicas are equal",
            ),
            (
                "slow_start_config",
                "slow start is not modelled: a replica takes its full share at once",
            ),
        ],
    )?;
    if let Some(v) = c.get("choice_count") {
        let n = uint32(file, &format!("{at}.choice_count"), v)?;
        if n < 2 {
            return Err(refuse(
                file,
                &format!("{at}.choice_count"),
                format!("must be at least 2 (cluster.proto), got {n}"),
            ));
        }
        out.push(server(
            "choice_count",
            n.to_string(),
            format!("{at}.choice_count = {v}"),
        ));
    }
    Ok(())
}

/// `common_lb_config.healthy_panic_threshold` (a `type.v3.Percent`, default 50).
fn common_lb_config(
    file: &str,
    root: &Map<String, Value>,
    out: &mut Vec<Pending>,
) -> Result<(), CliError> {
    let Some(c) = root.get("common_lb_config") else {
        return Ok(());
    };
    let at = "common_lb_config";
    let c = object(file, at, c)?;
    keys(
        file,
        at,
        c,
        &["healthy_panic_threshold"],
        &[
            (
                "zone_aware_lb_config",
                "zone aware routing: the model's replicas are one zone",
            ),
            (
                "locality_weighted_lb_config",
                "locality weights: the model's replicas are one locality",
            ),
            (
                "update_merge_window",
                "host set updates: the model's replicas do not change",
            ),
            (
                "ignore_new_hosts_until_first_hc",
                "active health checking is not modelled",
            ),
            (
                "close_connections_on_host_set_change",
                "the model has no connections",
            ),
            (
                "consistent_hashing_lb_config",
                "consistent hashing is not modelled",
            ),
            ("override_host_status", "host override is not modelled"),
        ],
    )?;
    let Some(p) = c.get("healthy_panic_threshold") else {
        return Ok(());
    };
    let pat = format!("{at}.healthy_panic_threshold");
    let p = object(file, &pat, p)?;
    keys(file, &pat, p, &["value"], &[])?;
    let v = match p.get("value") {
        None => 0.0,
        Some(v) => v.as_f64().ok_or_else(|| {
            refuse(
                file,
                &format!("{pat}.value"),
                format!("expected a number, got {v}"),
            )
        })?,
    };
    if !(0.0..=100.0).contains(&v) {
        return Err(refuse(
            file,
            &format!("{pat}.value"),
            format!("a percentage in [0, 100] (type.v3.Percent), got {v}"),
        ));
    }
    // ProtobufPercentHelper::convertPercent: `max_value * (percent / 100.0)`, truncated.
    let whole = (100.0 * (v / 100.0)) as u32;
    let note = if f64::from(whole) == v {
        format!("{pat}.value = {v}")
    } else {
        format!("{pat}.value = {v}, {whole} as Envoy truncates it (100 * (value / 100))")
    };
    out.push(server("panic_threshold", whole.to_string(), note));
    Ok(())
}

/// `outlier_detection`: every field the model has, under `kind = "envoy"`.
fn outlier_detection(file: &str, od: &Value, out: &mut Vec<Pending>) -> Result<(), CliError> {
    let at = "outlier_detection";
    let od = object(file, at, od)?;
    let mut allowed: Vec<&str> = OD_DURATIONS.to_vec();
    allowed.extend(OD_COUNTS.iter().map(|c| c.0));
    allowed.push("always_eject_one_host");
    let mut why = OD_REFUSED.to_vec();
    if od.get("split_external_local_origin_errors") == Some(&Value::Bool(false)) {
        // Envoy's default, said aloud: nothing to refuse.
        allowed.push("split_external_local_origin_errors");
        why.retain(|w| w.0 != "split_external_local_origin_errors");
    }
    keys(file, at, od, &allowed, &why)?;
    let section = "server.outlier_detection";
    let line = |key: &str, value: String, comment: String| Pending {
        section,
        key: key.to_string(),
        value,
        comment,
    };
    out.push(line(
        "kind",
        quoted("envoy"),
        "the cluster's outlier_detection (outlier_detection.proto); fields not given take Envoy's defaults".into(),
    ));
    let mut ms: [Option<Duration>; 4] = [None; 4];
    for (i, k) in OD_DURATIONS.iter().enumerate() {
        let Some(v) = od.get(*k) else { continue };
        let f = format!("{at}.{k}");
        let (d, note) = millis(file, &f, v)?;
        if d == Duration::ZERO && *k != "max_ejection_time_jitter" {
            return Err(refuse(
                file,
                &f,
                "must be greater than zero (outlier_detection.proto), in whole ms as Envoy reads it",
            ));
        }
        ms[i] = Some(d);
        out.push(line(k, duration(d), note));
    }
    // DetectorImpl::create: max_ejection_time (default max(300 s, base)) below base is an error.
    if let (Some(max), base) = (ms[2], ms[1].unwrap_or(Duration::from_secs(30)))
        && max < base
    {
        return Err(refuse(
            file,
            &format!("{at}.max_ejection_time"),
            format!(
                "must be >= base_ejection_time ({}; Envoy refuses the cluster otherwise)",
                duration(base).trim_matches('"')
            ),
        ));
    }
    // max_ejection_percent and always_eject_one_host come right after the durations.
    let counts = |k: &str| OD_COUNTS.iter().find(|c| c.0 == k).copied();
    let order = ["max_ejection_percent", "always_eject_one_host"]
        .into_iter()
        .chain(
            OD_COUNTS
                .iter()
                .map(|c| c.0)
                .filter(|k| *k != "max_ejection_percent"),
        );
    for k in order {
        let Some(v) = od.get(k) else { continue };
        let f = format!("{at}.{k}");
        if k == "always_eject_one_host" {
            let b = v
                .as_bool()
                .ok_or_else(|| refuse(file, &f, format!("expected true or false, got {v}")))?;
            out.push(line(k, b.to_string(), format!("{f} = {v}")));
            continue;
        }
        let n = uint32(file, &f, v)?;
        if counts(k).is_some_and(|c| c.1) && n > 100 {
            return Err(refuse(
                file,
                &f,
                format!("a percentage in 0..=100 (outlier_detection.proto), got {n}"),
            ));
        }
        let note = if k == "success_rate_stdev_factor" {
            format!(
                "{f} = {v} (thousandths: {} standard deviations)",
                n as f64 / 1000.0
            )
        } else {
            format!("{f} = {v}")
        };
        out.push(line(k, n.to_string(), note));
    }
    Ok(())
}
