//! Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter", Marc Brooker, 2015):
//! `U(0, d)`.

use super::{Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;

/// `jitter = "full"`.
pub struct Full;

impl JitterRule for Full {
    #[inline(always)]
    fn delay(r: &Retry, _state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
        let w = r.window();
        (Duration(draw.range_u64(0, w)), None)
    }

    fn mean(_b: &Backoff, _n: u32, w: f64) -> f64 {
        w / 2.0
    }

    fn range(_b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (0.0, w)
    }
}
