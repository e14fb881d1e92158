//! Backoff between attempts: the delay before retry number `n`.
//!
//! Formulas from the AWS Architecture Blog, "Exponential Backoff And Jitter" (Marc Brooker, 2015),
//! in the convention of the article this project grew from: `n` counts retries already made, so
//! `n = 0` before the first retry, and `d = min(cap, base * multiplier^(n + first_exponent))`.
//!
//! The jitter on the window `d` is one file per jitter in [`jitter`] (`none`, `full`, `equal`,
//! `decorrelated`, `polly`, and the libraries' `proportional`, `additive`, `absolute`; see
//! `docs/policies.md`, "Backoff as the libraries ship it"), each drawn as a whole number of
//! nanoseconds from the one stream its caller hands it.
//!
//! - `backoff = "envoy"`: Envoy's `JitteredExponentialBackOffStrategy::nextBackOffMs`
//!   (`source/common/common/backoff_strategy.cc`): `random() % next_interval` in whole
//!   milliseconds, `next_interval` starting at `base` and doubling while below `cap / 2`, then
//!   `cap`: a window of `min(base * 2^n, cap)`, `jitter` and `multiplier` not used.
//!
//! - `backoff = "linear"`: Polly v8 `DelayBackoffType.Linear`, `base * (n + 1)`, capped.
//!
//! `first_exponent = 1` reproduces the blog's simulator, which counts retries from 1 (its first
//! window is `2 * base`).
//!
//! Where the cap applies is `retry.cap_applies`: `before-jitter` (the window is capped and the
//! jitter may go past the cap: cenkalti, gRPC, Kubernetes, google-http) or `after-jitter` (the
//! jittered delay is capped: resilience4j, tenacity, Spring).

pub mod jitter;

pub use jitter::{Jitter, JitterRule, Retry};

use crate::base::rng::Stream;
use crate::base::time::Duration;
use serde::{Deserialize, Serialize};
use std::borrow::BorrowMut;

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
    pub fn raw_window(&self, n: u32) -> Duration {
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

    /// The delay before retry `n` for a caller that carries the delay it waited: `previous` is
    /// the last delay drawn (decorrelated jitter; `None` before the first retry). Draws from `s`.
    pub fn delay(&self, n: u32, previous: Option<Duration>, s: &mut Stream) -> Duration {
        let state = previous.map_or(NO_STATE, |d| d.0);
        self.next_delay(n, state, None, || s).0
    }

    /// The delay drawn depends on the state carried from the previous retry (decorrelated
    /// jitter, Polly's V2): the caller must keep it.
    pub fn carries_state(&self) -> bool {
        self.jitter.carries_state()
    }

    /// The delay before retry `n` and the state to carry to the next retry: the backoff kinds
    /// that decide the delay themselves, else the jitter ([`JitterRule::delay`]). `state` is
    /// [`NO_STATE`] before the first retry, else what the previous call carried (`None`: the
    /// caller carries the delay it waited). `tabled` is the window `window(n)` when the caller
    /// has it already. `draw` makes the retry's stream, only if a draw is needed.
    #[inline(always)]
    pub fn next_delay<S: BorrowMut<Stream>>(
        &self,
        n: u32,
        state: u64,
        tabled: Option<u64>,
        draw: impl FnOnce() -> S,
    ) -> (Duration, Option<u64>) {
        match self.kind {
            BackoffKind::Immediate => (Duration::ZERO, None),
            BackoffKind::Envoy => {
                let ms = self.window(n).0 / 1_000_000;
                let d = draw().borrow_mut().range_u64(0, ms.saturating_sub(1));
                (Duration::from_millis(d), None)
            }
            // `if retries == 0 { return bc.Config.BaseDelay }`: no jitter, no draw.
            BackoffKind::Grpc if n == 0 => (self.base.min(self.cap), None),
            _ => {
                let r = Retry {
                    backoff: self,
                    n,
                    tabled,
                };
                self.jitter.delay(&r, state, draw)
            }
        }
    }
}

#[cfg(test)]
mod tests;
