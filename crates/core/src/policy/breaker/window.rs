//! The sliding windows a closed breaker records outcomes in: count based (the last N calls) or
//! time based (one aggregate per second of the last N seconds).

use super::WindowType;
use crate::base::time::Time;
/// An outcome's flags in a count window.
pub(super) const FAILED: u8 = 1;
pub(super) const SLOW: u8 = 2;

/// Calls, failures and slow calls over a sliding window.
#[derive(Clone, Debug)]
pub(super) enum Window {
    /// A ring of the last `ring.len()` outcomes ([`FAILED`] | [`SLOW`]).
    Count {
        ring: Vec<u8>,
        next: usize,
        len: usize,
        failures: u32,
        slow: u32,
    },
    /// One `(epoch second, calls, failures, slow)` aggregate per second.
    Time { buckets: Vec<(u64, u32, u32, u32)> },
}

impl Window {
    pub(super) fn new(kind: WindowType, size: u32) -> Self {
        match kind {
            WindowType::CountBased => Window::Count {
                ring: vec![0; size as usize],
                next: 0,
                len: 0,
                failures: 0,
                slow: 0,
            },
            WindowType::TimeBased => Window::Time {
                buckets: vec![(u64::MAX, 0, 0, 0); size as usize],
            },
        }
    }

    pub(super) fn reset(&mut self) {
        match self {
            Window::Count {
                next,
                len,
                failures,
                slow,
                ..
            } => {
                *next = 0;
                *len = 0;
                *failures = 0;
                *slow = 0;
            }
            Window::Time { buckets } => buckets.fill((u64::MAX, 0, 0, 0)),
        }
    }

    pub(super) fn record(&mut self, now: Time, failure: bool, slow: bool) {
        match self {
            Window::Count {
                ring,
                next,
                len,
                failures,
                slow: slows,
            } => {
                if *len == ring.len() {
                    let old = ring[*next];
                    *failures -= u32::from(old & FAILED != 0);
                    *slows -= u32::from(old & SLOW != 0);
                } else {
                    *len += 1;
                }
                ring[*next] = (u8::from(failure) * FAILED) | (u8::from(slow) * SLOW);
                *failures += u32::from(failure);
                *slows += u32::from(slow);
                *next = (*next + 1) % ring.len();
            }
            Window::Time { buckets } => {
                let sec = now.0 / 1_000_000_000;
                let n = buckets.len();
                let b = &mut buckets[(sec % n as u64) as usize];
                if b.0 != sec {
                    *b = (sec, 0, 0, 0);
                }
                b.1 += 1;
                b.2 += u32::from(failure);
                b.3 += u32::from(slow);
            }
        }
    }

    /// `(calls, failures, slow calls)` in the window ending at `now`.
    pub(super) fn totals(&self, now: Time) -> (u32, u32, u32) {
        match self {
            Window::Count {
                len,
                failures,
                slow,
                ..
            } => (*len as u32, *failures, *slow),
            Window::Time { buckets } => {
                let sec = now.0 / 1_000_000_000;
                let n = buckets.len() as u64;
                buckets
                    .iter()
                    .filter(|b| b.0 != u64::MAX && b.0 + n > sec && b.0 <= sec)
                    .fold((0, 0, 0), |(c, f, s), b| (c + b.1, f + b.2, s + b.3))
            }
        }
    }
}
