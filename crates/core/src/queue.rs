//! The future event list: events ordered by `(time, insertion sequence)`.
//!
//! Ties pop first-in-first-out, so a run never depends on how a heap breaks ties. The clock only
//! moves forward, which is exactly the case a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) is
//! built for: on the hold model the `radix-heap` crate kept 8-13 M holds/s from 10^3 to 10^6
//! pending events, while `std::collections::BinaryHeap` fell from 17 to 0.7 M/s (it wins only at
//! 10^3) and the `priority-queue` crate stayed below 7 M/s (numbers and the command in
//! `docs/performance.md`). Storms are the case with many pending events. Cancelled events are
//! not removed; their handler checks a generation number and returns (lazy deletion), which costs
//! one comparison instead of an indexed heap's bookkeeping on every push and pop.

use crate::time::Time;
use radix_heap::RadixHeapMap;
use std::cmp::Reverse;

/// A monotone priority queue of events keyed by `(time, seq)`.
pub struct EventQueue<E> {
    heap: RadixHeapMap<Reverse<u128>, E>,
    seq: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: RadixHeapMap::new(),
            seq: 0,
            now: Time::ZERO,
        }
    }

    /// Schedules `event` at `at`. Scheduling in the past is an engine bug: debug builds (and the
    /// tests) stop on it; release builds clamp to now, so the clock still never goes back.
    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        let at = at.max(self.now);
        let key = (u128::from(at.0) << 64) | u128::from(self.seq);
        self.seq += 1;
        self.heap.push(Reverse(key), event);
    }

    /// Removes and returns the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let (Reverse(key), e) = self.heap.pop()?;
        let t = Time((key >> 64) as u64);
        debug_assert!(t >= self.now, "the clock went back");
        self.now = t;
        Some((t, e))
    }

    /// The time of the last popped event.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events pushed so far (the insertion counter).
    pub fn pushed(&self) -> u64 {
        self.seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(Time(5), 'a');
        q.push(Time(1), 'b');
        q.push(Time(5), 'c');
        q.push(Time(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "event scheduled in the past")]
    fn scheduling_in_the_past_is_caught() {
        let mut q = EventQueue::new();
        q.push(Time(10), 1);
        q.pop();
        q.push(Time(3), 2);
    }

    #[test]
    fn clock_never_goes_back_under_random_pushes() {
        let mut q = EventQueue::new();
        let mut s = crate::rng::Stream::new(1, 0, crate::rng::Purpose::Start, 0);
        for i in 0..1000u32 {
            q.push(Time(s.range_u64(0, 1000)), i);
        }
        let mut last = Time::ZERO;
        let mut n = 0;
        while let Some((t, _)) = q.pop() {
            assert!(t >= last);
            last = t;
            n += 1;
            if n < 5000 {
                q.push(t.after(crate::time::Duration(s.range_u64(0, 100))), n);
            }
        }
    }
}
