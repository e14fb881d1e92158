//! `d + U[0, J)` (`retry.jitter_max` = `J`): Python tenacity `wait_exponential_jitter` (c650fb4
//! `tenacity/wait.py` line 295: `min(multiplier * exp_base ** n + uniform(0, jitter), max)`, the
//! cap after the jitter).

use super::{Amount, Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;

/// `jitter = "absolute"`.
pub struct Absolute;

impl JitterRule for Absolute {
    const AMOUNT: Option<Amount> = Some(Amount {
        key: "jitter_max",
        takes: "a duration, the most added to the window (tenacity: \"1s\")",
    });

    #[inline]
    fn delay(r: &Retry, _state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
        let j = r.backoff.spread.jitter_max.0;
        let d = r.capped(|d| match j {
            0 => d,
            j => d.saturating_add(draw.range_u64(0, j)),
        });
        (d, None)
    }

    fn mean(b: &Backoff, _n: u32, w: f64) -> f64 {
        w + b.spread.jitter_max.0 as f64 / 2e9
    }

    fn range(b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (w, w + b.spread.jitter_max.0 as f64 / 1e9)
    }
}
