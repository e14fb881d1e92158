//! `d + U[0, f × d)` (`retry.jitter_factor` = `f`): Kubernetes apimachinery
//! `pkg/util/wait/backoff.go` (eed236c, `delay`, line 98: the cap limits the next duration, the
//! jitter is added on top) with `wait.go` line 92 `Jitter`; Spring Retry
//! `ExponentialRandomBackOffPolicy` (c8977dd, line 79: `next * (1 + r * (multiplier - 1))`, then
//! capped: `f = multiplier − 1`, after the jitter). With `f = 1` it is equal jitter with twice
//! the base and cap, draw for draw.

use super::{Amount, Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;

/// `jitter = "additive"`.
pub struct Additive;

impl JitterRule for Additive {
    const AMOUNT: Option<Amount> = Some(Amount {
        key: "jitter_factor",
        takes: "a number >= 0, the share of the window added at most (Kubernetes client-go: 0.1)",
    });

    /// Drawn as equal jitter draws its half (`range_u64(0, w)`).
    #[inline]
    fn delay(r: &Retry, _state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
        let f = r.backoff.spread.jitter_factor;
        let d = r.capped(|d| match Duration::from_nanos_f64(f * d as f64).0 {
            0 => d,
            w => d.saturating_add(draw.range_u64(0, w)),
        });
        (d, None)
    }

    /// Half the factor on average, the window's cap over the whole delay.
    fn mean(b: &Backoff, _n: u32, w: f64) -> f64 {
        let cap = b.cap.0 as f64 / 1e9;
        (w * (1.0 + b.spread.jitter_factor / 2.0)).min(cap.max(w))
    }

    fn range(b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (w, w * (1.0 + b.spread.jitter_factor))
    }
}
