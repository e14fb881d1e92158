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
//! The limiter never reads a clock or draws: the caller passes `now`. Times are converted to
//! seconds as `f64`, the unit botocore computes in.

use super::{Class, Scope};
use crate::invalid::{Invalid, invalid};
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
    /// aws-adaptive: the measured rate's EWMA weight of the newest bucket (`_DEFAULT_SMOOTHING`).
    pub smoothing: f64,
    /// aws-adaptive: the measured rate's bucket (`_TIME_BUCKET_RANGE`).
    pub rate_bucket: Duration,
    /// aimd: the starting limit (`initialLimit`).
    pub initial_limit: u32,
    /// aimd: the smallest limit (`minLimit`).
    pub min_limit: u32,
    /// aimd: the largest limit (`maxLimit`).
    pub max_limit: u32,
    /// aimd: the multiplicative decrease on a drop (`backoffRatio`), in [0.5, 1).
    pub backoff_ratio: f64,
    /// aimd: an RTT above this counts as a drop (`timeout`).
    pub timeout: Duration,
}

impl Default for LimiterConfig {
    fn default() -> Self {
        LimiterConfig {
            kind: LimiterKind::None,
            scope: Scope::Client,
            cubic_c: 0.4,
            cubic_beta: 0.7,
            min_fill_rate: 0.5,
            smoothing: 0.8,
            rate_bucket: Duration::from_millis(500),
            // AIMDLimit.Builder.
            initial_limit: 20,
            min_limit: 20,
            max_limit: 200,
            backoff_ratio: 0.9,
            timeout: Duration::from_secs(5),
        }
    }
}

impl LimiterConfig {
    pub fn enabled(&self) -> bool {
        self.kind != LimiterKind::None
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        if self.kind == LimiterKind::Aimd {
            return self.validate_aimd();
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
            ("limiter.smoothing", self.smoothing, "botocore uses 0.8"),
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
        if self.min_limit == 0 {
            return Err(invalid("limiter.min_limit", "must be at least 1"));
        }
        if self.max_limit < self.min_limit {
            return Err(invalid(
                "limiter.max_limit",
                format!(
                    "must be >= min_limit ({}), got {}",
                    self.min_limit, self.max_limit
                ),
            ));
        }
        if self.timeout.0 == 0 {
            return Err(invalid(
                "limiter.timeout",
                "must be a positive duration (AIMDLimit's default 5s)",
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
            max: c.max_limit,
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
            smoothing: c.smoothing,
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
}

impl Limiter {
    /// `None` when the kind is `none`.
    pub fn new(c: &LimiterConfig, start: Time) -> Option<Self> {
        match c.kind {
            LimiterKind::None => None,
            LimiterKind::AwsAdaptive => Some(Limiter::AwsAdaptive(AwsAdaptive::new(c, start))),
            LimiterKind::Aimd => Some(Limiter::Aimd(Aimd::new(c))),
        }
    }
    /// Before an attempt goes out.
    #[inline]
    pub fn acquire(&mut self, now: Time) -> Admit {
        match self {
            Limiter::AwsAdaptive(a) => a.acquire(now),
            Limiter::Aimd(a) => a.acquire(),
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn validation_names_the_field() {
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
