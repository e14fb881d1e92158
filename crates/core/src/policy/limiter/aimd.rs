//! Netflix concurrency-limits `AIMDLimit`.

use super::*;
use crate::base::invalid::invalid;
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
        try_acquire(&mut self.inflight, self.limit)
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

impl Limiter for Aimd {
    const KEYS: &'static [&'static str] = &[
        "initial_limit",
        "min_limit",
        "max_limit",
        "backoff_ratio",
        "timeout",
    ];
    const CONCURRENCY: bool = true;

    fn new(c: &LimiterConfig, _start: Time, _stream: Stream) -> Self {
        Aimd::new(c)
    }

    fn validate(c: &LimiterConfig) -> Result<(), Invalid> {
        if !(c.backoff_ratio >= 0.5 && c.backoff_ratio < 1.0) {
            return Err(invalid(
                "limiter.backoff_ratio",
                format!(
                    "must be in [0.5, 1.0) (AIMDLimit's precondition; default 0.9), got {}",
                    c.backoff_ratio
                ),
            ));
        }
        c.validate_limits()?;
        if c.timeout.0 == 0 {
            return Err(invalid(
                "limiter.timeout",
                "must be a positive duration (AIMDLimit's default 5s)",
            ));
        }
        Ok(())
    }

    #[inline]
    fn acquire(&mut self, _now: Time) -> Admit {
        Aimd::acquire(self)
    }

    /// A drop for an answer the backend did not accept (503, 429, overloaded, timeout,
    /// connection: `onDropped`), a sample otherwise (`onSuccess`).
    #[inline]
    fn on_outcome(&mut self, _now: Time, class: Class, rtt: Duration) {
        self.sample(rtt, self.inflight, !class.is_accepted());
        self.inflight = self.inflight.saturating_sub(1);
    }
}
