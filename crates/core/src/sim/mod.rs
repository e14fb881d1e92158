//! The engine: one event loop ([`engine`]) and the request path it runs ([`path`]): clients,
//! tiers, calls, the store; streaming [`metrics`], the `--trace` recorder ([`trace`]) and the
//! closed forms of retries stacked across layers ([`layered`]).

pub mod engine;
pub mod layered;
pub mod metrics;
pub mod path;
pub mod trace;

/// Every random stream of a run, keyed in one place.
pub(crate) mod draws;
