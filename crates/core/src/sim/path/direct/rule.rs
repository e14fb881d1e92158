//! The rule: which engine runs a model, and why.

use super::records::{KIND_BITS, OP_ARRIVAL};
use crate::model::{EnginePathChoice, Model, StoreMode, WorkloadKind};
use crate::policy::budget::BudgetKind;
use crate::policy::limiter::LimiterKind;
use crate::policy::shedding::SheddingKind;

/// Which engine runs a model, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnginePath {
    /// Each client's attempts straight from its keyed draws (clients are independent).
    Direct,
    /// The general event loop; `reason` says what makes the clients depend on each other (or
    /// what the direct path does not reproduce).
    EventLoop { reason: &'static str },
}

impl EnginePath {
    /// One line for `explain`.
    pub fn describe(&self, m: &Model) -> String {
        match self {
            EnginePath::Direct => format!(
                "engine: direct (clients independent: {}, no capacity limit, no shared state)",
                match m.workload.kind {
                    WorkloadKind::Open => "open workload",
                    _ => "burst",
                }
            ),
            EnginePath::EventLoop { reason } => format!("engine: event loop ({reason})"),
        }
    }
}
/// Attempt numbers the direct path packs beside a time (10 bits less the three other kinds).
const MAX_DIRECT_ATTEMPTS: u32 = (1 << KIND_BITS) - OP_ARRIVAL;
/// Records are kept per chunk of time, up to the horizon: below 2^44 ns (4.9 hours) there are
/// at most 2^22 chunks.
const MAX_DIRECT_HORIZON: u64 = 1 << 44;

/// The rule: which engine runs `m`. Conservative: anything that lets one client's attempts
/// change another's answers, or that the direct path does not reproduce, takes the event loop.
pub fn engine_path(m: &Model) -> EnginePath {
    let ev = |reason| EnginePath::EventLoop { reason };
    let s = &m.server;
    if m.engine.path == EnginePathChoice::EventLoop {
        return ev("engine.path = \"event-loop\"");
    }
    match m.workload.kind {
        WorkloadKind::Burst | WorkloadKind::Open => {}
        WorkloadKind::Closed => {
            return ev("a closed workload's workers start each intent when the last one ends");
        }
        WorkloadKind::Contention => return ev("contention makes clients share a record"),
        WorkloadKind::Trace => return ev("a replayed trace's rows may share keys"),
        WorkloadKind::Periodic => return ev("periodic clients are run by the event loop only"),
    }
    if !m.layers.is_empty() || !m.tiers.is_empty() {
        return ev("more than one tier: tiers hold workers between calls");
    }
    if s.connections.is_some() {
        return ev("server.connections: a client's connection is shared by its requests");
    }
    if s.autoscale.is_some() {
        return ev("server.autoscale: the autoscaler's syncs are events of the loop");
    }
    if s.replica_slots() > 1 {
        return ev(
            "server.replicas: callers share balancers (and the direct path has no replicas)",
        );
    }
    if !s.failure_windows.is_empty() {
        return ev("server.failure_windows are run by the event loop only");
    }
    if s.capacity.0.is_some() || !s.capacity_drops.is_empty() {
        return ev("server.capacity makes clients share workers and a queue");
    }
    if s.concurrency_limit.0.is_some() {
        return ev("server.concurrency_limit makes clients share a limit");
    }
    if s.rate_limit.enabled() {
        return ev("server.rate_limit makes clients share tokens");
    }
    if s.shedding.kind != SheddingKind::None {
        return ev("server.shedding makes clients share a queue");
    }
    if s.slowdown > 0.0 {
        return ev("server.slowdown makes service depend on load");
    }
    if s.contention {
        return ev("server.contention makes clients share a record");
    }
    if m.idempotency.store != StoreMode::None {
        return ev("the idempotency store is shared by clients");
    }
    if m.budget.kind != BudgetKind::None {
        return ev("a retry budget is shared state");
    }
    if m.breaker.enabled {
        return ev("a circuit breaker is shared state");
    }
    if m.limiter.kind != LimiterKind::None {
        return ev("a client-side limiter is shared state");
    }
    if [m.retry.timeout, m.hedge.delay]
        .iter()
        .any(|d| d.is_some_and(|d| d.learned().is_some()))
    {
        return ev("a learned timeout or hedging delay is learned from every client's latencies");
    }
    if m.hedge.enabled() {
        return ev("hedging is run by the event loop only");
    }
    if m.retry.max_attempts > MAX_DIRECT_ATTEMPTS {
        return ev("retry.max_attempts above 1021");
    }
    if m.horizon.0 >= MAX_DIRECT_HORIZON {
        return ev("a horizon of 2^44 ns (4.9 hours) or more");
    }
    EnginePath::Direct
}
