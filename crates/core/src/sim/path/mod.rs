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
//! State lives in slabs that events index: a top call per intent (half a cache line, since the
//! herd touches one random intent per event) and inner calls for the retry loops inside tiers.
//! Events carry a slot and an epoch, so a stale timeout for a reused slot is skipped. An intent is
//! *finalised* (its outcome counted, its slot freed) once its client has settled and nothing of it
//! is in flight anywhere on the path. Every random draw is keyed by `(seed, intent id, purpose,
//! index)`, where the index of an attempt is its number at the top and a hash of the attempt
//! numbers along its path below (see [`crate::sim::draws`]), so variants share draws for the
//! attempts they share.

pub mod spec;

mod balance;
mod call;
mod callref;
mod connect;
mod direct;
mod entry;
mod fanout;
mod finish;
mod fork;
pub mod gauge;
mod hop;
mod keyed;
mod learn;
mod limit;
mod retry_after;
mod route;
mod settle;
mod store;
mod tier;
mod workload;
pub use direct::run as run_direct;
pub use direct::run_until as run_direct_until;
pub use direct::{EnginePath, engine_path};
pub use entry::{
    run, run_model, run_model_traced, run_model_traced_until, run_model_until, run_summary,
    run_summary_until,
};
pub use retry_after::envoy_reset_delay;

use crate::base::queue::EventQueue;
use crate::base::time::{Duration, Time};
use crate::model::{Model, WorkloadKind};
use crate::policy::Scope;
use crate::policy::ratelimit::TokenBucket;
use crate::result::summary::VariantResult;
use crate::sim::draws::Draws;
use crate::sim::engine::{self, Engine};
use crate::sim::metrics::{Buckets, Completions};
use crate::sim::trace::{TraceLog, TraceOptions, Tracer};
use call::{Calls, by_kind};
use callref::CallRef;
use hop::HopState;
use spec::PathSpec;
use std::sync::atomic::{AtomicBool, Ordering};
use store::Store;
use tier::{Outcome, Request, Tick, TierState};
use workload::Workload;

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
    /// Periodic client `client` makes its call number `call` since its start number `start`.
    Tick { client: u32, start: u32, call: u32 },
    /// Every periodic client starts again (one of `workload.restarts`).
    ClientsRestart,
    /// Backoff elapsed: the call sends its next attempt.
    Send { call: CallRef, epoch: u32 },
    /// A request reaches replica `replica` of the tier its call sends to.
    Arrive {
        call: CallRef,
        epoch: u32,
        attempt: u16,
        key: u16,
        replica: u16,
        /// The attempt opened a connection: its request carries a connect.
        connect: bool,
    },
    /// Write contention: the write that follows a read reaches the record.
    WriteArrive {
        call: CallRef,
        attempt: u16,
        key: u16,
        version: u32,
        replica: u16,
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
    /// The autoscaler of `tier`: a metric window's edge, a sync, or a replica ready.
    Autoscale { tier: u8, tick: Tick },
}

const _: () = assert!(std::mem::size_of::<Event>() == 16);

/// Counters of the intents themselves.
#[derive(Clone, Default)]
pub(super) struct Counters {
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
    /// When the last intent settled (its client told success or given up), for `drain_ms`.
    last_settled: Time,
}

/// What every owner's handlers share: the model and the path's shape (read only), the run's
/// draws, the events' queue and the tracer. A handler takes it beside the owner it runs on and
/// the other owners it reads, so its arguments say what it touches.
pub(super) struct Cx<'m> {
    /// The time of the event being handled.
    pub(super) now: Time,
    pub(super) model: &'m Model,
    pub(super) spec: PathSpec,
    /// The index of the last tier.
    pub(super) bottom: usize,
    pub(super) draws: Draws,
    pub(super) queue: EventQueue<Event>,
    /// `--trace`: records a few intents' steps; `None` (one check per step) when off.
    pub(super) trace: Option<Box<Tracer>>,
}

/// A copy records no trace: the tracer belongs to the run that was asked for one, and a copy's
/// steps would interleave with its own.
impl Clone for Cx<'_> {
    fn clone(&self) -> Self {
        Cx {
            now: self.now,
            model: self.model,
            spec: self.spec.clone(),
            bottom: self.bottom,
            draws: self.draws,
            queue: self.queue.clone(),
            trace: None,
        }
    }
}

/// A run in progress. Build with [`PathSim::new`], drive with [`PathSim::run`].
///
/// Each field is one owner, and each owner carries its own handlers: the calls ([`Calls`]:
/// the retry loops), each hop's policies ([`HopState`]), each tier ([`TierState`]), the last
/// tier's store ([`Store`]), the workload, the intents' tallies. What they share is in [`Cx`].
/// `PathSim` itself only hands each event to its owner and routes between owners where one
/// hands over to another (`route.rs`, `settle.rs`).
///
/// The whole run is a value: cloned between two events, the copy goes on exactly as the
/// original would (the model and the stop flag are shared; the copy keeps no tracer).
#[derive(Clone)]
pub struct PathSim<'m> {
    cx: Cx<'m>,
    calls: Calls,
    workload: Workload,
    hops: Vec<HopState>,
    tiers: Vec<TierState>,
    store: Store,
    /// A replayed trace's key column: rows sharing a key are one intent; `None` without one.
    keyed: Option<keyed::Keyed>,
    completions: Completions,
    /// Completion times of the intents that succeeded.
    successes: Completions,
    c: Counters,
    events: u64,
    /// How far the loop has driven the run ([`PathSim::advance`]).
    reached: engine::Reached,
    /// Set by the caller to stop the run ([`PathSim::with_stop`]).
    stop: Option<&'m AtomicBool>,
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
        &mut self.cx.queue
    }
    fn finished(&self) -> bool {
        self.calls.live == 0 && self.workload.exhausted()
    }
    fn stop_requested(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }
    /// The intents of the events about to pop are prefetched: a random intent per event is
    /// this loop's main cost at scale (a cache miss on a slab of 32-byte top calls).
    fn next_event(&mut self) -> Option<(Time, Event)> {
        let tops = self.calls.tops();
        self.cx.queue.pop_with(|e| {
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
        Self::with_draws(model, Draws::new(seed))
    }

    /// A run of `model` whose every stream comes from `draws`.
    fn with_draws(model: &'m Model, draws: Draws) -> Self {
        let spec = PathSpec::of(model);
        let w = &model.workload;
        let processes = match w.kind {
            WorkloadKind::Open => w.processes,
            WorkloadKind::Closed => w.workers,
            WorkloadKind::Trace => w.replay.processes(w.processes),
            _ => w.clients,
        }
        .max(1) as usize;
        let hops: Vec<HopState> = (0..spec.hops.len())
            .map(|k| HopState::new(&spec, k, processes, draws, model.bucket))
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
        for (ts, s) in tiers.iter_mut().zip(&spec.tiers) {
            ts.buckets.keep_replicas(s.server.replica_slots());
            if ts.scaler.is_some() {
                ts.buckets.keep_level();
            }
        }
        // The calendar queue for dense, near events; the radix heap for bursts and closed
        // loops (`queue::EventQueue`).
        let mut queue = match w.kind {
            WorkloadKind::Open | WorkloadKind::Trace => EventQueue::calendar(),
            _ => EventQueue::new(),
        };
        // Capacity changes at the edges of each drop window (pushed first: they pop first).
        for (t, s) in spec.tiers.iter().enumerate() {
            for d in &s.server.capacity_drops {
                queue.push(Time::ZERO + d.from, Event::Capacity { tier: t as u8 });
                queue.push(Time::ZERO + d.to, Event::Capacity { tier: t as u8 });
            }
        }
        for (t, ts) in tiers.iter().enumerate() {
            if let Some(sc) = &ts.scaler {
                let (edge, sync) = sc.first_ticks();
                let tier = t as u8;
                queue.push(
                    edge,
                    Event::Autoscale {
                        tier,
                        tick: Tick::Edge,
                    },
                );
                queue.push(
                    sync,
                    Event::Autoscale {
                        tier,
                        tick: Tick::Sync,
                    },
                );
            }
        }
        let keep = call::Keep {
            clients: hops[0].per_client() || tiers[0].per_client() || hops[0].connections.is_some(),
            workers: w.kind == WorkloadKind::Closed,
            extra: hops[0].needs_extra(),
        };
        let mut calls = Calls::new(keep, spec.tiers.len());
        let workload = Workload::new(model, draws, &mut queue, |n| calls.reserve_tops(n));
        PathSim {
            cx: Cx {
                now: Time::ZERO,
                model,
                spec,
                bottom,
                draws,
                queue,
                trace: None,
            },
            calls,
            workload,
            hops,
            tiers,
            store: Store::default(),
            keyed: match w.kind {
                WorkloadKind::Trace => keyed::Keyed::of(&w.replay),
                _ => None,
            },
            completions: Completions::default(),
            successes: Completions::default(),
            c: Counters::default(),
            events: 0,
            reached: engine::Reached::default(),
            stop: None,
        }
    }

    /// Stops the run at the next progress point after `stop` is set (every 65,536 events).
    pub fn with_stop(mut self, stop: &'m AtomicBool) -> Self {
        self.stop = Some(stop);
        self
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
        let bottom = self.cx.bottom;
        let attempts = self.hops[bottom].retry.max_attempts;
        let n = usize::try_from(attempts).unwrap_or(usize::MAX).min(1024);
        self.tiers[bottom].buckets.prepare_windows(n, full);
    }

    /// A run advanced in steps ([`PathSim::advance`]) keeps the windows it was prepared with.
    fn run_to(mut self, name: &str, progress: &mut dyn FnMut(Time), full: bool) -> VariantResult {
        if self.reached.events == 0 {
            self.prepare_windows(full);
        }
        let r = self.drive_to_end(progress);
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
        self.cx.trace = Some(Box::new(Tracer::new(opt)));
        self.prepare_windows(true);
        let r = self.drive_to_end(progress);
        self.events = r.events;
        let log = self
            .cx
            .trace
            .take()
            .map_or_else(TraceLog::default, |t| t.finish());
        (self.finish(name, r.end, r.ended, true), log)
    }

    /// Drives the loop from where the run got to until it ends.
    fn drive_to_end(&mut self, progress: &mut dyn FnMut(Time)) -> engine::RunEnd {
        let (model, mut at) = (self.cx.model, self.reached);
        let r = engine::drive_to_end(self, model, progress, &mut at);
        self.reached = at;
        r
    }

    /// Hands each event to the owner it is for; a call's events go to the retry loop of its
    /// kind ([`by_kind!`]).
    fn handle(&mut self, now: Time, ev: Event) {
        self.cx.now = now;
        match ev {
            Event::Start { .. }
            | Event::Arrival
            | Event::Replay { .. }
            | Event::Think { .. }
            | Event::Tick { .. }
            | Event::ClientsRestart => {
                let (model, queue) = (self.cx.model, &mut self.cx.queue);
                if let Some(s) = self.workload.take(model, queue, ev) {
                    self.start_intent(s.id, s.client, s.worker);
                }
                self.workload.follow(model, &mut self.cx.queue, now, ev);
            }
            Event::Send { call, epoch } => {
                // (A call settles with a send pending only when a fan-out cancels it.)
                let l = self.calls.loop_of(call);
                if l.epoch == epoch && l.settled == call::Settled::No {
                    by_kind!(call, C => self.send::<C>(call));
                }
            }
            Event::Arrive {
                call,
                epoch,
                attempt,
                key,
                replica,
                connect,
            } => {
                let mut req = Request::new(call, epoch, attempt, key, now);
                req.connect = connect;
                by_kind!(call, C => self.arrive::<C>(req, usize::from(replica)));
            }
            Event::WriteArrive {
                call,
                attempt,
                key,
                version,
                replica,
            } => {
                let epoch = self.calls.loop_of(call).epoch;
                let mut req = Request::new(call, epoch, attempt, key, now);
                req.version = version;
                self.write_arrive(req, usize::from(replica));
            }
            Event::Done { tier, job } => self.done(tier as usize, job),
            Event::Reply {
                call,
                epoch,
                attempt,
                outcome,
                retry_after_ms,
            } => {
                let ra = from_retry_after_ms(retry_after_ms);
                by_kind!(call, C => self.reply::<C>(call, epoch, attempt, outcome, ra));
            }
            Event::Timeout {
                call,
                epoch,
                attempt,
            } => {
                if self.calls.loop_of(call).epoch == epoch {
                    by_kind!(call, C => self.timeout::<C>(call, attempt));
                }
            }
            Event::Hedge {
                call,
                epoch,
                attempt,
            } => {
                let l = self.calls.loop_of(call);
                if l.epoch == epoch && l.settled == call::Settled::No && l.attempts == attempt {
                    by_kind!(call, C => self.hedge::<C>(call));
                }
            }
            Event::Limiter {
                hop,
                slot,
                generation,
            } => {
                let (h, k) = (hop as usize, slot as usize);
                if self.hops[h].limiters[k].generation == generation {
                    self.limiter_drain(h, k);
                }
            }
            Event::Capacity { tier } => {
                let t = tier as usize;
                for r in 0..self.tiers[t].replicas.len() {
                    self.tiers[t].set_capacity(&self.cx.spec.tiers[t].server, r, now);
                    self.dispatch(t, r);
                }
            }
            Event::Autoscale { tier, tick } => self.autoscale(tier, tick),
        }
    }

    /// An autoscaler's tick: the tier's scaler acts, and the balancer of the hop that calls the
    /// tier learns the replicas that now serve.
    fn autoscale(&mut self, tier: u8, tick: Tick) {
        let (t, now) = (tier as usize, self.cx.now);
        let ts = &mut self.tiers[t];
        let Some(sc) = ts.scaler.as_deref_mut() else {
            return;
        };
        let next = now + sc.sync_period;
        let serving_changed = match tick {
            Tick::Edge => {
                sc.sample(now);
                self.cx.queue.push(next, Event::Autoscale { tier, tick });
                false
            }
            Tick::Sync => {
                let change = sc.sync(now, &ts.replicas, &mut ts.buckets);
                for (replica, at) in change.started {
                    let tick = Tick::Ready { replica };
                    self.cx.queue.push(at, Event::Autoscale { tier, tick });
                }
                self.cx.queue.push(next, Event::Autoscale { tier, tick });
                change.removed
            }
            Tick::Ready { replica } => {
                sc.ready(now, usize::from(replica), &ts.replicas, &mut ts.buckets)
            }
        };
        if serving_changed && let Some(b) = &mut self.hops[t].balancing {
            b.set_hosts(sc.serving_hosts());
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
