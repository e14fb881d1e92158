//! Equal jitter (AWS Architecture Blog, "Exponential Backoff And Jitter", Marc Brooker, 2015):
//! `d/2 + U(0, d/2)`.

use super::{JitterRule, Retry};
use crate::base::rng::Stream;
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;
use std::borrow::BorrowMut;

/// `jitter = "equal"`.
pub struct Equal;

impl JitterRule for Equal {
    #[inline(always)]
    fn delay<S: BorrowMut<Stream>>(
        r: &Retry,
        _state: u64,
        draw: impl FnOnce() -> S,
    ) -> (Duration, Option<u64>) {
        let d = r.window();
        let half = d / 2;
        (
            Duration(d - half + draw().borrow_mut().range_u64(0, half)),
            None,
        )
    }

    fn mean(_b: &Backoff, _n: u32, w: f64) -> f64 {
        0.75 * w
    }

    fn range(_b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (w / 2.0, w)
    }
}
