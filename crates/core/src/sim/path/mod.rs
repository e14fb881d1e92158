//! The one engine: a request path of tiers, each retrying towards the next, on one event loop.
//!
//! Intents enter at the top (the workload, [`workload`]); the clients' retry loop (hop 0) sends
//! attempts over its network to tier 0; a tier ([`tier`]) queues and serves them, and unless it
//! is the last one, the client inside it runs its own retry loop (hop 1) towards tier 1, and so
//! on down to the last tier, `[server]`, where effects happen and the dedupe store and write
//! contention live ([`store`]). Every retry loop, at the top or inside a tier, is one [`call`]:
//! attempts, timeouts, backoff, budgets, breakers, hedging and Retry-After are written once.
//! The shape of the path comes from the model through [`spec::PathSpec`].
//!
//! State lives in slabs that events index: a top call per intent (one cache line, since the
//! herd touches one random intent per event) and inner calls for the retry loops inside tiers.
//! Events carry a slot and an epoch, so a stale timeout for a reused slot is skipped. An intent is
//! *finalised* (its outcome counted, its slot freed) once its client has settled and nothing of it
//! is in flight anywhere on the path. Every random draw is keyed by `(seed, intent id, purpose,
//! index)`, where the index of an attempt is its number at the top and a hash of the attempt
//! numbers along its path below (see [`crate::sim::draws`]), so variants share draws for the
//! attempts they share.

pub mod spec;

mod call;
mod callref;
mod finish;
mod keyed;
mod limit;
mod store;
mod tier;
mod workload;
pub use call::envoy_reset_delay;

use crate::engine::{self, BurstOrder, Engine};
use crate::metrics::{Buckets, Completions};
use crate::model::{Model, WorkloadKind};
use crate::policy::breaker::Breaker;
use crate::policy::budget::{Budget, BudgetKind};
use crate::policy::limiter::Limiter;
use crate::policy::ratelimit::TokenBucket;
use crate::policy::{ClassSet, Scope};
use crate::queue::EventQueue;
use crate::rng::Stream;
use crate::sim::draws::Draws;
use crate::summary::VariantResult;
use crate::time::{Duration, Time};
use crate::trace::{TraceLog, TraceOptions, Tracer};
use call::{Inner, Top};
use callref::CallRef;
use spec::PathSpec;
use store::Store;
use tier::{Outcome, Request, TierState};

/// `Retry-After` in whole milliseconds inside a reply event; this value means none.
const NO_RETRY_AFTER: u32 = u32::MAX;

/// Events are small and `Copy`; state lives in the slabs they index.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The `client`-th burst client in start order starts its intent.
    Start { client: u32 },
    /// The open workload's next arrival is due.
    Arrival,
    /// A closed-workload worker finished thinking.
    Think { worker: u32 },
    /// Row `row` of a replayed trace arrives.
    Replay { row: u32 },
    /// Backoff elapsed: the call sends its next attempt.
    Send { call: CallRef, epoch: u32 },
    /// A request reaches the tier its call sends to.
    Arrive {
        call: CallRef,
        epoch: u32,
        attempt: u16,
        key: u16,
    },
    /// Write contention: the write that follows a read reaches the record.
    WriteArrive {
        call: CallRef,
        attempt: u16,
        key: u16,
        version: u32,
    },
    /// A worker of `tier` finishes serving `in_service[job]`.
    Done { tier: u8, job: u32 },
    /// An answer reaches the call.
    Reply {
        call: CallRef,
        epoch: u32,
        attempt: u16,
        outcome: Outcome,
        /// The server's `Retry-After`, ms ([`NO_RETRY_AFTER`] = none).
        retry_after_ms: u32,
    },
    /// Hedging: send copy number `attempt` unless the call has committed or moved on.
    Hedge {
        call: CallRef,
        epoch: u32,
        attempt: u16,
    },
    /// A capacity-drop window of `tier` starts or ends.
    Capacity { tier: u8 },
    /// The per-attempt timeout fires.
    Timeout {
        call: CallRef,
        epoch: u32,
        attempt: u16,
    },
    /// Limiter `slot` of hop `hop` may have a token for its oldest waiting send.
    Limiter { hop: u8, slot: u32, generation: u32 },
}

/// A hop's policy state: one instance per client process at the top, one per tier below.
struct HopState {
    retry_on: ClassSet,
    budgets: Vec<Budget>,
    budget_shared: bool,
    budget_adaptive: bool,
    breakers: Vec<Breaker>,
    breaker_shared: bool,
    /// The `[limiter]` instances and the sends waiting for them (hop 0 only).
    limiters: Vec<limit::LimiterSlot>,
    limiter_shared: bool,
    /// The breaker needs each attempt's duration (slow calls): send times are kept.
    timed: bool,
    retry_after_cap: Duration,
    hedge_delay: Option<Duration>,
    /// Hot copies of the spec, read on every attempt.
    hedging: bool,
    max_attempts: u32,
    timeout: Option<Duration>,
    /// The hop above propagates cancellation (never at the top).
    cancel_above: bool,
    /// Some caller at or above this hop can stop waiting for an attempt (a timeout, hedging),
    /// so work may be orphaned here or below.
    can_orphan: bool,
    /// The hop sends to a tier with write contention (two round trips per attempt).
    contention: bool,
    n: HopCounters,
}

/// What one hop's callers did (the per-layer report).
#[derive(Clone, Copy, Debug, Default)]
struct HopCounters {
    /// Calls this hop's caller received (intents at the top).
    received: u64,
    sent: u64,
    retries: u64,
    /// Attempts with a retry anywhere on their path above and here.
    retry_path_sent: u64,
    failed: u64,
    timeouts: u64,
    budget_denied: u64,
    /// Calls that reached this caller after the caller above had stopped waiting.
    orphaned: u64,
    /// Retries not made because the caller above had stopped waiting (`retry.cancel`).
    cancelled: u64,
    throttled_locally: u64,
    breaker_rejected: u64,
    /// First tries a local policy (throttling, breaker) refused: never sent, so not in `sent`.
    first_tries_refused: u64,
    requests_lost: u64,
    responses_lost: u64,
    late_responses: u64,
    retry_after_waits: u64,
    /// Sends the `[limiter]` held until it had a token, and their total wait.
    limiter_delayed: u64,
    limiter_wait_ns: u64,
    /// Attempts the `[limiter]` refused (a Netflix limiter beyond its limit).
    limiter_rejected: u64,
}

/// Counters of the intents themselves.
#[derive(Default)]
struct Counters {
    intents: u64,
    succeeded: u64,
    failed: u64,
    lost: u64,
    applied_once: u64,
    duplicated: u64,
    phantom: u64,
    false_failures: u64,
    effects: u64,
    conflicts: u64,
    replayed: u64,
}

/// A run in progress. Build with [`PathSim::new`], drive with [`PathSim::run`].
pub struct PathSim<'m> {
    model: &'m Model,
    spec: PathSpec,
    draws: Draws,
    queue: EventQueue<Event>,
    tops: Vec<Top>,
    free_tops: Vec<u32>,
    inner: Vec<Inner>,
    free_inner: Vec<u32>,
    live: u64,
    next_id: u64,
    /// Intents the workload will still start (burst events pending, closed budget, open source).
    to_start: u64,
    open_source: bool,
    burst: Option<BurstOrder>,
    arrivals_stream: Stream,
    lambda_max: f64,
    hops: Vec<HopState>,
    tiers: Vec<TierState>,
    /// The index of the last tier.
    bottom: usize,
    store: Store,
    completions: Completions,
    /// Completion times of the intents that succeeded.
    successes: Completions,
    c: Counters,
    events: u64,
    /// `--trace`: records a few intents' steps; `None` (one check per step) when off.
    trace: Option<Box<Tracer>>,
    /// When the latest attempt of each top and inner call went out, on hops that are `timed`
    /// (indexed by slot; kept apart from the slabs so that a top call stays one cache line).
    sent_top: Vec<Time>,
    sent_inner: Vec<Time>,
    /// A replayed trace's key column: rows sharing a key are one intent; `None` without one.
    keyed: Option<keyed::Keyed>,
}

/// Asks the CPU to start loading `x`'s cache line; a hint with no effect on results.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault; `x` is a valid reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            std::ptr::from_ref(x).cast::<i8>(),
            std::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

impl Engine for PathSim<'_> {
    type Event = Event;
    fn queue(&mut self) -> &mut EventQueue<Event> {
        &mut self.queue
    }
    fn finished(&self) -> bool {
        self.live == 0 && self.to_start == 0 && !self.open_source
    }
    /// The intents of the events about to pop are prefetched: a random intent per event is
    /// this loop's main cost at scale (a cache miss on a slab of 64-byte lines).
    fn next_event(&mut self) -> Option<(Time, Event)> {
        let tops = &self.tops;
        self.queue.pop_with(|e| {
            let call = match *e {
                Event::Send { call, .. }
                | Event::Timeout { call, .. }
                | Event::Reply { call, .. }
                | Event::Arrive { call, .. }
                | Event::Hedge { call, .. } => call,
                _ => return,
            };
            if !call.is_inner()
                && let Some(i) = tops.get(call.slot())
            {
                prefetch(i);
            }
        })
    }
    fn handle(&mut self, now: Time, ev: Event) {
        PathSim::handle(self, now, ev)
    }
}

impl<'m> PathSim<'m> {
    pub fn new(model: &'m Model, seed: u64) -> Self {
        let spec = PathSpec::of(model);
        let draws = Draws::new(seed);
        let w = &model.workload;
        let processes = match w.kind {
            WorkloadKind::Open => w.processes,
            WorkloadKind::Closed => w.workers,
            WorkloadKind::Trace => w.replay.processes(w.processes),
            _ => w.clients,
        }
        .max(1) as usize;
        let hops = spec
            .hops
            .iter()
            .enumerate()
            .map(|(k, h)| {
                // Below the top, the caller is one process: the tier it runs in.
                let n = |scope: Scope| {
                    if scope == Scope::Shared || k > 0 {
                        1
                    } else {
                        processes
                    }
                };
                HopState {
                    retry_on: ClassSet::of(&h.retry.retry_on),
                    budgets: if h.budget.kind == BudgetKind::None {
                        Vec::new()
                    } else {
                        vec![Budget::new(&h.budget); n(h.budget.scope)]
                    },
                    budget_shared: h.budget.scope == Scope::Shared || k > 0,
                    budget_adaptive: h.budget.kind == BudgetKind::Adaptive,
                    breakers: if h.breaker.enabled {
                        vec![Breaker::new(&h.breaker); n(h.breaker.scope)]
                    } else {
                        Vec::new()
                    },
                    breaker_shared: h.breaker.scope == Scope::Shared || k > 0,
                    limiters: (0..n(h.limiter.scope) as u64)
                        .filter_map(|i| {
                            Limiter::new(&h.limiter, Time::ZERO, draws.limiter_probe(k, i))
                        })
                        .map(limit::LimiterSlot::new)
                        .collect(),
                    limiter_shared: h.limiter.scope == Scope::Shared || k > 0,
                    timed: h.breaker.enabled || Limiter::is_concurrency(h.limiter.kind),
                    retry_after_cap: h.retry.retry_after_cap.unwrap_or(h.retry.cap),
                    hedge_delay: h.hedge.delay,
                    hedging: h.hedge.delay.is_some(),
                    max_attempts: h.retry.max_attempts,
                    timeout: h.retry.timeout,
                    cancel_above: k > 0 && spec.hops[k - 1].retry.cancel,
                    can_orphan: spec.hops[..=k]
                        .iter()
                        .any(|h| h.retry.timeout.is_some() || h.hedge.enabled()),
                    contention: k == spec.bottom() && spec.tiers[k].server.contention,
                    n: HopCounters::default(),
                }
            })
            .collect();
        let mut tiers = spec
            .tiers
            .iter()
            .enumerate()
            .map(|(t, s)| {
                let rl = &s.server.rate_limit;
                let shared = rl.scope == Scope::Shared || t > 0;
                let limiters = if rl.enabled() {
                    vec![TokenBucket::new(rl.rate, rl.burst); if shared { 1 } else { processes }]
                } else {
                    Vec::new()
                };
                TierState::new(&s.server, model.bucket, limiters, shared)
            })
            .collect::<Vec<_>>();
        let bottom = spec.bottom();
        // The summary's window and per-attempt peaks are the bottom's.
        tiers[bottom].buckets = Buckets::with_windows(model.bucket, model.peak_window());
        let mut sim = PathSim {
            model,
            spec,
            draws,
            queue: EventQueue::new(),
            tops: Vec::new(),
            free_tops: Vec::new(),
            inner: Vec::new(),
            free_inner: Vec::new(),
            live: 0,
            next_id: 0,
            to_start: 0,
            open_source: false,
            burst: None,
            arrivals_stream: draws.arrivals(),
            lambda_max: 0.0,
            hops,
            tiers,
            bottom,
            store: Store::default(),
            completions: Completions::default(),
            successes: Completions::default(),
            c: Counters::default(),
            events: 0,
            trace: None,
            sent_top: Vec::new(),
            sent_inner: Vec::new(),
            keyed: match w.kind {
                WorkloadKind::Trace => keyed::Keyed::of(&w.replay),
                _ => None,
            },
        };
        // Capacity changes at the edges of each drop window (pushed first: they pop first).
        for (t, s) in sim.spec.tiers.iter().enumerate() {
            for d in &s.server.capacity_drops {
                sim.queue
                    .push(Time::ZERO + d.from, Event::Capacity { tier: t as u8 });
                sim.queue
                    .push(Time::ZERO + d.to, Event::Capacity { tier: t as u8 });
            }
        }
        sim.start_workload();
        sim
    }

    /// Runs to the end and reports. `progress` is called now and then with the clock.
    pub fn run(self, name: &str, progress: &mut dyn FnMut(Time)) -> VariantResult {
        self.run_to(name, progress, true)
    }

    /// Runs to the end and reports only the summary: its series and CDFs are left empty.
    pub fn run_summary(self, name: &str) -> VariantResult {
        self.run_to(name, &mut |_| {}, false)
    }

    /// Sizes the bottom's per-attempt loads for its callers' attempts, and keeps its arrivals
    /// per bucket by attempt only when the series is built (`full`).
    fn prepare_windows(&mut self, full: bool) {
        let attempts = self.spec.hops[self.bottom].retry.max_attempts;
        let n = usize::try_from(attempts).unwrap_or(usize::MAX).min(1024);
        self.tiers[self.bottom].buckets.prepare_windows(n, full);
    }

    fn run_to(mut self, name: &str, progress: &mut dyn FnMut(Time), full: bool) -> VariantResult {
        let model = self.model;
        self.prepare_windows(full);
        let r = engine::drive(&mut self, model, progress);
        self.events = r.events;
        self.finish(name, r.end, r.ended, full)
    }

    /// [`PathSim::run`] with a tracer: the same result (the tracer only reads), and the trace.
    pub fn run_traced(
        mut self,
        name: &str,
        progress: &mut dyn FnMut(Time),
        opt: TraceOptions,
    ) -> (VariantResult, TraceLog) {
        self.trace = Some(Box::new(Tracer::new(opt)));
        let model = self.model;
        self.prepare_windows(true);
        let r = engine::drive(&mut self, model, progress);
        self.events = r.events;
        let log = self
            .trace
            .take()
            .map_or_else(TraceLog::default, |t| t.finish());
        (self.finish(name, r.end, r.ended, true), log)
    }

    fn handle(&mut self, now: Time, ev: Event) {
        match ev {
            Event::Start { client: n } => {
                self.to_start -= 1;
                let Some(order) = &self.burst else { return };
                let client = order.take(n, &mut self.queue, |client| Event::Start { client });
                self.start_intent(now, client, call::NO_WORKER);
            }
            Event::Arrival => {
                let id = self.next_id;
                self.next_id += 1;
                self.start_intent(now, id, call::NO_WORKER);
                self.schedule_next_arrival(now);
            }
            Event::Replay { row } => {
                self.to_start -= 1;
                let id = self.next_id;
                self.next_id += 1;
                self.start_intent(now, id, call::NO_WORKER);
                self.schedule_replay(row + 1);
            }
            Event::Think { worker } => {
                if self.to_start > 0 {
                    self.to_start -= 1;
                    let id = self.next_id;
                    self.next_id += 1;
                    self.start_intent(now, id, worker);
                }
            }
            Event::Send { call, epoch } => {
                if self.lp(call).epoch == epoch {
                    self.send(now, call);
                }
            }
            Event::Arrive {
                call,
                epoch,
                attempt,
                key,
            } => self.arrive(now, Request::new(call, epoch, attempt, key, now)),
            Event::WriteArrive {
                call,
                attempt,
                key,
                version,
            } => {
                let epoch = self.lp(call).epoch;
                let mut req = Request::new(call, epoch, attempt, key, now);
                req.version = version;
                self.write_arrive(now, req);
            }
            Event::Done { tier, job } => self.done(now, tier as usize, job),
            Event::Reply {
                call,
                epoch,
                attempt,
                outcome,
                retry_after_ms,
            } => {
                let ra = from_retry_after_ms(retry_after_ms);
                self.reply(now, call, epoch, attempt, outcome, ra)
            }
            Event::Timeout {
                call,
                epoch,
                attempt,
            } => {
                if self.lp(call).epoch == epoch && self.outstanding(call, attempt) {
                    let h = self.hop(call);
                    self.hops[h].n.timeouts += 1;
                    self.call_sees(now, call, attempt, crate::policy::Class::Timeout, None);
                }
            }
            Event::Hedge {
                call,
                epoch,
                attempt,
            } => {
                let l = self.lp(call);
                if l.epoch == epoch && l.settled == call::Settled::No && l.attempts == attempt {
                    self.hedge(now, call);
                }
            }
            Event::Limiter {
                hop,
                slot,
                generation,
            } => self.limiter_wake(now, hop as usize, slot as usize, generation),
            Event::Capacity { tier } => {
                let t = tier as usize;
                self.tiers[t].capacity = self.tiers[t].capacity_at(&self.spec.tiers[t].server, now);
                self.dispatch(now, t);
            }
        }
    }
}

/// `Retry-After` as carried in a reply: whole milliseconds, [`NO_RETRY_AFTER`] for none.
#[inline]
fn from_retry_after_ms(ms: u32) -> Option<Duration> {
    (ms != NO_RETRY_AFTER).then(|| Duration::from_millis(u64::from(ms)))
}

#[inline]
fn to_retry_after_ms(d: Option<Duration>) -> u32 {
    d.map_or(NO_RETRY_AFTER, |d| {
        (d.0 / 1_000_000).min(u64::from(NO_RETRY_AFTER - 1)) as u32
    })
}

/// The index of a policy instance: 0 when shared, else the client process.
#[inline]
fn pidx(shared: bool, client: u32) -> usize {
    if shared { 0 } else { client as usize }
}

/// Runs `model` with `seed` and returns its result, named after the model: [`crate::run_model`]
/// without progress.
pub fn run(model: &Model, seed: u64) -> VariantResult {
    crate::run_model(model, seed, &mut |_| {})
}
