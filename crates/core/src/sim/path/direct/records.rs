//! The time-ordered records that feed the bottom's buckets: arrivals by attempt, successes and
//! the busy level's steps, kept compactly per chunk of time and fed in time order at the end.

use crate::base::time::Time;
use crate::model::{Model, WorkloadKind};
use crate::sim::metrics::SortedWindow;
use crate::sim::path::tier::TierState;

/// Kinds of the time-ordered records that feed the bottom's buckets, in the low `KIND_BITS`
/// bits; above them the time within the record's chunk.
pub(super) const OP_DONE: u32 = 0;
pub(super) const OP_BEGIN: u32 = 1;
pub(super) const OP_SUCCESS: u32 = 2;
/// An arrival of attempt `a` (from 0) is `OP_ARRIVAL + a`.
pub(super) const OP_ARRIVAL: u32 = 3;
pub(super) const KIND_BITS: u32 = 10;
/// Width of a chunk of the time-ordered records (2^22 ns, about 4 ms): records are kept per
/// chunk as 4 bytes each and each chunk is sorted on its own.
const CHUNK_SHIFT: u32 = 32 - KIND_BITS;
const KIND_MASK: u64 = (1 << KIND_BITS) - 1;
/// Records kept in one vector before they move to chunks.
const FLAT_MAX: usize = 1 << 16;

/// The most records one run keeps (512 MiB at 4 bytes each, about twice that while vectors
/// grow): a run that would keep more (a burst of 10^7 clients of 100 attempts, an open workload
/// at 10^7/s for a minute) goes to the event loop, whose memory is the intents in flight and
/// the arrivals inside one peak window, not every arrival of the run (`docs/performance.md`,
/// "Memory bounds").
pub(super) const MAX_RECORDS: u64 = 1 << 27;

/// Fewer records than this are sorted by comparison; more are first spread over buckets by the
/// top bits of their time ([`sort_by_time`]), at most 2^[`SPREAD_MAX_BITS`] buckets.
const SPREAD_MIN: usize = 1 << 10;
const SPREAD_MAX_BITS: u32 = 14;

/// The records of one run, and what the merge needs to know about them.
pub(super) struct Records {
    /// Records `(time mod 2^CHUNK_SHIFT) << KIND_BITS | kind` per chunk of `2^CHUNK_SHIFT` ns.
    chunks: Vec<Vec<u32>>,
    /// While a run has few records (a sweep's small runs): `time << KIND_BITS | kind` in one
    /// vector, sorted once (one allocation instead of one per chunk); moved to `chunks` when it
    /// outgrows [`FLAT_MAX`].
    flat: Option<Vec<u64>>,
    /// First tries arriving at `bulk_at` (a burst with no spread and no request latency): counted
    /// instead of stored, and fed in one call.
    bulk_at: Option<Time>,
    bulk: u64,
    /// Some attempt was served (the busy level moved).
    pub(super) busy_ops: bool,
    pub(super) max_op_time: u64,
    /// Records kept so far, and the most this run may keep ([`MAX_RECORDS`]).
    pub(super) kept: u64,
    pub(super) budget: u64,
}

impl Records {
    pub(super) fn new(m: &Model) -> Self {
        let bulk_at = (m.workload.kind == WorkloadKind::Burst
            && m.workload.spread.0 == 0
            && m.network.request_latency().is_zero())
        .then(|| Time::ZERO + m.workload.start);
        // A burst's records, up to what the flat vector holds, reserved at once (a sweep's small
        // runs would otherwise grow it by doubling, each run).
        let expected = match m.workload.kind {
            WorkloadKind::Burst => m
                .workload
                .clients
                .saturating_mul(u64::from(m.retry.max_attempts)),
            _ => 0,
        };
        Records {
            chunks: Vec::new(),
            flat: Some(Vec::with_capacity(expected.min(FLAT_MAX as u64) as usize)),
            bulk_at,
            bulk: 0,
            busy_ops: false,
            max_op_time: 0,
            kept: 0,
            budget: MAX_RECORDS,
        }
    }

    /// More records are kept than the run may hold: the event loop must run it.
    pub(super) fn over_budget(&self) -> bool {
        self.kept > self.budget
    }

    /// One record of `kind` at `t`.
    #[inline]
    pub(super) fn op(&mut self, t: Time, kind: u32) {
        if kind == OP_ARRIVAL && self.bulk_at == Some(t) {
            self.bulk += 1;
            return;
        }
        self.busy_ops |= kind == OP_BEGIN;
        self.max_op_time = self.max_op_time.max(t.0);
        self.kept += 1;
        if let Some(f) = &mut self.flat {
            if f.len() < FLAT_MAX {
                return f.push(t.0 << KIND_BITS | u64::from(kind));
            }
            for e in std::mem::take(f) {
                self.chunk_op(e >> KIND_BITS, (e & KIND_MASK) as u32);
            }
            self.flat = None;
        }
        self.chunk_op(t.0, kind);
    }

    #[inline]
    fn chunk_op(&mut self, t: u64, kind: u32) {
        let c = (t >> CHUNK_SHIFT) as usize;
        if self.chunks.len() <= c {
            self.chunks.resize_with(c + 1, Vec::new);
        }
        let within = (t & ((1 << CHUNK_SHIFT) - 1)) as u32;
        self.chunks[c].push(within << KIND_BITS | kind);
    }

    /// Feeds every record to the bottom tier's buckets and levels in time order (ties in any
    /// order: they change no count, peak or area). The sliding-window peaks are counted here by
    /// two pointers over the sorted records ([`SortedWindow`]), not by the buckets' own window.
    pub(super) fn feed_all(mut self, ts: &mut TierState) {
        let mut window = SortedWindow::new(ts.buckets.window_width().0);
        ts.buckets.count_windows_elsewhere();
        let mut sink = Sink {
            ts,
            window: &mut window,
            bulk: None,
            busy: self.busy_ops.then_some(0),
        };
        // Every record of a burst is at or after its start: its first tries go first.
        if let Some(at) = self.bulk_at.filter(|_| self.bulk > 0) {
            sink.ts.buckets.arrivals(at, false, 0, self.bulk);
            sink.window.enter(false, 0, self.bulk);
            sink.bulk = Some((at.0, self.bulk));
        }
        if let Some(mut flat) = self.flat.take() {
            let bits = u64::BITS - self.max_op_time.leading_zeros();
            sort_by_time(&mut flat, &mut Vec::new(), |e| e >> KIND_BITS, bits);
            let sorted = flat
                .iter()
                .map(|&e| (e >> KIND_BITS, (e & KIND_MASK) as u32));
            sink.feed(sorted);
        } else {
            let mut scratch = Vec::new();
            for chunk in &mut self.chunks {
                sort_by_time(
                    chunk,
                    &mut scratch,
                    |e| u64::from(e >> KIND_BITS),
                    CHUNK_SHIFT,
                );
            }
            drop(scratch);
            let sorted = self.chunks.iter().enumerate().flat_map(|(i, chunk)| {
                let base = (i as u64) << CHUNK_SHIFT;
                chunk
                    .iter()
                    .map(move |&e| (base | u64::from(e >> KIND_BITS), e & KIND_MASK as u32))
            });
            sink.feed(sorted);
        }
        ts.buckets.set_window_peaks(&window);
    }
}

/// Where the sorted records go: the server's buckets and levels, and the sliding window.
struct Sink<'a> {
    ts: &'a mut TierState,
    window: &'a mut SortedWindow,
    /// The burst's first tries `(instant, count)`, in the window until they leave it.
    bulk: Option<(u64, u64)>,
    /// The busy level, when some attempt was served (else no level is ever set).
    busy: Option<u64>,
}

impl Sink<'_> {
    /// Feeds sorted records `(time ns, kind)`: record by record when the busy level moves (its
    /// areas are added in time order), else with the arrivals counted per bucket of the model's
    /// width and attempt number and handed over once each ([`Sink::feed_counted`]).
    fn feed<I: Iterator<Item = (u64, u32)> + Clone>(&mut self, records: I) {
        match self.busy {
            Some(_) => self.feed_levels(records),
            None => self.feed_counted(records),
        }
    }

    /// The earlier arrivals that leave the window `(t - width, t]` before arrivals at `t`
    /// enter it: the burst's, and those at `s` with `t - s >= width` (`trail`, a second cursor
    /// over the same sorted records).
    #[inline]
    fn leave_before<I: Iterator<Item = (u64, u32)>>(
        &mut self,
        trail: &mut std::iter::Peekable<I>,
        t: u64,
    ) {
        let width = self.window.width();
        if let Some((s, k)) = self.bulk
            && t - s >= width
        {
            self.window.leave(false, 0, k);
            self.bulk = None;
        }
        while let Some((_, kind)) = trail.next_if(|&(s, _)| t - s >= width) {
            if kind >= OP_ARRIVAL {
                let attempt = (kind - OP_ARRIVAL) as u16;
                self.window.leave(attempt > 0, attempt, 1);
            }
        }
    }

    /// With no busy level: counts per bucket and attempt need no time order within a bucket
    /// (a bucket's peak is its final count), so each bucket's arrivals of one attempt number go
    /// to [`crate::sim::metrics::Buckets::arrivals`] in one call when the records leave the bucket.
    /// The successes only add to their bucket's count. Only the window goes record by record.
    fn feed_counted<I: Iterator<Item = (u64, u32)> + Clone>(&mut self, records: I) {
        let base = self.ts.buckets.base_width().0;
        let mut trail = records.clone().peekable();
        let mut lead = records.peekable();
        // Arrivals per attempt number in base bucket `bucket`, not yet handed over.
        let mut counts: Vec<u64> = Vec::new();
        let mut bucket = 0u64;
        let mut bucket_end = 0u64;
        while let Some((t, kind)) = lead.next() {
            if kind == OP_SUCCESS {
                self.ts.buckets.success(Time(t));
                continue;
            }
            debug_assert!(kind >= OP_ARRIVAL, "no begin or done without busy levels");
            // A run of equal records (a herd with no jitter): one step.
            let mut n = 1;
            while lead.next_if(|&e| e == (t, kind)).is_some() {
                n += 1;
            }
            self.leave_before(&mut trail, t);
            let a = (kind - OP_ARRIVAL) as usize;
            self.window.enter(a > 0, a as u16, n);
            if t >= bucket_end {
                self.hand_over(bucket * base, &mut counts);
                bucket = t / base;
                bucket_end = (bucket + 1).saturating_mul(base);
            }
            if counts.len() <= a {
                counts.resize(a + 1, 0);
            }
            counts[a] += n;
        }
        self.hand_over(bucket * base, &mut counts);
    }

    /// The arrivals counted per attempt number in the bucket starting at `at`, handed to the
    /// buckets, and the counts cleared.
    fn hand_over(&mut self, at: u64, counts: &mut [u64]) {
        for (a, n) in counts.iter_mut().enumerate() {
            if *n > 0 {
                self.ts.buckets.arrivals(Time(at), a > 0, a as u16, *n);
                *n = 0;
            }
        }
    }

    /// Record by record, one `Levels::set` per instant with a begin or a done (as the event
    /// loop sets them at each).
    fn feed_levels<I: Iterator<Item = (u64, u32)> + Clone>(&mut self, records: I) {
        let mut busy = self.busy.unwrap_or(0);
        let mut trail = records.clone().peekable();
        let mut lead = records.peekable();
        while let Some(&(at, _)) = lead.peek() {
            let now = Time(at);
            let mut levels = false;
            while let Some(&(t, kind)) = lead.peek() {
                if t != at {
                    break;
                }
                lead.next();
                match kind {
                    OP_DONE => {
                        // A done may sort before the begin it ends at the same time.
                        busy = busy.wrapping_sub(1);
                        levels = true;
                    }
                    OP_BEGIN => {
                        busy = busy.wrapping_add(1);
                        levels = true;
                    }
                    OP_SUCCESS => self.ts.buckets.success(now),
                    a => {
                        // A run of equal records (a herd with no jitter): one call.
                        let mut n = 1;
                        while lead.next_if(|&e| e == (t, kind)).is_some() {
                            n += 1;
                        }
                        self.leave_before(&mut trail, t);
                        let attempt = (a - OP_ARRIVAL) as u16;
                        self.ts.buckets.arrivals(now, attempt > 0, attempt, n);
                        self.window.enter(attempt > 0, attempt, n);
                    }
                }
            }
            if levels {
                let ts = &mut *self.ts;
                ts.levels.set(&mut ts.buckets, now, 0, busy);
            }
        }
        self.busy = Some(busy);
    }
}

/// Sorts records by `key` (a time that fits in `bits` bits; a record's value orders by its
/// time first, the kinds of one instant in any order). Many records: one counting pass by the
/// key's top bits spreads them over about a quarter as many buckets, each then sorted by
/// comparison (a few records each where times are spread; the records of one instant share a
/// bucket, and a sort of equal values is one pass). Few records: one comparison sort.
fn sort_by_time<T: Copy + Default + Ord>(
    v: &mut Vec<T>,
    scratch: &mut Vec<T>,
    key: impl Fn(T) -> u64,
    bits: u32,
) {
    if v.len() < SPREAD_MIN {
        return v.sort_unstable();
    }
    let top = (usize::BITS - 1 - v.len().leading_zeros())
        .saturating_sub(2)
        .min(bits)
        .min(SPREAD_MAX_BITS);
    let shift = bits - top;
    // `ends[k]`: where bucket `k` starts, then (after the scatter) where it ends.
    let mut ends = vec![0u32; (1 << top) + 1];
    for &e in v.iter() {
        ends[(key(e) >> shift) as usize + 1] += 1;
    }
    for k in 1..ends.len() {
        ends[k] += ends[k - 1];
    }
    scratch.clear();
    scratch.resize(v.len(), T::default());
    for &e in v.iter() {
        let k = (key(e) >> shift) as usize;
        scratch[ends[k] as usize] = e;
        ends[k] += 1;
    }
    let mut lo = 0;
    for &hi in &ends[..1 << top] {
        let hi = hi as usize;
        if hi - lo > 1 {
            scratch[lo..hi].sort_unstable();
        }
        lo = hi;
    }
    std::mem::swap(v, scratch);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spread, clustered and tied times, few and many: sorted by time as a comparison sort
    /// sorts them (a record's value orders by its time first).
    #[test]
    fn sort_by_time_orders_as_a_comparison_sort() {
        let mut x = 5u64;
        for (n, range) in [
            (10, 1000),
            (5000, 1 << 33),
            (5000, 3),
            (40_000, 1 << 22),
            (3000, 1),
        ] {
            let mut v: Vec<u64> = (0..n)
                .map(|i| {
                    x = crate::base::rng::mix64(x);
                    // A third of the records at one instant, the rest spread.
                    let t = if i % 3 == 0 { range / 2 } else { x % range };
                    t << KIND_BITS | (x >> 60)
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable();
            let bits = u64::BITS - (range - 1).leading_zeros();
            sort_by_time(&mut v, &mut Vec::new(), |e| e >> KIND_BITS, bits.max(1));
            assert_eq!(v, want, "{n} records in {range} ns");
        }
    }
}
