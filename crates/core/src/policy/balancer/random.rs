//! Envoy's `RandomLoadBalancer`: `hosts[random() % hosts.len()]`.

use super::{Draw, Params, Pick};
use crate::base::time::Time;

/// `server.balancer = "random"`.
#[derive(Clone, Debug)]
pub struct Random;

impl Pick for Random {
    fn new(_p: &Params, _replicas: u32, _now: Time, _draw: &mut impl Draw) -> Self {
        Random
    }

    #[inline]
    fn pick(&mut self, hosts: &[u32], _active: &[u32], draw: &mut impl Draw, _now: Time) -> u32 {
        hosts[draw.below(hosts.len() as u64) as usize]
    }
}
