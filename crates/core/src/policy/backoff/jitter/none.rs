//! No jitter: the delay is the window `d`.

use super::{JitterRule, Retry};
use crate::base::rng::Stream;
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;
use std::borrow::BorrowMut;

/// `jitter = "none"`.
pub struct NoJitter;

impl JitterRule for NoJitter {
    #[inline(always)]
    fn delay<S: BorrowMut<Stream>>(
        r: &Retry,
        _state: u64,
        _draw: impl FnOnce() -> S,
    ) -> (Duration, Option<u64>) {
        (Duration(r.window()), None)
    }

    fn mean(_b: &Backoff, _n: u32, w: f64) -> f64 {
        w
    }

    fn range(_b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        (w, w)
    }
}
