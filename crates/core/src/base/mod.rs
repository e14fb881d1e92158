//! The ground floor: what every other floor stands on and that knows nothing of retries.
//!
//! - [`time`]: simulated time in integer nanoseconds, durations and rates as model files spell
//!   them.
//! - [`rng`]: keyed PCG streams, one per `(seed, entity, purpose, index)`.
//! - [`dist`]: duration distributions.
//! - [`calendar`]: the future event list, a calendar queue of adaptive width, FIFO among ties.
//! - [`queue`]: `EventQueue`, chosen once per run: the calendar queue for open and replayed
//!   workloads, the radix heap (also here) for bursts and closed loops; `chunks`: the radix
//!   heap's buckets, first-in-first-out lists in fixed chunks from a shared pool.
//! - [`invalid`]: a semantic error of a model, naming the dotted field.
//! - [`keys`]: a model key's one definition (name, doc line, what it needs), in a table per
//!   section.
//! - [`diagnostics`]: a refused input located in its file (`file:line:col: field: message`) and
//!   the "did you mean" of an unknown word.
//! - [`prose`]: numbers as the sentences that explain a result write them.

/// What every future event list keeps of itself in its fields `now`, `len` and `pushed`, and
/// tells: written once for the calendar queue and the radix heap, inside their `impl`s.
macro_rules! pending_set_counts {
    () => {
        /// Counts a push at `at` and returns its time in ns. Scheduling in the past is an engine
        /// bug: debug builds (and the tests) stop on it; release builds clamp to now, so the
        /// clock still never goes back.
        #[inline(always)]
        fn count_push(&mut self, at: Time) -> u64 {
            debug_assert!(
                at >= self.now,
                "event scheduled in the past: {at} < {}",
                self.now
            );
            self.pushed += 1;
            self.len += 1;
            at.0.max(self.now.0)
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
    };
}

/// The tests every future event list must pass, written once for the calendar queue and the
/// radix heap: ties pop first in, first out; the same pops as a reference binary heap
/// (`against_reference`, which a queue's own tests may drive further); a push into the past is
/// caught in debug builds; the clock never goes back.
#[cfg(test)]
macro_rules! pending_set_tests {
    ($queue:ident) => {
        #[test]
        fn pops_in_time_then_insertion_order() {
            let mut q = $queue::new();
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
            let mut q = $queue::new();
            q.push(Time(10), 1);
            q.pop();
            q.push(Time(3), 2);
        }

        /// Pushes and pops a queue and a binary heap keyed by `(time, seq)` side by side:
        /// `steps` rounds of `pushes(step, stream)` pushes at `now + delay(stream)`, then one
        /// pop; then drains both.
        fn against_reference(
            seed: u64,
            steps: u64,
            mut pushes: impl FnMut(u64, &mut crate::base::rng::Stream) -> u64,
            mut delay: impl FnMut(&mut crate::base::rng::Stream) -> u64,
        ) -> $queue<u64> {
            use std::cmp::Reverse;
            let mut q = $queue::new();
            let mut r = std::collections::BinaryHeap::new();
            let mut s = crate::base::rng::Stream::new(seed, 0, crate::base::rng::Purpose::Start, 0);
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

        /// Ties from tiny ranges, gaps from huge ones, pushes interleaved with pops.
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

        #[test]
        fn clock_never_goes_back_under_random_pushes() {
            let mut q = $queue::new();
            let mut s = crate::base::rng::Stream::new(1, 0, crate::base::rng::Purpose::Start, 0);
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
                    q.push(t.after(crate::base::time::Duration(s.range_u64(0, 100))), n);
                }
            }
        }
    };
}

pub mod calendar;
mod chunks;
pub mod diagnostics;
pub mod dist;
pub mod invalid;
pub mod keys;
pub mod prose;
pub mod queue;
pub mod rng;
pub mod time;
