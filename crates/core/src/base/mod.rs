//! The ground floor: what every other floor stands on and that knows nothing of retries.
//!
//! - [`time`]: simulated time in integer nanoseconds, durations and rates as model files spell
//!   them.
//! - [`rng`]: keyed PCG streams, one per `(seed, entity, purpose, index)`.
//! - [`dist`]: duration distributions.
//! - [`calendar`]: the future event list, a calendar queue of adaptive width, FIFO among ties.
//! - [`queue`]: `EventQueue` (the calendar queue) and the radix heap it replaced.
//! - [`invalid`]: a semantic error of a model, naming the dotted field.
//! - [`diagnostics`]: a refused input located in its file (`file:line:col: field: message`) and
//!   the "did you mean" of an unknown word.

pub mod calendar;
pub mod diagnostics;
pub mod dist;
pub mod invalid;
pub mod queue;
pub mod rng;
pub mod time;
