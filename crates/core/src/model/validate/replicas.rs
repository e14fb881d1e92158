//! Replicas (`server.replicas` and the keys that need it) and the retry keys that choose among
//! them.

use super::*;
use crate::policy::autoscale::{AutoscaleConfig, Metric};

/// `server.replicas`, the balancer keys, `outlier_detection`, `failure_windows` and every
/// window's `replica`, under `p`.
pub(super) fn validate_replicas(p: &str, s: &Server) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.{f}");
    if s.replicas == 0 || s.replicas > MAX_REPLICAS {
        return Err(invalid(
            &at("replicas"),
            format!("must be in 1..={MAX_REPLICAS}, got {}", s.replicas),
        ));
    }
    if s.replica_slots() == 1 {
        if let Some((key, _)) = s.balancer_keys().into_iter().find(|(_, set)| *set) {
            let field = if key == "replica" {
                first_replica_field(s)
            } else {
                key.to_string()
            };
            return Err(invalid(
                &at(&field),
                format!(
                    "has no effect on a tier of one replica: set {p}.replicas to 2 or more (or remove it)"
                ),
            ));
        }
    }
    if let Some(a) = &s.autoscale {
        validate_autoscale(p, s, a)?;
    }
    validate_replica_indices(p, s)?;
    validate_failure_windows(p, s)?;
    let Some(spec) = s.balancer_spec() else {
        return Ok(());
    };
    spec.kind.validate(&spec.params, p)?;
    // A key only another balancer reads changes nothing.
    for (key, set) in s.balancer_keys() {
        if let Some((reader, what)) = BalancerKind::reader_of(key)
            && set
            && reader != spec.kind
        {
            return Err(invalid(
                &at(key),
                format!(
                    "has no effect: only balancer = \"{}\" {what}",
                    reader.name()
                ),
            ));
        }
    }
    if spec.panic_threshold > 100 {
        return Err(invalid(
            &at("panic_threshold"),
            format!(
                "must be a percentage in 0..=100, got {}",
                spec.panic_threshold
            ),
        ));
    }
    if let Some(o) = &s.outlier_detection {
        validate_outlier(&at("outlier_detection"), o)?;
    }
    Ok(())
}

/// `[server.autoscale]`: HPA's ranges, and what it needs of its tier.
fn validate_autoscale(p: &str, s: &Server, a: &AutoscaleConfig) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.autoscale.{f}");
    a.validate(&format!("{p}.autoscale"), s.replicas, MAX_REPLICAS)?;
    if a.metric == Metric::Utilisation && s.capacity.0.is_none() {
        return Err(invalid(
            &at("metric"),
            format!(
                "\"utilisation\" needs a limited {p}.capacity (busy workers over capacity); use \"in-flight\" or \"queue\" on an unlimited server"
            ),
        ));
    }
    if s.outlier_detection.is_some() {
        return Err(invalid(
            &format!("{p}.outlier_detection"),
            "cannot be combined with server.autoscale: ejections are counted over a fixed set of replicas",
        ));
    }
    Ok(())
}

/// The first window that names a replica, for the error on a one-replica tier.
fn first_replica_field(s: &Server) -> String {
    let named = |list: &str, i: Option<usize>| i.map(|i| format!("{list}[{i}].replica"));
    named(
        "outages",
        s.outages.iter().position(|o| o.replica.is_some()),
    )
    .or_else(|| {
        named(
            "capacity_drops",
            s.capacity_drops.iter().position(|d| d.replica.is_some()),
        )
    })
    .or_else(|| {
        named(
            "slow_windows",
            s.slow_windows.iter().position(|w| w.replica.is_some()),
        )
    })
    .or_else(|| {
        named(
            "failure_windows",
            s.failure_windows.iter().position(|w| w.replica.is_some()),
        )
    })
    .unwrap_or_else(|| "replica".into())
}

/// Every window's `replica` names one that exists.
fn validate_replica_indices(p: &str, s: &Server) -> Result<(), Invalid> {
    let lists = [
        (
            "outages",
            s.outages.iter().map(|o| o.replica).collect::<Vec<_>>(),
        ),
        (
            "capacity_drops",
            s.capacity_drops.iter().map(|d| d.replica).collect(),
        ),
        (
            "slow_windows",
            s.slow_windows.iter().map(|w| w.replica).collect(),
        ),
        (
            "failure_windows",
            s.failure_windows.iter().map(|w| w.replica).collect(),
        ),
    ];
    for (list, replicas) in lists {
        for (i, r) in replicas.into_iter().enumerate() {
            if let Some(r) = r
                && r >= s.replica_slots()
            {
                if s.autoscale.is_some() {
                    let n = s.replica_slots();
                    return Err(invalid(
                        &format!("{p}.{list}[{i}].replica"),
                        format!(
                            "replica {r} does not exist: {p}.autoscale.max_replicas = {n}, so replicas are numbered 0..={}",
                            n - 1
                        ),
                    ));
                }
                return Err(invalid(
                    &format!("{p}.{list}[{i}].replica"),
                    format!(
                        "replica {r} does not exist: {p}.replicas = {}, so replicas are numbered 0..={}",
                        s.replicas,
                        s.replicas - 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `failure_windows`: each ends after it starts, has a probability, and none overlap on a
/// replica.
fn validate_failure_windows(p: &str, s: &Server) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.{f}");
    if s.failure_windows.len() > MAX_WINDOWS {
        return Err(invalid(
            &at("failure_windows"),
            format!(
                "{} windows; at most {MAX_WINDOWS} per list (each pair is checked for overlap): merge adjacent windows",
                s.failure_windows.len()
            ),
        ));
    }
    for (i, w) in s.failure_windows.iter().enumerate() {
        if w.to <= w.from {
            return Err(invalid(
                &at(&format!("failure_windows[{i}].to")),
                format!("must be after `from` ({})", w.from),
            ));
        }
        probability(
            &at(&format!("failure_windows[{i}].probability")),
            w.probability,
        )?;
        if let Some(later) = s.failure_windows[i + 1..]
            .iter()
            .position(|e| e.from < w.to && w.from < e.to && same_replica(e.replica, w.replica))
        {
            return Err(invalid(
                &at(&format!("failure_windows[{}]", i + 1 + later)),
                format!(
                    "failure windows on one replica must not overlap (it overlaps {p}.failure_windows[{i}]: which probability would win?)"
                ),
            ));
        }
    }
    Ok(())
}

/// Two windows can meet on one replica: one of them strikes every replica, or both the same.
pub(super) fn same_replica(a: Option<u32>, b: Option<u32>) -> bool {
    a.is_none() || b.is_none() || a == b
}

/// The detector's own bounds, and no Envoy-only field under `kind = "grpc"`.
fn validate_outlier(p: &str, o: &OutlierDetection) -> Result<(), Invalid> {
    match o.kind {
        OutlierKind::Envoy => o.envoy().validate(p),
        OutlierKind::Grpc => {
            if let Some((field, _)) = o.envoy_only().into_iter().find(|(_, set)| *set) {
                return Err(invalid(
                    &format!("{p}.{field}"),
                    "is Envoy's only: gRPC's outlier detection (gRFC A50) has no consecutive-error ejection and no ejection jitter, only success rate and failure percentage (use kind = \"envoy\")",
                ));
            }
            // Envoy's checks first: they name the fields as the file writes them (A50's
            // validation names its own JSON, `failure_percentage_ejection.threshold`, which no
            // model file has), and the fields behind a kind A50 does not build are still
            // percentages.
            o.envoy().validate(p)?;
            o.grpc().validate(p)
        }
    }
}

/// A hop's `retry_host_predicate` and `host_selection_retry_max_attempts` need a replicated tier
/// to send to; `retry` is the hop's retry section at `rp`, `target` the tier it calls at `tp`.
pub(super) fn validate_host_selection(
    rp: &str,
    r: &Retry,
    tp: &str,
    target: &Server,
) -> Result<(), Invalid> {
    let set = [
        ("retry_host_predicate", !r.retry_host_predicate.is_default()),
        (
            "host_selection_retry_max_attempts",
            r.host_selection_retry_max_attempts.is_some(),
        ),
    ];
    if target.replica_slots() <= 1
        && let Some((field, _)) = set.iter().find(|(_, on)| *on)
    {
        return Err(invalid(
            &format!("{rp}.{field}"),
            format!(
                "has no effect: the tier this retry loop calls ({tp}) has one replica; set {tp}.replicas to 2 or more"
            ),
        ));
    }
    if r.host_selection_retry_max_attempts.is_some()
        && r.retry_host_predicate != HostPredicate::PreviousHosts
    {
        return Err(invalid(
            &format!("{rp}.host_selection_retry_max_attempts"),
            "has no effect without retry_host_predicate = \"previous-hosts\"",
        ));
    }
    if let Some(n) = r.host_selection_retry_max_attempts
        && n > 100
    {
        return Err(invalid(
            &format!("{rp}.host_selection_retry_max_attempts"),
            format!("at most 100 (each is one more pick per retry), got {n}"),
        ));
    }
    Ok(())
}
