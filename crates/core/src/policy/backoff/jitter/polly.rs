//! Polly v8 `UseJitter` (`src/Polly.Core/Retry/RetryHelper.cs`): Constant and Linear get
//! `d * (0.75 + 0.5 * U)` (`ApplyJitter`, `JitterFactor = 0.5`, ±25 %); Exponential is
//! `DecorrelatedJitterBackoffV2`: `t = n + U`, `next = 2^t * tanh(sqrt(4 t))`, delay
//! `(next - prev) / 1.4 * base` in 100 ns ticks, `prev` carried from the previous retry (0 before
//! the first); every result capped at `cap` (`MaxDelay`).

use super::{Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::{Backoff, BackoffKind, NO_STATE};

/// `jitter = "polly"`.
pub struct Polly;

impl JitterRule for Polly {
    const CARRIES_STATE: bool = true;

    /// Exponential carries V2's `prev` (as `f64` bits); the others carry nothing.
    #[inline]
    fn delay(r: &Retry, state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
        let b = r.backoff;
        let u = draw.uniform();
        if b.kind == BackoffKind::Exponential {
            let prev = if state == NO_STATE {
                0.0
            } else {
                f64::from_bits(state)
            };
            let (d, next) = b.polly_v2(r.n, prev, u);
            return (d, Some(next.to_bits()));
        }
        let d = r.window() as f64 * (0.75 + 0.5 * u);
        (Duration::from_nanos_f64(d).min(b.cap), None)
    }

    /// The window's: the ±25 % is symmetric (V2's own curve is not followed here).
    fn mean(_b: &Backoff, _n: u32, w: f64) -> f64 {
        w
    }

    fn range(_b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (0.75 * w, 1.25 * w)
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
}
