//! Envoy's `RoundRobinLoadBalancer` with equal weights (envoyproxy/envoy
//! `source/extensions/load_balancing_policies/round_robin/round_robin_lb.h`, `unweightedHostPick`):
//! `hosts[rr_index++ % hosts.len()]`, the index starting at a random `seed_` drawn when the
//! balancer is built (`EdfLoadBalancerBase`, `seed_(random_.random())`, so that proxies do not all
//! start on the same host). The index survives changes to the host list (an ejection) and is taken
//! modulo the new length.

use super::{Draw, Params, Pick};
use crate::base::time::Time;

/// `server.balancer = "round-robin"`.
#[derive(Clone, Debug)]
pub struct RoundRobin {
    index: u64,
}

impl Pick for RoundRobin {
    /// Draws the starting index.
    fn new(_p: &Params, _replicas: u32, _now: Time, draw: &mut impl Draw) -> Self {
        RoundRobin {
            index: draw.next_u64(),
        }
    }

    #[inline]
    fn pick(&mut self, hosts: &[u32], _active: &[u32], _draw: &mut impl Draw, _now: Time) -> u32 {
        let i = self.index % hosts.len() as u64;
        self.index = self.index.wrapping_add(1);
        hosts[i as usize]
    }
}
