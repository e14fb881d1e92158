//! The future event list as a calendar queue (Brown 1988) whose bucket width adapts to the
//! event density, in the manner of the ladder queue (Tang, Goh and Thng 2005), with a second,
//! coarse ring in the manner of a hierarchical timing wheel (Varghese and Lauck 1987): events
//! ordered by `(time, insertion sequence)`, the clock only moving forward.
//!
//! A push appends the event to the bucket of its time (one move); a bucket is sorted, stably by
//! time, when the clock reaches it ([`super::radix_sort`]), and then popped front to back. Ties
//! stay first-in-first-out without a sequence number because all the pending events of one time
//! are always in one container (the bucket being popped, a fine bucket, a coarse bucket, or the
//! far list), each container holds them in insertion order, and every move between containers
//! (a sort, a migration, a rebuild) keeps their relative order.
//!
//! Fine indices are `t >> shift`; a coarse index is a fine index `>> RING_BITS`, so a coarse
//! bucket covers exactly the `2^RING_BITS` fine buckets of one turn of the fine ring.
//!
//! - `current`: the bucket being popped (fine index `cur`), sorted by time, popped from `head`.
//!   A push into its time range is inserted after every event of the same or an earlier time.
//! - `fine`: the fine buckets after `cur` of the coarse bucket `win` being worked through (the
//!   window) and of the one after it, slot `i % (2 * RING)` for fine index `i`: a push less
//!   than a coarse bucket's width ahead always lands in its fine bucket at once.
//! - `coarse`: the coarse buckets from `win + 2` up to `limit` (`limit <= win + RING`), slot
//!   `j % RING` for coarse index `j`. When the clock enters the coarse bucket after the window,
//!   that one becomes the window and the coarse bucket after it moves into the fine buckets the
//!   old window left empty, once, before any push can reach them.
//! - `far`: the events at or past `limit`, in insertion order. When the window has moved half a
//!   coarse ring past the last extension, `limit` moves to `win + RING` and the far events it now
//!   covers move into the (empty) coarse buckets it opened.
//!
//! Bitmasks find the next non-empty fine and coarse buckets. The width adapts: every so many
//! pops the queue compares two costs per pop, the events shifted by pushes into the middle of
//! the current bucket (buckets too wide) and the far events scanned by extensions (rings too
//! short for the events' spread), and rebuilds with a quarter or a wider width when one
//! dominates (an `O(n)` pass, at most once per `n/2` pops).

use super::radix_sort::sort_low_bits;
use crate::time::Time;

/// Slots of the coarse ring, and fine buckets per coarse bucket: `2^RING_BITS`.
const RING_BITS: u32 = 11;
const RING: u64 = 1 << RING_BITS;
/// Slots of the fine ring: the window's fine buckets and the next coarse bucket's.
const FINE: u64 = 2 * RING;
/// The width of a fine bucket at the start, `2^START_SHIFT` ns (about 16 us).
const START_SHIFT: u32 = 14;
/// The narrowest and widest fine buckets: a coarse index of a time must fit (`shift +
/// RING_BITS < 64`) and the window's end (`(win + 1) << RING_BITS`) must not overflow.
const MIN_SHIFT: u32 = 1;
const MAX_SHIFT: u32 = 63 - RING_BITS - 1;
/// The most capacity a drained bucket keeps for reuse (entries).
const KEEP: usize = 256;
/// How far ahead of the pop [`CalendarQueue::pop_with`] announces an event.
const AHEAD: usize = 16;

/// A ring of buckets (a power of two of them) and the bitmask of the non-empty ones.
struct Ring<E> {
    slots: Vec<Vec<(u64, E)>>,
    /// Bit `p % 64` of word `p / 64` set when slot `p` is non-empty.
    nonempty: Box<[u64]>,
    /// The slots less one: slot `index & mask` holds `index`.
    mask: u64,
}

impl<E> Ring<E> {
    fn new(size: u64) -> Self {
        debug_assert!(size.is_power_of_two() && size >= 64);
        Ring {
            slots: (0..size).map(|_| Vec::new()).collect(),
            nonempty: vec![0; (size / 64) as usize].into_boxed_slice(),
            mask: size - 1,
        }
    }

    /// Appends to the slot of `index`; a slot with no room takes a buffer from `spare`.
    #[inline]
    fn push(&mut self, index: u64, t: u64, event: E, spare: &mut Spare<E>) {
        let p = (index & self.mask) as usize;
        let slot = &mut self.slots[p];
        give_room(slot, spare);
        slot.push((t, event));
        self.nonempty[p / 64] |= 1 << (p % 64);
    }

    /// Empties the slot of `index`, returning its events (and their buffer).
    fn take(&mut self, index: u64) -> Vec<(u64, E)> {
        let p = (index & self.mask) as usize;
        self.nonempty[p / 64] &= !(1 << (p % 64));
        std::mem::take(&mut self.slots[p])
    }

    /// The first index in `[from, to)` whose slot is non-empty (`to - from` at most the slots).
    fn next_nonempty(&self, from: u64, to: u64) -> Option<u64> {
        let mut i = from;
        while i < to {
            let p = i & self.mask;
            let w = self.nonempty[(p / 64) as usize] >> (p % 64);
            if w != 0 {
                let found = i + u64::from(w.trailing_zeros());
                return (found < to).then_some(found);
            }
            i += 64 - p % 64;
        }
        None
    }

    /// Appends every event of the ring to `all`, slot by slot from the slot of `from`.
    fn drain_into(&mut self, from: u64, all: &mut Vec<(u64, E)>) {
        for k in 0..=self.mask {
            let p = ((from + k) & self.mask) as usize;
            if self.nonempty[p / 64] & (1 << (p % 64)) != 0 {
                all.append(&mut self.slots[p]);
            }
        }
        self.nonempty.fill(0);
    }
}

/// Drained buckets' buffers, shared by both rings: a push into an empty slot takes one, so a
/// run allocates about as many buffers as it ever has non-empty buckets at once, however many
/// of the 4096 slots its clock passes through (a closed loop's few pending events visit them
/// all: one buffer each was 0.04 allocations per event of `tests/alloc_free.rs`).
type Spare<E> = Vec<Vec<(u64, E)>>;

/// Gives a slot with no room a buffer from `spare`, if there is one.
#[inline]
fn give_room<E>(slot: &mut Vec<(u64, E)>, spare: &mut Spare<E>) {
    if slot.capacity() == 0
        && let Some(buffer) = spare.pop()
    {
        *slot = buffer;
    }
}

/// Gives a drained bucket's buffer to `spare`, unless it is large (a burst's buckets of
/// thousands are freed once popped) or has no room to give.
fn recycle<E>(spare: &mut Spare<E>, mut spent: Vec<(u64, E)>) {
    if spent.capacity() <= KEEP && spent.capacity() > 0 {
        spent.clear();
        spare.push(spent);
    }
}

/// A monotone priority queue of events ordered by `(time, insertion sequence)`.
pub struct CalendarQueue<E> {
    current: Vec<(u64, E)>,
    head: usize,
    /// The fine index of the current bucket; `now >> shift` once an event popped.
    cur: u64,
    shift: u32,
    fine: Ring<E>,
    /// The coarse index of the window: the fine ring holds its fine buckets after `cur` and
    /// those of the coarse bucket after it.
    win: u64,
    coarse: Ring<E>,
    /// Coarse indices below this go to the coarse ring, the others to `far`.
    limit: u64,
    far: Vec<(u64, E)>,
    spare: Spare<E>,
    /// The other buffer of the bucket sort.
    scratch: Vec<(u64, E)>,
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
            fine: Ring::new(FINE),
            win: 0,
            coarse: Ring::new(RING),
            limit: RING,
            far: Vec::new(),
            spare: Vec::new(),
            scratch: Vec::new(),
            len: 0,
            pushed: 0,
            now: Time::ZERO,
            pops: 0,
            shifted: 0,
            scanned: 0,
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
        let t = at.0.max(self.now.0);
        self.pushed += 1;
        self.len += 1;
        self.place(t, event);
    }

    #[inline]
    fn place(&mut self, t: u64, event: E) {
        let i = t >> self.shift;
        let j = i >> RING_BITS;
        if i <= self.cur {
            self.insert_current(t, event);
        } else if j <= self.win + 1 {
            self.fine.push(i, t, event, &mut self.spare);
        } else if j < self.limit {
            self.coarse.push(j, t, event, &mut self.spare);
        } else {
            self.far.push((t, event));
        }
    }

    /// Into the bucket being popped, after every event of the same or an earlier time.
    #[inline]
    fn insert_current(&mut self, t: u64, event: E) {
        let n = self.current.len();
        if n == self.head {
            // All popped: start over instead of growing behind the popped ones (a burst's
            // chain of starts at one time would otherwise keep every start).
            self.current.clear();
            self.head = 0;
            self.current.push((t, event));
            return;
        }
        if self.current[n - 1].0 <= t {
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

    /// As [`Self::pop`], calling `soon` on the event a few places behind the popped one, and on
    /// the first few of each new bucket: they pop soon, so an engine can prefetch the state
    /// they will touch.
    #[inline]
    pub fn pop_with(&mut self, mut soon: impl FnMut(&E)) -> Option<(Time, E)> {
        if self.head == self.current.len() {
            self.advance()?;
            // A new bucket's first events pop next, before the announcement below reaches
            // them: announce them now (without this the forced herd took 1.4x the CPU), but
            // not the one that pops at once.
            self.current[1..].iter().take(AHEAD).for_each(|(_, e)| soon(e));
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

    /// Makes the next non-empty bucket current and sorts it.
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
            let end = (self.win + 2) << RING_BITS;
            if let Some(i) = self.fine.next_nonempty(self.cur + 1, end) {
                break i;
            }
            self.next_window()?;
        };
        if from >> RING_BITS > self.win {
            // Into the coarse bucket after the window: it becomes the window, and the fine
            // buckets the old window left (all empty: `from` is the first non-empty one) take
            // the next coarse bucket.
            self.win += 1;
            self.extend_if_due();
            let bucket = self.coarse.take(self.win + 1);
            self.fill(bucket);
        }
        self.cur = from;
        let bucket = self.fine.take(from);
        let spent = std::mem::replace(&mut self.current, bucket);
        recycle(&mut self.spare, spent);
        sort_low_bits(&mut self.current, &mut self.scratch, self.shift);
        Some(())
    }

    /// The fine ring is empty: the next non-empty coarse bucket (after extending the coarse
    /// ring over the far list when due, or jumping to the earliest far event when the ring is
    /// empty) becomes the window, and its events and the next coarse bucket's move into the fine
    /// ring.
    fn next_window(&mut self) -> Option<()> {
        let j = loop {
            self.extend_if_due();
            if let Some(j) = self.coarse.next_nonempty(self.win + 2, self.limit) {
                break j;
            }
            // The coarse ring is empty: jump to the earliest far event (whose coarse index is
            // at least `limit`, itself at least `win + 2`).
            let min = self.far.iter().map(|e| e.0).min()?;
            self.win = ((min >> self.shift) >> RING_BITS) - 2;
            self.limit = self.win + 2;
        };
        self.win = j;
        self.cur = (j << RING_BITS) - 1;
        let bucket = self.coarse.take(j);
        self.fill(bucket);
        self.extend_if_due();
        let bucket = self.coarse.take(j + 1);
        self.fill(bucket);
        Some(())
    }

    /// Moves a coarse bucket's events into their fine buckets (empty: no push could reach
    /// them yet), in order.
    fn fill(&mut self, bucket: Vec<(u64, E)>) {
        if bucket.is_empty() {
            recycle(&mut self.spare, bucket);
            return;
        }
        if bucket.len() > 8 * RING as usize {
            // Counted out first, so that each fine bucket grows once, to size.
            let mut counts = [0u32; FINE as usize];
            for &(t, _) in &bucket {
                counts[((t >> self.shift) & (FINE - 1)) as usize] += 1;
            }
            for (slot, &n) in self.fine.slots.iter_mut().zip(&counts) {
                if n > 0 {
                    give_room(slot, &mut self.spare);
                    slot.reserve_exact(n as usize);
                }
            }
        }
        for &(t, e) in &bucket {
            self.fine.push(t >> self.shift, t, e, &mut self.spare);
        }
        recycle(&mut self.spare, bucket);
    }

    /// Extends the coarse ring when the window has moved half a ring past the last extension.
    #[inline]
    fn extend_if_due(&mut self) {
        if self.win + RING - self.limit >= RING / 2 {
            self.extend();
        }
    }

    /// Moves `limit` to a whole coarse ring past the window and the far events it now covers
    /// into their coarse buckets (all empty: no push could reach them yet), keeping `far`'s
    /// order.
    fn extend(&mut self) {
        self.limit = self.win + RING;
        if self.far.is_empty() {
            return;
        }
        self.scanned += self.far.len() as u64;
        let mut far = std::mem::take(&mut self.far);
        let mut kept = 0;
        for k in 0..far.len() {
            let (t, e) = far[k];
            if (t >> self.shift) >> RING_BITS < self.limit {
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
        if shifted > 4 * pops && self.shift >= MIN_SHIFT + 2 {
            self.rebuild(self.shift - 2);
        } else if scanned > 2 * pops && shifted < pops / 4 && self.shift < MAX_SHIFT {
            // Wide enough for the coarse ring to span every pending event.
            let last = self.far.iter().map(|e| e.0).max().unwrap_or(self.now.0);
            let span = (last - self.now.0) >> (2 * RING_BITS);
            let shift = (64 - span.leading_zeros()).clamp(self.shift + 1, MAX_SHIFT);
            self.rebuild(shift);
        }
    }

    /// Re-places every pending event with fine buckets of width `2^shift`. The events of one
    /// time are all in one container, in order, and stay so.
    fn rebuild(&mut self, shift: u32) {
        let mut all = Vec::with_capacity(self.len);
        all.extend_from_slice(&self.current[self.head..]);
        self.current.clear();
        self.head = 0;
        self.fine.drain_into(self.cur + 1, &mut all);
        self.coarse.drain_into(self.win + 1, &mut all);
        all.append(&mut self.far);
        self.shift = shift;
        self.cur = self.now.0 >> shift;
        self.win = self.cur >> RING_BITS;
        self.limit = self.win + RING;
        for (t, e) in all {
            if t >> shift <= self.cur {
                self.current.push((t, e));
            } else {
                self.place(t, e);
            }
        }
        sort_low_bits(&mut self.current, &mut self.scratch, shift);
    }

    /// The time of the last popped event.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events pushed so far.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }
}

#[cfg(test)]
mod tests;
