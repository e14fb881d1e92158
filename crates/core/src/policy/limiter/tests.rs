//! Each limiter against its source's own tests and formulas.

use super::vegas::log10_root;
use super::*;
use crate::base::rng::Purpose;
use crate::base::rng::Stream;
use crate::base::time::{Duration, Time};
use crate::policy::Class;

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
    let mut l = Simple {
        algorithm: Aimd::new(&cfg),
        inflight: 0,
    };
    let ms = Duration::from_millis;
    // 20 in flight: the 21st is rejected.
    for _ in 0..20 {
        assert_eq!(l.acquire(Time::ZERO), Admit::Go);
    }
    assert_eq!(l.acquire(Time::ZERO), Admit::Reject);
    let mut a = l.algorithm;
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
        g.sample(ms(10), 20, false);
        want = want * 0.8 + (want + 4.0) * 0.2;
        assert!(close(g.estimated, want), "{} != {want}", g.estimated);
    }
    assert!(close(g.estimated, 28.0));
    assert_eq!(g.limit(), 28);
    // The 11th sample is past the warm-up: an EWMA with factor 2 / 601. At 40 ms the
    // gradient 1.5 * long / 40 ms is 0.38, floored at 0.5: 28 * 0.5 + 4 = 18, smoothed
    // 0.8 * 28 + 0.2 * 18 = 26.
    g.sample(ms(40), 28, false);
    let f = 2.0 / 601.0;
    let long = 10e6 * (1.0 - f) + 40e6 * f;
    assert!(close(g.long_rtt(), long));
    assert!(close(g.estimated, 26.0), "{}", g.estimated);
    // 20 ms: gradient 1.5 * long / 20 ms = 0.757..., no floor.
    g.sample(ms(20), 14, false);
    let long = long * (1.0 - f) + 20e6 * f;
    let gradient = 1.5 * long / 20e6;
    let want = 26.0 * 0.8 + (26.0 * gradient + 4.0) * 0.2;
    assert!(close(g.estimated, want), "{} != {want}", g.estimated);
    // Below half the limit in flight (12 < 25.x / 2): the long RTT moves, the limit not.
    let before = g.estimated;
    g.sample(ms(40), 12, false);
    let long = long * (1.0 - f) + 40e6 * f;
    assert_eq!(g.estimated, before);
    assert!(close(g.long_rtt(), long));
    // A short RTT under half the long one: the long RTT is cut by 0.95 after the add.
    g.sample(ms(1), 0, false);
    let long = (long * (1.0 - f) + 1e6 * f) * 0.95;
    assert!(close(g.long_rtt(), long), "{} != {long}", g.long_rtt());
    // Long spikes pull the limit down to minLimit 20, never below; drops are not read.
    for _ in 0..50 {
        g.sample(Duration::from_secs(1), 100, false);
    }
    assert_eq!(g.estimated, 20.0);
    // Fast answers grow it by 0.8 a sample up to maxConcurrency 200, never above.
    for _ in 0..1000 {
        g.sample(Duration::from_micros(1), 1000, false);
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
    let mut l = LimiterState::new(
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
