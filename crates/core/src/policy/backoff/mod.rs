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

mod libraries;

use crate::base::rng::Stream;
use crate::base::time::Duration;
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
    /// The delay drawn depends on the state carried from the previous retry (decorrelated
    /// jitter, Polly's V2): the caller must keep it.
    pub fn carries_state(&self) -> bool {
        matches!(self.jitter, Jitter::Decorrelated | Jitter::Polly)
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
mod tests;
