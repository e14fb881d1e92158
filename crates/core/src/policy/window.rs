//! A sliding window of counts, kept in slices: Finagle's `com.twitter.util.WindowedAdder`.
//!
//! The window `[now - window, now]` is cut into [`SLICES`] slices of `window / SLICES` each; a
//! count added at `now` goes to the current slice, and a slice is forgotten once it falls out of
//! the window (the sum covers the current slice and the `SLICES - 1` before it, as Finagle's
//! does). Finagle's `TokenBucket.newLeakyBucket` (under `RetryBudget`) uses 10 slices; so do we.
//! Fixed size: no allocation after construction.

use crate::base::time::{Duration, Time};

/// Slices per window (Finagle's `newLeakyBucket` uses `WindowedAdder(ttl, 10, now)`).
pub const SLICES: usize = 10;

#[derive(Clone, Debug)]
pub struct WindowedAdder {
    /// Width of one slice, ns (at least 1).
    slice: u64,
    slots: [i64; SLICES],
    /// `now / slice` of the last update: `slots[current % SLICES]` is the current slice.
    current: u64,
}

impl WindowedAdder {
    pub fn new(window: Duration) -> Self {
        WindowedAdder {
            slice: (window.0 / SLICES as u64).max(1),
            slots: [0; SLICES],
            current: 0,
        }
    }

    /// Forgets slices that have left the window. Time never goes back (a past `now` is treated as
    /// the current slice).
    #[inline]
    fn advance(&mut self, now: Time) {
        let idx = now.0 / self.slice;
        if idx <= self.current {
            return;
        }
        let gap = idx - self.current;
        if gap >= SLICES as u64 {
            self.slots = [0; SLICES];
        } else {
            for k in 1..=gap {
                self.slots[((self.current + k) % SLICES as u64) as usize] = 0;
            }
        }
        self.current = idx;
    }

    #[inline]
    pub fn add(&mut self, now: Time, n: i64) {
        self.advance(now);
        self.slots[(self.current % SLICES as u64) as usize] += n;
    }

    /// The sum over the window ending at `now`.
    #[inline]
    pub fn sum(&mut self, now: Time) -> i64 {
        self.advance(now);
        self.slots.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_expire_after_the_window() {
        let s = |x: u64| Time(x * 1_000_000_000);
        let mut w = WindowedAdder::new(Duration::from_secs(10));
        w.add(s(0), 5);
        w.add(s(3), 2);
        assert_eq!(w.sum(s(5)), 7);
        // Slice 0 ([0, 1 s)) is still in a window whose current slice is 9.
        assert_eq!(w.sum(Time(9_999_999_999)), 7);
        // At 10 s the current slice is 10; slice 0 has left.
        assert_eq!(w.sum(s(10)), 2);
        assert_eq!(w.sum(s(13)), 0);
        w.add(s(100), -3);
        assert_eq!(w.sum(s(100)), -3);
        // A long gap clears everything.
        assert_eq!(w.sum(s(1000)), 0);
    }
}
