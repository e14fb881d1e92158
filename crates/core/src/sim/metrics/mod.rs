//! Streaming metrics: per-bucket counters, time-weighted levels and a completion-time histogram.
//!
//! Nothing is stored per event: memory grows with the number of buckets (horizon / bucket) and
//! the histogram's fixed size, not with the number of events.

mod buckets;
mod completions;
mod levels;
mod replicas;
mod windows;

pub use buckets::{Buckets, MAX_STORED_BUCKETS, level_series, series};
pub use completions::Completions;
pub use levels::Levels;
pub use replicas::{MAX_REPLICA_SERIES, ReplicaEvent};
pub use windows::{ATTEMPT_SERIES, SortedWindow};
