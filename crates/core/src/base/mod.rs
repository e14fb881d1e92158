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

/// The tests every future event list must pass, written once for the calendar queue and the
/// radix heap: ties pop first in, first out; a push into the past is caught in debug builds;
/// the clock never goes back.
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
pub mod queue;
pub mod rng;
pub mod time;
