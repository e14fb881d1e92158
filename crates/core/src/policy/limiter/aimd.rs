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
}

impl Aimd {
    pub fn new(c: &LimiterConfig) -> Self {
        Aimd {
            limit: c.initial_limit,
            min: c.min_limit,
            max: c.max_limit(),
            backoff: c.backoff_ratio,
            timeout: c.timeout,
        }
    }
}

impl Algorithm for Aimd {
    const KEYS: &'static [&'static str] = &[
        "initial_limit",
        "min_limit",
        "max_limit",
        "backoff_ratio",
        "timeout",
    ];

    fn new(c: &LimiterConfig, _stream: Stream) -> Self {
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

    fn limit(&self) -> u32 {
        self.limit
    }

    /// `AIMDLimit._update`: a drop or an RTT above `timeout` backs off, enough in flight grows.
    fn sample(&mut self, rtt: Duration, inflight: u32, dropped: bool) {
        let mut limit = self.limit;
        if dropped || rtt > self.timeout {
            limit = (f64::from(limit) * self.backoff) as u32;
        } else if inflight * 2 >= limit {
            limit += 1;
        }
        self.limit = limit.max(self.min).min(self.max);
    }
}
