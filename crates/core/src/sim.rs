//! The event loop: clients, a lossy network and a server, on a virtual clock.
//!
//! One intent is one thing a user wants done once. Its client sends attempts (one outstanding at
//! a time), waits for a reply or its timeout, backs off and retries. Requests cross the network
//! (latency, request loss, response loss) to a server with `capacity` workers and a bounded queue,
//! which may fail, crash part-way, and deduplicate by idempotency key. The simulator knows how many
//! times each intent's effect really ran, so it can tell lost, duplicated and phantom outcomes
//! from what the client believed.
//!
//! An intent's state lives in a slab slot until it is *finalised*: its client has settled and
//! nothing of it is left in flight (on the wire, queued, in service, or waiting on a key). Events
//! refer to a slot plus a generation, so a stale timeout for a reused slot is recognised and
//! skipped. Every random draw is keyed by `(seed, intent id, purpose, attempt)` (see [`crate::rng`]).

use crate::engine::{self, BurstOrder, Engine};
use crate::metrics::{self, Buckets, Completions, Levels};
use crate::model::{
    CommitMode, CrashPoint, Discipline, FailMode, KeyMode, LossNotice, Model, RetryAfterPolicy,
    ShedAnswer, StoreMode, WorkloadKind,
};
use crate::policy::breaker::Breaker;
use crate::policy::budget::{Budget, BudgetKind};
use crate::policy::hedge::Pending;
use crate::policy::ratelimit::{RetryAfter, TokenBucket, whole_seconds};
use crate::policy::{Class, ClassSet, Scope, recovery};
use crate::queue::EventQueue;
use crate::rng::{Purpose, Stream};
use crate::summary::{Ended, Summary, VariantResult};
use crate::time::{Duration, Time};
use std::collections::{HashMap, VecDeque};

/// The answer a client gets for one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Outcome {
    Ok,
    /// 500: the handler failed.
    Error,
    /// 503: outage, `fail = "always"` or a full queue.
    Unavailable,
    /// 409: a concurrent duplicate is still in progress (record-before-409).
    Conflict,
    /// The connection broke (request lost with `loss_notice = "error"`, or a crash).
    ConnError,
    /// 429: the rate limiter refused it.
    Throttled,
    /// "Overloaded; don't retry" (a shedding server with `shed_answer = "overloaded"`).
    Overloaded,
    /// A non-retryable 4xx.
    ClientError,
}

impl Outcome {
    #[inline]
    fn class(self) -> Class {
        match self {
            Outcome::Ok => Class::Success,
            Outcome::Error => Class::ServerError,
            Outcome::Unavailable => Class::Unavailable,
            Outcome::Conflict => Class::Conflict,
            Outcome::ConnError => Class::Connection,
            Outcome::Throttled => Class::Throttled,
            Outcome::Overloaded => Class::Overloaded,
            Outcome::ClientError => Class::ClientError,
        }
    }
}

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
    /// Backoff elapsed: send the next attempt.
    Send { slot: u32, epoch: u32 },
    /// A request reaches the server.
    Arrive {
        slot: u32,
        epoch: u32,
        attempt: u16,
        key: u16,
    },
    /// A worker finishes serving the request in `in_service[job]`.
    Done { job: u32 },
    /// A reply reaches the client.
    Reply {
        slot: u32,
        epoch: u32,
        attempt: u16,
        outcome: Outcome,
        /// The server's `Retry-After`, ms ([`NO_RETRY_AFTER`] = none).
        retry_after_ms: u32,
    },
    /// Hedging: send copy number `attempt` unless the call has committed or moved on.
    Hedge { slot: u32, epoch: u32, attempt: u16 },
    /// A capacity-drop window starts or ends.
    Capacity,
    /// The per-attempt timeout fires.
    Timeout { slot: u32, epoch: u32, attempt: u16 },
}

const NO_KEY: u16 = u16::MAX;
const NO_BACKOFF: u64 = u64::MAX;
const NO_WORKER: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Settled {
    No,
    Success,
    Failure,
}

/// One cache line: the event loop touches a random intent per event, so its size is its speed.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Intent {
    id: u64,
    start: Time,
    /// The last backoff delay drawn (decorrelated jitter), [`NO_BACKOFF`] before the first.
    prev_backoff: u64,
    applied: u32,
    in_flight: u32,
    epoch: u32,
    worker: u32,
    /// Attempts sent so far; the outstanding one is `attempts - 1`.
    attempts: u16,
    key_gen: u16,
    awaiting: bool,
    settled: Settled,
    /// The client process (index of per-client budgets, breakers and rate limits).
    client: u32,
    /// What the AWS quota charged for the retry that sent the latest attempt (0 = first try).
    retry_cost: u32,
    /// Hedging: copies awaiting an answer.
    pending: Pending,
}

/// A request at the server (queued, in service, or waiting on a key).
#[derive(Clone, Copy, Debug)]
struct Request {
    slot: u32,
    epoch: u32,
    attempt: u16,
    key: u16,
    arrived: Time,
    service: Duration,
}

enum KeyState {
    InProgress {
        waiters: Vec<Request>,
    },
    /// A committed outcome: `applied` says whether the effect really ran (false for a phantom).
    Done {
        at: Time,
    },
}

/// A deterministic hasher for the dedupe store (lookups only; the store is never iterated).
#[derive(Default)]
struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        crate::rng::mix64(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

type Store = HashMap<u64, KeyState, std::hash::BuildHasherDefault<MixHasher>>;

#[derive(Default)]
struct Counters {
    intents: u64,
    attempts: u64,
    retries: u64,
    succeeded: u64,
    failed: u64,
    lost: u64,
    applied_once: u64,
    duplicated: u64,
    phantom: u64,
    false_failures: u64,
    effects: u64,
    arrivals: u64,
    timeouts: u64,
    late_responses: u64,
    requests_lost: u64,
    responses_lost: u64,
    rejected: u64,
    dropped_expired: u64,
    conflicts: u64,
    replayed: u64,
    crashes: u64,
    work: u128,
    wasted: u128,
    waits: u128,
    served: u64,
    last_arrival: Time,
    rate_limited: u64,
    overloaded: u64,
    client_errors: u64,
    budget_denied: u64,
    throttled_locally: u64,
    breaker_rejected: u64,
    retry_after_waits: u64,
}

/// A run in progress. Build with [`Simulation::new`], drive with [`Simulation::run`].
pub struct Simulation<'m> {
    model: &'m Model,
    seed: u64,
    queue: EventQueue<Event>,
    intents: Vec<Intent>,
    free: Vec<u32>,
    live: u64,
    next_id: u64,
    /// Intents the workload will still start (burst events pending, closed budget, open source).
    to_start: u64,
    open_source: bool,
    /// The order in which a burst's clients start (burst workloads only).
    burst: Option<BurstOrder>,
    arrivals_stream: Stream,
    capacity: u64,
    queue_limit: u64,
    busy: u64,
    waiting: VecDeque<Request>,
    in_service: Vec<Request>,
    free_jobs: Vec<u32>,
    store: Store,
    /// Emptied waiter lists of committed keys, for reuse.
    waiter_lists: Vec<Vec<Request>>,
    buckets: Buckets,
    levels: Levels,
    completions: Completions,
    c: Counters,
    events: u64,
    lambda_max: f64,
    /// Overload policies (`crate::policy`); empty vectors when off. Index 0 when shared.
    retry_on: ClassSet,
    budgets: Vec<Budget>,
    budget_shared: bool,
    breakers: Vec<Breaker>,
    breaker_shared: bool,
    limiters: Vec<TokenBucket>,
    limiter_shared: bool,
    concurrency_limit: u64,
    retry_after_cap: Duration,
    hedge_delay: Option<Duration>,
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

/// `Retry-After` as carried in a reply: whole milliseconds, [`NO_RETRY_AFTER`] for none.
#[inline]
fn from_retry_after_ms(ms: u32) -> Option<Duration> {
    (ms != NO_RETRY_AFTER).then(|| Duration::from_millis(u64::from(ms)))
}

/// The index of a policy instance: 0 when shared, else the client process.
#[inline]
fn pidx(shared: bool, client: u32) -> usize {
    if shared { 0 } else { client as usize }
}

impl Engine for Simulation<'_> {
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
        let intents = &self.intents;
        self.queue.pop_with(|e| {
            let slot = match *e {
                Event::Send { slot, .. }
                | Event::Timeout { slot, .. }
                | Event::Reply { slot, .. }
                | Event::Arrive { slot, .. }
                | Event::Hedge { slot, .. } => slot,
                _ => return,
            };
            if let Some(i) = intents.get(slot as usize) {
                prefetch(i);
            }
        })
    }
    fn handle(&mut self, now: Time, ev: Event) {
        Simulation::handle(self, now, ev)
    }
}

impl<'m> Simulation<'m> {
    pub fn new(model: &'m Model, seed: u64) -> Self {
        let w = &model.workload;
        let mut sim = Simulation {
            model,
            seed,
            queue: EventQueue::new(),
            intents: Vec::new(),
            free: Vec::new(),
            live: 0,
            next_id: 0,
            to_start: 0,
            open_source: false,
            burst: None,
            arrivals_stream: Stream::new(seed, 0, Purpose::Arrivals, 0),
            capacity: model.server.capacity.0.unwrap_or(u64::MAX),
            queue_limit: model.server.queue.0.unwrap_or(u64::MAX),
            busy: 0,
            waiting: VecDeque::new(),
            in_service: Vec::new(),
            free_jobs: Vec::new(),
            store: Store::default(),
            waiter_lists: Vec::new(),
            buckets: Buckets::new(model.bucket),
            levels: Levels::default(),
            completions: Completions::default(),
            c: Counters::default(),
            events: 0,
            lambda_max: 0.0,
            retry_on: ClassSet::of(&model.retry.retry_on),
            budgets: Vec::new(),
            budget_shared: model.budget.scope == Scope::Shared,
            breakers: Vec::new(),
            breaker_shared: model.breaker.scope == Scope::Shared,
            limiters: Vec::new(),
            limiter_shared: model.server.rate_limit.scope == Scope::Shared,
            concurrency_limit: model.server.concurrency_limit.0.unwrap_or(u64::MAX),
            retry_after_cap: model.retry.retry_after_cap.unwrap_or(model.retry.cap),
            hedge_delay: model.hedge.delay,
        };
        let processes = match w.kind {
            WorkloadKind::Open => w.processes,
            WorkloadKind::Closed => w.workers,
            _ => w.clients,
        }
        .max(1) as usize;
        let n = |shared: bool| if shared { 1 } else { processes };
        if model.budget.kind != BudgetKind::None {
            sim.budgets = vec![Budget::new(&model.budget); n(sim.budget_shared)];
        }
        if model.breaker.enabled {
            sim.breakers = vec![Breaker::new(&model.breaker); n(sim.breaker_shared)];
        }
        let rl = &model.server.rate_limit;
        if rl.enabled() {
            sim.limiters = vec![TokenBucket::new(rl.rate, rl.burst); n(sim.limiter_shared)];
        }
        // Capacity changes at the edges of each drop window (pushed first: they pop first).
        for d in &model.server.capacity_drops {
            sim.queue.push(Time::ZERO + d.from, Event::Capacity);
            sim.queue.push(Time::ZERO + d.to, Event::Capacity);
        }
        match w.kind {
            // Contention models run in `crate::occ` (see `run_model`); here they are a plain burst.
            WorkloadKind::Burst | WorkloadKind::Contention => {
                sim.to_start = w.clients;
                sim.intents.reserve(w.clients.min(1 << 24) as usize);
                let order = BurstOrder::new(w, seed);
                if !order.is_empty() {
                    sim.queue.push(order.at(0).0, Event::Start { client: 0 });
                }
                sim.burst = Some(order);
            }
            WorkloadKind::Open => {
                sim.open_source = true;
                sim.lambda_max = std::iter::once(w.rate.0)
                    .chain(w.schedule.iter().map(|p| p.rate.0))
                    .fold(0.0, f64::max);
                sim.schedule_next_arrival(Time::ZERO);
            }
            WorkloadKind::Closed => {
                sim.to_start = w.intents;
                for worker in 0..w.workers.min(w.intents) {
                    sim.queue.push(
                        Time::ZERO,
                        Event::Think {
                            worker: worker as u32,
                        },
                    );
                }
            }
        }
        sim
    }

    /// The open workload's arrival rate at `t` (requests per second).
    fn rate_at(&self, t: Time) -> f64 {
        let w = &self.model.workload;
        let mut rate = w.rate.0;
        let mut prev = (Time::ZERO, w.rate.0);
        for p in &w.schedule {
            let at = Time::ZERO + p.at;
            if t < at {
                if p.ramp && at > prev.0 {
                    let f = (t.0 - prev.0.0) as f64 / (at.0 - prev.0.0) as f64;
                    return prev.1 + (p.rate.0 - prev.1) * f;
                }
                return rate;
            }
            rate = p.rate.0;
            prev = (at, p.rate.0);
        }
        rate
    }

    /// Non-homogeneous Poisson arrivals by thinning (Lewis and Shedler 1979).
    fn schedule_next_arrival(&mut self, from: Time) {
        let w = &self.model.workload;
        if w.intents > 0 && self.next_id >= w.intents {
            self.open_source = false;
            return;
        }
        let horizon = Time::ZERO + self.model.horizon;
        let mean_gap_ns = 1e9 / self.lambda_max;
        let mut t = from;
        loop {
            t = t + Duration::from_nanos_f64(self.arrivals_stream.exponential(mean_gap_ns));
            if t > horizon {
                self.open_source = false;
                return;
            }
            let accept = self.rate_at(t) / self.lambda_max;
            if self.arrivals_stream.uniform() < accept {
                self.queue.push(t, Event::Arrival);
                return;
            }
        }
    }

    /// Runs to the end and reports. `progress` is called now and then with the clock.
    pub fn run(mut self, name: &str, progress: &mut dyn FnMut(Time)) -> VariantResult {
        let model = self.model;
        let r = engine::drive(&mut self, model, progress);
        self.events = r.events;
        self.finish(name, r.end, r.ended)
    }

    fn handle(&mut self, now: Time, ev: Event) {
        match ev {
            Event::Start { client: n } => {
                self.to_start -= 1;
                let Some(order) = &self.burst else { return };
                let client = order.take(n, &mut self.queue, |client| Event::Start { client });
                self.start_intent(now, client, NO_WORKER);
            }
            Event::Arrival => {
                let id = self.next_id;
                self.next_id += 1;
                self.start_intent(now, id, NO_WORKER);
                self.schedule_next_arrival(now);
            }
            Event::Think { worker } => {
                if self.to_start > 0 {
                    self.to_start -= 1;
                    let id = self.next_id;
                    self.next_id += 1;
                    self.start_intent(now, id, worker);
                }
            }
            Event::Send { slot, epoch } => {
                if self.intents[slot as usize].epoch == epoch {
                    self.send(now, slot);
                }
            }
            Event::Arrive {
                slot,
                epoch,
                attempt,
                key,
            } => self.arrive(
                now,
                Request {
                    slot,
                    epoch,
                    attempt,
                    key,
                    arrived: now,
                    service: Duration::ZERO,
                },
            ),
            Event::Done { job } => self.done(now, job),
            Event::Reply {
                slot,
                epoch,
                attempt,
                outcome,
                retry_after_ms,
            } => {
                let ra = from_retry_after_ms(retry_after_ms);
                self.reply(now, slot, epoch, attempt, outcome, ra)
            }
            Event::Timeout {
                slot,
                epoch,
                attempt,
            } => {
                if self.outstanding(slot, epoch, attempt) {
                    self.c.timeouts += 1;
                    self.client_sees(now, slot, attempt, Class::Timeout, None);
                }
            }
            Event::Hedge {
                slot,
                epoch,
                attempt,
            } => {
                let i = &self.intents[slot as usize];
                if i.epoch == epoch && i.settled == Settled::No && i.attempts == attempt {
                    self.hedge(now, slot);
                }
            }
            Event::Capacity => {
                self.capacity = self.capacity_at(now);
                self.dispatch(now);
            }
        }
    }

    fn start_intent(&mut self, now: Time, id: u64, worker: u32) {
        let intent = Intent {
            id,
            start: now,
            prev_backoff: NO_BACKOFF,
            applied: 0,
            in_flight: 0,
            epoch: 0,
            worker,
            attempts: 0,
            key_gen: 0,
            awaiting: false,
            settled: Settled::No,
            client: if worker != NO_WORKER {
                worker
            } else if self.model.workload.kind == WorkloadKind::Open {
                (id % self.model.workload.processes.max(1)) as u32
            } else {
                id as u32
            },
            retry_cost: 0,
            pending: Pending::default(),
        };
        let slot = match self.free.pop() {
            Some(s) => {
                let epoch = self.intents[s as usize].epoch.wrapping_add(1);
                self.intents[s as usize] = Intent { epoch, ..intent };
                s
            }
            None => {
                self.intents.push(intent);
                (self.intents.len() - 1) as u32
            }
        };
        self.live += 1;
        self.c.intents += 1;
        self.send(now, slot);
    }

    #[inline]
    fn stream(&self, id: u64, purpose: Purpose, index: u16) -> Stream {
        Stream::new(self.seed, id, purpose, u64::from(index))
    }

    fn send(&mut self, now: Time, slot: u32) {
        if !self.admit(now, slot) {
            return self.rejected_locally(now, slot);
        }
        let m = self.model;
        let i = &mut self.intents[slot as usize];
        let attempt = i.attempts;
        i.attempts += 1;
        i.awaiting = true;
        let (id, epoch) = (i.id, i.epoch);
        if let Some(delay) = self.hedge_delay {
            i.pending.insert(attempt);
            if u32::from(attempt) + 1 < m.retry.max_attempts {
                self.queue.push(
                    now + delay,
                    Event::Hedge {
                        slot,
                        epoch,
                        attempt: attempt + 1,
                    },
                );
            }
        }
        let key = match m.idempotency.key {
            KeyMode::None => NO_KEY,
            KeyMode::PerIntent => i.key_gen,
            KeyMode::PerAttempt => attempt,
        };
        self.c.attempts += 1;
        if attempt > 0 {
            self.c.retries += 1;
        }
        if let Some(timeout) = m.retry.timeout {
            self.queue.push(
                now + timeout,
                Event::Timeout {
                    slot,
                    epoch,
                    attempt,
                },
            );
        }
        if m.network.request_loss > 0.0
            && self
                .stream(id, Purpose::RequestLoss, attempt)
                .bernoulli(m.network.request_loss)
        {
            self.c.requests_lost += 1;
            if m.network.loss_notice == LossNotice::Error {
                self.client_sees(now, slot, attempt, Class::Connection, None);
            }
            return;
        }
        self.intents[slot as usize].in_flight += 1;
        let lat = m.network.request_latency();
        if lat.is_zero() {
            // A hop that takes no time is taken now, not through the queue: one event (and one
            // cache miss on the intent) less per attempt. It is the last thing `send` does.
            let req = Request {
                slot,
                epoch,
                attempt,
                key,
                arrived: now,
                service: Duration::ZERO,
            };
            return self.arrive(now, req);
        }
        let at = now + lat.sample(&mut self.stream(id, Purpose::RequestLatency, attempt));
        self.queue.push(
            at,
            Event::Arrive {
                slot,
                epoch,
                attempt,
                key,
            },
        );
    }

    fn in_outage(&self, now: Time) -> bool {
        self.model
            .server
            .outages
            .iter()
            .any(|o| now >= Time::ZERO + o.from && now < Time::ZERO + o.to)
    }

    fn arrive(&mut self, now: Time, req: Request) {
        self.c.arrivals += 1;
        self.c.last_arrival = now;
        self.buckets.arrival(now, req.attempt > 0);
        if self.model.server.fail == FailMode::Always || self.in_outage(now) {
            self.c.rejected += 1;
            return self.respond(now, req, Outcome::Unavailable);
        }
        if !self.limiters.is_empty() {
            let k = pidx(self.limiter_shared, self.intents[req.slot as usize].client);
            if let Err(wait) = self.limiters[k].try_take(now) {
                self.c.rate_limited += 1;
                let ra = match self.model.server.rate_limit.retry_after {
                    RetryAfter::None => None,
                    RetryAfter::Fixed(d) => Some(d),
                    RetryAfter::Derived => Some(whole_seconds(wait)),
                };
                return self.respond_with(now, req, Outcome::Throttled, ra);
            }
        }
        if self.busy + self.waiting.len() as u64 >= self.concurrency_limit {
            return self.shed(now, req);
        }
        if self.busy < self.capacity && self.waiting.is_empty() {
            self.begin(now, req);
        } else if (self.waiting.len() as u64) < self.queue_limit {
            self.waiting.push_back(req);
            self.levels
                .set(&mut self.buckets, now, self.waiting.len() as u64, self.busy);
        } else {
            self.shed(now, req);
        }
    }

    /// Load shedding: a full queue or the concurrency limit refuses `req` at once.
    fn shed(&mut self, now: Time, req: Request) {
        self.c.rejected += 1;
        let s = &self.model.server;
        if s.shed_answer == ShedAnswer::Overloaded {
            self.c.overloaded += 1;
            return self.respond(now, req, Outcome::Overloaded);
        }
        let ra = match s.retry_after {
            RetryAfter::None => None,
            RetryAfter::Fixed(d) => Some(d),
            RetryAfter::Derived => {
                // Time for the workers to drain the queue ahead of a retry, whole seconds.
                let workers = self.capacity.min(self.concurrency_limit).max(1) as f64;
                let ns = (self.waiting.len() as f64 + 1.0) * s.service.mean_ns() / workers;
                Some(whole_seconds(Duration::from_nanos_f64(ns)))
            }
        };
        self.respond_with(now, req, Outcome::Unavailable, ra);
    }

    /// The server's worker count at `now` (lower inside a capacity drop).
    fn capacity_at(&self, now: Time) -> u64 {
        let base = self.model.server.capacity.0.unwrap_or(u64::MAX);
        self.model
            .server
            .capacity_drops
            .iter()
            .find(|d| now >= Time::ZERO + d.from && now < Time::ZERO + d.to)
            .map_or(base, |d| d.capacity)
    }

    /// Fills free workers from the wait queue.
    fn dispatch(&mut self, now: Time) {
        while self.busy < self.capacity {
            let next = match self.model.server.discipline {
                Discipline::Fifo => self.waiting.pop_front(),
                Discipline::Lifo => self.waiting.pop_back(),
            };
            let Some(req) = next else { break };
            self.levels
                .set(&mut self.buckets, now, self.waiting.len() as u64, self.busy);
            self.begin(now, req);
        }
    }

    /// Is the client still waiting for this attempt's reply?
    #[inline]
    fn client_waiting(&self, req: &Request) -> bool {
        self.outstanding(req.slot, req.epoch, req.attempt)
    }

    /// Is the client still waiting for this attempt's answer? With hedging several copies may be.
    #[inline]
    fn outstanding(&self, slot: u32, epoch: u32, attempt: u16) -> bool {
        let i = &self.intents[slot as usize];
        i.epoch == epoch
            && if self.hedge_delay.is_some() {
                i.settled == Settled::No && i.pending.contains(attempt)
            } else {
                i.awaiting && i.attempts == attempt + 1
            }
    }

    #[inline]
    fn store_key(&self, req: &Request) -> u64 {
        (self.intents[req.slot as usize].id << 16) | u64::from(req.key)
    }

    /// The handler starts: deadline check, dedupe check, then a worker.
    fn begin(&mut self, now: Time, mut req: Request) {
        let m = self.model;
        if m.server.drop_expired && !self.client_waiting(&req) {
            self.c.dropped_expired += 1;
            return self.release(now, req.slot);
        }
        if m.idempotency.store != StoreMode::None && req.key != NO_KEY {
            let k = self.store_key(&req);
            let expired = match (self.store.get(&k), m.idempotency.ttl) {
                (Some(KeyState::Done { at }), Some(ttl)) => now >= *at + ttl,
                _ => false,
            };
            if expired {
                self.store.remove(&k);
            }
            match self.store.get_mut(&k) {
                Some(KeyState::Done { .. }) => {
                    self.c.replayed += 1;
                    return self.respond(now, req, Outcome::Ok);
                }
                Some(KeyState::InProgress { waiters }) => {
                    if m.idempotency.store == StoreMode::RecordBefore409 {
                        self.c.conflicts += 1;
                        return self.respond(now, req, Outcome::Conflict);
                    }
                    waiters.push(req);
                    return;
                }
                None => {
                    if m.idempotency.store != StoreMode::RecordAfter {
                        // Waiter lists are reused, so a duplicate that waits allocates nothing.
                        let waiters = self.waiter_lists.pop().unwrap_or_default();
                        self.store.insert(k, KeyState::InProgress { waiters });
                    }
                }
            }
        }
        // Every served request's wait counts (zero when it started on arrival); a request taken
        // from the queue by the last free worker leaves `busy == 0` and the queue empty, so a
        // condition on those would drop exactly the waits that end a busy period.
        self.c.waits += u128::from(now.since(req.arrived).0);
        self.c.served += 1;
        let id = self.intents[req.slot as usize].id;
        req.service = m
            .server
            .service
            .sample(&mut self.stream(id, Purpose::Service, req.attempt));
        if m.server.slowdown > 0.0 && self.busy > 0 {
            // Latency rising with load: each other request in service adds `slowdown`.
            req.service = req
                .service
                .saturating_mul_f64(1.0 + m.server.slowdown * self.busy as f64);
        }
        self.busy += 1;
        self.levels
            .set(&mut self.buckets, now, self.waiting.len() as u64, self.busy);
        let job = match self.free_jobs.pop() {
            Some(j) => {
                self.in_service[j as usize] = req;
                j
            }
            None => {
                self.in_service.push(req);
                (self.in_service.len() - 1) as u32
            }
        };
        self.queue.push(now + req.service, Event::Done { job });
    }

    fn done(&mut self, now: Time, job: u32) {
        let m = self.model;
        let req = self.in_service[job as usize];
        self.free_jobs.push(job);
        self.busy -= 1;
        self.levels
            .set(&mut self.buckets, now, self.waiting.len() as u64, self.busy);
        self.c.work += u128::from(req.service.0);
        if !self.client_waiting(&req) {
            self.c.wasted += u128::from(req.service.0);
        }
        let id = self.intents[req.slot as usize].id;
        let keyed = m.idempotency.store != StoreMode::None && req.key != NO_KEY;
        let failed = match m.server.fail {
            FailMode::Probability(p) => self.stream(id, Purpose::Failure, req.attempt).bernoulli(p),
            _ => false,
        };
        let crashed = !failed
            && m.server.crash_probability > 0.0
            && self
                .stream(id, Purpose::Crash, req.attempt)
                .bernoulli(m.server.crash_probability);
        let client_error = !failed
            && !crashed
            && m.server.client_error > 0.0
            && self
                .stream(id, Purpose::ClientError, req.attempt)
                .bernoulli(m.server.client_error);
        let (effect, key_recorded, outcome) = if failed {
            (false, false, Outcome::Error)
        } else if client_error {
            // The request is refused as wrong: no effect, and not stored as the key's result.
            self.c.client_errors += 1;
            (false, false, Outcome::ClientError)
        } else if crashed {
            self.c.crashes += 1;
            let (e, k) = match (m.idempotency.commit, m.server.crash_point) {
                (CommitMode::Atomic, _) => (false, false),
                (CommitMode::EffectThenKey, CrashPoint::AfterEffect) => (true, false),
                (CommitMode::KeyThenEffect, CrashPoint::AfterKey) => (false, true),
                (_, _) => (true, true),
            };
            (e, k, Outcome::ConnError)
        } else {
            (true, true, Outcome::Ok)
        };
        if effect {
            self.intents[req.slot as usize].applied += 1;
            self.c.effects += 1;
        }
        let mut waiters = Vec::new();
        if keyed {
            let k = self.store_key(&req);
            if let Some(KeyState::InProgress { waiters: w }) = self.store.get_mut(&k) {
                waiters = std::mem::take(w);
            }
            if key_recorded {
                self.store.insert(k, KeyState::Done { at: now });
            } else if matches!(self.store.get(&k), Some(KeyState::InProgress { .. })) {
                // Transient failures are not stored as the result: the next retry runs again.
                self.store.remove(&k);
            }
        }
        self.respond(now, req, outcome);
        // Duplicates that waited on this key share its committed result (or its failure).
        let shared = if key_recorded { Outcome::Ok } else { outcome };
        for w in waiters.drain(..) {
            if key_recorded {
                self.c.replayed += 1;
            }
            self.respond(now, w, shared);
        }
        if waiters.capacity() > 0 {
            self.waiter_lists.push(waiters);
        }
        self.dispatch(now);
    }

    /// The server answers `req`; the reply may be lost on the way back.
    fn respond(&mut self, now: Time, req: Request, outcome: Outcome) {
        self.respond_with(now, req, outcome, None);
    }

    /// As [`Self::respond`], with a `Retry-After`.
    fn respond_with(
        &mut self,
        now: Time,
        req: Request,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        let m = self.model;
        let id = self.intents[req.slot as usize].id;
        if m.network.response_loss > 0.0
            && self
                .stream(id, Purpose::ResponseLoss, req.attempt)
                .bernoulli(m.network.response_loss)
        {
            self.c.responses_lost += 1;
            return self.release(now, req.slot);
        }
        let retry_after_ms = retry_after.map_or(NO_RETRY_AFTER, |d| {
            (d.0 / 1_000_000).min(u64::from(NO_RETRY_AFTER - 1)) as u32
        });
        let lat = m.network.response_latency();
        if lat.is_zero() {
            // As in `send`: taken now, and the last thing done here.
            let ra = from_retry_after_ms(retry_after_ms);
            return self.reply(now, req.slot, req.epoch, req.attempt, outcome, ra);
        }
        let at = now + lat.sample(&mut self.stream(id, Purpose::ResponseLatency, req.attempt));
        self.queue.push(
            at,
            Event::Reply {
                slot: req.slot,
                epoch: req.epoch,
                attempt: req.attempt,
                outcome,
                retry_after_ms,
            },
        );
    }

    fn reply(
        &mut self,
        now: Time,
        slot: u32,
        epoch: u32,
        attempt: u16,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        debug_assert_eq!(
            self.intents[slot as usize].epoch, epoch,
            "a slot was reused while in flight"
        );
        self.intents[slot as usize].in_flight -= 1;
        if self.outstanding(slot, epoch, attempt) {
            self.client_sees(now, slot, attempt, outcome.class(), retry_after);
        } else {
            self.c.late_responses += 1;
        }
        self.maybe_finalise(slot);
    }

    /// Something of the intent left the system without reaching its client.
    fn release(&mut self, _now: Time, slot: u32) {
        self.intents[slot as usize].in_flight -= 1;
        self.maybe_finalise(slot);
    }

    /// Before an attempt goes out: adaptive throttling and the circuit breaker may reject it in
    /// the client (it is never sent); Finagle's budget takes a first try's deposit.
    fn admit(&mut self, now: Time, slot: u32) -> bool {
        let i = &self.intents[slot as usize];
        let (id, client, attempt) = (i.id, i.client, i.attempts);
        if !self.budgets.is_empty() {
            let k = pidx(self.budget_shared, client);
            let u = if self.model.budget.kind == BudgetKind::Adaptive {
                self.stream(id, Purpose::Shed, attempt).uniform()
            } else {
                0.0
            };
            if !self.budgets[k].on_send(now, attempt == 0, u) {
                self.c.throttled_locally += 1;
                return false;
            }
        }
        let bypass = attempt == 0 && self.model.breaker.retries_only;
        if !self.breakers.is_empty() && !bypass {
            let k = pidx(self.breaker_shared, client);
            if !self.breakers[k].try_acquire(now) {
                self.c.breaker_rejected += 1;
                return false;
            }
        }
        true
    }

    /// An attempt was rejected in the client: the intent fails at once (a local rejection is not
    /// retried), unless hedged copies are still out.
    fn rejected_locally(&mut self, now: Time, slot: u32) {
        let i = &mut self.intents[slot as usize];
        i.awaiting = false;
        if i.pending.is_empty() {
            self.settle(now, slot, Settled::Failure);
        }
    }

    /// The client learns how attempt `attempt` ended: budgets and breakers record it, then the
    /// intent succeeds, retries (or hedges) or gives up.
    fn client_sees(
        &mut self,
        now: Time,
        slot: u32,
        attempt: u16,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        let retryable = self.retry_on.contains(class);
        let (client, cost) = {
            let i = &self.intents[slot as usize];
            (i.client, i.retry_cost)
        };
        if !self.budgets.is_empty() {
            let k = pidx(self.budget_shared, client);
            self.budgets[k].on_outcome(now, class, retryable, cost);
        }
        if !self.breakers.is_empty() {
            let k = pidx(self.breaker_shared, client);
            self.breakers[k].on_result(now, class.is_server_failure());
        }
        if self.hedge_delay.is_some() {
            return self.hedge_sees(now, slot, attempt, class, retryable);
        }
        if class == Class::Success {
            self.intents[slot as usize].awaiting = false;
            self.settle(now, slot, Settled::Success);
        } else if retryable {
            self.attempt_failed(now, slot, class, retry_after);
        } else {
            self.intents[slot as usize].awaiting = false;
            self.settle(now, slot, Settled::Failure);
        }
    }

    /// Hedging: one copy answered. A success or a fatal answer commits the call and cancels the
    /// other copies (the server may still run them); a non-fatal one sends the next copy now.
    fn hedge_sees(&mut self, now: Time, slot: u32, attempt: u16, class: Class, retryable: bool) {
        let m = self.model;
        let i = &mut self.intents[slot as usize];
        i.pending.remove(attempt);
        if class == Class::Success || !retryable {
            let cancelled = i.pending.0.count_ones();
            i.pending.clear();
            i.awaiting = false;
            if !self.breakers.is_empty() {
                let k = pidx(self.breaker_shared, i.client);
                for _ in 0..cancelled {
                    self.breakers[k].release();
                }
            }
            let how = if class == Class::Success {
                Settled::Success
            } else {
                Settled::Failure
            };
            return self.settle(now, slot, how);
        }
        if u32::from(i.attempts) < m.retry.max_attempts {
            self.hedge(now, slot);
        } else if i.pending.is_empty() {
            i.awaiting = false;
            self.settle(now, slot, Settled::Failure);
        }
    }

    /// Hedging: send the next copy, if the deadline and the retry budget allow it.
    fn hedge(&mut self, now: Time, slot: u32) {
        let m = self.model;
        let i = &self.intents[slot as usize];
        let (start, client) = (i.start, i.client);
        let past_deadline = m.retry.deadline.is_some_and(|d| now >= start + d);
        let denied = !past_deadline
            && !self.budgets.is_empty()
            && self.budgets[pidx(self.budget_shared, client)]
                .try_retry(now, false)
                .is_none();
        if past_deadline || denied {
            self.c.budget_denied += u64::from(denied);
            if self.intents[slot as usize].pending.is_empty() {
                self.settle(now, slot, Settled::Failure);
            }
            return;
        }
        self.send(now, slot);
    }

    /// The outstanding attempt failed with a retryable `class`: retry or give up.
    fn attempt_failed(
        &mut self,
        now: Time,
        slot: u32,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        let m = self.model;
        let i = &mut self.intents[slot as usize];
        i.awaiting = false;
        let retries_made = u32::from(i.attempts) - 1;
        if u32::from(i.attempts) >= m.retry.max_attempts {
            return self.settle(now, slot, Settled::Failure);
        }
        let (id, epoch, start, prev, client) = (i.id, i.epoch, i.start, i.prev_backoff, i.client);
        let prev = (prev != NO_BACKOFF).then_some(Duration(prev));
        let n = retries_made as u16;
        let mut delay = m.retry.backoff().delay(
            retries_made,
            prev,
            &mut self.stream(id, Purpose::Backoff, n),
        );
        let honour = retry_after.filter(|_| m.retry.retry_after == RetryAfterPolicy::Honour);
        if let Some(ra) = honour {
            // The server's Retry-After replaces the backoff (gRPC pushback, urllib3), up to a cap.
            delay = ra.min(self.retry_after_cap);
        }
        if let Some(deadline) = m.retry.deadline
            && now + delay >= start + deadline
        {
            return self.settle(now, slot, Settled::Failure);
        }
        if !self.budgets.is_empty() {
            let k = pidx(self.budget_shared, client);
            match self.budgets[k].try_retry(now, class == Class::Timeout) {
                Some(cost) => self.intents[slot as usize].retry_cost = cost,
                None => {
                    self.c.budget_denied += 1;
                    return self.settle(now, slot, Settled::Failure);
                }
            }
        }
        self.c.retry_after_waits += u64::from(honour.is_some());
        let restarted = m.retry.restart_probability > 0.0
            && self
                .stream(id, Purpose::Restart, n)
                .bernoulli(m.retry.restart_probability);
        let i = &mut self.intents[slot as usize];
        i.prev_backoff = delay.0.min(NO_BACKOFF - 1);
        if restarted && !m.idempotency.persist_key {
            i.key_gen = i.key_gen.wrapping_add(1) % NO_KEY;
        }
        self.queue.push(now + delay, Event::Send { slot, epoch });
    }

    fn settle(&mut self, now: Time, slot: u32, how: Settled) {
        let i = &mut self.intents[slot as usize];
        i.settled = how;
        i.pending.clear();
        let (start, worker) = (i.start, i.worker);
        self.completions.record(now.since(start));
        if how == Settled::Success {
            self.c.succeeded += 1;
            self.buckets.success(now);
        } else {
            self.c.failed += 1;
        }
        if worker != NO_WORKER {
            let think = self.model.workload.think;
            let d = if think.is_zero() {
                Duration::ZERO
            } else {
                think.sample(&mut Stream::new(
                    self.seed,
                    u64::from(worker),
                    Purpose::Think,
                    self.c.intents,
                ))
            };
            self.queue.push(now + d, Event::Think { worker });
        }
        self.maybe_finalise(slot);
    }

    /// Counts the intent's outcome once nothing of it can change any more, and frees its slot.
    fn maybe_finalise(&mut self, slot: u32) {
        let i = &self.intents[slot as usize];
        if i.settled == Settled::No || i.in_flight > 0 {
            return;
        }
        match i.applied {
            0 => self.c.lost += 1,
            1 => self.c.applied_once += 1,
            _ => self.c.duplicated += 1,
        }
        if i.settled == Settled::Success && i.applied == 0 {
            self.c.phantom += 1;
        }
        if i.settled == Settled::Failure && i.applied > 0 {
            self.c.false_failures += 1;
        }
        if self.model.idempotency.store != StoreMode::None && !self.store.is_empty() {
            let top = match self.model.idempotency.key {
                KeyMode::None => 0,
                KeyMode::PerIntent => i.key_gen,
                KeyMode::PerAttempt => i.attempts,
            };
            let id = i.id;
            for k in 0..=top {
                self.store.remove(&((id << 16) | u64::from(k)));
            }
        }
        let i = &mut self.intents[slot as usize];
        i.settled = Settled::No;
        i.epoch = i.epoch.wrapping_add(1);
        self.free.push(slot);
        self.live -= 1;
    }

    fn finish(mut self, name: &str, end: Time, ended: Ended) -> VariantResult {
        let (mean_queue_len, mean_busy) = self.levels.means(&mut self.buckets, end);
        let (peak_arrivals, peak_retries) = self.buckets.peaks();
        let series = metrics::series(std::mem::take(&mut self.buckets), end);
        let c = &self.c;
        let ms = |ns: u128| ns as f64 / 1e6;
        let mut summary = Summary {
            intents: c.intents,
            attempts: c.attempts,
            retries: c.retries,
            amplification: if c.intents == 0 {
                0.0
            } else {
                c.attempts as f64 / c.intents as f64
            },
            succeeded: c.succeeded,
            failed: c.failed,
            unsettled: c.intents - c.succeeded - c.failed,
            peak_arrivals,
            peak_retries,
            bucket_ms: self.model.bucket.as_millis_f64(),
            completion_ms: self.completions.percentiles(),
            last_arrival_ms: c.last_arrival.as_millis_f64(),
            lost: c.lost,
            applied_once: c.applied_once,
            duplicated: c.duplicated,
            phantom: c.phantom,
            false_failures: c.false_failures,
            effects: c.effects,
            arrivals: c.arrivals,
            timeouts: c.timeouts,
            late_responses: c.late_responses,
            requests_lost: c.requests_lost,
            responses_lost: c.responses_lost,
            rejected: c.rejected,
            dropped_expired: c.dropped_expired,
            conflicts: c.conflicts,
            replayed: c.replayed,
            crashes: c.crashes,
            work_ms: ms(c.work),
            wasted_work_ms: ms(c.wasted),
            wasted_share: if c.work == 0 {
                0.0
            } else {
                c.wasted as f64 / c.work as f64
            },
            mean_wait_ms: if c.served == 0 {
                0.0
            } else {
                ms(c.waits) / c.served as f64
            },
            mean_queue_len,
            mean_busy,
            end_ms: end.as_millis_f64(),
            ended,
            events: self.events,
            layered: None,
            ..Default::default()
        };
        self.overload(&mut summary, end, &series);
        VariantResult {
            name: name.to_string(),
            summary,
            series,
            completion_cdf: self.completions.cdf(),
        }
    }
}

impl Simulation<'_> {
    /// Fills the overload counters, goodput and recovery after the model's trigger.
    fn overload(&self, o: &mut Summary, end: Time, series: &crate::summary::Series) {
        let c = &self.c;
        let secs = end.0 as f64 / 1e9;
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        o.rate_limited = c.rate_limited;
        o.overloaded = c.overloaded;
        o.client_errors = c.client_errors;
        o.budget_denied = c.budget_denied;
        o.throttled_locally = c.throttled_locally;
        o.breaker_rejected = c.breaker_rejected;
        o.breaker_opened = self.breakers.iter().map(|b| b.opened).sum();
        o.retry_after_waits = c.retry_after_waits;
        o.goodput_per_s = per_s(c.succeeded);
        o.offered_per_s = per_s(c.arrivals);
        let m = self.model;
        if let Some(trigger) = recovery::trigger(m) {
            o.trigger_from_ms = Some(trigger.0.as_millis_f64());
            o.trigger_to_ms = Some(trigger.1.as_millis_f64());
            if let Some(r) = recovery::measure(
                &series.succeeded,
                Duration::from_nanos_f64(series.bucket_ms * 1e6),
                end,
                trigger,
                &m.recovery,
            ) {
                o.baseline_goodput_per_s = Some(r.baseline_per_s);
                o.recovered = Some(r.after.is_some());
                o.recovery_ms = r.after.map(|d| d.as_millis_f64());
            }
        }
    }
}

/// Runs `model` with `seed` and returns its result, named after the model: [`crate::run_model`]
/// without progress, so a layered or contention model runs in its own engine here too.
pub fn run(model: &Model, seed: u64) -> VariantResult {
    crate::run_model(model, seed, &mut |_| {})
}
