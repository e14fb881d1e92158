//! The sizes a model may ask for, each bounding the memory one run can hold.

/// The most attempts a retry loop may make (`retry.max_attempts`, a layer's or a tier's): also
/// the highest attempt number a run can report, so it is defined with the summary.
pub use crate::result::summary::MAX_ATTEMPTS;

/// The most `[[layer]]` tables a layered request path may have.
pub const MAX_LAYERS: usize = 32;

/// The most per-client budget, breaker or rate-limiter instances one run may hold.
pub const MAX_POLICY_INSTANCES: u64 = 1_000_000;

/// The largest number of intents one run may hold in memory: 20,000,000 at
/// [`BYTES_PER_INTENT`] keeps a run under 2 GB (`docs/performance.md`, "Memory bounds").
pub const MAX_INTENTS: u64 = 20_000_000;

/// Memory per live intent (its state, its events, its share of the queue), a generous estimate:
/// measured at about 46 bytes with retries in flight, about 23 without.
pub const BYTES_PER_INTENT: u64 = 100;

/// The most windows one list of `outages`, `capacity_drops` or `slow_windows` may hold.
pub const MAX_WINDOWS: usize = 10_000;

/// The most replicas a tier may have (`server.replicas`): events carry the replica in 16 bits,
/// and building the hosts a pick chooses among scans every replica.
pub const MAX_REPLICAS: u32 = 1024;
