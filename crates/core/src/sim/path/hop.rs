//! A hop: one caller's policies towards the tier below, with the state they keep and what the
//! caller did. One `HopState` per hop of the path (the clients at hop 0, the client inside tier
//! `k - 1` at hop `k`); per-client instances (budgets, breakers, limiters) live in it, indexed by
//! the client process, or one instance when shared.
//!
//! The retry settings of the hop are read from here only ([`RetryRules`]): the loop never goes
//! back to the model's `[retry]` table.

use super::balance::Balancing;
use super::callref::CallRef;
use super::connect::Conns;
use super::learn::Learner;
use super::retry_after::RetryAfterRules;
use super::spec::{Hop, PathSpec};
use crate::base::time::{Duration, Time};
use crate::policy::adaptive::Adaptive;
use crate::policy::backoff::Backoff;
use crate::policy::breaker::{Breaker, Placement};
use crate::policy::budget::{BudgetKind, BudgetState};
use crate::policy::limiter::LimiterState;
use crate::policy::{ClassSet, Scope};
use crate::sim::draws::Draws;
use std::collections::VecDeque;

/// The retry settings of one hop, resolved once from its `retry` (and `hedge`, `breaker`).
#[derive(Clone)]
pub(super) struct RetryRules {
    /// Attempts per call, the first try included.
    pub(super) max_attempts: u32,
    /// The per-attempt timeout; a learned one's `max` (the hop's [`Learner`] has its value).
    pub(super) timeout: Option<Duration>,
    /// No retry starts after this long from the call's start.
    pub(super) deadline: Option<Duration>,
    pub(super) retry_on: ClassSet,
    pub(super) backoff: Backoff,
    /// The backoff after a throttling error (the AWS SDKs' larger base), else `backoff`.
    pub(super) throttled: Backoff,
    pub(super) restart_probability: f64,
    pub(super) retry_after: RetryAfterRules,
    /// Hedging: the delay before the next copy goes out (a learned one's `max`); `None` without
    /// hedging.
    pub(super) hedge_delay: Option<Duration>,
    /// The breaker lets first tries through (it counts retries only).
    pub(super) breaker_retries_only: bool,
    /// `breaker.placement = "around-retries"`: the breaker is asked before a call's first try
    /// only and records one outcome when the call settles ([`Placement`]).
    pub(super) breaker_around: bool,
    /// `retry.cancel`: the tier this hop sends to drops work nobody above waits for.
    pub(super) cancel: bool,
    /// The backoff carries the last delay from one retry to the next (decorrelated jitter,
    /// Polly's V2).
    pub(super) carries_state: bool,
}

impl RetryRules {
    fn of(h: &Hop) -> Self {
        let r = &h.retry;
        let backoff = r.backoff();
        let mut throttled = backoff;
        if let Some(b) = r.throttling_base {
            // The AWS SDKs back off from a larger base after a throttling error.
            throttled.base = b;
        }
        RetryRules {
            max_attempts: r.max_attempts,
            timeout: r.timeout.map(Adaptive::ceiling),
            deadline: r.deadline,
            retry_on: ClassSet::of(&r.retry_on),
            backoff,
            throttled,
            restart_probability: r.restart_probability,
            retry_after: RetryAfterRules::of(r),
            hedge_delay: h.hedge.delay.map(Adaptive::ceiling),
            breaker_retries_only: h.breaker.retries_only,
            breaker_around: h.breaker.placement == Placement::AroundRetries,
            cancel: r.cancel,
            carries_state: backoff.carries_state() || throttled.carries_state(),
        }
    }

    #[inline(always)]
    pub(super) fn hedging(&self) -> bool {
        self.hedge_delay.is_some()
    }
}

/// A hop's policy state: one instance per client process at the top, one per tier below.
#[derive(Clone)]
pub(super) struct HopState {
    pub(super) retry: RetryRules,
    pub(super) budgets: Vec<BudgetState>,
    budget_shared: bool,
    /// The budget reads a uniform draw on every send (`Budget::DRAWS_ON_SEND`).
    pub(super) budget_draws: bool,
    pub(super) breakers: Vec<Breaker>,
    breaker_shared: bool,
    /// The `[limiter]` instances and the sends waiting for them (hop 0 only).
    pub(super) limiters: Vec<LimiterSlot>,
    limiter_shared: bool,
    /// The breaker, the limiter or a learned duration needs each attempt's duration: send
    /// times are kept.
    pub(super) timed: bool,
    /// A learned `retry.timeout` ([`Learner`]); none for a fixed one or none.
    pub(super) learned_timeout: Option<Box<Learner>>,
    /// A learned `hedge.delay`.
    pub(super) learned_hedge: Option<Box<Learner>>,
    /// The hop above propagates cancellation (never at the top).
    pub(super) cancel_above: bool,
    /// Some caller at or above this hop can stop waiting for an attempt (a timeout, hedging, a
    /// fan-out that answers before all its calls have), so work may be orphaned here or below.
    pub(super) can_orphan: bool,
    /// This hop's calls are a fan-out's (the tier above has `server.fanout`).
    pub(super) leaves: bool,
    /// ... and that fan-out cancels its calls once the tier has answered.
    pub(super) fan_cancel: bool,
    /// The hop sends to a tier with write contention (two round trips per attempt).
    pub(super) contention: bool,
    /// The balancers (and outlier detectors) in front of a replicated tier.
    pub(super) balancing: Option<Box<Balancing>>,
    /// The callers' connections to a tier with `server.connections`.
    pub(super) connections: Option<Box<Conns>>,
    pub(super) n: HopCounters,
}

/// What one hop's callers did (the per-layer report).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HopCounters {
    /// Calls this hop's caller received (intents at the top).
    pub(super) received: u64,
    pub(super) sent: u64,
    pub(super) retries: u64,
    /// Attempts with a retry anywhere on their path above and here.
    pub(super) retry_path_sent: u64,
    pub(super) failed: u64,
    pub(super) timeouts: u64,
    pub(super) budget_denied: u64,
    /// Calls that reached this caller after the caller above had stopped waiting.
    pub(super) orphaned: u64,
    /// Retries not made because the caller above had stopped waiting (`retry.cancel`).
    pub(super) cancelled: u64,
    pub(super) throttled_locally: u64,
    pub(super) breaker_rejected: u64,
    /// First tries a local policy (throttling, breaker) refused: never sent, so not in `sent`.
    pub(super) first_tries_refused: u64,
    pub(super) requests_lost: u64,
    pub(super) responses_lost: u64,
    pub(super) late_responses: u64,
    pub(super) retry_after_waits: u64,
    /// Sends the `[limiter]` held until it had a token, and their total wait.
    pub(super) limiter_delayed: u64,
    pub(super) limiter_wait_ns: u64,
    /// Attempts the `[limiter]` refused (a Netflix limiter beyond its limit).
    pub(super) limiter_rejected: u64,
}

/// The index of a policy instance: 0 when shared, else the client process.
#[inline(always)]
fn pidx(shared: bool, client: u32) -> usize {
    if shared { 0 } else { client as usize }
}

impl HopState {
    /// The state of hop `k` of `spec`, for `processes` client processes at the top.
    pub(super) fn new(
        spec: &PathSpec,
        k: usize,
        processes: usize,
        draws: Draws,
        bucket: Duration,
    ) -> Self {
        let h = &spec.hops[k];
        let learner = |d: Option<Adaptive>| {
            let spec = d.and_then(Adaptive::learned)?;
            Some(Box::new(Learner::new(spec, bucket)))
        };
        let (learned_timeout, learned_hedge) = (learner(h.retry.timeout), learner(h.hedge.delay));
        // Below the top, the caller is one process: the tier it runs in.
        let shared = |scope: Scope| scope == Scope::Shared || k > 0;
        let n = |scope: Scope| if shared(scope) { 1 } else { processes };
        let fanout = k.checked_sub(1).and_then(|t| spec.tiers[t].server.fanout);
        HopState {
            retry: RetryRules::of(h),
            budgets: if h.budget.kind == BudgetKind::None {
                Vec::new()
            } else {
                vec![BudgetState::new(&h.budget); n(h.budget.scope)]
            },
            budget_shared: shared(h.budget.scope),
            budget_draws: h.budget.kind.draws_on_send(),
            breakers: if h.breaker.enabled {
                vec![Breaker::new(&h.breaker); n(h.breaker.scope)]
            } else {
                Vec::new()
            },
            breaker_shared: shared(h.breaker.scope),
            limiters: (0..n(h.limiter.scope) as u64)
                .filter_map(|i| {
                    LimiterState::new(&h.limiter, Time::ZERO, draws.limiter_probe(k, i))
                })
                .map(LimiterSlot::new)
                .collect(),
            limiter_shared: shared(h.limiter.scope),
            timed: h.breaker.enabled
                || h.limiter.kind.is_concurrency()
                || learned_timeout.is_some()
                || learned_hedge.is_some(),
            learned_timeout,
            learned_hedge,
            cancel_above: k > 0 && spec.hops[k - 1].retry.cancel,
            can_orphan: spec.hops[..=k]
                .iter()
                .any(|h| h.retry.timeout.is_some() || h.hedge.enabled())
                || spec.tiers[..k].iter().any(|t| t.server.fanout.is_some()),
            leaves: fanout.is_some(),
            fan_cancel: fanout.is_some_and(|f| f.cancel),
            contention: k == spec.bottom() && spec.tiers[k].server.contention,
            balancing: Balancing::new(spec, k, processes, draws),
            connections: spec.tiers[k].server.connections.as_ref().map(|c| {
                let clients = if k == 0 { processes } else { 1 };
                let replicas = spec.tiers[k].server.replica_slots() as usize;
                Box::new(Conns::new(c, k, clients, replicas))
            }),
            n: HopCounters::default(),
        }
    }

    /// The retry budget client `client` uses, if the hop has one.
    #[inline(always)]
    pub(super) fn budget(&mut self, client: u32) -> Option<&mut BudgetState> {
        let k = pidx(self.budget_shared, client);
        self.budgets.get_mut(k)
    }

    /// The circuit breaker client `client` uses, if the hop has one.
    #[inline(always)]
    pub(super) fn breaker(&mut self, client: u32) -> Option<&mut Breaker> {
        let k = pidx(self.breaker_shared, client);
        self.breakers.get_mut(k)
    }

    /// Some policy keeps an instance per client process: calls must know their client.
    pub(super) fn per_client(&self) -> bool {
        self.budgets.len() > 1
            || self.breakers.len() > 1
            || self.limiters.len() > 1
            || self.balancing.as_ref().is_some_and(|b| b.per_client())
    }

    /// The hop's calls need [`super::call::Extra`]: a backoff that carries the last delay,
    /// hedging, a retry budget (which may charge a cost per retry) or restarts (a new key).
    pub(super) fn needs_extra(&self) -> bool {
        let r = &self.retry;
        r.hedging() || r.restart_probability > 0.0 || r.carries_state || !self.budgets.is_empty()
    }

    /// Hop `k`'s limiters' probe jitter and its balancers' picks draw from `draws` from now on
    /// (a forked run's branch, [`super::PathSim::fork`]).
    pub(super) fn rekey(&mut self, k: usize, draws: Draws) {
        for (i, slot) in self.limiters.iter_mut().enumerate() {
            slot.limiter.rekey(draws.limiter_probe(k, i as u64));
        }
        if let Some(b) = &mut self.balancing {
            b.rekey(k, draws);
        }
    }

    /// The index of the limiter instance client `client` uses.
    #[inline(always)]
    pub(super) fn limiter_index(&self, client: u32) -> usize {
        pidx(self.limiter_shared, client)
    }
}

/// One limiter instance and the sends waiting for it.
#[derive(Clone, Debug)]
pub(super) struct LimiterSlot {
    pub(super) limiter: LimiterState,
    /// Sends waiting for a token, oldest first: the call, its epoch, and since when.
    pub(super) waiting: VecDeque<(CallRef, u32, Time)>,
    /// The generation of the pending wake-up event; an older one is stale.
    pub(super) generation: u32,
}

impl LimiterSlot {
    pub(super) fn new(limiter: LimiterState) -> Self {
        LimiterSlot {
            limiter,
            waiting: VecDeque::new(),
            generation: 0,
        }
    }
}
