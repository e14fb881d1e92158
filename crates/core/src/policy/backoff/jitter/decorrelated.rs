//! Decorrelated jitter (AWS Architecture Blog, "Exponential Backoff And Jitter", Marc Brooker,
//! 2015): `min(cap, U(base, 3 * previous))`, `previous` starting at `base` and then the last
//! delay drawn (its own sequence, independent of `n` and `multiplier`).

use super::{Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::{Backoff, NO_STATE};

/// `jitter = "decorrelated"`.
pub struct Decorrelated;

impl JitterRule for Decorrelated {
    const CARRIES_STATE: bool = true;

    /// `state` is the previous delay in ns (the caller carries it).
    #[inline]
    fn delay(r: &Retry, state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
        let b = r.backoff;
        let prev = if state == NO_STATE { b.base.0 } else { state };
        let hi = prev.saturating_mul(3).max(b.base.0);
        let d = draw.range_u64(b.base.0, hi).min(b.cap.0);
        (Duration(d), None)
    }

    /// U[base, 3 x previous]: the mean grows by about 2x a retry until the cap.
    fn mean(b: &Backoff, n: u32, _w: f64) -> f64 {
        let (base, cap) = (b.base.0 as f64 / 1e9, b.cap.0 as f64 / 1e9);
        let mut prev = base;
        for _ in 0..=n {
            prev = ((base + 3.0 * prev) / 2.0).min(cap);
        }
        prev
    }

    /// From `base` to three times the mean before.
    fn range(b: &Backoff, _w: f64, mean: f64) -> (f64, f64) {
        let base = b.base.0 as f64 / 1e9;
        (base.min(mean), (2.0 * mean - base).max(mean))
    }
}
