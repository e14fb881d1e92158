//! The estimator of a learned duration: a sliding window of latencies, kept as [`SLICES`]
//! HdrHistograms of `window / SLICES` each (restate's sliding histogram of 60 s in 10
//! sub-windows) and their sum, so that a slice leaving the window is subtracted, not re-added.
//!
//! The value is recomputed when a slice begins, from the slices still in the window (the one
//! just begun is empty then): it is a function of the slice the time falls in, so a caller may
//! ask at any moment and gets the same answer. Between two edges a value costs one multiply;
//! a percentile is read once per slice.

use super::Learned;
use crate::base::time::{Duration, Time};
use crate::policy::window::SLICES;
use hdrhistogram::Histogram;

/// The longest latency told apart (one hour); longer ones count as one hour.
const HIGHEST_NS: u64 = 3_600_000_000_000;

/// One learned duration's window of latencies and its current value.
#[derive(Clone, Debug)]
pub struct Estimator {
    spec: Learned,
    /// Width of one slice, ns (at least 1).
    slice: u64,
    slices: Vec<Histogram<u32>>,
    /// The sum of `slices`.
    total: Histogram<u32>,
    /// `now / slice` of the last advance: `slices[current % SLICES]` is the current slice.
    current: u64,
    /// `factor x percentile`, ns, as of the current slice's start; none = no latency in the
    /// window.
    learned: Option<u64>,
}

fn histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("1 ns to 1 h at 3 digits is valid")
}

impl Estimator {
    pub fn new(spec: Learned) -> Self {
        Estimator {
            spec,
            slice: (spec.window.0 / SLICES as u64).max(1),
            slices: vec![histogram(); SLICES],
            total: histogram(),
            current: 0,
            learned: None,
        }
    }

    /// Moves to the slice holding `now`, forgetting the slices that leave the window; at each
    /// slice edge passed whose value differs from the one before, `changed(edge, value)` is told
    /// the first attempt's new value (for the series). Time never goes back.
    pub fn advance(&mut self, now: Time, mut changed: impl FnMut(Time, Duration)) {
        let idx = now.0 / self.slice;
        // Past a whole window of edges every slice is empty; later edges change nothing.
        let first = self.current + 1;
        let last = idx.min(self.current + SLICES as u64);
        for edge in first..=last {
            let k = (edge % SLICES as u64) as usize;
            if !self.slices[k].is_empty() {
                let gone = std::mem::replace(&mut self.slices[k], histogram());
                let subtracted = self.total.subtract(&gone);
                debug_assert!(subtracted.is_ok(), "slices share the total's bounds");
            }
            let before = self.first_attempt();
            self.learned = self.estimate();
            let after = self.first_attempt();
            if after != before {
                changed(Time(edge * self.slice), after);
            }
        }
        self.current = self.current.max(idx);
    }

    /// Counts one latency seen at `now` (after [`Estimator::advance`] to `now`).
    pub fn record(&mut self, latency: Duration) {
        let v = latency.0.clamp(1, HIGHEST_NS);
        let k = (self.current % SLICES as u64) as usize;
        self.slices[k].saturating_record(v);
        self.total.saturating_record(v);
    }

    /// The value for attempt `attempt` (0 = the first try), as of the last advance:
    /// `clamp(factor x percentile x 2^attempt, min, max)` with `attempt_doubling`, else without
    /// the doubling; `max` while the window holds no latency.
    pub fn value(&self, attempt: u16) -> Duration {
        let Some(base) = self.learned else {
            return self.spec.max;
        };
        let doubled = if self.spec.attempt_doubling {
            base.saturating_mul(1u64 << u32::from(attempt).min(63))
        } else {
            base
        };
        Duration(doubled.clamp(self.spec.min.0, self.spec.max.0))
    }

    /// The first attempt's value (the series' level).
    pub fn first_attempt(&self) -> Duration {
        self.value(0)
    }

    /// `factor x percentile` of the window's latencies, ns; none when it holds none.
    fn estimate(&self) -> Option<u64> {
        if self.total.is_empty() {
            return None;
        }
        let p = self.total.value_at_quantile(self.spec.percentile / 100.0);
        Some((p as f64 * self.spec.factor).round() as u64)
    }
}
