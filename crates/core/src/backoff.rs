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
}

impl Backoff {
    /// The un-jittered window `d` before retry `n`.
    pub fn window(&self, n: u32) -> Duration {
        match self.kind {
            BackoffKind::Immediate => Duration::ZERO,
            BackoffKind::Constant => self.base.min(self.cap),
            BackoffKind::Linear => {
                Duration(self.base.0.saturating_mul(u64::from(n) + 1)).min(self.cap)
            }
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
                Duration(w.min(self.cap.0))
            }
            BackoffKind::Exponential => {
                let e = n.saturating_add(self.first_exponent).min(1024) as i32;
                let d = self.base.0 as f64 * self.multiplier.powi(e);
                if d >= self.cap.0 as f64 {
                    self.cap
                } else {
                    Duration::from_nanos_f64(d)
                }
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
        match self.jitter {
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
