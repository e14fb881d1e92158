//! Client-side limiters: what a client does to its own sending rate, before any attempt goes out.
//!
//! - **AWS SDK adaptive retry mode** (`kind = "aws-adaptive"`; botocore `retries/adaptive.py`
//!   `ClientRateLimiter` and `RateClocker`, `retries/throttling.py` `CubicCalculator`,
//!   `retries/bucket.py` `TokenBucket`). Every response (any outcome) is clocked into a measured
//!   send rate: an EWMA (`_DEFAULT_SMOOTHING = 0.8`) of the responses counted per half-second
//!   bucket (`_TIME_BUCKET_RANGE = 0.5`). A throttling error sets CUBIC's `w_max` to the measured
//!   rate (or, once the limiter is on, the smaller of it and the bucket's rate), `k =
//!   (w_max (1 - beta) / C)^(1/3)` and the new rate to `w_max * beta` (`_SCALE_CONSTANT = 0.4`,
//!   `_BETA = 0.7`); any other response sets it to `C (t - last_fail - k)^3 + w_max`. The token
//!   bucket's fill rate becomes `min(new_rate, 2 * measured)` (`_MAX_RATE_ADJUST_SCALE = 2.0`),
//!   floored at `_MIN_RATE = 0.5` per second; its capacity is that rate (at least 1). The
//!   bucket only gates sends after the first throttling error (`_enabled`); from then on a send
//!   *waits* for a token (`TokenBucket.acquire(block=True)`), which in simulation delays the
//!   attempt by simulated time. The standard retry quota and backoff apply underneath, as in
//!   botocore (`retry.mode = "aws-adaptive"` sets both).
//!
//! - **Netflix concurrency-limits AIMD** (`kind = "aimd"`; Netflix/concurrency-limits
//!   `concurrency-limits-core/.../limit/AIMDLimit.java` at commit 784c960, with `SimpleLimiter`
//!   / `AbstractLimiter`): at most `limit` attempts in flight; one beyond it is rejected in the
//!   client (`SimpleLimiter.tryAcquire` returns empty). Each outcome is a sample: a drop (or an
//!   RTT above `timeout`) sets `limit = (int)(limit * backoffRatio)`; otherwise, when `inflight *
//!   2 >= limit`, `limit + 1`; then clamped to `[minLimit, maxLimit]`. Builder defaults:
//!   `initialLimit = 20`, `minLimit = 20`, `maxLimit = 200`, `backoffRatio = 0.9`, `timeout = 5 s`.
//!
//! - **Netflix concurrency-limits Gradient2** (`kind = "gradient2"`; `limit/Gradient2Limit.java`
//!   at commit 78a74b9, behind the same `SimpleLimiter`): the sample's RTT is the short RTT; the
//!   long RTT is an `ExpAvgMeasurement(longWindow = 600, warmup 10)` of them (the plain mean of
//!   the first 10, then an EWMA with factor `2 / (600 + 1)`), cut by 0.95 whenever it is more than
//!   twice the short RTT. Below half the limit in flight nothing changes; otherwise `gradient =
//!   clamp(rttTolerance * long / short, 0.5, 1)`, `new = limit * gradient + queueSize`, smoothed
//!   as `limit * (1 - smoothing) + new * smoothing` and clamped to `[minLimit, maxConcurrency]`.
//!   Drops are ignored (the Java never reads `didDrop`). Builder defaults: `initialLimit = 20`,
//!   `minLimit = 20`, `maxConcurrency = 200`, `smoothing = 0.2`, `queueSize = 4`,
//!   `rttTolerance = 1.5`.
//!
//! - **Netflix concurrency-limits Vegas** (`kind = "vegas"`; `limit/VegasLimit.java` at commit
//!   78a74b9): `rtt_noload` is the smallest RTT seen, re-probed (set to the current RTT) once
//!   `probeCount >= jitter * probeMultiplier * limit`, `jitter` uniform in [0.5, 1) drawn anew at
//!   each probe (the Java's `ThreadLocalRandom`; here the stream `(seed, limiter, Probe)`). Else
//!   `queue = ceil(limit * (1 - rtt_noload / rtt))`, and with `L = log10root(limit)` (`max(1,
//!   (int) log10)`, `Log10RootIntFunction`): a drop sets `limit - L`; below half the limit in
//!   flight nothing changes; `queue <= L` gives `limit + 6 L` (beta); `queue < 3 L` (alpha)
//!   `limit + L`; `queue > 6 L` `limit - L`; then clamped to `[1, maxConcurrency]` and smoothed
//!   (`smoothing = 1.0`: none). Builder defaults: `initialLimit = 20`, `maxConcurrency = 1000`,
//!   `probeMultiplier = 30`.
//!
//! The Java takes RTTs in nanoseconds, as here; an RTT of 0 counts as 1 ns (Vegas rejects a 0
//! and Gradient2 would divide by it).
//!
//! The limiter never reads a clock or draws: the caller passes `now`. Times are converted to
//! seconds as `f64`, the unit botocore computes in.

use super::{Class, Scope};
use crate::invalid::{Invalid, invalid};
use crate::rng::Stream;
use crate::time::{Duration, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimiterKind {
    /// No client-side limiter.
    None,
    /// botocore's adaptive retry mode: a CUBIC-controlled token bucket, on after the first
    /// throttle; a send waits for a token.
    AwsAdaptive,
    /// Netflix concurrency-limits' `AIMDLimit` behind a `SimpleLimiter`: attempts beyond the
    /// limit in flight are rejected in the client.
    Aimd,
    /// Netflix concurrency-limits' `Gradient2Limit`: the limit follows the ratio of a long-term
    /// RTT average to the latest RTT; beyond it, rejected.
    Gradient2,
    /// Netflix concurrency-limits' `VegasLimit`: the limit follows the queue estimated from the
    /// smallest RTT seen; beyond it, rejected.
    Vegas,
}

/// The `[limiter]` section: a client-side limit on the client's own sends.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimiterConfig {
    pub kind: LimiterKind,
    /// One limiter per client process (botocore: one per client object), or one for all.
    pub scope: Scope,
    /// aws-adaptive: CUBIC's scale constant `C` (botocore `_SCALE_CONSTANT`).
    pub cubic_c: f64,
    /// aws-adaptive: CUBIC's multiplicative decrease `beta` (botocore `_BETA`).
    pub cubic_beta: f64,
    /// aws-adaptive: the smallest fill rate, tokens per second (botocore `_MIN_RATE`).
    pub min_fill_rate: f64,
    /// aws-adaptive: the measured rate's EWMA weight of the newest bucket (`_DEFAULT_SMOOTHING`,
    /// 0.8); gradient2: the new limit's weight (0.2); vegas: the new limit's weight (1.0).
    pub smoothing: Option<f64>,
    /// aws-adaptive: the measured rate's bucket (`_TIME_BUCKET_RANGE`).
    pub rate_bucket: Duration,
    /// aimd, gradient2, vegas: the starting limit (`initialLimit`).
    pub initial_limit: u32,
    /// aimd, gradient2: the smallest limit (`minLimit`); vegas has none (1).
    pub min_limit: u32,
    /// aimd, gradient2, vegas: the largest limit (`maxLimit` / `maxConcurrency`: 200; vegas 1000).
    pub max_limit: Option<u32>,
    /// aimd: the multiplicative decrease on a drop (`backoffRatio`), in [0.5, 1).
    pub backoff_ratio: f64,
    /// aimd: an RTT above this counts as a drop (`timeout`).
    pub timeout: Duration,
    /// gradient2: added to the gradient's limit each update (`queueSize`).
    pub queue_size: u32,
    /// gradient2: the long RTT's window in samples (`longWindow`).
    pub long_window: u32,
    /// gradient2: how far the short RTT may exceed the long one before the limit falls
    /// (`rttTolerance`), >= 1.
    pub rtt_tolerance: f64,
    /// vegas: the no-load RTT is re-probed every `jitter * probe_multiplier * limit` samples.
    pub probe_multiplier: u32,
}

impl Default for LimiterConfig {
    fn default() -> Self {
        LimiterConfig {
            kind: LimiterKind::None,
            scope: Scope::Client,
            cubic_c: 0.4,
            cubic_beta: 0.7,
            min_fill_rate: 0.5,
            smoothing: None,
            rate_bucket: Duration::from_millis(500),
            // AIMDLimit.Builder.
            initial_limit: 20,
            min_limit: 20,
            max_limit: None,
            backoff_ratio: 0.9,
            timeout: Duration::from_secs(5),
            // Gradient2Limit.Builder.
            queue_size: 4,
            long_window: 600,
            rtt_tolerance: 1.5,
            // VegasLimit.Builder.
            probe_multiplier: 30,
        }
    }
}

impl LimiterConfig {
    pub fn enabled(&self) -> bool {
        self.kind != LimiterKind::None
    }

    /// `smoothing`, or the kind's default.
    pub fn smoothing(&self) -> f64 {
        self.smoothing.unwrap_or(match self.kind {
            LimiterKind::Gradient2 => 0.2,
            LimiterKind::Vegas => 1.0,
            _ => 0.8,
        })
    }

    /// `max_limit`, or the kind's default (`maxLimit` / `maxConcurrency`).
    pub fn max_limit(&self) -> u32 {
        self.max_limit.unwrap_or(match self.kind {
            LimiterKind::Vegas => 1000,
            _ => 200,
        })
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        match self.kind {
            LimiterKind::Aimd => return self.validate_aimd(),
            LimiterKind::Gradient2 => return self.validate_gradient2(),
            LimiterKind::Vegas => return self.validate_vegas(),
            _ => {}
        }
        if self.kind != LimiterKind::AwsAdaptive {
            return Ok(());
        }
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
        positive("limiter.cubic_c", self.cubic_c, "botocore uses 0.4")?;
        positive(
            "limiter.min_fill_rate",
            self.min_fill_rate,
            "botocore uses 0.5",
        )?;
        for (path, v, what) in [
            ("limiter.cubic_beta", self.cubic_beta, "botocore uses 0.7"),
            ("limiter.smoothing", self.smoothing(), "botocore uses 0.8"),
        ] {
            if !(v.is_finite() && v > 0.0 && v < 1.0) {
                return Err(invalid(
                    path,
                    format!("must be in (0, 1) ({what}), got {v}"),
                ));
            }
        }
        if self.rate_bucket.0 == 0 {
            return Err(invalid(
                "limiter.rate_bucket",
                "must be a positive duration (botocore uses 500ms)",
            ));
        }
        Ok(())
    }
}

impl LimiterConfig {
    fn validate_aimd(&self) -> Result<(), Invalid> {
        if !(self.backoff_ratio >= 0.5 && self.backoff_ratio < 1.0) {
            return Err(invalid(
                "limiter.backoff_ratio",
                format!(
                    "must be in [0.5, 1.0) (AIMDLimit's precondition; default 0.9), got {}",
                    self.backoff_ratio
                ),
            ));
        }
        self.validate_limits()?;
        if self.timeout.0 == 0 {
            return Err(invalid(
                "limiter.timeout",
                "must be a positive duration (AIMDLimit's default 5s)",
            ));
        }
        Ok(())
    }

    /// `min_limit` >= 1, `max_limit` >= `min_limit`.
    fn validate_limits(&self) -> Result<(), Invalid> {
        if self.min_limit == 0 {
            return Err(invalid("limiter.min_limit", "must be at least 1"));
        }
        if self.max_limit() < self.min_limit {
            return Err(invalid(
                "limiter.max_limit",
                format!(
                    "must be >= min_limit ({}), got {}",
                    self.min_limit,
                    self.max_limit()
                ),
            ));
        }
        Ok(())
    }

    fn validate_smoothing(&self, default: &str) -> Result<(), Invalid> {
        let s = self.smoothing();
        if !(s.is_finite() && s > 0.0 && s <= 1.0) {
            return Err(invalid(
                "limiter.smoothing",
                format!("must be in (0, 1] (default {default}), got {s}"),
            ));
        }
        Ok(())
    }

    fn validate_gradient2(&self) -> Result<(), Invalid> {
        self.validate_limits()?;
        self.validate_smoothing("0.2")?;
        if !(self.rtt_tolerance.is_finite() && self.rtt_tolerance >= 1.0) {
            return Err(invalid(
                "limiter.rtt_tolerance",
                format!(
                    "must be >= 1.0 (Gradient2Limit's precondition; default 1.5), got {}",
                    self.rtt_tolerance
                ),
            ));
        }
        if self.long_window == 0 {
            return Err(invalid(
                "limiter.long_window",
                "must be at least 1 sample (default 600)",
            ));
        }
        Ok(())
    }

    fn validate_vegas(&self) -> Result<(), Invalid> {
        if self.max_limit() == 0 {
            return Err(invalid("limiter.max_limit", "must be at least 1"));
        }
        self.validate_smoothing("1.0")?;
        if self.probe_multiplier == 0 {
            return Err(invalid(
                "limiter.probe_multiplier",
                "must be at least 1 (default 30)",
            ));
        }
        Ok(())
    }
}

fn secs(t: Time) -> f64 {
    t.0 as f64 / 1e9
}

/// What a limiter says about a send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Send now.
    Go,
    /// No token yet: ask again after this long.
    Wait(Duration),
    /// Refused: the call fails in the client.
    Reject,
}

/// Netflix's `AIMDLimit` behind a `SimpleLimiter`.
#[derive(Clone, Debug)]
pub struct Aimd {
    limit: u32,
    min: u32,
    max: u32,
    backoff: f64,
    timeout: Duration,
    inflight: u32,
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

/// An RTT in nanoseconds as the Java sees it, at least 1.
fn rtt_ns(rtt: Duration) -> u64 {
    rtt.0.max(1)
}

/// `ExpAvgMeasurement`: the mean of the first `warmup` samples, then an EWMA with factor
/// `2 / (window + 1)`.
#[derive(Clone, Debug)]
struct ExpAvg {
    value: f64,
    sum: f64,
    count: u32,
    warmup: u32,
    factor: f64,
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
    estimated: f64,
    min: f64,
    max: f64,
    smoothing: f64,
    tolerance: f64,
    queue_size: f64,
    long_rtt: ExpAvg,
    inflight: u32,
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
            inflight: 0,
        }
    }
    /// `Gradient2Limit._update(startTime, rtt, inflight, didDrop)`; `didDrop` is not read.
    pub fn sample(&mut self, rtt: Duration, inflight: u32) {
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
    /// `getLimit()`: the estimate truncated, as `(int) newLimit`.
    pub fn limit(&self) -> u32 {
        self.estimated as u32
    }
    /// The long RTT (`getRttNoLoad`), nanoseconds.
    pub fn long_rtt(&self) -> f64 {
        self.long_rtt.value
    }
}

/// `Log10RootIntFunction.create(0)`: `max(1, (int) log10(t))` below 1000, `(int) log10(t)` above.
fn log10_root(t: i64) -> i64 {
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
    estimated: f64,
    max: f64,
    smoothing: f64,
    probe_multiplier: f64,
    probe_count: u64,
    probe_jitter: f64,
    rtt_noload: u64,
    /// `ThreadLocalRandom` for the probe jitter.
    stream: Stream,
    inflight: u32,
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
            inflight: 0,
        };
        v.reset_probe_jitter();
        v
    }
    /// `ThreadLocalRandom.nextDouble(0.5, 1)`.
    fn reset_probe_jitter(&mut self) {
        self.probe_jitter = 0.5 + 0.5 * self.stream.uniform();
    }
    /// `VegasLimit._update(startTime, rtt, inflight, didDrop)`.
    pub fn sample(&mut self, rtt: Duration, inflight: u32, dropped: bool) {
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
    /// `getLimit()`: the estimate truncated.
    pub fn limit(&self) -> u32 {
        self.estimated as u32
    }
    /// The no-load RTT, nanoseconds (0 before the first sample).
    pub fn rtt_noload(&self) -> u64 {
        self.rtt_noload
    }
}

/// `SimpleLimiter.tryAcquire`: refused when `inflight >= limit`.
fn try_acquire(inflight: &mut u32, limit: u32) -> Admit {
    if *inflight >= limit {
        return Admit::Reject;
    }
    *inflight += 1;
    Admit::Go
}

/// botocore's `ClientRateLimiter` with its `CubicCalculator`, `TokenBucket` and `RateClocker`.
#[derive(Clone, Debug)]
pub struct AwsAdaptive {
    c: f64,
    beta: f64,
    min_rate: f64,
    smoothing: f64,
    /// `1 / _TIME_BUCKET_RANGE`.
    bucket_scale: f64,
    // CubicCalculator.
    w_max: f64,
    k: f64,
    last_fail: f64,
    // TokenBucket.
    fill_rate: f64,
    max_capacity: f64,
    capacity: f64,
    last_refill: f64,
    // RateClocker.
    measured: f64,
    last_bucket: f64,
    count: f64,
    enabled: bool,
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

/// One limiter instance, of the configured kind.
#[derive(Clone, Debug)]
pub enum Limiter {
    AwsAdaptive(AwsAdaptive),
    Aimd(Aimd),
    Gradient2(Gradient2),
    Vegas(Vegas),
}

impl Limiter {
    /// `None` when the kind is `none`. `stream` is this instance's own random stream (only
    /// Vegas draws, for its probe jitter).
    pub fn new(c: &LimiterConfig, start: Time, stream: Stream) -> Option<Self> {
        match c.kind {
            LimiterKind::None => None,
            LimiterKind::AwsAdaptive => Some(Limiter::AwsAdaptive(AwsAdaptive::new(c, start))),
            LimiterKind::Aimd => Some(Limiter::Aimd(Aimd::new(c))),
            LimiterKind::Gradient2 => Some(Limiter::Gradient2(Gradient2::new(c))),
            LimiterKind::Vegas => Some(Limiter::Vegas(Vegas::new(c, stream))),
        }
    }
    /// Whether the limiter counts attempts in flight and needs their RTTs (the Netflix ones).
    pub fn is_concurrency(kind: LimiterKind) -> bool {
        matches!(
            kind,
            LimiterKind::Aimd | LimiterKind::Gradient2 | LimiterKind::Vegas
        )
    }
    /// Before an attempt goes out.
    #[inline]
    pub fn acquire(&mut self, now: Time) -> Admit {
        match self {
            Limiter::AwsAdaptive(a) => a.acquire(now),
            Limiter::Aimd(a) => a.acquire(),
            Limiter::Gradient2(g) => {
                let limit = g.limit();
                try_acquire(&mut g.inflight, limit)
            }
            Limiter::Vegas(v) => {
                let limit = v.limit();
                try_acquire(&mut v.inflight, limit)
            }
        }
    }
    /// The client learnt how an attempt that took `rtt` ended in `class`: botocore's throttling
    /// detector sees a 429; Netflix's limiter a drop for an answer the backend did not accept
    /// (503, 429, overloaded, timeout, connection: `onDropped`), a sample otherwise
    /// (`onSuccess`). The in-flight count of the sample is the one when the outcome arrives.
    #[inline]
    pub fn on_outcome(&mut self, now: Time, class: Class, rtt: Duration) {
        match self {
            Limiter::AwsAdaptive(a) => a.on_response(now, class == Class::Throttled),
            Limiter::Aimd(a) => {
                a.sample(rtt, a.inflight, !class.is_accepted());
                a.inflight = a.inflight.saturating_sub(1);
            }
            Limiter::Gradient2(g) => {
                g.sample(rtt, g.inflight);
                g.inflight = g.inflight.saturating_sub(1);
            }
            Limiter::Vegas(v) => {
                v.sample(rtt, v.inflight, !class.is_accepted());
                v.inflight = v.inflight.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

    fn at(s: f64) -> Time {
        Time((s * 1e9).round() as u64)
    }

    /// botocore's arithmetic written out independently of the struct above, step by step, from
    /// `adaptive.py` (`on_receiving_response`, `RateClocker.record`), `throttling.py`
    /// (`CubicCalculator`) and `bucket.py` (the `max_rate` setter).
    struct Reference {
        w_max: f64,
        k: f64,
        last_fail: f64,
        measured: f64,
        last_bucket: f64,
        count: f64,
        enabled: bool,
        max_rate: f64,
    }

    impl Reference {
        fn response(&mut self, t: f64, throttled: bool) -> f64 {
            let (c, beta) = (0.4_f64, 0.7_f64);
            let bucket = (t * 2.0).floor() / 2.0;
            self.count += 1.0;
            if bucket > self.last_bucket {
                let current = self.count / (bucket - self.last_bucket);
                self.measured = current * 0.8 + self.measured * 0.2;
                self.count = 0.0;
                self.last_bucket = bucket;
            }
            let new_rate = if throttled {
                let r = if self.enabled {
                    self.measured.min(self.max_rate)
                } else {
                    self.measured
                };
                self.w_max = r;
                self.k = (r * (1.0 - beta) / c).powf(1.0 / 3.0);
                self.last_fail = t;
                self.enabled = true;
                r * beta
            } else {
                c * (t - self.last_fail - self.k).powi(3) + self.w_max
            };
            let v = new_rate.min(2.0 * self.measured);
            self.max_rate = v.max(0.5);
            self.max_rate
        }
    }

    #[test]
    fn fill_rates_follow_botocores_arithmetic() {
        let cfg = LimiterConfig {
            kind: LimiterKind::AwsAdaptive,
            ..Default::default()
        };
        let mut a = AwsAdaptive::new(&cfg, Time::ZERO);
        let mut r = Reference {
            w_max: 0.0,
            k: 0.0,
            last_fail: 0.0,
            measured: 0.0,
            last_bucket: 0.0,
            count: 0.0,
            enabled: false,
            max_rate: 1.0,
        };
        // A client sending 20 a second: successes, then throttles from 2 s to 3 s, then
        // successes again until 8 s.
        let mut script = Vec::new();
        for i in 0..160 {
            let t = 0.05 * f64::from(i) + 0.01;
            script.push((t, (2.0..3.0).contains(&t) && i % 2 == 0));
        }
        let mut first_throttle = None;
        for (t, throttled) in script {
            assert!(a.acquire(at(t)) == Admit::Go || a.enabled());
            a.on_response(at(t), throttled);
            let want = r.response(secs(at(t)), throttled);
            assert!(
                (a.fill_rate() - want).abs() <= 1e-9 * want.max(1.0),
                "t = {t}: {} != {want}",
                a.fill_rate()
            );
            if throttled && first_throttle.is_none() {
                first_throttle = Some((t, a.measured_rate(), a.fill_rate()));
            }
        }
        // At the first throttle (2.01 s) the measured rate is the EWMA of the buckets so far,
        // and the new rate is 0.7 times it.
        let (t, m, f) = first_throttle.unwrap();
        assert!((t - 2.01).abs() < 1e-9);
        assert!((f - 0.7 * m).abs() < 1e-9, "{f} vs 0.7 * {m}");
        // Before the throttle the bucket was off: every send went out.
        let mut b = AwsAdaptive::new(&cfg, Time::ZERO);
        for i in 0..100 {
            assert_eq!(b.acquire(at(f64::from(i) * 0.001)), Admit::Go);
        }
    }

    #[test]
    fn cubic_recovers_to_w_max_after_k_seconds() {
        // throttling.py: after an error at rate r, the rate is 0.7 r and returns to r at
        // t = k = (r * 0.3 / 0.4)^(1/3) seconds later.
        let cfg = LimiterConfig {
            kind: LimiterKind::AwsAdaptive,
            ..Default::default()
        };
        let mut a = AwsAdaptive::new(&cfg, Time::ZERO);
        a.enabled = true;
        // Keep the rate clock inside one bucket, so the measured rate stays 10.
        a.last_bucket = 1000.0;
        let t0 = Time(100_000_000_000);
        a.measured = 10.0;
        a.fill_rate = 100.0;
        a.on_response(t0, true);
        assert!((a.fill_rate() - 7.0).abs() < 1e-12);
        // botocore `tests/unit/retries/test_throttling.py`, `test_starting_params`: w_max = 10
        // gives k = 1.9574338205844317.
        let k = 1.957_433_820_584_431_7;
        assert!((a.k - k).abs() < 1e-12, "{}", a.k);
        a.on_response(t0 + Duration::from_nanos((k * 1e9) as u64), false);
        assert!((a.fill_rate() - 10.0).abs() < 1e-6, "{}", a.fill_rate());
        // `test_error_response_decreases_rate_by_beta`: throttled at 8 TPS, the rate is
        // 8 * 0.7 and k = 1.8171205928321397.
        a.measured = 8.0;
        a.on_response(t0 + Duration::from_secs(10), true);
        assert!((a.fill_rate() - 5.6).abs() < 1e-12, "{}", a.fill_rate());
        assert!((a.k - 1.817_120_592_832_139_7).abs() < 1e-12, "{}", a.k);
    }

    #[test]
    fn a_send_waits_for_a_token_once_throttled() {
        let cfg = LimiterConfig {
            kind: LimiterKind::AwsAdaptive,
            ..Default::default()
        };
        let mut a = AwsAdaptive::new(&cfg, Time::ZERO);
        // The first response, a throttle at 0.2 s: the measured rate is still 0 (no bucket
        // has closed), so the rate is min(0, 2 * 0) floored at 0.5/s with capacity 1.
        a.on_response(at(0.2), true);
        assert!(a.enabled());
        assert_eq!(a.fill_rate(), 0.5);
        // The bucket filled at 1/s from 0 s to 0.2 s (its first rate): 0.2 tokens.
        assert!((a.capacity() - 0.2).abs() < 1e-12);
        // One token needs 0.8 more at 0.5/s: 1.6 s.
        assert_eq!(a.acquire(at(0.2)), Admit::Wait(Duration::from_millis(1600)));
        assert_eq!(a.acquire(at(1.8)), Admit::Go);
        assert_eq!(a.acquire(at(1.8)), Admit::Wait(Duration::from_secs(2)));
    }

    /// AIMDLimit._update on a scripted sequence, at the Builder's defaults (20, 20, 200, 0.9, 5 s).
    #[test]
    fn aimd_follows_aimdlimit() {
        let cfg = LimiterConfig {
            kind: LimiterKind::Aimd,
            ..Default::default()
        };
        let mut a = Aimd::new(&cfg);
        let ms = Duration::from_millis;
        // 20 in flight: the 21st is rejected.
        for _ in 0..20 {
            assert_eq!(a.acquire(), Admit::Go);
        }
        assert_eq!(a.acquire(), Admit::Reject);
        // A success with inflight 20: 20 * 2 >= 20, so 21.
        a.sample(ms(10), 20, false);
        assert_eq!(a.limit(), 21);
        // With inflight 10: 10 * 2 < 21, unchanged.
        a.sample(ms(10), 10, false);
        assert_eq!(a.limit(), 21);
        // Grow to 40, then a drop: (int)(40 * 0.9) = 36; an RTT of 6 s (> 5 s) too: 32.
        for _ in 0..19 {
            a.sample(ms(10), 40, false);
        }
        assert_eq!(a.limit(), 40);
        a.sample(ms(10), 40, true);
        assert_eq!(a.limit(), 36);
        a.sample(Duration::from_secs(6), 1, false);
        assert_eq!(a.limit(), 32);
        // Exactly 5 s is not above the timeout.
        a.sample(Duration::from_secs(5), 16, false);
        assert_eq!(a.limit(), 33);
        // Drops never go below minLimit 20, growth never above maxLimit 200.
        for _ in 0..100 {
            a.sample(ms(1), 1, true);
        }
        assert_eq!(a.limit(), 20);
        for _ in 0..1000 {
            a.sample(ms(1), 1000, false);
        }
        assert_eq!(a.limit(), 200);
    }

    /// Gradient2Limit._update on a scripted RTT sequence at the Builder's defaults (20, 20, 200,
    /// smoothing 0.2, queueSize 4, rttTolerance 1.5, longWindow 600 with a warm-up of 10).
    #[test]
    fn gradient2_follows_gradient2limit() {
        let cfg = LimiterConfig {
            kind: LimiterKind::Gradient2,
            ..Default::default()
        };
        let mut g = Gradient2::new(&cfg);
        let ms = Duration::from_millis;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
        // A steady 10 ms: the long RTT is the short one, gradient = min(1, 1.5) = 1, so each
        // sample moves the limit to 0.8 * L + 0.2 * (L + 4) = L + 0.8.
        let mut want = 20.0;
        for _ in 0..10 {
            g.sample(ms(10), 20);
            want = want * 0.8 + (want + 4.0) * 0.2;
            assert!(close(g.estimated, want), "{} != {want}", g.estimated);
        }
        assert!(close(g.estimated, 28.0));
        assert_eq!(g.limit(), 28);
        // The 11th sample is past the warm-up: an EWMA with factor 2 / 601. At 40 ms the
        // gradient 1.5 * long / 40 ms is 0.38, floored at 0.5: 28 * 0.5 + 4 = 18, smoothed
        // 0.8 * 28 + 0.2 * 18 = 26.
        g.sample(ms(40), 28);
        let f = 2.0 / 601.0;
        let long = 10e6 * (1.0 - f) + 40e6 * f;
        assert!(close(g.long_rtt(), long));
        assert!(close(g.estimated, 26.0), "{}", g.estimated);
        // 20 ms: gradient 1.5 * long / 20 ms = 0.757..., no floor.
        g.sample(ms(20), 14);
        let long = long * (1.0 - f) + 20e6 * f;
        let gradient = 1.5 * long / 20e6;
        let want = 26.0 * 0.8 + (26.0 * gradient + 4.0) * 0.2;
        assert!(close(g.estimated, want), "{} != {want}", g.estimated);
        // Below half the limit in flight (12 < 25.x / 2): the long RTT moves, the limit not.
        let before = g.estimated;
        g.sample(ms(40), 12);
        let long = long * (1.0 - f) + 40e6 * f;
        assert_eq!(g.estimated, before);
        assert!(close(g.long_rtt(), long));
        // A short RTT under half the long one: the long RTT is cut by 0.95 after the add.
        g.sample(ms(1), 0);
        let long = (long * (1.0 - f) + 1e6 * f) * 0.95;
        assert!(close(g.long_rtt(), long), "{} != {long}", g.long_rtt());
        // Long spikes pull the limit down to minLimit 20, never below; drops are not read.
        for _ in 0..50 {
            g.sample(Duration::from_secs(1), 100);
        }
        assert_eq!(g.estimated, 20.0);
        // Fast answers grow it by 0.8 a sample up to maxConcurrency 200, never above.
        for _ in 0..1000 {
            g.sample(Duration::from_micros(1), 1000);
        }
        assert_eq!(g.limit(), 200);
    }

    /// `SimpleLimiter.tryAcquire` against Gradient2's truncated limit; a sample frees a slot.
    #[test]
    fn gradient2_rejects_beyond_its_limit() {
        let cfg = LimiterConfig {
            kind: LimiterKind::Gradient2,
            initial_limit: 3,
            min_limit: 1,
            ..Default::default()
        };
        let mut l = Limiter::new(
            &cfg,
            Time::ZERO,
            Stream::new(1, 0, Purpose::LimiterProbe, 0),
        )
        .unwrap();
        for _ in 0..3 {
            assert_eq!(l.acquire(Time::ZERO), Admit::Go);
        }
        assert_eq!(l.acquire(Time::ZERO), Admit::Reject);
        // With 3 in flight: 3 * 0.8 + (3 + 4) * 0.2 = 3.8, still 3; one slot is free again.
        l.on_outcome(Time::ZERO, Class::Success, Duration::from_millis(5));
        assert_eq!(l.acquire(Time::ZERO), Admit::Go);
        assert_eq!(l.acquire(Time::ZERO), Admit::Reject);
    }

    /// `Log10RootIntFunction.create(0)`: `max(1, (int) log10 t)` from its table below 1000.
    #[test]
    fn log10_root_matches_the_lookup_table() {
        for (t, want) in [(0, 1), (1, 1), (9, 1), (10, 1), (99, 1), (100, 2), (999, 2)] {
            assert_eq!(log10_root(t), want, "{t}");
        }
        assert_eq!(log10_root(1000), 3);
        assert_eq!(log10_root(12_345), 4);
    }

    fn vegas(cfg: &LimiterConfig) -> Vegas {
        Vegas::new(cfg, Stream::new(7, 0, Purpose::LimiterProbe, 0))
    }

    /// VegasLimit._update / updateEstimatedLimit on a scripted RTT sequence at the Builder's
    /// defaults (initialLimit 20, maxConcurrency 1000, smoothing 1.0, alpha 3 L, beta 6 L,
    /// threshold L, increase L, decrease L, L = log10root(limit)).
    #[test]
    fn vegas_follows_vegaslimit() {
        let cfg = LimiterConfig {
            kind: LimiterKind::Vegas,
            ..Default::default()
        };
        let mut v = vegas(&cfg);
        let ms = Duration::from_millis;
        let us = Duration::from_micros;
        // The first sample only sets rtt_noload.
        v.sample(ms(10), 20, false);
        assert_eq!((v.rtt_noload(), v.estimated), (10_000_000, 20.0));
        // No queue: queue = ceil(20 * (1 - 10/10)) = 0 <= threshold 1, so + beta 6.
        v.sample(ms(10), 20, false);
        assert_eq!(v.estimated, 26.0);
        v.sample(ms(10), 13, false);
        assert_eq!(v.estimated, 32.0);
        // Under half the limit in flight (15 * 2 < 32): unchanged.
        v.sample(ms(10), 15, false);
        assert_eq!(v.estimated, 32.0);
        // 20 ms: queue = ceil(32 * 0.5) = 16 > beta 6, so - 1.
        v.sample(ms(20), 32, false);
        assert_eq!(v.estimated, 31.0);
        // 11 ms: queue = ceil(31 * (1 - 10/11)) = 3, in [alpha 3, beta 6]: unchanged.
        v.sample(ms(11), 31, false);
        assert_eq!(v.estimated, 31.0);
        // 10.5 ms: queue = ceil(31 * (1 - 10/10.5)) = 2 < alpha 3: + 1.
        v.sample(us(10_500), 31, false);
        assert_eq!(v.estimated, 32.0);
        // A drop decreases whatever is in flight.
        v.sample(ms(10), 0, true);
        assert_eq!(v.estimated, 31.0);
        // A smaller RTT is the new rtt_noload and changes nothing else.
        v.sample(ms(5), 31, false);
        assert_eq!((v.rtt_noload(), v.estimated), (5_000_000, 31.0));
        // Growing without a queue: + 6 up to 103 (L = 1 below 100), then + 12 (L = 2),
        // clamped at maxConcurrency 1000.
        let mut want = 31.0;
        for _ in 0..100 {
            v.sample(ms(5), 1000, false);
            want = (want + 6.0 * log10_root(want as i64) as f64).min(1000.0);
            assert_eq!(v.estimated, want);
        }
        assert_eq!(v.limit(), 1000);
        // Drops walk down by L and stop at 1.
        for _ in 0..2000 {
            v.sample(ms(5), 0, true);
        }
        assert_eq!(v.limit(), 1);
    }

    #[test]
    fn vegas_smoothing_weights_the_new_limit() {
        let cfg = LimiterConfig {
            kind: LimiterKind::Vegas,
            smoothing: Some(0.5),
            ..Default::default()
        };
        let mut v = vegas(&cfg);
        v.sample(Duration::from_millis(10), 20, false);
        v.sample(Duration::from_millis(10), 20, false);
        // (1 - 0.5) * 20 + 0.5 * 26.
        assert_eq!(v.estimated, 23.0);
    }

    /// `shouldProbe`: once `probeCount >= jitter * probeMultiplier * limit` the sample's RTT
    /// becomes rtt_noload even when larger; the jitter is `nextDouble(0.5, 1)` from the stream.
    #[test]
    fn vegas_probes_the_no_load_rtt() {
        let cfg = LimiterConfig {
            kind: LimiterKind::Vegas,
            initial_limit: 2,
            probe_multiplier: 1,
            ..Default::default()
        };
        let mut v = vegas(&cfg);
        let first = 0.5 + 0.5 * Stream::new(7, 0, Purpose::LimiterProbe, 0).uniform();
        assert_eq!(v.probe_jitter, first);
        assert!((0.5..1.0).contains(&v.probe_jitter));
        // The threshold is jitter * 2 in (1, 2): the first sample sets rtt_noload, the second
        // probes.
        v.sample(Duration::from_millis(10), 2, false);
        assert_eq!(v.rtt_noload(), 10_000_000);
        v.sample(Duration::from_millis(50), 2, false);
        assert_eq!(
            (v.rtt_noload(), v.probe_count, v.estimated),
            (50_000_000, 0, 2.0)
        );
        assert_ne!(v.probe_jitter, first);
        // Another instance's stream gives other probes.
        let other = Vegas::new(&cfg, Stream::new(7, 1, Purpose::LimiterProbe, 0));
        assert_ne!(other.probe_jitter, first);
    }

    #[test]
    fn validation_names_the_field() {
        let c = LimiterConfig {
            kind: LimiterKind::Vegas,
            probe_multiplier: 0,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "limiter.probe_multiplier");
        let c = LimiterConfig {
            kind: LimiterKind::Vegas,
            smoothing: Some(0.0),
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "limiter.smoothing");
        let c = LimiterConfig {
            kind: LimiterKind::Gradient2,
            rtt_tolerance: 0.9,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "limiter.rtt_tolerance");
        let c = LimiterConfig {
            kind: LimiterKind::Gradient2,
            max_limit: Some(10),
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "limiter.max_limit");
        let c = LimiterConfig {
            kind: LimiterKind::Aimd,
            backoff_ratio: 0.4,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "limiter.backoff_ratio");
        let c = LimiterConfig {
            kind: LimiterKind::AwsAdaptive,
            cubic_beta: 1.0,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "limiter.cubic_beta");
        let c = LimiterConfig {
            kind: LimiterKind::AwsAdaptive,
            rate_bucket: Duration::ZERO,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "limiter.rate_bucket");
    }
}
