//! botocore's adaptive retry mode: `ClientRateLimiter` with its CUBIC calculator.

use super::*;
use crate::base::invalid::invalid;
use crate::base::time::{Duration, Time};

/// botocore's `ClientRateLimiter` with its `CubicCalculator`, `TokenBucket` and `RateClocker`.
#[derive(Clone, Debug)]
pub struct AwsAdaptive {
    pub(super) c: f64,
    pub(super) beta: f64,
    pub(super) min_rate: f64,
    pub(super) smoothing: f64,
    /// `1 / _TIME_BUCKET_RANGE`.
    pub(super) bucket_scale: f64,
    // CubicCalculator.
    pub(super) w_max: f64,
    pub(super) k: f64,
    pub(super) last_fail: f64,
    // TokenBucket.
    pub(super) fill_rate: f64,
    pub(super) max_capacity: f64,
    pub(super) capacity: f64,
    pub(super) last_refill: f64,
    // RateClocker.
    pub(super) measured: f64,
    pub(super) last_bucket: f64,
    pub(super) count: f64,
    pub(super) enabled: bool,
}

impl AwsAdaptive {
    /// `register_retry_handler` at `start`: `CubicCalculator(starting_max_rate=0)`,
    /// `TokenBucket(max_rate=1)` (empty), `RateClocker` whose first bucket is `floor(start)`.
    pub fn new(c: &LimiterConfig, start: Time) -> Self {
        let t = secs(start);
        let mut a = AwsAdaptive {
            c: c.cubic_c,
            beta: c.cubic_beta,
            min_rate: c.min_fill_rate,
            smoothing: c.smoothing(),
            bucket_scale: 1e9 / c.rate_bucket.0 as f64,
            w_max: 0.0,
            k: 0.0,
            last_fail: t,
            fill_rate: 0.0,
            max_capacity: 0.0,
            capacity: 0.0,
            last_refill: t,
            measured: 0.0,
            // botocore floors the start to whole seconds, not to its half-second buckets.
            last_bucket: t.floor(),
            count: 0.0,
            enabled: false,
        };
        a.k = a.zero_point();
        a.set_max_rate(t, 1.0);
        a
    }

    /// `CubicCalculator._calculate_zero_point`.
    fn zero_point(&self) -> f64 {
        (self.w_max * (1.0 - self.beta) / self.c).cbrt()
    }

    /// `TokenBucket._refill`.
    fn refill(&mut self, t: f64) {
        let fill = (t - self.last_refill) * self.fill_rate;
        self.capacity = self.max_capacity.min(self.capacity + fill);
        self.last_refill = t;
    }

    /// The `TokenBucket.max_rate` setter: refill at the old rate, then switch.
    fn set_max_rate(&mut self, t: f64, value: f64) {
        self.refill(t);
        self.fill_rate = value.max(self.min_rate);
        self.max_capacity = if value >= 1.0 { value } else { 1.0 };
        self.capacity = self.capacity.min(self.max_capacity);
    }

    /// `RateClocker.record`: the measured rate after counting one more response.
    fn clock(&mut self, t: f64) -> f64 {
        let bucket = (t * self.bucket_scale).floor() / self.bucket_scale;
        self.count += 1.0;
        if bucket > self.last_bucket {
            let current = self.count / (bucket - self.last_bucket);
            self.measured = current * self.smoothing + self.measured * (1.0 - self.smoothing);
            self.count = 0.0;
            self.last_bucket = bucket;
        }
        self.measured
    }

    /// `on_receiving_response`: any response, `throttled` when it was a throttling error.
    pub fn on_response(&mut self, now: Time, throttled: bool) {
        let t = secs(now);
        let measured = self.clock(t);
        let new_rate = if throttled {
            let rate = if self.enabled {
                measured.min(self.fill_rate)
            } else {
                measured
            };
            // `error_received`.
            self.w_max = rate;
            self.k = self.zero_point();
            self.last_fail = t;
            self.enabled = true;
            rate * self.beta
        } else {
            // `success_received`.
            self.c * (t - self.last_fail - self.k).powi(3) + self.w_max
        };
        self.set_max_rate(t, new_rate.min(2.0 * measured));
    }

    /// `on_sending_request`: off until the first throttle; then one token, or how long until
    /// one (`_sleep_amount`), rounded up to whole nanoseconds.
    pub fn acquire(&mut self, now: Time) -> Admit {
        if !self.enabled {
            return Admit::Go;
        }
        self.refill(secs(now));
        if self.capacity >= 1.0 {
            self.capacity -= 1.0;
            return Admit::Go;
        }
        let wait = (1.0 - self.capacity) / self.fill_rate;
        Admit::Wait(Duration(((wait * 1e9).ceil() as u64).max(1)))
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }
    /// The token bucket's fill rate (botocore's `max_rate`), tokens per second.
    pub fn fill_rate(&self) -> f64 {
        self.fill_rate
    }
    pub fn measured_rate(&self) -> f64 {
        self.measured
    }
    pub fn capacity(&self) -> f64 {
        self.capacity
    }
}

impl Limiter for AwsAdaptive {
    const KEYS: &'static [&'static str] = &[
        "cubic_c",
        "cubic_beta",
        "min_fill_rate",
        "rate_bucket",
        "smoothing",
    ];
    const CONCURRENCY: bool = false;

    fn new(c: &LimiterConfig, start: Time, _stream: Stream) -> Self {
        AwsAdaptive::new(c, start)
    }

    fn validate(c: &LimiterConfig) -> Result<(), Invalid> {
        let positive = |path: &str, v: f64, what: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(invalid(
                    path,
                    format!("must be a number > 0 ({what}), got {v}"),
                ))
            }
        };
        positive("limiter.cubic_c", c.cubic_c, "botocore uses 0.4")?;
        positive(
            "limiter.min_fill_rate",
            c.min_fill_rate,
            "botocore uses 0.5",
        )?;
        for (path, v, what) in [
            ("limiter.cubic_beta", c.cubic_beta, "botocore uses 0.7"),
            ("limiter.smoothing", c.smoothing(), "botocore uses 0.8"),
        ] {
            if !(v.is_finite() && v > 0.0 && v < 1.0) {
                return Err(invalid(
                    path,
                    format!("must be in (0, 1) ({what}), got {v}"),
                ));
            }
        }
        if c.rate_bucket.0 == 0 {
            return Err(invalid(
                "limiter.rate_bucket",
                "must be a positive duration (botocore uses 500ms)",
            ));
        }
        Ok(())
    }

    #[inline]
    fn acquire(&mut self, now: Time) -> Admit {
        AwsAdaptive::acquire(self, now)
    }

    /// botocore's throttling detector sees a 429; every response is clocked.
    #[inline]
    fn on_outcome(&mut self, now: Time, class: Class, _rtt: Duration) {
        self.on_response(now, class == Class::Throttled);
    }
}
