//! The future event list: events ordered by `(time, insertion sequence)`.
//!
//! Ties pop first-in-first-out, so a run never depends on how a heap breaks ties. The clock only
//! moves forward, which is the case a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) is built
//! for. On the hold model the `radix-heap` crate kept 8-13 M holds/s from 10^3 to 10^6 pending
//! events, while `std::collections::BinaryHeap` fell from 17 to 0.7 M/s (it wins only at 10^3)
//! and the `priority-queue` crate stayed below 7 M/s. This is our own radix heap over the time
//! alone, with 16 buckets per 4-bit digit instead of one per bit: FIFO ties come from its
//! structure instead of a 64-bit sequence number in the key, and an event moves between buckets
//! at most once per hex digit of its distance from the clock (7 times across 100 ms, against up
//! to 27 with one bucket per bit), which is what a burst of millions of timers pays for (numbers
//! and the command in `docs/performance.md`). Cancelled events are not removed; their handler
//! checks a generation number and returns (lazy deletion), one comparison instead of an indexed
//! heap's bookkeeping on every push and pop.

use crate::base::time::Time;

use super::calendar::CalendarQueue;
use super::chunks::{Chunks, Pool};

/// The engine's future event list, chosen once per run from the model (the numbers are in
/// `docs/performance.md`, "The event queue"): the calendar queue
/// ([`super::calendar`]) for open and replayed workloads, whose events are dense and near, and
/// the radix heap below for bursts and closed loops (a burst's millions of timers spread over
/// seconds measured 1.2x slower and 40% larger in the calendar queue, and its many small
/// buckets allocate as a closed loop's clock moves). Both pop the same events in the same
/// order, so the choice never changes a result.
#[derive(Clone)]
pub enum EventQueue<E> {
    Calendar(CalendarQueue<E>),
    Radix(RadixHeap<E>),
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// The radix heap (the default, and what every use outside the engine's run gets).
    pub fn new() -> Self {
        EventQueue::Radix(RadixHeap::new())
    }

    /// The calendar queue.
    pub fn calendar() -> Self {
        EventQueue::Calendar(CalendarQueue::new())
    }

    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        match self {
            EventQueue::Calendar(q) => q.push(at, event),
            EventQueue::Radix(q) => q.push(at, event),
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_with(|_| {})
    }

    /// Pops the earliest event; `soon` hears events that pop soon (to prefetch their state).
    #[inline]
    pub fn pop_with(&mut self, soon: impl FnMut(&E)) -> Option<(Time, E)> {
        match self {
            EventQueue::Calendar(q) => q.pop_with(soon),
            EventQueue::Radix(q) => q.pop_with(soon),
        }
    }

    /// The time of the last popped event.
    #[inline]
    pub fn now(&self) -> Time {
        match self {
            EventQueue::Calendar(q) => q.now(),
            EventQueue::Radix(q) => q.now(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            EventQueue::Calendar(q) => q.len(),
            EventQueue::Radix(q) => q.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events pushed so far.
    pub fn pushed(&self) -> u64 {
        match self {
            EventQueue::Calendar(q) => q.pushed(),
            EventQueue::Radix(q) => q.pushed(),
        }
    }
}

/// Bits of the time per level of buckets.
const DIGIT: u32 = 4;
/// Buckets per level: one per value of a digit.
const WIDTH: usize = 1 << DIGIT;
/// Levels: one per digit of a 64-bit time.
const LEVELS: usize = 64 / DIGIT as usize;
/// Buckets in all, and the words of their bitmask.
const BUCKETS: usize = LEVELS * WIDTH;
const WORDS: usize = BUCKETS / 64;

/// A monotone priority queue of events ordered by `(time, insertion sequence)`.
///
/// A radix heap over the time alone (Ahuja et al.), in base 16: an event at exactly the current
/// time waits in `current`; any other sits in the bucket `(level, digit)` where `level` is the
/// highest hex digit at which its time differs from the clock and `digit` its own value there.
/// Bucket order is time order (a lower level shares more leading digits with the clock; within a
/// level, the lower digit is earlier), so the lowest non-empty bucket (a bitmask finds it) holds
/// the earliest event. Refilling takes that bucket: at level 0 all its events share one time and
/// it becomes `current` whole; higher up, the clock moves to its earliest time and the bucket is
/// spread over the lower levels, which are all empty.
///
/// Ties need no sequence number: equal times always share a bucket, every bucket is in insertion
/// order (a push appends the newest event; a spread copies a bucket in order into empty buckets),
/// and `current` is popped from the front, so equal times come out first-in-first-out. An entry
/// is the time and the event (24 bytes for the engine's events, against 48 with a 128-bit
/// `(time, seq)` key).
#[derive(Clone)]
pub struct RadixHeap<E> {
    /// Events at exactly `now`, in insertion order.
    current: Chunks<(u64, E)>,
    /// Bucket `level * WIDTH + digit`.
    buckets: Vec<Chunks<(u64, E)>>,
    /// The chunks every list takes its room from.
    pool: Pool<(u64, E)>,
    /// Bit `b % 64` of word `b / 64` set when bucket `b` is non-empty.
    nonempty: [u64; WORDS],
    len: usize,
    pushed: u64,
    now: Time,
}

impl<E: Copy> Default for RadixHeap<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// The largest refilled bucket whose events [`RadixHeap::pop_with`] announces.
const SOON: usize = 256;

/// The bucket of time `t` when the clock is at `now`, or `None` if the two are equal.
#[inline]
fn bucket(t: u64, now: u64) -> Option<usize> {
    let x = t ^ now;
    if x == 0 {
        return None;
    }
    let level = (63 - x.leading_zeros()) / DIGIT;
    let digit = (t >> (level * DIGIT)) as usize & (WIDTH - 1);
    Some(level as usize * WIDTH + digit)
}

impl<E: Copy> RadixHeap<E> {
    pub fn new() -> Self {
        RadixHeap {
            current: Chunks::default(),
            buckets: (0..BUCKETS).map(|_| Chunks::default()).collect(),
            pool: Pool::new(),
            nonempty: [0; WORDS],
            len: 0,
            pushed: 0,
            now: Time::ZERO,
        }
    }

    /// Schedules `event` at `at` (a time in the past: see `count_push`).
    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        let t = self.count_push(at);
        match bucket(t, self.now.0) {
            None => self.current.push((t, event), &mut self.pool),
            Some(b) => {
                self.buckets[b].push((t, event), &mut self.pool);
                self.nonempty[b / 64] |= 1 << (b % 64);
            }
        }
    }

    /// Removes and returns the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_with(|_| {})
    }

    /// As [`Self::pop`], calling `soon` on every event of a small bucket that is about to be
    /// refilled from: these are the next events to pop, so an engine can prefetch the state they
    /// will touch.
    #[inline]
    pub fn pop_with(&mut self, soon: impl FnMut(&E)) -> Option<(Time, E)> {
        if self.current.is_empty() {
            self.refill(soon)?;
        }
        let (t, e) = self.current.pop_front(&mut self.pool)?;
        self.len -= 1;
        Some((Time(t), e))
    }

    /// Moves the clock to the earliest pending time and refills `current` from its bucket.
    fn refill(&mut self, mut soon: impl FnMut(&E)) -> Option<()> {
        let w = self.nonempty.iter().position(|&w| w != 0)?;
        let k = w * 64 + self.nonempty[w].trailing_zeros() as usize;
        self.nonempty[w] &= !(1 << (k % 64));
        // A bucket this small pops soon, while what `soon` prefetched is still in the cache.
        if self.buckets[k].len() <= SOON {
            self.buckets[k].iter().for_each(|(_, e)| soon(e));
        }
        if k < WIDTH {
            // Level 0: one time, already in insertion order. It becomes `current` whole, and the
            // empty `current` takes its place.
            let t = self.buckets[k].iter().next()?.0;
            debug_assert!(t >= self.now.0, "the clock went back");
            self.now = Time(t);
            std::mem::swap(&mut self.current, &mut self.buckets[k]);
            return Some(());
        }
        let mut spread = std::mem::take(&mut self.buckets[k]);
        let min = spread
            .slices()
            .filter_map(|c| c.iter().map(|&(t, _)| t).min())
            .min()?;
        debug_assert!(min >= self.now.0, "the clock went back");
        self.now = Time(min);
        // Every event lands below this bucket's level; each chunk read goes back to the pool,
        // where the lower buckets take theirs, so a spread needs no room beyond a few chunks.
        let (buckets, current, nonempty) =
            (&mut self.buckets, &mut self.current, &mut self.nonempty);
        spread.drain(&mut self.pool, |(t, e), pool| match bucket(t, min) {
            None => current.push((t, e), pool),
            Some(b) => {
                buckets[b].push((t, e), pool);
                nonempty[b / 64] |= 1 << (b % 64);
            }
        });
        std::mem::swap(&mut self.buckets[k], &mut spread);
        Some(())
    }

    pending_set_counts!();
}

#[cfg(test)]
mod tests {
    use super::*;

    pending_set_tests!(RadixHeap);

    /// A burst spread over the buckets holds its events and a few chunks of room, not the up
    /// to twice its size of vectors grown by doubling, and pops as a reference heap does.
    #[test]
    fn large_buckets_spread_in_order_with_little_room() {
        use super::super::chunks::CHUNK;
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut q = RadixHeap::new();
        let mut r = BinaryHeap::new();
        let mut s = crate::base::rng::Stream::new(9, 0, crate::base::rng::Purpose::Start, 0);
        let n = 150 * CHUNK as u64;
        for seq in 0..n {
            let t = s.range_u64(0, 1 << 30);
            q.push(Time(t), seq);
            r.push(Reverse((t, seq)));
        }
        let room = |q: &RadixHeap<u64>| {
            q.buckets.iter().map(Chunks::room).sum::<usize>() + q.current.room() + q.pool.room()
        };
        // Pending events, two partly used chunks a list that has any (the front one partly
        // read, the back one partly filled), and the pool.
        let bound = |q: &RadixHeap<u64>| {
            let lists = q.buckets.iter().chain([&q.current]);
            let partly = lists.filter(|l| l.room() > 0).count();
            q.len() + 2 * partly * CHUNK + q.pool.room()
        };
        // Vectors grown by doubling would hold 1.7 times the burst here (four top buckets of
        // about 38,000 events in room for 65,536 each).
        assert!(room(&q) <= bound(&q), "room {}", room(&q));
        assert!(room(&q) < n as usize * 14 / 10, "room {}", room(&q));
        let mut seq = n;
        for step in 0..2 * n {
            let got = q.pop();
            let want = r.pop().map(|Reverse((t, id))| (Time(t), id));
            assert_eq!(got, want, "step {step}");
            // Half as many pushes as pops, each later than now: the queue drains.
            if step % 2 == 0
                && let Some((t, _)) = got
            {
                let t = t.0 + s.range_u64(0, 1 << 20);
                q.push(Time(t), seq);
                r.push(Reverse((t, seq)));
                seq += 1;
            }
            if step % 1000 == 0 {
                assert!(room(&q) <= bound(&q), "step {step}: room {}", room(&q));
            }
        }
        assert!(q.is_empty() && r.is_empty());
    }

    /// Either queue behind `EventQueue` pops the same events in the same order.
    #[test]
    fn both_event_queues_pop_the_same_order() {
        let mut a = EventQueue::new();
        let mut b = EventQueue::calendar();
        let mut s = crate::base::rng::Stream::new(3, 0, crate::base::rng::Purpose::Start, 0);
        let mut now = 0u64;
        for i in 0..200_000u64 {
            for _ in 0..s.range_u64(0, 2) + u64::from(i < 1000) {
                let t = now + (s.range_u64(0, 1 << 20) >> s.range_u64(0, 20));
                a.push(Time(t), i);
                b.push(Time(t), i);
            }
            let (x, y) = (a.pop(), b.pop());
            assert_eq!(x, y, "pop {i}");
            if let Some((t, _)) = x {
                now = t.0;
            }
        }
        assert_eq!((a.len(), a.pushed()), (b.len(), b.pushed()));
    }

    #[test]
    fn the_end_of_time_is_a_valid_time() {
        let mut q = RadixHeap::new();
        q.push(Time::MAX, 'z');
        q.push(Time(7), 'a');
        assert_eq!(q.pop(), Some((Time(7), 'a')));
        assert_eq!(q.pop(), Some((Time::MAX, 'z')));
        assert_eq!(q.pop(), None);
    }
}
