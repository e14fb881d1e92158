//! Netflix concurrency-limits `AIMDLimit`.

use super::*;
use crate::base::time::Duration;

/// Netflix's `AIMDLimit` behind a `SimpleLimiter`.
#[derive(Clone, Debug)]
pub struct Aimd {
    pub(super) limit: u32,
    pub(super) min: u32,
    pub(super) max: u32,
    pub(super) backoff: f64,
    pub(super) timeout: Duration,
    pub(super) inflight: u32,
}

impl Aimd {
    pub fn new(c: &LimiterConfig) -> Self {
        Aimd {
            limit: c.initial_limit,
            min: c.min_limit,
            max: c.max_limit(),
            backoff: c.backoff_ratio,
            timeout: c.timeout,
            inflight: 0,
        }
    }
    /// `SimpleLimiter.tryAcquire`: refused when `inflight >= limit`.
    pub fn acquire(&mut self) -> Admit {
        if self.inflight >= self.limit {
            return Admit::Reject;
        }
        self.inflight += 1;
        Admit::Go
    }
    /// `AIMDLimit._update(startTime, rtt, inflight, didDrop)`, then the attempt leaves.
    pub fn sample(&mut self, rtt: Duration, inflight: u32, dropped: bool) {
        let mut limit = self.limit;
        if dropped || rtt > self.timeout {
            limit = (f64::from(limit) * self.backoff) as u32;
        } else if inflight * 2 >= limit {
            limit += 1;
        }
        self.limit = limit.max(self.min).min(self.max);
    }
    pub fn limit(&self) -> u32 {
        self.limit
    }
}
