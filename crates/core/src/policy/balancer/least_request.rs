//! Envoy's `LeastRequestLoadBalancer` with equal weights and the default `selection_method =
//! N_CHOICES` (`source/extensions/load_balancing_policies/least_request/least_request_lb.cc`,
//! `unweightedHostPickNChoices`; docs "Load balancers", "Weighted least request"): `choice_count`
//! draws (default 2) of `random() % hosts.len()`, *with* replacement; a later sample replaces the
//! candidate only with strictly fewer active requests, so ties keep the earlier one.

use super::{Draw, Params, Pick};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Time;

/// `server.balancer = "least-request"`.
#[derive(Clone, Debug)]
pub struct LeastRequest {
    choice_count: u32,
}

impl Pick for LeastRequest {
    const KEYS: &'static [(&'static str, &'static str)] =
        &[("choice_count", "draws several choices")];

    fn new(p: &Params, _replicas: u32, _now: Time, _draw: &mut impl Draw) -> Self {
        LeastRequest {
            choice_count: p.choice_count,
        }
    }

    /// Envoy refuses `choice_count < 2` (`LeastRequest` proto, `uint32 = {gte: 2}`).
    fn validate(p: &Params, path: &str) -> Result<(), Invalid> {
        if p.choice_count < 2 {
            return Err(invalid(
                &format!("{path}.choice_count"),
                format!(
                    "must be at least 2 (Envoy's least request), got {}",
                    p.choice_count
                ),
            ));
        }
        Ok(())
    }

    fn describe(p: &Params) -> Option<String> {
        Some(format!(" (best of {} random choices)", p.choice_count))
    }

    /// With replacement; strictly fewer active requests replaces.
    #[inline]
    fn pick(&mut self, hosts: &[u32], active: &[u32], draw: &mut impl Draw, _now: Time) -> u32 {
        let n = hosts.len() as u64;
        let mut best = hosts[draw.below(n) as usize];
        for _ in 1..self.choice_count {
            let sampled = hosts[draw.below(n) as usize];
            if active[sampled as usize] < active[best as usize] {
                best = sampled;
            }
        }
        best
    }
}
