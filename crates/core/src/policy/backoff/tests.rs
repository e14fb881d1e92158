use super::*;
use crate::base::rng::Purpose;

fn policy(jitter: Jitter) -> Backoff {
    Backoff {
        kind: BackoffKind::Exponential,
        jitter,
        base: Duration::from_millis(100),
        cap: Duration::from_secs(10),
        multiplier: 2.0,
        first_exponent: 0,
        spread: Spread::default(),
    }
}

#[test]
fn no_jitter_doubles_to_cap() {
    let b = policy(Jitter::None);
    let mut s = Stream::new(1, 1, Purpose::Backoff, 0);
    let d: Vec<u64> = (0..9)
        .map(|n| b.delay(n, None, &mut s).0 / 1_000_000)
        .collect();
    assert_eq!(d, vec![100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000]);
    let blog = Backoff {
        first_exponent: 1,
        ..b
    };
    assert_eq!(blog.window(0), Duration::from_millis(200));
}

#[test]
fn jitter_stays_in_its_window() {
    let mut s = Stream::new(2, 1, Purpose::Backoff, 0);
    for n in 0..10 {
        let d = policy(Jitter::None).window(n);
        for _ in 0..100 {
            assert!(policy(Jitter::Full).delay(n, None, &mut s) <= d);
            let e = policy(Jitter::Equal).delay(n, None, &mut s);
            assert!(e.0 >= d.0 / 2 && e <= d);
        }
    }
    let b = policy(Jitter::Decorrelated);
    let mut prev = None;
    for n in 0..50 {
        let d = b.delay(n, prev, &mut s);
        let hi = prev.unwrap_or(b.base).0 * 3;
        assert!(d >= b.base && d.0 <= hi.min(b.cap.0), "{d:?}");
        prev = Some(d);
    }
}

#[test]
fn envoy_doubles_from_base_to_max_interval() {
    // Envoy's defaults: base_interval 25 ms, max_interval 10 x base.
    let b = Backoff {
        kind: BackoffKind::Envoy,
        base: Duration::from_millis(25),
        cap: Duration::from_millis(250),
        ..policy(Jitter::Full)
    };
    let w: Vec<u64> = (0..6).map(|n| b.window(n).0 / 1_000_000).collect();
    assert_eq!(w, [25, 50, 100, 200, 250, 250]);
    let mut s = Stream::new(4, 1, Purpose::Backoff, 0);
    for n in 0..6 {
        let d = b.delay(n, None, &mut s);
        assert!(d.0 % 1_000_000 == 0 && d < b.window(n), "{d:?}");
    }
}

#[test]
fn polly_v2_and_linear_follow_retry_helper() {
    // RetryHelper.DecorrelatedJitterBackoffV2 with base 2 s (Polly's default Delay) and the
    // randomizer returning 0.5, 0.25, 0.75, 0.0: ticks computed from the same formula in
    // Python (`t = a + u; next = 2**t * tanh(sqrt(4*t)); (next - prev) / 1.4 * 20_000_000`).
    let b = Backoff {
        kind: BackoffKind::Exponential,
        jitter: Jitter::Polly,
        base: Duration::from_secs(2),
        cap: Duration::from_secs(3600),
        multiplier: 2.0,
        first_exponent: 0,
        spread: Spread::default(),
    };
    let mut prev = 0.0;
    let ticks: Vec<u64> = [0.5, 0.25, 0.75, 0.0]
        .iter()
        .enumerate()
        .map(|(n, &u)| {
            let (d, next) = b.polly_v2(n as u32, prev, u);
            prev = next;
            d.0 / 100
        })
        .collect();
    assert_eq!(ticks, [17948098, 15261775, 62639987, 18212127]);
    let linear = Backoff {
        kind: BackoffKind::Linear,
        jitter: Jitter::None,
        ..b
    };
    assert_eq!(linear.window(2), Duration::from_secs(6));
    let mut s = Stream::new(5, 1, Purpose::Backoff, 0);
    for _ in 0..100 {
        let d = Backoff {
            jitter: Jitter::Polly,
            ..linear
        }
        .delay(2, None, &mut s);
        assert!(d >= Duration::from_millis(4500) && d <= Duration::from_millis(7500));
    }
}

/// A policy of a library's: `base`, `multiplier`, `cap` in milliseconds, and its jitter.
fn library(base_ms: u64, multiplier: f64, cap_ms: u64, jitter: Jitter, spread: Spread) -> Backoff {
    Backoff {
        kind: BackoffKind::Exponential,
        jitter,
        base: Duration::from_millis(base_ms),
        cap: Duration::from_millis(cap_ms),
        multiplier,
        first_exponent: 0,
        spread,
    }
}

/// The least and the most of `draws` delays before retry `n`, in nanoseconds.
fn range(b: &Backoff, n: u32, draws: usize, s: &mut Stream) -> (u64, u64) {
    (0..draws).fold((u64::MAX, 0), |(lo, hi), _| {
        let d = b.delay(n, None, s).0;
        (lo.min(d), hi.max(d))
    })
}

#[test]
fn proportional_follows_cenkalti_backoff_tests() {
    // cenkalti/backoff 720b789 `exponential_test.go` `TestBackOff`: initial 500 ms,
    // randomization 0.1, multiplier 2, max interval 5 s: the intervals 500, 1000, 2000, 4000,
    // then 5000 (capped before the jitter), each delay within ±10 % of its interval.
    let spread = Spread {
        randomization_factor: 0.1,
        ..Spread::default()
    };
    let b = library(500, 2.0, 5000, Jitter::Proportional, spread);
    let mut s = Stream::new(6, 1, Purpose::Backoff, 0);
    for (n, ms) in [500u64, 1000, 2000, 4000, 5000, 5000, 5000]
        .into_iter()
        .enumerate()
    {
        assert_eq!(b.window(n as u32), Duration::from_millis(ms));
        let d = ms * 1_000_000;
        let (lo, hi) = range(&b, n as u32, 2000, &mut s);
        assert!(
            lo >= d - d / 10 && hi <= d + d / 10,
            "retry {n}: {lo}..{hi}"
        );
        // Past the cap the randomized interval goes above it: MaxInterval caps the
        // RetryInterval, not the randomized interval (`exponential.go` line 29).
        assert!(
            hi > d - d / 20 && lo < d - d / 20,
            "retry {n} spreads: {lo}..{hi}"
        );
    }
    // `TestGetRandomizedInterval`: interval 2, factor 0.5 gives 1, 2 or 3, a third each.
    let tiny = Backoff {
        base: Duration(2),
        cap: Duration(2),
        ..library(
            0,
            2.0,
            0,
            Jitter::Proportional,
            Spread {
                randomization_factor: 0.5,
                ..Spread::default()
            },
        )
    };
    let mut seen = [0u32; 4];
    for _ in 0..3000 {
        seen[tiny.delay(0, None, &mut s).0 as usize] += 1;
    }
    assert_eq!(seen[0], 0);
    for (v, &count) in seen.iter().enumerate().skip(1) {
        assert!((850..1150).contains(&count), "{v}: {count} of 3000");
    }
    // Randomization 0 is the interval itself and draws nothing.
    let exact = library(500, 1.5, 60_000, Jitter::Proportional, Spread::default());
    let mut untouched = Stream::new(6, 2, Purpose::Backoff, 0);
    let before = untouched.clone().next_u64();
    assert_eq!(
        exact.delay(3, None, &mut untouched),
        Duration::from_micros(1_687_500)
    );
    assert_eq!(untouched.next_u64(), before);
}

#[test]
fn proportional_default_table_of_cenkalti() {
    // The doc comment of `ExponentialBackOff` (defaults 500 ms, 0.5, 1.5): retry 1 in
    // [0.25, 0.75] s, 2 in [0.375, 1.125], 3 in [0.562, 1.687], 4 in [0.8435, 2.53].
    let b = library(
        500,
        1.5,
        60_000,
        Jitter::Proportional,
        Spread {
            randomization_factor: 0.5,
            ..Spread::default()
        },
    );
    let mut s = Stream::new(7, 1, Purpose::Backoff, 0);
    for (n, (lo_ms, hi_ms)) in [
        (250.0, 750.0),
        (375.0, 1125.0),
        (562.5, 1687.5),
        (843.75, 2531.25),
    ]
    .into_iter()
    .enumerate()
    {
        let (lo, hi) = range(&b, n as u32, 4000, &mut s);
        let (lo, hi) = (lo as f64 / 1e6, hi as f64 / 1e6);
        assert!(lo >= lo_ms && hi <= hi_ms, "retry {n}: {lo}..{hi}");
        assert!(
            lo < lo_ms * 1.01 && hi > hi_ms * 0.99,
            "retry {n} covers: {lo}..{hi}"
        );
    }
}

#[test]
fn grpc_connection_backoff() {
    // grpc-go 4793ad0 `internal/backoff/backoff.go`, defaults of `backoff.DefaultConfig`
    // (base 1 s, multiplier 1.6, jitter 0.2, max 120 s): retry 0 is BaseDelay exactly, with
    // no draw; then min(1.6^n, 120) s × [0.8, 1.2]; past the cap, up to 144 s.
    let b = Backoff {
        kind: BackoffKind::Grpc,
        ..library(
            1000,
            1.6,
            120_000,
            Jitter::Proportional,
            Spread {
                randomization_factor: 0.2,
                ..Spread::default()
            },
        )
    };
    let mut s = Stream::new(8, 1, Purpose::Backoff, 0);
    let before = s.clone().next_u64();
    assert_eq!(b.delay(0, None, &mut s), Duration::from_secs(1));
    assert_eq!(s.next_u64(), before, "the first delay draws nothing");
    for n in 1..14u32 {
        let w = (1.6f64.powi(n as i32) * 1e9).min(120e9);
        let (lo, hi) = range(&b, n, 500, &mut s);
        assert!(
            lo as f64 >= w * 0.8 - 1.0 && hi as f64 <= w * 1.2 + 1.0,
            "{n}: {lo}..{hi}"
        );
    }
    let (_, hi) = range(&b, 20, 500, &mut s);
    assert!(hi > 130_000_000_000, "the jitter goes past the cap: {hi}");
}

#[test]
fn resilience4j_random_backoff_caps_after_the_jitter() {
    // resilience4j af9e7c9 `IntervalFunction.ofExponentialRandomBackoff(500, 1.5, 0.5, max)`:
    // `Math.min(randomize(interval), maxIntervalMillis)`: a delay never passes the max.
    let b = library(
        500,
        1.5,
        1000,
        Jitter::Proportional,
        Spread {
            randomization_factor: 0.5,
            cap_applies: CapApplies::AfterJitter,
            ..Spread::default()
        },
    );
    let mut s = Stream::new(9, 1, Purpose::Backoff, 0);
    let (lo, hi) = range(&b, 0, 2000, &mut s);
    assert!(lo >= 250_000_000 && hi <= 750_000_000);
    // Attempt 3: interval 1125 ms, randomized in [562.5, 1687.5] ms, then capped at 1 s.
    let (lo, hi) = range(&b, 2, 2000, &mut s);
    assert!(lo < 600_000_000 && hi == 1_000_000_000, "{lo}..{hi}");
    let many = (0..2000)
        .filter(|_| b.delay(2, None, &mut s) == b.cap)
        .count();
    // P(U[562.5, 1687.5] > 1000) = 687.5 / 1125, about 61 %.
    assert!(
        (1120..1320).contains(&many),
        "about 61 % at the cap: {many}"
    );
}

#[test]
fn additive_follows_kubernetes_wait_backoff() {
    // apimachinery eed236c `pkg/util/wait/backoff.go` `delay`: client-go's DefaultBackoff
    // (10 ms, factor 5, jitter 0.1): [10, 11), [50, 55), [250, 275) ms.
    let spread = Spread {
        jitter_factor: 0.1,
        ..Spread::default()
    };
    let b = library(10, 5.0, 3_600_000, Jitter::Additive, spread);
    let mut s = Stream::new(10, 1, Purpose::Backoff, 0);
    for (n, ms) in [10u64, 50, 250].into_iter().enumerate() {
        let d = ms * 1_000_000;
        let (lo, hi) = range(&b, n as u32, 2000, &mut s);
        assert!(
            lo >= d && hi <= d + d / 10 && hi > d + d / 11,
            "{n}: {lo}..{hi}"
        );
    }
    // A cap limits the duration, the jitter goes on top: 10, 50, then 100 (+ up to 10 %).
    let capped = library(10, 5.0, 100, Jitter::Additive, spread);
    let (lo, hi) = range(&capped, 2, 2000, &mut s);
    assert!(
        lo >= 100_000_000 && hi > 105_000_000 && hi <= 110_000_000,
        "{lo}..{hi}"
    );
    // Jitter 0: `if jitter > 0` is false, the duration itself.
    let plain = library(10, 5.0, 3_600_000, Jitter::Additive, Spread::default());
    assert_eq!(plain.delay(1, None, &mut s), Duration::from_millis(50));
    // DefaultRetry (10 ms, factor 1.0, jitter 0.1): a constant 10 ms plus up to 1 ms.
    let retry = library(10, 1.0, 3_600_000, Jitter::Additive, spread);
    let (lo, hi) = range(&retry, 3, 2000, &mut s);
    assert!(lo >= 10_000_000 && hi <= 11_000_000, "{lo}..{hi}");
}

#[test]
fn additive_follows_spring_random_backoff() {
    // spring-retry c8977dd `ExponentialRandomBackOffPolicy` javadoc: initial 50, multiplier
    // 2, max 3000: "within the ranges of [50-100, 100-200, 200-400, 400-800, 800-1600]",
    // i.e. `next * (1 + U * (multiplier - 1))`, capped after (line 80).
    let b = library(
        50,
        2.0,
        3000,
        Jitter::Additive,
        Spread {
            jitter_factor: 1.0,
            cap_applies: CapApplies::AfterJitter,
            ..Spread::default()
        },
    );
    let mut s = Stream::new(11, 1, Purpose::Backoff, 0);
    for (n, ms) in [50u64, 100, 200, 400, 800].into_iter().enumerate() {
        let (lo, hi) = range(&b, n as u32, 2000, &mut s);
        assert!(
            lo >= ms * 1_000_000 && hi <= 2 * ms * 1_000_000,
            "{n}: {lo}..{hi}"
        );
    }
    // 1600 ms × [1, 2) against a 3 s max: capped after the jitter.
    let (_, hi) = range(&b, 5, 2000, &mut s);
    assert_eq!(hi, 3_000_000_000);
}

#[test]
fn absolute_follows_tenacity_tests() {
    // tenacity c650fb4 `tests/test_tenacity.py` `test_wait_exponential_jitter`:
    // `wait_exponential_jitter(max=60)` (initial 1, exp_base 2, jitter 1): attempts 1..6 in
    // [1, 2], [2, 3], [4, 5], [8, 9], [16, 17], [32, 33] s; 7, 8 and 9 exactly 60.
    let b = library(
        1000,
        2.0,
        60_000,
        Jitter::Absolute,
        Spread {
            jitter_max: Duration::from_secs(1),
            cap_applies: CapApplies::AfterJitter,
            ..Spread::default()
        },
    );
    let mut s = Stream::new(12, 1, Purpose::Backoff, 0);
    for (n, secs) in [1u64, 2, 4, 8, 16, 32].into_iter().enumerate() {
        let (lo, hi) = range(&b, n as u32, 1000, &mut s);
        assert!(
            lo >= secs * 1_000_000_000 && hi <= (secs + 1) * 1_000_000_000,
            "{n}"
        );
    }
    for n in 6..9 {
        assert_eq!(b.delay(n, None, &mut s), Duration::from_secs(60));
    }
    // `wait_exponential_jitter(multiplier=10, max=60, jitter=0)`: 10, 20, 40, 60.
    let fixed = library(
        10_000,
        2.0,
        60_000,
        Jitter::Absolute,
        Spread {
            cap_applies: CapApplies::AfterJitter,
            ..Spread::default()
        },
    );
    let d: Vec<u64> = (0..4)
        .map(|n| fixed.delay(n, None, &mut s).0 / 1_000_000_000)
        .collect();
    assert_eq!(d, [10, 20, 40, 60]);
}

#[test]
fn additive_factor_one_is_equal_jitter_with_twice_the_base() {
    let additive = library(
        100,
        2.0,
        5000,
        Jitter::Additive,
        Spread {
            jitter_factor: 1.0,
            ..Spread::default()
        },
    );
    let equal = library(200, 2.0, 10_000, Jitter::Equal, Spread::default());
    let mut a = Stream::new(13, 1, Purpose::Backoff, 0);
    let mut e = a.clone();
    for n in 0..12 {
        assert_eq!(
            additive.delay(n, None, &mut a),
            equal.delay(n, None, &mut e),
            "retry {n}"
        );
    }
}

#[test]
fn immediate_and_constant() {
    let mut s = Stream::new(3, 1, Purpose::Backoff, 0);
    let i = Backoff {
        kind: BackoffKind::Immediate,
        ..policy(Jitter::Full)
    };
    assert_eq!(i.delay(5, None, &mut s), Duration::ZERO);
    let c = Backoff {
        kind: BackoffKind::Constant,
        ..policy(Jitter::None)
    };
    assert_eq!(c.delay(7, None, &mut s), Duration::from_millis(100));
}
