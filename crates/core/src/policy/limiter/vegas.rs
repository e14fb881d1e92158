//! Netflix concurrency-limits `VegasLimit`.

use super::*;
use crate::base::invalid::invalid;
use crate::base::rng::Stream;
use crate::base::time::Duration;

/// `Log10RootIntFunction.create(0)`: `max(1, (int) log10(t))` below 1000, `(int) log10(t)` above.
pub(super) fn log10_root(t: i64) -> i64 {
    let l = if t <= 0 {
        i64::MIN
    } else {
        (t as f64).log10() as i64
    };
    if t < 1000 { l.max(1) } else { l }
}

/// Netflix's `VegasLimit` behind a `SimpleLimiter`.
#[derive(Clone, Debug)]
pub struct Vegas {
    pub(super) estimated: f64,
    pub(super) max: f64,
    pub(super) smoothing: f64,
    pub(super) probe_multiplier: f64,
    pub(super) probe_count: u64,
    pub(super) probe_jitter: f64,
    pub(super) rtt_noload: u64,
    /// `ThreadLocalRandom` for the probe jitter.
    pub(super) stream: Stream,
}

impl Vegas {
    pub fn new(c: &LimiterConfig, stream: Stream) -> Self {
        let mut v = Vegas {
            estimated: f64::from(c.initial_limit),
            max: f64::from(c.max_limit()),
            smoothing: c.smoothing(),
            probe_multiplier: f64::from(c.probe_multiplier),
            probe_count: 0,
            probe_jitter: 0.0,
            rtt_noload: 0,
            stream,
        };
        v.reset_probe_jitter();
        v
    }
    /// `ThreadLocalRandom.nextDouble(0.5, 1)`.
    fn reset_probe_jitter(&mut self) {
        self.probe_jitter = 0.5 + 0.5 * self.stream.uniform();
    }
    /// `updateEstimatedLimit`, with the Builder's default functions.
    fn update(&mut self, rtt: u64, inflight: u32, dropped: bool) {
        let est = self.estimated;
        let queue = (est * (1.0 - self.rtt_noload as f64 / rtt as f64)).ceil() as i64;
        let l = log10_root(est as i64) as f64;
        let new = if dropped {
            est - l
        } else if f64::from(inflight) * 2.0 < est {
            return;
        } else {
            let (alpha, beta, threshold) = (3 * l as i64, 6 * l as i64, l as i64);
            if queue <= threshold {
                est + beta as f64
            } else if queue < alpha {
                est + l
            } else if queue > beta {
                est - l
            } else {
                return;
            }
        };
        let new = new.min(self.max).max(1.0);
        self.estimated = (1.0 - self.smoothing) * est + self.smoothing * new;
    }
    /// The no-load RTT, nanoseconds (0 before the first sample).
    pub fn rtt_noload(&self) -> u64 {
        self.rtt_noload
    }
}

impl Algorithm for Vegas {
    const KEYS: &'static [&'static str] = &[
        "smoothing",
        "initial_limit",
        "max_limit",
        "probe_multiplier",
    ];
    const DEFAULT_SMOOTHING: f64 = 1.0;
    const DEFAULT_MAX_LIMIT: u32 = 1000;

    /// `stream` draws the probe jitter.
    fn new(c: &LimiterConfig, stream: Stream) -> Self {
        Vegas::new(c, stream)
    }

    /// The probe jitter draws from the branch's stream; the jitter already drawn stays.
    fn rekey(&mut self, stream: Stream) {
        self.stream = stream;
    }

    fn validate(c: &LimiterConfig) -> Result<(), Invalid> {
        if c.max_limit() == 0 {
            return Err(invalid("limiter.max_limit", "must be at least 1"));
        }
        c.validate_smoothing()?;
        if c.probe_multiplier == 0 {
            return Err(invalid(
                "limiter.probe_multiplier",
                "must be at least 1 (default 30)",
            ));
        }
        Ok(())
    }

    /// `getLimit()`: the estimate truncated.
    fn limit(&self) -> u32 {
        self.estimated as u32
    }

    /// `VegasLimit._update`: a probe, a smaller no-load RTT, or an update of the estimate.
    fn sample(&mut self, rtt: Duration, inflight: u32, dropped: bool) {
        let rtt = rtt_ns(rtt);
        self.probe_count += 1;
        if self.probe_jitter * self.probe_multiplier * self.estimated <= self.probe_count as f64 {
            self.reset_probe_jitter();
            self.probe_count = 0;
            self.rtt_noload = rtt;
            return;
        }
        if self.rtt_noload == 0 || rtt < self.rtt_noload {
            self.rtt_noload = rtt;
            return;
        }
        self.update(rtt, inflight, dropped);
    }
}
