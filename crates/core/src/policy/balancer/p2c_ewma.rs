//! Finagle's `P2CPeakEwma` (twitter/finagle `finagle-core/src/main/scala/com/twitter/finagle/
//! loadbalancer/PeakEwma.scala`, `p2c/P2CPick.scala`): two *distinct* random replicas, the one
//! with the lower peak-EWMA cost wins (ties to the first); the cost is [`super::ewma`]'s.

use super::ewma::PeakEwma;
use super::{Draw, Params, Pick};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::{Duration, Time};

/// `server.balancer = "p2c-ewma"`: Finagle's per-node metric, one per replica.
#[derive(Clone, Debug)]
pub struct P2cEwma {
    ewma: Vec<PeakEwma>,
}

impl P2cEwma {
    /// Finagle's cost of `replica` at `now`.
    pub fn cost(&mut self, replica: u32, now: Time) -> Option<f64> {
        self.ewma.get_mut(replica as usize).map(|m| m.cost(now))
    }
}

impl Pick for P2cEwma {
    const KEYS: &'static [(&'static str, &'static str)] = &[("ewma_decay", "keeps a latency EWMA")];

    fn new(p: &Params, replicas: u32, now: Time, _draw: &mut impl Draw) -> Self {
        P2cEwma {
            ewma: (0..replicas).map(|_| PeakEwma::new(p.decay, now)).collect(),
        }
    }

    /// Finagle's `Ema` requires `decayTime > 0`.
    fn validate(p: &Params, path: &str) -> Result<(), Invalid> {
        if p.decay == Duration::ZERO {
            return Err(invalid(
                &format!("{path}.ewma_decay"),
                "must be a positive duration, e.g. \"10s\" (Finagle's default)",
            ));
        }
        Ok(())
    }

    /// `P2CPick.pick`: `a` uniform, `b` uniform over the others (the "hole" at `a` skipped),
    /// then `if (nodeA.load <= nodeB.load) nodeA else nodeB`.
    #[inline]
    fn pick(&mut self, hosts: &[u32], _active: &[u32], draw: &mut impl Draw, now: Time) -> u32 {
        let n = hosts.len() as u64;
        if n == 1 {
            return hosts[0];
        }
        let a = draw.below(n);
        let mut b = draw.below(n - 1);
        if b >= a {
            b += 1;
        }
        let (a, b) = (hosts[a as usize], hosts[b as usize]);
        let load_a = self.ewma[a as usize].cost(now);
        let load_b = self.ewma[b as usize].cost(now);
        if load_a <= load_b { a } else { b }
    }

    /// Finagle's metric counts the attempt pending.
    #[inline]
    fn start(&mut self, replica: u32) {
        if let Some(m) = self.ewma.get_mut(replica as usize) {
            m.start();
        }
    }

    /// Finagle ends its metric on failures too.
    #[inline]
    fn finish(&mut self, replica: u32, sent: Time, now: Time) {
        if let Some(m) = self.ewma.get_mut(replica as usize) {
            m.end(sent, now);
        }
    }
}
