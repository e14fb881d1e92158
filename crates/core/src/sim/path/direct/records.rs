//! The time-ordered records that feed the bottom's buckets: arrivals by attempt, successes and
//! the busy level's steps, kept compactly per chunk of time and fed in time order at the end.

use crate::model::{Model, WorkloadKind};
use crate::sim::path::tier::TierState;
use crate::time::Time;

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

/// Fewer records than this are sorted by comparison; more by counting passes of [`RADIX_BITS`]
/// bits over their time (two for a chunk's 22 bits).
const RADIX_MIN: usize = 1 << 10;
const RADIX_BITS: u32 = 11;

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
}

impl Records {
    pub(super) fn new(m: &Model) -> Self {
        let bulk_at = (m.workload.kind == WorkloadKind::Burst
            && m.workload.spread.0 == 0
            && m.network.request_latency().is_zero())
        .then(|| Time::ZERO + m.workload.start);
        Records {
            chunks: Vec::new(),
            flat: Some(Vec::new()),
            bulk_at,
            bulk: 0,
            busy_ops: false,
            max_op_time: 0,
        }
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
    /// order: they change no count, peak or area), freeing the chunks as it goes.
    pub(super) fn feed_all(mut self, ts: &mut TierState) {
        let mut busy = 0u64;
        if let Some(mut flat) = self.flat.take() {
            if let Some(at) = self.bulk_at {
                // Every record of a burst is at or after its start.
                ts.buckets.arrivals(at, false, 0, self.bulk);
                self.bulk = 0;
            }
            let bits = u64::BITS - self.max_op_time.leading_zeros();
            sort_by_time(&mut flat, &mut Vec::new(), |e| e >> KIND_BITS, bits);
            feed(
                ts,
                &flat,
                |e| (e >> KIND_BITS, (e & KIND_MASK) as u32),
                &mut busy,
            );
        }
        let bulk_chunk = self.bulk_at.map(|t| (t.0 >> CHUNK_SHIFT) as usize);
        if let (Some(b), true) = (bulk_chunk, self.bulk > 0)
            && self.chunks.len() <= b
        {
            self.chunks.resize_with(b + 1, Vec::new);
        }
        let mut scratch = Vec::new();
        for (i, chunk) in self.chunks.iter_mut().enumerate() {
            if bulk_chunk == Some(i) {
                let at = self.bulk_at.unwrap_or(Time::ZERO);
                ts.buckets.arrivals(at, false, 0, self.bulk);
            }
            sort_by_time(
                chunk,
                &mut scratch,
                |e| u64::from(e >> KIND_BITS),
                CHUNK_SHIFT,
            );
            let base = (i as u64) << CHUNK_SHIFT;
            let decode = |e: u32| (base | u64::from(e >> KIND_BITS), e & KIND_MASK as u32);
            feed(ts, chunk, decode, &mut busy);
            *chunk = Vec::new();
        }
    }
}

/// Sorts records by `key` (a time; the kinds of one instant in any order), which fits in
/// `bits` bits: stable counting passes of [`RADIX_BITS`] bits for many records, a comparison sort
/// for few.
fn sort_by_time<T: Copy + Default + Ord>(
    v: &mut Vec<T>,
    scratch: &mut Vec<T>,
    key: impl Fn(T) -> u64,
    bits: u32,
) {
    if v.len() < RADIX_MIN {
        return v.sort_unstable();
    }
    const R: usize = 1 << RADIX_BITS;
    const M: u64 = (1 << RADIX_BITS) - 1;
    scratch.clear();
    scratch.resize(v.len(), T::default());
    let mut shift = 0;
    while shift < bits {
        let mut count = [0u32; R + 1];
        for &e in v.iter() {
            count[((key(e) >> shift) & M) as usize + 1] += 1;
        }
        for k in 0..R {
            count[k + 1] += count[k];
        }
        for &e in v.iter() {
            let k = ((key(e) >> shift) & M) as usize;
            scratch[count[k] as usize] = e;
            count[k] += 1;
        }
        std::mem::swap(v, scratch);
        shift += RADIX_BITS;
    }
}

/// Feeds sorted records, decoded as `(time ns, kind)`, to the server's buckets and levels: one
/// `Levels::set` per instant with a begin or a done (as the event loop sets them at each).
fn feed<T: Copy>(
    ts: &mut TierState,
    records: &[T],
    decode: impl Fn(T) -> (u64, u32),
    busy: &mut u64,
) {
    let mut k = 0;
    while k < records.len() {
        let at = decode(records[k]).0;
        let now = Time(at);
        let mut levels = false;
        while let Some(&r) = records.get(k) {
            let (t, kind) = decode(r);
            if t != at {
                break;
            }
            match kind {
                OP_DONE => {
                    // A done may sort before the begin it ends at the same time.
                    *busy = busy.wrapping_sub(1);
                    levels = true;
                }
                OP_BEGIN => {
                    *busy = busy.wrapping_add(1);
                    levels = true;
                }
                OP_SUCCESS => ts.buckets.success(now),
                a => {
                    // A run of equal records (a herd with no jitter): one call.
                    let mut n = 1;
                    while records.get(k + n).is_some_and(|&e| decode(e) == (t, kind)) {
                        n += 1;
                    }
                    let attempt = (a - OP_ARRIVAL) as u16;
                    ts.buckets.arrivals(now, attempt > 0, attempt, n as u64);
                    k += n;
                    continue;
                }
            }
            k += 1;
        }
        if levels {
            ts.levels.set(&mut ts.buckets, now, 0, *busy);
        }
    }
}
