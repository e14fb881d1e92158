//! Netflix concurrency-limits `Gradient2Limit`.

use super::*;
use crate::base::invalid::invalid;
use crate::base::time::Duration;

/// `ExpAvgMeasurement`: the mean of the first `warmup` samples, then an EWMA with factor
/// `2 / (window + 1)`.
#[derive(Clone, Debug)]
pub(super) struct ExpAvg {
    pub(super) value: f64,
    pub(super) sum: f64,
    pub(super) count: u32,
    pub(super) warmup: u32,
    pub(super) factor: f64,
}

impl ExpAvg {
    fn new(window: u32, warmup: u32) -> Self {
        ExpAvg {
            value: 0.0,
            sum: 0.0,
            count: 0,
            warmup,
            factor: 2.0 / (f64::from(window) + 1.0),
        }
    }
    fn add(&mut self, sample: f64) -> f64 {
        if self.count < self.warmup {
            self.count += 1;
            self.sum += sample;
            self.value = self.sum / f64::from(self.count);
        } else {
            self.value = self.value * (1.0 - self.factor) + sample * self.factor;
        }
        self.value
    }
}

/// Netflix's `Gradient2Limit` behind a `SimpleLimiter`.
#[derive(Clone, Debug)]
pub struct Gradient2 {
    pub(super) estimated: f64,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) smoothing: f64,
    pub(super) tolerance: f64,
    pub(super) queue_size: f64,
    pub(super) long_rtt: ExpAvg,
}

impl Gradient2 {
    pub fn new(c: &LimiterConfig) -> Self {
        Gradient2 {
            estimated: f64::from(c.initial_limit),
            min: f64::from(c.min_limit),
            max: f64::from(c.max_limit()),
            smoothing: c.smoothing(),
            tolerance: c.rtt_tolerance,
            queue_size: f64::from(c.queue_size),
            long_rtt: ExpAvg::new(c.long_window, 10),
        }
    }
    /// The long RTT (`getRttNoLoad`), nanoseconds.
    pub fn long_rtt(&self) -> f64 {
        self.long_rtt.value
    }
}

impl Algorithm for Gradient2 {
    const KEYS: &'static [&'static str] = &[
        "smoothing",
        "initial_limit",
        "min_limit",
        "max_limit",
        "queue_size",
        "long_window",
        "rtt_tolerance",
    ];
    const DEFAULT_SMOOTHING: f64 = 0.2;

    fn new(c: &LimiterConfig, _stream: Stream) -> Self {
        Gradient2::new(c)
    }

    fn validate(c: &LimiterConfig) -> Result<(), Invalid> {
        c.validate_limits()?;
        c.validate_smoothing()?;
        if !(c.rtt_tolerance.is_finite() && c.rtt_tolerance >= 1.0) {
            return Err(invalid(
                "limiter.rtt_tolerance",
                format!(
                    "must be >= 1.0 (Gradient2Limit's precondition; default 1.5), got {}",
                    c.rtt_tolerance
                ),
            ));
        }
        if c.long_window == 0 {
            return Err(invalid(
                "limiter.long_window",
                "must be at least 1 sample (default 600)",
            ));
        }
        Ok(())
    }

    /// `getLimit()`: the estimate truncated, as `(int) newLimit`.
    fn limit(&self) -> u32 {
        self.estimated as u32
    }

    /// `Gradient2Limit._update`: every outcome is a sample (the Java never reads `didDrop`).
    fn sample(&mut self, rtt: Duration, inflight: u32, _dropped: bool) {
        let short = rtt_ns(rtt) as f64;
        let long = self.long_rtt.add(short);
        if long / short > 2.0 {
            self.long_rtt.value *= 0.95;
        }
        if f64::from(inflight) < self.estimated / 2.0 {
            return;
        }
        let gradient = (self.tolerance * long / short).clamp(0.5, 1.0);
        let new = self.estimated * gradient + self.queue_size;
        let new = self.estimated * (1.0 - self.smoothing) + new * self.smoothing;
        self.estimated = new.min(self.max).max(self.min);
    }
}
