//! The endpoints of a cluster's `load_assignment` (envoy `api/envoy/config/endpoint/v3/
//! endpoint.proto`, `endpoint_components.proto`), counted as `server.replicas`. The model's
//! replicas are one level of equal, healthy peers, so what would make them otherwise (failover
//! priorities, unequal weights, unhealthy endpoints) is refused naming the field.

use super::super::grpc::object;
use super::super::refuse;
use super::keys;
use super::uint32;
use crate::error::CliError;
use retrystorm_core::model::MAX_REPLICAS;
use serde_json::{Map, Value};

/// The endpoint count of `load_assignment` (every `lb_endpoints` entry of every locality), or
/// `None` without one; refuses what would make the replicas unequal.
pub(super) fn count(file: &str, root: &Map<String, Value>) -> Result<Option<u32>, CliError> {
    let Some(la) = root.get("load_assignment") else {
        return Ok(None);
    };
    let at = "load_assignment";
    let la = object(file, at, la)?;
    keys(
        file,
        at,
        la,
        &["cluster_name", "endpoints"],
        &[
            (
                "policy",
                "drop_overloads and overprovisioning_factor are not modelled",
            ),
            (
                "named_endpoints",
                "named endpoints are not read by this import",
            ),
        ],
    )?;
    let localities = list(file, &format!("{at}.endpoints"), la.get("endpoints"))?;
    let mut weight = OneWeight::default();
    let mut n: u64 = 0;
    for (i, loc) in localities.iter().enumerate() {
        n += locality(file, &format!("{at}.endpoints[{i}]"), loc, &mut weight)?;
    }
    if n > u64::from(MAX_REPLICAS) {
        return Err(refuse(
            file,
            &format!("{at}.endpoints"),
            format!("{n} endpoints; the model has at most {MAX_REPLICAS} replicas per tier"),
        ));
    }
    Ok(Some(n as u32))
}

/// The entries of the list `v` at `at`, none when it is absent (a repeated proto field not given
/// is empty), so that a missing list counts no endpoints instead of failing.
fn list<'a>(file: &str, at: &str, v: Option<&'a Value>) -> Result<&'a [Value], CliError> {
    match v {
        None => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(refuse(file, at, "expected a list")),
    }
}

/// The endpoint count of one locality at `lat`. Its own weight and locality are accepted but
/// change nothing: the model's replicas are one flat level, so only priority 0 can be imported,
/// and every endpoint's weight goes through `weight`, shared by all localities.
fn locality(file: &str, lat: &str, loc: &Value, weight: &mut OneWeight) -> Result<u64, CliError> {
    let loc = object(file, lat, loc)?;
    keys(
        file,
        lat,
        loc,
        &[
            "locality",
            "lb_endpoints",
            "load_balancing_weight",
            "priority",
        ],
        &[
            (
                "leds_cluster_locality_config",
                "endpoints discovered by LEDS cannot be counted here; list them in lb_endpoints",
            ),
            (
                "load_balancer_endpoints",
                "not read by this import; list the endpoints in lb_endpoints",
            ),
            ("proximity", "not implemented by Envoy"),
        ],
    )?;
    if let Some(p) = loc.get("priority") {
        let p = uint32(file, &format!("{lat}.priority"), p)?;
        if p != 0 {
            return Err(refuse(
                file,
                &format!("{lat}.priority"),
                format!(
                    "{p}: failover priority levels are not modelled: the model's replicas are one level (priority 0)"
                ),
            ));
        }
    }
    let eps = list(
        file,
        &format!("{lat}.lb_endpoints"),
        loc.get("lb_endpoints"),
    )?;
    for (j, ep) in eps.iter().enumerate() {
        let eat = format!("{lat}.lb_endpoints[{j}]");
        let w = endpoint(file, &eat, ep)?;
        weight.check(file, &eat, w)?;
    }
    Ok(eps.len() as u64)
}

/// The `load_balancing_weight` (1 when not given) of one `lb_endpoints` entry at `eat`. Its
/// health status must be one a replica can start in, as the model's replicas all start healthy.
fn endpoint(file: &str, eat: &str, ep: &Value) -> Result<u64, CliError> {
    let ep = object(file, eat, ep)?;
    keys(
        file,
        eat,
        ep,
        &[
            "endpoint",
            "endpoint_name",
            "health_status",
            "metadata",
            "load_balancing_weight",
        ],
        &[],
    )?;
    if let Some(h) = ep.get("health_status") {
        let ok = matches!(h.as_str(), Some("UNKNOWN" | "HEALTHY"));
        if !ok {
            return Err(refuse(
                file,
                &format!("{eat}.health_status"),
                format!("{h}: the model's replicas all start healthy; supported: UNKNOWN, HEALTHY"),
            ));
        }
    }
    match ep.get("load_balancing_weight") {
        None => Ok(1),
        Some(v) => uint32(file, &format!("{eat}.load_balancing_weight"), v),
    }
}

/// The one weight every endpoint must have, and where it was first seen: the model's replicas
/// take equal shares, so weighted endpoints would import to a different balance than Envoy's.
#[derive(Default)]
struct OneWeight(Option<(u64, String)>);

impl OneWeight {
    /// Accepts `w`, the weight of the endpoint at `eat`, when it is the first one seen or equal
    /// to it; refuses it naming both places otherwise.
    fn check(&mut self, file: &str, eat: &str, w: u64) -> Result<(), CliError> {
        match &self.0 {
            None => self.0 = Some((w, eat.to_string())),
            Some((first, first_at)) if *first != w => {
                return Err(refuse(
                    file,
                    &format!("{eat}.load_balancing_weight"),
                    format!(
                        "{w}, and {first} at {first_at}: weighted endpoints are not modelled, the model's replicas take equal shares (give every endpoint one weight)"
                    ),
                ));
            }
            Some(_) => {}
        }
        Ok(())
    }
}
