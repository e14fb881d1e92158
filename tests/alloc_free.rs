//! No allocation per event on the hot path, shown with a counting allocator.
//!
//! A `#[global_allocator]` wraps `System` and counts every `alloc`/`realloc` made by the thread
//! that armed it. Each check runs one scenario at two sizes (twice the events), after a warm-up
//! run, and compares the allocation counts: an engine that allocates per event pays about one
//! allocation per extra event; one that only grows its buffers pays a few (amortised doubling,
//! a logarithm of the size). The checks require fewer than 0.01 allocations per extra event.
//!
//! Counting is per thread, in the allocator itself: the test harness runs tests on parallel
//! threads, and a process-wide counter would also count the other tests' allocations (the
//! process-wide total is kept too, in an `AtomicU64`, and printed for information).
//!
//! Run: `cargo test --release --test alloc_free -- --nocapture --include-ignored` (prints the
//! counts; the numbers are in `docs/performance-log.md`).

use retrystorm::load::{Override, load};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

/// Allocations by every thread since the start of the process.
static TOTAL: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Allocations by this thread while armed (`None` when not counting). `const`-initialised
    /// without a destructor, so touching it from the allocator never allocates.
    static ARMED: Cell<Option<u64>> = const { Cell::new(None) };
}

#[inline]
fn count() {
    TOTAL.fetch_add(1, Ordering::Relaxed);
    let _ = ARMED.try_with(|c| {
        if let Some(n) = c.get() {
            c.set(Some(n + 1));
        }
    });
}

// SAFETY: every call is forwarded unchanged to `System`; counting touches no allocator state.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread while `f` runs.
fn allocations<T>(f: impl FnOnce() -> T) -> (u64, T) {
    ARMED.with(|c| c.set(Some(0)));
    let out = f();
    let n = ARMED.with(|c| c.replace(None)).expect("armed");
    (n, out)
}

/// One measurement: the scenario's allocations and events.
#[derive(Debug, Clone, Copy)]
struct Point {
    allocs: u64,
    events: u64,
}

/// Loads `path` (variant `variant`, overrides `sets`) and counts the allocations of one run.
/// Loading happens outside the count: only `run_model` and what it returns are measured.
fn measure(path: &str, variant: Option<&str>, sets: &[String]) -> Point {
    let m = model(path, variant, sets);
    let (allocs, result) = allocations(|| retrystorm::run_model(&m, m.seed, &mut |_| {}));
    Point {
        allocs,
        events: result.summary.events,
    }
}

/// Warm-up, then the scenario at two sizes: `set(small)` and `set(2 * small)` give the
/// overrides. Fails unless the allocations per extra event stay under [`PER_EVENT_LIMIT`].
fn assert_no_allocation_per_event(
    name: &str,
    path: &str,
    variant: Option<&str>,
    set: impl Fn(u64) -> String,
    small: u64,
) {
    let at = |n: u64| measure(path, variant, &[set(n)]);
    at(small); // warm-up: lazy statics and first-use buffers in std are not the engine's
    let a = at(small);
    let b = at(2 * small);
    assert!(
        b.events > a.events,
        "{name}: twice the size, not more events"
    );
    let per_event = (b.allocs as f64 - a.allocs as f64) / (b.events - a.events) as f64;
    println!(
        "{name}: {}: {} allocations / {} events; {}: {} / {}; \
         {per_event:.5} allocations per extra event, {:.5} per event at the larger size \
         (process-wide allocations so far: {})",
        set(small),
        a.allocs,
        a.events,
        set(2 * small),
        b.allocs,
        b.events,
        b.allocs as f64 / b.events as f64,
        TOTAL.load(Ordering::Relaxed),
    );
    assert!(
        per_event < PER_EVENT_LIMIT,
        "{name} allocates {per_event:.4} times per event"
    );
}

/// Fewer than this many allocations per extra event counts as "no allocation per event".
const PER_EVENT_LIMIT: f64 = 0.01;

#[test]
fn thundering_herd_does_not_allocate_per_event() {
    // 10^5 and 2 * 10^5 clients: 1.8 and 3.6 million events.
    assert_no_allocation_per_event(
        "herd",
        "models/thundering-herd.toml",
        Some("full"),
        |n| format!("workload.clients={n}"),
        100_000,
    );
}

/// The herd takes the direct path; forced through the event loop it still allocates
/// nothing per event.
#[test]
fn thundering_herd_on_the_event_loop_does_not_allocate_per_event() {
    let at = |n: u64| {
        let sets = [
            format!("workload.clients={n}"),
            "engine.path=event-loop".to_string(),
        ];
        measure("models/thundering-herd.toml", Some("full"), &sets)
    };
    at(100_000);
    let (a, b) = (at(100_000), at(200_000));
    assert!(b.events > a.events);
    let per_event = (b.allocs as f64 - a.allocs as f64) / (b.events - a.events) as f64;
    assert!(
        per_event < PER_EVENT_LIMIT,
        "the herd on the event loop allocates {per_event:.4} times per event"
    );
}

#[test]
fn open_overload_does_not_allocate_per_event() {
    // The overload benchmark at 2 s and 4 s of simulated time: about 0.6 and 1.3 million events,
    // with timeouts, a full bounded queue, 503s and retries.
    assert_no_allocation_per_event(
        "overload",
        "models/overload-bench.toml",
        None,
        |s| format!("horizon={s}s"),
        2,
    );
}

#[test]
fn closed_workload_without_keys_does_not_allocate_per_event() {
    // The three-clients model without keys: 10^4 and 2 * 10^4 intents over 10 workers (request
    // loss, timeouts, late replies, duplicated effects).
    assert_no_allocation_per_event(
        "three-clients/retry-no-key",
        "models/three-clients.toml",
        Some("retry-no-key"),
        |n| format!("workload.intents={n}"),
        10_000,
    );
}

#[test]
fn keyed_closed_workload_does_not_allocate_per_event() {
    // The same with a per-intent key and a record-before store: a duplicate that arrives while
    // its key is in progress waits on it (`KeyState::InProgress { waiters }`). Today every such
    // wait allocates the waiter list (the first `push` into an empty `Vec`), which is freed when
    // the key commits. This test shows it; it passes once waiters live in a reused buffer.
    assert_no_allocation_per_event(
        "three-clients/retry-same-key",
        "models/three-clients.toml",
        Some("retry-same-key"),
        |n| format!("workload.intents={n}"),
        10_000,
    );
}

/// A loaded model (`variant` of `path`, the base for `None`, with `sets`), outside any count.
fn model(path: &str, variant: Option<&str>, sets: &[String]) -> retrystorm::model::Model {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .expect("the model file");
    let sets: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse(s).expect("a valid override"))
        .collect();
    let scenario = load(path, &text, &sets).expect("a valid model");
    match variant {
        Some(v) => scenario
            .variants
            .into_iter()
            .find(|m| m.name == v)
            .expect("the variant"),
        None => scenario.base,
    }
}

/// The most allocations a sweep's run (summary only) may make: its fixed cost, counted instead
/// of timed. A one-client herd run makes 31 today (the summary's names, the tier table, the
/// queue's buckets, the bottom's window of arrivals and per-attempt peaks); a histogram, series or CDF per run would add to it. At 1000 clients the
/// buffers grow by doubling (the intents, the queue's buckets, the per-bucket counts, the exact
/// completion times): 310 today, a few per buffer, not one per client. (151 with one queue
/// bucket per bit; the base-16 queue fills up to 4 times as many buckets, and a 2000-seed sweep
/// of it takes the same time.)
const PER_RUN_LIMIT: [(u64, u64); 2] = [(1, 40), (1000, 400)];

#[test]
fn a_sweep_run_has_a_small_fixed_cost_by_structure() {
    for (clients, limit) in PER_RUN_LIMIT {
        let m = model(
            "models/thundering-herd.toml",
            Some("full"),
            &[format!("workload.clients={clients}")],
        );
        retrystorm::run_summary(&m, 1); // warm-up
        let (allocs, r) = allocations(|| retrystorm::run_summary(&m, 1));
        let s = &r.summary;
        println!(
            "herd, {clients} clients, summary only: {allocs} allocations, {} events",
            s.events
        );
        assert!(
            allocs <= limit,
            "a {clients}-client summary run allocates {allocs} times (limit {limit})"
        );
        // One event per attempt: zero-latency hops are taken inline, not queued.
        assert_eq!(s.events, s.attempts, "events per attempt regressed");
        assert_eq!(s.attempts, 6 * clients);
        // Nothing but the summary is built.
        assert!(r.series.first.is_empty() && r.completion_cdf.is_empty());
        // And it is the full run's summary.
        assert_eq!(*s, retrystorm::run_model(&m, 1, &mut |_| {}).summary);
    }
}
