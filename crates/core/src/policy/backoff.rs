//! Backoff between attempts: the delay before retry number `n`.
//!
//! Formulas from the AWS Architecture Blog, "Exponential Backoff And Jitter" (Marc Brooker, 2015),
//! in the convention of the article this project grew from: `n` counts retries already made, so
//! `n = 0` before the first retry, and `d = min(cap, base * multiplier^(n + first_exponent))`.
//!
//! - `none`:         `d`
//! - `full`:         `U(0, d)`
//! - `equal`:        `d/2 + U(0, d/2)`
//! - `decorrelated`: `min(cap, U(base, 3 * previous))`, `previous` starting at `base` and then the
//!   last delay drawn (its own sequence, independent of `n` and `multiplier`).
//!
//! - `backoff = "envoy"`: Envoy's `JitteredExponentialBackOffStrategy::nextBackOffMs`
//!   (`source/common/common/backoff_strategy.cc`): `random() % next_interval` in whole
//!   milliseconds, `next_interval` starting at `base` and doubling while below `cap / 2`, then
//!   `cap`: a window of `min(base * 2^n, cap)`, `jitter` and `multiplier` not used.
//!
//! - `backoff = "linear"`: Polly v8 `DelayBackoffType.Linear`, `base * (n + 1)`, capped.
//! - `jitter = "polly"`: Polly v8 `UseJitter` (`src/Polly.Core/Retry/RetryHelper.cs`):
//!   Constant and Linear get `d * (0.75 + 0.5 * U)` (`ApplyJitter`, `JitterFactor = 0.5`, ±25 %);
//!   Exponential is `DecorrelatedJitterBackoffV2`: `t = n + U`,
//!   `next = 2^t * tanh(sqrt(4 t))`, delay `(next - prev) / 1.4 * base` in 100 ns ticks,
//!   `prev` carried from the previous retry (0 before the first); every result capped at `cap`
//!   (`MaxDelay`).
//!
//! `first_exponent = 1` reproduces the blog's simulator, which counts retries from 1 (its first
//! window is `2 * base`).
//!
//! The jitters the libraries ship (`docs/policies.md`, "Backoff as the libraries ship it"), each
//! on the window `d` (drawn as a whole number of nanoseconds, uniform over the range):
//!
//! - `proportional`, `d × U[1 − r, 1 + r]` (`retry.randomization_factor` = `r`): cenkalti/backoff
//!   `exponential.go` (v4 720b789, `getRandomValueFromInterval`, line 204: `min + random * (max -
//!   min + 1)`, whole nanoseconds, `r = 0` draws nothing; line 29: "MaxInterval caps the
//!   RetryInterval and not the randomized interval"), gRPC's connection backoff
//!   (grpc-go 4793ad0 `internal/backoff/backoff.go` line 70, `backoff *= 1 + Jitter*(rand*2-1)`
//!   after capping, and line 57: the first delay is `BaseDelay` unjittered: `backoff = "grpc"`),
//!   resilience4j `IntervalFunction.ofExponentialRandomBackoff` (af9e7c9, the cap applied to the
//!   randomized value: `cap_applies = "after-jitter"`), google-http-java-client
//!   `ExponentialBackOff` (cf8ec81, cenkalti's formula in whole milliseconds).
//! - `additive`, `d + U[0, f × d)` (`retry.jitter_factor` = `f`): Kubernetes apimachinery
//!   `pkg/util/wait/backoff.go` (eed236c, `delay`, line 98: the cap limits the next duration, the
//!   jitter is added on top) with `wait.go` line 92 `Jitter`; Spring Retry
//!   `ExponentialRandomBackOffPolicy` (c8977dd, line 79: `next * (1 + r * (multiplier - 1))`,
//!   then capped: `f = multiplier − 1`, after the jitter). With `f = 1` it is equal jitter with
//!   twice the base and cap, draw for draw.
//! - `absolute`, `d + U[0, J)` (`retry.jitter_max` = `J`): Python tenacity
//!   `wait_exponential_jitter` (c650fb4 `tenacity/wait.py` line 295: `min(multiplier * exp_base **
//!   n + uniform(0, jitter), max)`, the cap after the jitter).
//!
//! Where the cap applies is `retry.cap_applies`: `before-jitter` (the window is capped and the
//! jitter may go past the cap: cenkalti, gRPC, Kubernetes, google-http) or `after-jitter` (the
//! jittered delay is capped: resilience4j, tenacity, Spring).

use crate::rng::Stream;
use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// How the delay grows with the retry count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BackoffKind {
    /// Retry at once (no delay, jitter ignored).
    Immediate,
    /// `base` every time (jitter applies to it).
    Constant,
    /// `base * multiplier^n`, capped.
    Exponential,
    /// Polly's `DelayBackoffType.Linear`: `base * (n + 1)`, capped.
    Linear,
    /// Envoy's fully jittered exponential backoff: whole milliseconds in `[0, min(base * 2^n,
    /// cap))`.
    Envoy,
    /// gRPC's connection backoff (`doc/connection-backoff.md`; grpc-go
    /// `internal/backoff/backoff.go` line 57): exponential, but the first delay is `base` with no
    /// jitter.
    Grpc,
}

/// How randomness spreads the delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
    /// Polly v8 `UseJitter = true`: ±25 % for constant and linear, decorrelated jitter V2 for
    /// exponential.
    Polly,
    /// `d × U[1 − r, 1 + r]`, `r` = `retry.randomization_factor` (cenkalti/backoff, gRPC,
    /// resilience4j, google-http-java-client).
    Proportional,
    /// `d + U[0, f × d)`, `f` = `retry.jitter_factor` (Kubernetes `wait.Backoff`, Spring Retry).
    Additive,
    /// `d + U[0, J)`, `J` = `retry.jitter_max` (tenacity `wait_exponential_jitter`).
    Absolute,
}

impl Jitter {
    /// The model key that sizes this jitter, if it has one.
    pub fn amount_key(self) -> Option<&'static str> {
        match self {
            Jitter::Proportional => Some("randomization_factor"),
            Jitter::Additive => Some("jitter_factor"),
            Jitter::Absolute => Some("jitter_max"),
            _ => None,
        }
    }
}

/// Where `cap` applies for the jitters that can pass it (`proportional`, `additive`,
/// `absolute`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum CapApplies {
    /// The window is capped, the jitter goes on top (cenkalti, gRPC, Kubernetes, google-http).
    #[default]
    BeforeJitter,
    /// The jittered delay is capped (resilience4j, tenacity, Spring Retry).
    AfterJitter,
}

/// How much a sized jitter spreads: `r`, `f` or `J`, whichever the jitter kind uses (0 for the
/// others).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spread {
    pub randomization_factor: f64,
    pub jitter_factor: f64,
    pub jitter_max: Duration,
    pub cap_applies: CapApplies,
}

/// No carried state yet (before the first retry).
pub const NO_STATE: u64 = u64::MAX;

/// A fully specified backoff policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    pub kind: BackoffKind,
    pub jitter: Jitter,
    pub base: Duration,
    pub cap: Duration,
    pub multiplier: f64,
    pub first_exponent: u32,
    pub spread: Spread,
}

impl Backoff {
    /// The un-jittered window `d` before retry `n`.
    pub fn window(&self, n: u32) -> Duration {
        self.raw_window(n).min(self.cap)
    }

    /// The window before the cap.
    fn raw_window(&self, n: u32) -> Duration {
        match self.kind {
            BackoffKind::Immediate => Duration::ZERO,
            BackoffKind::Constant => self.base,
            BackoffKind::Linear => Duration(self.base.0.saturating_mul(u64::from(n) + 1)),
            BackoffKind::Envoy => {
                // `next_interval_ < doubling_limit_ ? next_interval_ * 2 : max_interval_`.
                let mut w = self.base.0;
                for _ in 0..n.min(64) {
                    w = if w < self.cap.0 / 2 {
                        w * 2
                    } else {
                        self.cap.0
                    };
                }
                Duration(w)
            }
            BackoffKind::Exponential | BackoffKind::Grpc => {
                let e = n.saturating_add(self.first_exponent).min(1024) as i32;
                Duration::from_nanos_f64(self.base.0 as f64 * self.multiplier.powi(e))
            }
        }
    }

    /// The delay before retry `n`. `previous` is the last delay drawn for this intent (for
    /// decorrelated jitter; pass `None` before the first retry).
    pub fn delay(&self, n: u32, previous: Option<Duration>, s: &mut Stream) -> Duration {
        if self.kind == BackoffKind::Immediate {
            return Duration::ZERO;
        }
        if self.kind == BackoffKind::Envoy {
            let ms = self.window(n).0 / 1_000_000;
            return Duration::from_millis(s.range_u64(0, ms.saturating_sub(1)));
        }
        if self.kind == BackoffKind::Grpc && n == 0 {
            // `if retries == 0 { return bc.Config.BaseDelay }`: no jitter, no draw.
            return self.base.min(self.cap);
        }
        match self.jitter {
            Jitter::Proportional => self.proportional(n, s),
            Jitter::Additive => self.additive(n, s),
            Jitter::Absolute => self.absolute(n, s),
            Jitter::None => self.window(n),
            Jitter::Full => Duration(s.range_u64(0, self.window(n).0)),
            Jitter::Equal => {
                let d = self.window(n).0;
                let half = d / 2;
                Duration(d - half + s.range_u64(0, half))
            }
            Jitter::Polly if self.kind == BackoffKind::Exponential => {
                self.polly_v2(n, 0.0, s.uniform()).0
            }
            Jitter::Polly => {
                let d = self.window(n).0 as f64 * (0.75 + 0.5 * s.uniform());
                Duration::from_nanos_f64(d).min(self.cap)
            }
            Jitter::Decorrelated => {
                let prev = previous.unwrap_or(self.base).0;
                let hi = prev.saturating_mul(3).max(self.base.0);
                Duration(s.range_u64(self.base.0, hi).min(self.cap.0))
            }
        }
    }
}

impl Backoff {
    /// `jitter(window)` for retry `n`, with the cap where `spread.cap_applies` puts it: on the
    /// window (the jitter may pass it) or on the jittered delay.
    fn capped(&self, n: u32, jitter: impl FnOnce(u64) -> u64) -> Duration {
        match self.spread.cap_applies {
            CapApplies::BeforeJitter => Duration(jitter(self.window(n).0)),
            CapApplies::AfterJitter => Duration(jitter(self.raw_window(n).0).min(self.cap.0)),
        }
    }

    /// `d × U[1 − r, 1 + r]` in whole nanoseconds, as cenkalti draws it (`r = 0` draws nothing).
    fn proportional(&self, n: u32, s: &mut Stream) -> Duration {
        let r = self.spread.randomization_factor;
        self.capped(n, |d| {
            if r == 0.0 {
                return d;
            }
            let delta = r * d as f64;
            let lo = Duration::from_nanos_f64(d as f64 - delta).0;
            let hi = Duration::from_nanos_f64(d as f64 + delta).0;
            s.range_u64(lo, hi)
        })
    }

    /// `d + U[0, f × d)`, drawn as equal jitter draws its half (`range_u64(0, w)`), so that
    /// `f = 1` is equal jitter with twice the base and cap, draw for draw.
    fn additive(&self, n: u32, s: &mut Stream) -> Duration {
        let f = self.spread.jitter_factor;
        self.capped(n, |d| match Duration::from_nanos_f64(f * d as f64).0 {
            0 => d,
            w => d.saturating_add(s.range_u64(0, w)),
        })
    }

    /// `d + U[0, J)`.
    fn absolute(&self, n: u32, s: &mut Stream) -> Duration {
        let j = self.spread.jitter_max.0;
        self.capped(n, |d| match j {
            0 => d,
            j => d.saturating_add(s.range_u64(0, j)),
        })
    }

    /// Polly's `DecorrelatedJitterBackoffV2` for retry `n` (Polly's `attempt`), given the carried
    /// `prev` and a uniform `u`: the delay (capped at `cap`) and the new `prev`.
    pub fn polly_v2(&self, n: u32, prev: f64, u: f64) -> (Duration, f64) {
        const P_FACTOR: f64 = 4.0;
        const RP_SCALING: f64 = 1.0 / 1.4;
        const TICK: u64 = 100; // ns in a .NET tick
        let t = f64::from(n) + u;
        let next = 2f64.powf(t) * (P_FACTOR * t).sqrt().tanh();
        if !next.is_finite() {
            return (self.cap, next);
        }
        let ticks = ((next - prev) * RP_SCALING * (self.base.0 / TICK) as f64).min(9.2e18) as u64;
        (Duration(ticks.saturating_mul(TICK)).min(self.cap), next)
    }

    /// The delay before retry `n` and the state to carry to the next retry. `state` is
    /// [`NO_STATE`] before the first retry, else what the previous call carried. Only Polly's V2
    /// carries its own state (`Some`); otherwise the caller carries the delay it waited (`None`).
    pub fn next_delay(&self, n: u32, state: u64, s: &mut Stream) -> (Duration, Option<u64>) {
        if self.jitter == Jitter::Polly && self.kind == BackoffKind::Exponential {
            let prev = if state == NO_STATE {
                0.0
            } else {
                f64::from_bits(state)
            };
            let (d, next) = self.polly_v2(n, prev, s.uniform());
            return (d, Some(next.to_bits()));
        }
        let prev = (state != NO_STATE).then_some(Duration(state));
        (self.delay(n, prev, s), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Purpose;

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
    fn library(
        base_ms: u64,
        multiplier: f64,
        cap_ms: u64,
        jitter: Jitter,
        spread: Spread,
    ) -> Backoff {
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
}
