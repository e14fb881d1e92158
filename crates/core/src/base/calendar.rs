//! The future event list as a calendar queue (Brown 1988) whose bucket width adapts to the
//! event density, in the manner of the ladder queue (Tang, Goh and Thng 2005): events ordered by
//! `(time, insertion sequence)`, the clock only moving forward.
//!
//! A push appends the event to the bucket of its time (one move); a bucket is sorted, stably by
//! time, when the clock reaches it, and then popped front to back. Ties stay first-in-first-out
//! without a sequence number because all the pending events of one time are always in one
//! container (the bucket being popped, a bucket of the ring, or the far list), each container
//! holds them in insertion order, and every move between containers (a sort, a migration, a
//! rebuild) keeps their relative order.
//!
//! - `current`: the bucket being popped, sorted by time, popped from `head`. A push into its
//!   time range is inserted after every event of the same or an earlier time.
//! - `ring`: `2^RING_BITS` buckets of width `2^shift` ns, one per index `t >> shift` in
//!   `(cur, limit)`, where `limit <= cur + 2^RING_BITS`, so a ring slot never holds two indices.
//!   A bitmask finds the next non-empty one.
//! - `far`: the events at or past `limit`, in insertion order. When the clock has moved half a
//!   ring past the last extension, `limit` moves to `cur + 2^RING_BITS` and the far events it
//!   now covers move into the (empty) buckets it opened, before any push can reach them.
//!
//! The width adapts: every so many pops the queue compares two costs per pop, the events
//! shifted by pushes into the middle of the current bucket (buckets too wide) and the far
//! events scanned by extensions (a ring too short for the events' spread), and rebuilds with a
//! quarter or four times the width when one dominates (an `O(n)` pass, at most once per `n/2`
//! pops).

use crate::base::time::Time;

/// Ring slots: `2^RING_BITS`.
const RING_BITS: u32 = 11;
const RING: u64 = 1 << RING_BITS;
const MASK: u64 = RING - 1;
/// The width of a bucket at the start, `2^START_SHIFT` ns (about 16 us).
const START_SHIFT: u32 = 14;
/// The most capacity a drained bucket keeps for reuse (entries).
const KEEP: usize = 256;
/// How far ahead of the pop [`CalendarQueue::pop_with`] announces an event.
const AHEAD: usize = 16;

/// A monotone priority queue of events ordered by `(time, insertion sequence)`.
#[derive(Clone)]
pub struct CalendarQueue<E> {
    current: Vec<(u64, E)>,
    head: usize,
    /// The index (`time >> shift`) of the current bucket; `now >> shift` once an event popped.
    cur: u64,
    shift: u32,
    ring: Vec<Vec<(u64, E)>>,
    /// Bit `p % 64` of word `p / 64` set when ring slot `p` is non-empty.
    nonempty: Vec<u64>,
    /// Indices below this go to the ring, the others to `far`.
    limit: u64,
    far: Vec<(u64, E)>,
    len: usize,
    pushed: u64,
    now: Time,
    /// Since the last check of the width: pops, events shifted by pushes into the current
    /// bucket, far events scanned by extensions.
    pops: u64,
    shifted: u64,
    scanned: u64,
}

impl<E: Copy> Default for CalendarQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> CalendarQueue<E> {
    pub fn new() -> Self {
        CalendarQueue {
            current: Vec::new(),
            head: 0,
            cur: 0,
            shift: START_SHIFT,
            ring: (0..RING).map(|_| Vec::new()).collect(),
            nonempty: vec![0; (RING / 64) as usize],
            limit: RING,
            far: Vec::new(),
            len: 0,
            pushed: 0,
            now: Time::ZERO,
            pops: 0,
            shifted: 0,
            scanned: 0,
        }
    }

    /// Schedules `event` at `at` (a time in the past: see `count_push`).
    #[inline]
    pub fn push(&mut self, at: Time, event: E) {
        let t = self.count_push(at);
        self.place(t, event);
    }

    #[inline]
    fn place(&mut self, t: u64, event: E) {
        let i = t >> self.shift;
        if i <= self.cur {
            self.insert_current(t, event);
        } else if i < self.limit {
            let p = (i & MASK) as usize;
            self.ring[p].push((t, event));
            self.nonempty[p / 64] |= 1 << (p % 64);
        } else {
            self.far.push((t, event));
        }
    }

    /// Into the bucket being popped, after every event of the same or an earlier time.
    #[inline]
    fn insert_current(&mut self, t: u64, event: E) {
        let n = self.current.len();
        if n == self.head || self.current[n - 1].0 <= t {
            self.current.push((t, event));
            return;
        }
        let at = self.head + self.current[self.head..].partition_point(|e| e.0 <= t);
        self.shifted += (n - at) as u64;
        self.current.insert(at, (t, event));
    }

    /// Removes and returns the earliest event, advancing the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_with(|_| {})
    }

    /// As [`Self::pop`], calling `soon` on the event a few places behind the popped one: it pops
    /// soon, so an engine can prefetch the state it will touch.
    #[inline]
    pub fn pop_with(&mut self, mut soon: impl FnMut(&E)) -> Option<(Time, E)> {
        if self.head == self.current.len() {
            self.advance()?;
        }
        let (t, e) = self.current[self.head];
        self.head += 1;
        if let Some((_, next)) = self.current.get(self.head + AHEAD) {
            soon(next);
        }
        self.len -= 1;
        self.pops += 1;
        self.now = Time(t);
        Some((Time(t), e))
    }

    /// Makes the next non-empty bucket current and sorts it. Never inlined: once a bucket, not
    /// an event, and inlined into the engine's loop its sort was laid out differently on every
    /// build (7 M instructions either way on the overload benchmark).
    #[inline(never)]
    fn advance(&mut self) -> Option<()> {
        if self.len == 0 {
            return None;
        }
        self.current.clear();
        self.head = 0;
        if self.pops >= 4096 && self.pops as usize >= self.len / 2 {
            self.adapt();
            if self.head < self.current.len() {
                return Some(());
            }
        }
        let from = loop {
            if self.cur + RING - self.limit >= RING / 2 {
                self.extend();
            }
            if let Some(i) = self.next_nonempty(self.cur + 1) {
                break i;
            }
            // The ring is empty: jump to the earliest far event.
            let min = self.far.iter().map(|e| e.0).min()?;
            self.cur = (min >> self.shift) - 1;
            self.limit = self.cur + 1;
        };
        self.cur = from;
        let p = (from & MASK) as usize;
        self.nonempty[p / 64] &= !(1 << (p % 64));
        let spent = std::mem::replace(&mut self.current, std::mem::take(&mut self.ring[p]));
        if spent.capacity() <= KEEP {
            self.ring[p] = spent;
        }
        self.current.sort_by_key(|e| e.0);
        Some(())
    }

    /// The first index in `[from, limit)` whose ring slot is non-empty.
    fn next_nonempty(&self, from: u64) -> Option<u64> {
        let mut i = from;
        while i < self.limit {
            let p = i & MASK;
            let w = self.nonempty[(p / 64) as usize] >> (p % 64);
            if w != 0 {
                let found = i + u64::from(w.trailing_zeros());
                return (found < self.limit).then_some(found);
            }
            i += 64 - p % 64;
        }
        None
    }

    /// Moves `limit` to a whole ring past the current bucket and the far events it now covers
    /// into their buckets (all empty: no push could reach them yet), keeping `far`'s order.
    fn extend(&mut self) {
        self.limit = self.cur + RING;
        if self.far.is_empty() {
            return;
        }
        self.scanned += self.far.len() as u64;
        let mut far = std::mem::take(&mut self.far);
        let mut kept = 0;
        for k in 0..far.len() {
            let (t, e) = far[k];
            if t >> self.shift < self.limit {
                self.place(t, e);
            } else {
                far[kept] = (t, e);
                kept += 1;
            }
        }
        far.truncate(kept);
        self.far = far;
    }

    /// Compares the costs of the width since the last check and rebuilds when one dominates.
    fn adapt(&mut self) {
        let pops = self.pops;
        let (shifted, scanned) = (self.shifted, self.scanned);
        self.pops = 0;
        self.shifted = 0;
        self.scanned = 0;
        if shifted > 4 * pops && self.shift >= 2 {
            self.rebuild(self.shift - 2);
        } else if scanned > 2 * pops && shifted < pops / 4 {
            // Wide enough for the ring to span every pending event.
            let last = self.far.iter().map(|e| e.0).max().unwrap_or(self.now.0);
            let span = (last - self.now.0) >> RING_BITS;
            let shift = (64 - span.leading_zeros()).clamp(self.shift + 1, 63);
            self.rebuild(shift);
        }
    }

    /// Re-places every pending event with buckets of width `2^shift`. The events of one time
    /// are all in one container, in order, and stay so.
    fn rebuild(&mut self, shift: u32) {
        let mut all = Vec::with_capacity(self.len);
        all.extend_from_slice(&self.current[self.head..]);
        self.current.clear();
        self.head = 0;
        for i in self.cur + 1..self.limit {
            let p = (i & MASK) as usize;
            if self.nonempty[p / 64] & (1 << (p % 64)) != 0 {
                all.append(&mut self.ring[p]);
            }
        }
        self.nonempty.iter_mut().for_each(|w| *w = 0);
        all.append(&mut self.far);
        self.shift = shift;
        self.cur = self.now.0 >> shift;
        self.limit = self.cur + RING;
        for (t, e) in all {
            if t >> shift <= self.cur {
                self.current.push((t, e));
            } else {
                self.place(t, e);
            }
        }
        self.current.sort_by_key(|e| e.0);
    }

    pending_set_counts!();
}

#[cfg(test)]
mod tests {
    use super::*;

    pending_set_tests!(CalendarQueue);

    #[test]
    fn the_end_of_time_is_a_valid_time() {
        let mut q = CalendarQueue::new();
        q.push(Time::MAX, 'z');
        q.push(Time(7), 'a');
        q.push(Time::MAX, 'y');
        assert_eq!(q.pop(), Some((Time(7), 'a')));
        assert_eq!(q.pop(), Some((Time::MAX, 'z')));
        q.push(Time::MAX, 'x');
        assert_eq!(q.pop(), Some((Time::MAX, 'y')));
        assert_eq!(q.pop(), Some((Time::MAX, 'x')));
        assert_eq!(q.pop(), None);
    }

    /// Pushes at exactly `now` (zero delay) mixed with near and far-future ones, so the current
    /// bucket, the ring and the far list all hold ties of the same times.
    #[test]
    fn pushes_at_now_and_far_future_keep_fifo() {
        against_reference(
            4,
            50_000,
            |_, s| s.range_u64(0, 2),
            |s| match s.range_u64(0, 3) {
                0 => 0,
                1 => s.range_u64(0, 4) << 12,
                2 => s.range_u64(0, 8) << 30,
                _ => s.range_u64(0, 4) << 40,
            },
        );
    }

    /// Dense short delays make the buckets too wide (the queue narrows them); then a burst of
    /// widely spread timers makes the ring too short (it widens): both rebuilds keep the order.
    #[test]
    fn adapting_the_width_keeps_the_order() {
        let q = against_reference(
            5,
            120_000,
            |step, s| match step {
                0 => 30_000,
                _ => s.range_u64(0, 2),
            },
            |s| {
                if s.range_u64(0, 4) == 0 {
                    s.range_u64(0, 20) << 30
                } else {
                    s.range_u64(0, 1 << 10)
                }
            },
        );
        assert_ne!(q.shift, START_SHIFT, "the width never adapted");
    }

    /// A run of a million timers spread over ten seconds, each popped one rescheduling itself
    /// for the first half (a herd's backoff): every pop in order.
    #[test]
    fn a_million_timers() {
        let n = 1_000_000u64;
        let q = against_reference(
            6,
            2 * n,
            |step, s| match step {
                0 => n,
                _ => u64::from(s.range_u64(0, 2) == 0),
            },
            |s| s.range_u64(0, 10_000_000_000),
        );
        assert!(q.shift > START_SHIFT, "a 10 s spread needs wider buckets");
    }
}
