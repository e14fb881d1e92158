//! Time-weighted levels: the queue's length and the busy workers, integrated over time.

use super::buckets::{Area, Buckets};
use crate::base::time::Time;

/// Time-weighted queue length and busy workers.
#[derive(Clone, Debug, Default)]
pub struct Levels {
    last: Time,
    queue: u64,
    busy: u64,
    queue_area: f64,
    busy_area: f64,
}

impl Levels {
    /// Records that from `now` on the levels are `queue` and `busy`.
    #[inline]
    pub fn set(&mut self, b: &mut Buckets, now: Time, queue: u64, busy: u64) {
        if now > self.last {
            let dt = (now.0 - self.last.0) as f64;
            self.queue_area += self.queue as f64 * dt;
            self.busy_area += self.busy as f64 * dt;
            b.integrate(Area::Queue, self.last, now, self.queue as f64);
            b.integrate(Area::Busy, self.last, now, self.busy as f64);
            self.last = now;
        }
        self.queue = queue;
        self.busy = busy;
    }

    /// Time averages over `[0, end)`.
    pub fn means(&mut self, b: &mut Buckets, end: Time) -> (f64, f64) {
        let (q, w) = (self.queue, self.busy);
        self.set(b, end, q, w);
        if end.0 == 0 {
            return (0.0, 0.0);
        }
        (
            self.queue_area / end.0 as f64,
            self.busy_area / end.0 as f64,
        )
    }
}
