//! Equal jitter (AWS Architecture Blog, "Exponential Backoff And Jitter", Marc Brooker, 2015):
//! `d/2 + U(0, d/2)`.

use super::{Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;

/// `jitter = "equal"`.
pub struct Equal;

impl JitterRule for Equal {
    #[inline(always)]
    fn delay(r: &Retry, _state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
        let d = r.window();
        let half = d / 2;
        (Duration(d - half + draw.range_u64(0, half)), None)
    }

    fn mean(_b: &Backoff, _n: u32, w: f64) -> f64 {
        0.75 * w
    }

    fn range(_b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (w / 2.0, w)
    }
}
