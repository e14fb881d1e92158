//! The hold model (Vaucher and Duval 1975; Jones 1986) on the future event list.
//!
//! Prefill `n` pending events, then repeat: pop the earliest event and push one at
//! `now + increment`. The number of pending events stays `n`, which is the steady state of a
//! simulator with `n` clients. Every queue orders by `(time, insertion seq)` and carries the same
//! 16-byte payload, and all of them see the same increments from the same seed, so they pop the
//! very same sequence of events (checked once before timing).
//!
//! Queues compared:
//! - `event_queue`: `retrystorm::queue::EventQueue::new()`, the simulator's radix heap (since issue
//!   32 a run of an open or replayed workload takes the calendar queue, `EventQueue::calendar()`);
//! - `binary_heap`: `std::collections::BinaryHeap` keyed by `Reverse((time, seq))`;
//! - `priority_queue`: the `priority-queue` crate (an indexed heap over an `IndexMap`) with the
//!   default SipHash hasher, item = seq (payload carried alongside), priority `Reverse((time, seq))`;
//! - `priority_queue_fx`: the same with a multiplicative (Fx-style) hasher, to separate the cost of
//!   hashing from the cost of the index;
//! - `radix_heap_raw`: `radix_heap::RadixHeapMap` used directly, to show the wrapper's cost.
//!
//! One criterion iteration is `HOLDS` hold operations on a persistent queue; prefilling happens
//! outside the timed loop. `rng_only` times just drawing the increments, a cost that every
//! other number includes.
//!
//! Run: `cargo bench --bench queue_hold` (results in `docs/performance.md`, "The event queue";
//! every run and its machine in `docs/performance-log.md`).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use priority_queue::PriorityQueue;
use radix_heap::RadixHeapMap;
use rand_core::Rng as _;
use rand_pcg::Pcg64Mcg;
use retrystorm::queue::EventQueue;
use retrystorm::time::{Duration, Time};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::hint::black_box;

/// Hold operations per criterion iteration.
const HOLDS: u64 = 100_000;
/// Pending events.
const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];
/// Mean increment: 1 ms in integer nanoseconds, the scale of the simulator's delays.
const MEAN_NS: u64 = 1_000_000;
/// One seed for every queue, so all of them see the same increments.
const SEED: u128 = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210;

/// A stand-in for the simulator's event: 16 bytes, like an id plus a kind and a generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ev {
    id: u64,
    kind: u32,
    generation: u32,
}

impl Ev {
    fn new(id: u64) -> Self {
        Ev {
            id,
            kind: (id % 7) as u32,
            generation: (id >> 3) as u32,
        }
    }
}

/// The distribution of the increment `now -> next event time`.
#[derive(Clone, Copy, Debug)]
enum Incr {
    /// Exponential with mean `MEAN_NS`.
    Exp,
    /// Uniform on `[0, 2 * MEAN_NS)`.
    Uniform,
}

impl Incr {
    fn name(self) -> &'static str {
        match self {
            Incr::Exp => "exp",
            Incr::Uniform => "uniform",
        }
    }
}

struct Draw {
    rng: Pcg64Mcg,
    incr: Incr,
}

impl Draw {
    fn new(incr: Incr) -> Self {
        Draw {
            rng: Pcg64Mcg::new(SEED),
            incr,
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Duration {
        let x = self.rng.next_u64();
        match self.incr {
            Incr::Exp => {
                // u in (0, 1], so ln(u) is finite.
                let u = ((x >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
                Duration((-u.ln() * MEAN_NS as f64) as u64)
            }
            Incr::Uniform => Duration(((u128::from(x) * u128::from(2 * MEAN_NS)) >> 64) as u64),
        }
    }
}

/// The two operations the hold model needs.
trait HoldQueue {
    const NAME: &'static str;
    fn new_with_capacity(n: usize) -> Self;
    fn push(&mut self, at: Time, ev: Ev);
    fn pop(&mut self) -> (Time, Ev);
}

impl HoldQueue for EventQueue<Ev> {
    const NAME: &'static str = "event_queue";
    fn new_with_capacity(_: usize) -> Self {
        EventQueue::new()
    }
    #[inline(always)]
    fn push(&mut self, at: Time, ev: Ev) {
        EventQueue::push(self, at, ev);
    }
    #[inline(always)]
    fn pop(&mut self) -> (Time, Ev) {
        EventQueue::pop(self).expect("the hold model never empties the queue")
    }
}

/// A `BinaryHeap` entry ordered by its key alone (seqs are unique, so the key is a total order).
struct Entry {
    key: Reverse<(u64, u64)>,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

struct StdBinaryHeap {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl HoldQueue for StdBinaryHeap {
    const NAME: &'static str = "binary_heap";
    fn new_with_capacity(n: usize) -> Self {
        StdBinaryHeap {
            heap: BinaryHeap::with_capacity(n + 1),
            seq: 0,
        }
    }
    #[inline(always)]
    fn push(&mut self, at: Time, ev: Ev) {
        self.heap.push(Entry {
            key: Reverse((at.0, self.seq)),
            ev,
        });
        self.seq += 1;
    }
    #[inline(always)]
    fn pop(&mut self) -> (Time, Ev) {
        let Entry {
            key: Reverse((t, _)),
            ev,
        } = self.heap.pop().expect("never empty");
        (Time(t), ev)
    }
}

/// The `priority-queue` item: hashed and compared by its unique seq; the payload rides along.
#[derive(Clone, Copy)]
struct Item {
    seq: u64,
    ev: Ev,
}

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
    }
}
impl Eq for Item {}
impl Hash for Item {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.seq.hash(state);
    }
}

/// rustc's Fx multiplier on a single `u64`: enough for unique sequential keys.
#[derive(Default)]
struct FxU64(u64);

impl Hasher for FxU64 {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline(always)]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

struct IndexedPq<S> {
    pq: PriorityQueue<Item, Reverse<(u64, u64)>, S>,
    seq: u64,
}

type SipPq = IndexedPq<std::hash::RandomState>;
type FxPq = IndexedPq<BuildHasherDefault<FxU64>>;

/// The hasher an [`IndexedPq`] is measured with names its row.
trait RowName {
    const ROW: &'static str;
}

impl RowName for std::hash::RandomState {
    const ROW: &'static str = "priority_queue";
}

impl RowName for BuildHasherDefault<FxU64> {
    const ROW: &'static str = "priority_queue_fx";
}

impl<S: std::hash::BuildHasher + Default + RowName> HoldQueue for IndexedPq<S> {
    const NAME: &'static str = S::ROW;
    fn new_with_capacity(n: usize) -> Self {
        IndexedPq {
            pq: PriorityQueue::with_capacity_and_default_hasher(n + 1),
            seq: 0,
        }
    }
    #[inline(always)]
    fn push(&mut self, at: Time, ev: Ev) {
        let seq = self.seq;
        self.seq += 1;
        self.pq.push(Item { seq, ev }, Reverse((at.0, seq)));
    }
    #[inline(always)]
    fn pop(&mut self) -> (Time, Ev) {
        let (item, Reverse((t, _))) = self.pq.pop().expect("never empty");
        (Time(t), item.ev)
    }
}

/// `RadixHeapMap` with the same `time << 64 | seq` key as `EventQueue`, minus the wrapper.
struct RawRadix {
    heap: RadixHeapMap<Reverse<u128>, Ev>,
    seq: u64,
}

impl HoldQueue for RawRadix {
    const NAME: &'static str = "radix_heap_raw";
    fn new_with_capacity(_: usize) -> Self {
        RawRadix {
            heap: RadixHeapMap::new(),
            seq: 0,
        }
    }
    #[inline(always)]
    fn push(&mut self, at: Time, ev: Ev) {
        self.heap
            .push(Reverse((u128::from(at.0) << 64) | u128::from(self.seq)), ev);
        self.seq += 1;
    }
    #[inline(always)]
    fn pop(&mut self) -> (Time, Ev) {
        let (Reverse(k), ev) = self.heap.pop().expect("never empty");
        (Time((k >> 64) as u64), ev)
    }
}

/// A queue in the hold model's steady state, plus its increment stream.
struct Hold<Q> {
    q: Q,
    draw: Draw,
    next_id: u64,
}

impl<Q: HoldQueue> Hold<Q> {
    /// Prefills `n` events at `0 + increment`, then runs `n` untimed holds so that the pending
    /// times have settled into the steady-state spread before anything is measured.
    fn new(n: usize, incr: Incr) -> Self {
        let mut h = Hold {
            q: Q::new_with_capacity(n),
            draw: Draw::new(incr),
            next_id: 0,
        };
        for _ in 0..n {
            let at = Time::ZERO.after(h.draw.next());
            h.q.push(at, Ev::new(h.next_id));
            h.next_id += 1;
        }
        h.run(n as u64);
        h
    }

    /// `holds` hold operations; returns a checksum of what was popped.
    #[inline(always)]
    fn run(&mut self, holds: u64) -> u64 {
        let mut sum = 0u64;
        for _ in 0..holds {
            let (now, ev) = self.q.pop();
            sum = sum.wrapping_add(now.0 ^ ev.id ^ u64::from(ev.kind) ^ u64::from(ev.generation));
            self.q
                .push(now.after(self.draw.next()), Ev::new(self.next_id));
            self.next_id += 1;
        }
        sum
    }
}

/// Every queue must pop the same events in the same order, or the comparison is meaningless.
fn check_same_order() {
    fn trace<Q: HoldQueue>(incr: Incr) -> Vec<(Time, u64)> {
        let mut h = Hold::<Q>::new(1_000, incr);
        (0..20_000)
            .map(|_| {
                let (t, ev) = h.q.pop();
                h.q.push(t.after(h.draw.next()), Ev::new(h.next_id));
                h.next_id += 1;
                (t, ev.id)
            })
            .collect()
    }
    for incr in [Incr::Exp, Incr::Uniform] {
        let reference = trace::<EventQueue<Ev>>(incr);
        assert!(
            reference.windows(2).all(|w| w[0].0 <= w[1].0),
            "time went back"
        );
        assert!(
            reference == trace::<StdBinaryHeap>(incr),
            "binary_heap order differs"
        );
        assert!(
            reference == trace::<SipPq>(incr),
            "priority_queue order differs"
        );
        assert!(
            reference == trace::<FxPq>(incr),
            "priority_queue_fx order differs"
        );
        assert!(
            reference == trace::<RawRadix>(incr),
            "radix_heap_raw order differs"
        );
    }
}

fn bench_one<Q: HoldQueue>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    n: usize,
    incr: Incr,
) {
    // Built on first use (so a name filter skips the prefill) and kept across samples.
    let mut hold: Option<Hold<Q>> = None;
    group.bench_with_input(BenchmarkId::new(Q::NAME, n), &n, |b, &n| {
        let h = hold.get_or_insert_with(|| Hold::new(n, incr));
        b.iter(|| black_box(h.run(HOLDS)));
    });
}

fn hold(c: &mut Criterion) {
    check_same_order();
    for incr in [Incr::Exp, Incr::Uniform] {
        let mut group = c.benchmark_group(format!("hold_{}", incr.name()));
        group.throughput(Throughput::Elements(HOLDS));
        let mut draw = Draw::new(incr);
        group.bench_function("rng_only", |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for _ in 0..HOLDS {
                    sum = sum.wrapping_add(draw.next().0);
                }
                black_box(sum)
            });
        });
        for n in SIZES {
            bench_one::<EventQueue<Ev>>(&mut group, n, incr);
            bench_one::<StdBinaryHeap>(&mut group, n, incr);
            bench_one::<SipPq>(&mut group, n, incr);
            bench_one::<FxPq>(&mut group, n, incr);
            bench_one::<RawRadix>(&mut group, n, incr);
        }
        group.finish();
    }
}

fn config() -> Criterion {
    // Two noisy cores and a few minutes' budget: few samples, short windows.
    Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = hold
}
criterion_main!(benches);
