//! The calendar queue against a binary heap keyed by `(time, seq)`.

use super::*;
use crate::rng::{Purpose, Stream};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pending_set_tests!(CalendarQueue);

/// Pushes and pops `q` and a binary heap keyed by `(time, seq)` side by side: `steps` rounds
/// of `pushes(step, stream)` pushes at `now + delay(stream)`, then one pop; then drains both.
fn against_reference(
    seed: u64,
    steps: u64,
    mut pushes: impl FnMut(u64, &mut Stream) -> u64,
    mut delay: impl FnMut(&mut Stream) -> u64,
) -> CalendarQueue<u64> {
    let mut q = CalendarQueue::new();
    let mut r = BinaryHeap::new();
    let mut s = Stream::new(seed, 0, Purpose::Start, 0);
    let mut seq = 0u64;
    let mut now = 0u64;
    for step in 0..steps {
        for _ in 0..pushes(step, &mut s) {
            let t = now.saturating_add(delay(&mut s));
            q.push(Time(t), seq);
            r.push(Reverse((t, seq)));
            seq += 1;
        }
        let got = q.pop();
        let want = r.pop().map(|Reverse((t, id))| (Time(t), id));
        assert_eq!(got, want, "seed {seed}, step {step}");
        if let Some((t, _)) = got {
            now = t.0;
        }
        assert_eq!(q.len(), r.len());
    }
    while let Some(Reverse((t, id))) = r.pop() {
        assert_eq!(q.pop(), Some((Time(t), id)));
    }
    assert!(q.is_empty() && q.pop().is_none());
    q
}

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

/// Ties from tiny ranges, gaps from huge ones, pushes at `now`, interleaved with pops.
#[test]
fn matches_a_reference_heap_exactly() {
    for (case, range) in [(0u64, 3u64), (1, 1000), (2, 1 << 40), (3, u64::MAX / 4)] {
        against_reference(
            case,
            20_000,
            |step, s| if step < 200 { 3 } else { s.range_u64(0, 2) },
            |s| s.range_u64(0, range),
        );
    }
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
/// for the first half (a herd's backoff): every pop in order, through the coarse ring.
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
    // The coarse ring spans 2^(START_SHIFT + 22) ns (68 s): a 10 s spread needs no rebuild.
    assert_eq!(
        q.shift, START_SHIFT,
        "rebuilt for a spread the coarse ring covers"
    );
}

/// A push less than a coarse bucket's width ahead lands in its fine bucket at once, wherever
/// the clock is in the window: the coarse ring and the far list stay empty.
#[test]
fn near_pushes_skip_the_coarse_ring() {
    let width = 1u64 << (START_SHIFT + RING_BITS);
    let mut q = CalendarQueue::new();
    let mut s = Stream::new(9, 0, Purpose::Start, 0);
    for i in 0..1000u64 {
        q.push(Time(s.range_u64(0, width)), i);
    }
    let mut last = Time::ZERO;
    for i in 0..100_000u64 {
        let (t, _) = q.pop().expect("never empty");
        assert!(t >= last);
        last = t;
        q.push(Time(t.0 + s.range_u64(0, width)), i);
        assert!(q.coarse.nonempty.iter().all(|&w| w == 0) && q.far.is_empty());
    }
    assert_eq!(q.shift, START_SHIFT);
}

/// A hundred thousand timers in one coarse bucket past the window (counted out into the
/// fine ring when it becomes the window), popped while pushing more at random distances.
#[test]
fn a_dense_coarse_bucket_moves_to_the_fine_ring_in_order() {
    let window = 1u64 << (START_SHIFT + RING_BITS);
    let n = 100_000u64;
    against_reference(
        7,
        3 * n,
        |step, s| match step {
            0 => n,
            _ => s.range_u64(0, 2),
        },
        |s| window + s.range_u64(0, window),
    );
}

/// A chain of events at one time (a burst's starts: each pop pushes the next) keeps one
/// entry of room, not one per event popped.
#[test]
fn a_chain_at_one_time_does_not_grow_the_current_bucket() {
    let mut q = CalendarQueue::new();
    q.push(Time(5), 0u32);
    for i in 1..100_000 {
        assert_eq!(q.pop(), Some((Time(5), i - 1)));
        q.push(Time(5), i);
    }
    assert!(q.current.capacity() <= 4, "{}", q.current.capacity());
}

/// A closed loop's few pending events walk the clock through every slot of both rings: the
/// buckets share a handful of buffers instead of one each.
#[test]
fn a_few_events_over_many_slots_share_a_few_buffers() {
    let q = against_reference(
        8,
        200_000,
        |step, _| if step == 0 { 3 } else { 1 },
        |s| s.range_u64(0, 1 << 27),
    );
    let held = |r: &Ring<u64>| r.slots.iter().filter(|v| v.capacity() > 0).count();
    let buffers = held(&q.fine) + held(&q.coarse) + q.spare.len();
    assert!(
        buffers <= 16,
        "{buffers} bucket buffers for 3 pending events"
    );
}
