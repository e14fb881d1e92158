//! No jitter: the delay is the window `d`.

use super::{Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;

/// `jitter = "none"`.
pub struct NoJitter;

impl JitterRule for NoJitter {
    #[inline(always)]
    fn delay(r: &Retry, _state: u64, _draw: impl Draw) -> (Duration, Option<u64>) {
        (Duration(r.window()), None)
    }

    fn mean(_b: &Backoff, _n: u32, w: f64) -> f64 {
        w
    }

    fn range(_b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (w, w)
    }
}
