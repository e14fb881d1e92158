//! The direct path: a model whose clients cannot affect each other runs each client's attempts
//! straight from its keyed draws, one intent after another, with no event queue and no intent
//! slab. The output is byte-identical to the event loop's (`tests: direct_path`).
//!
//! Why it is exact: every draw is keyed by `(seed, intent id, purpose, index)`, so an intent's
//! draws do not depend on when the loop gets to it; with no capacity, queue, store, budget,
//! breaker, limiter or rate limit nothing one intent does changes another's answers. What does
//! depend on the global order is rebuilt here: an intent's own events run in the order the loop
//! would pop them (time, then insertion); the counters are sums; the completion times go to the
//! same order-free histogram; the load series, bucket peaks and sliding-window peaks are fed the
//! arrivals, successes and busy levels sorted by time (ties do not change them, see
//! [`crate::metrics::Buckets::arrival`]); the run's end, event count and how it ended follow from
//! each intent's last event and the timeouts left pending after it (the loop stops as soon as
//! nothing is live, so such a timeout counts only if it fires before the last intent ends).
//!
//! A run whose outcome would depend on the global order in a way not rebuilt here goes back to
//! the event loop at run time ([`run`] returns `None`): a pending timeout at exactly the instant
//! the last intent ends, a run that would stop at `max_events`, and busy levels past the series'
//! stored buckets (where merging would add their areas in another order).

use super::{Counters, PathSim, from_retry_after_ms, to_retry_after_ms};
use crate::dist::Dist;
use crate::metrics::{Completions, MAX_STORED_BUCKETS};
use crate::model::{
    CommitMode, CrashPoint, EnginePathChoice, FailMode, LossNotice, Model, OutageAnswer,
    RetryAfterPolicy, StoreMode, WorkloadKind,
};
use crate::policy::budget::BudgetKind;
use crate::policy::limiter::LimiterKind;
use crate::policy::{Class, ClassSet};
use crate::rng::{Purpose, Stream};
use crate::shedding::SheddingKind;
use crate::summary::{Ended, VariantResult};
use crate::time::{Duration, Time};

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

/// As in `call.rs`: botocore's `_RETRY_AFTER_MAX_ADDITIONAL`.
const AWS_RETRY_AFTER_MAX_ADDITIONAL: Duration = Duration::from_secs(5);

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
    }
    if !m.layers.is_empty() || !m.tiers.is_empty() {
        return ev("more than one tier: tiers hold workers between calls");
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

/// Runs `m` on the direct path, or returns `None` when it must take the event loop (see the
/// module's notes). `full`: the series and CDFs too (else the summary only). [`crate::run_model`]
/// calls it first and runs the event loop when it returns `None`.
pub fn run(
    m: &Model,
    seed: u64,
    progress: &mut dyn FnMut(Time),
    full: bool,
) -> Option<VariantResult> {
    if engine_path(m) != EnginePath::Direct {
        return None;
    }
    let mut d = Direct::new(m, seed);
    d.run_intents();
    let (end, ended, events) = d.ending()?;
    if d.busy_ops && d.max_op_time >= (MAX_STORED_BUCKETS as u64).saturating_mul(m.bucket.0) {
        return None;
    }
    let r = d.finish(end, ended, events, full);
    progress(end);
    Some(r)
}

/// What an intent's own pending event is.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Send,
    Arrive {
        attempt: u16,
    },
    Done {
        attempt: u16,
        service: Duration,
    },
    Reply {
        attempt: u16,
        class: Class,
        ra_ms: u32,
    },
    Timeout {
        attempt: u16,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Settled {
    No,
    Success,
    Failure,
}

/// One intent's retry loop (the event loop's `Top` and `Loop`, less what no eligible model uses).
struct Intent {
    id: u64,
    start: Time,
    attempts: u16,
    awaiting: bool,
    settled: Settled,
    in_flight: u32,
    prev_backoff: u64,
    applied: u32,
    /// When the intent was finalised (counted and freed), if it was.
    finalised: Option<Time>,
}

/// Kinds of the time-ordered records that feed the bottom's buckets, in the low `KIND_BITS`
/// bits; above them the time within the record's chunk.
const OP_DONE: u32 = 0;
const OP_BEGIN: u32 = 1;
const OP_SUCCESS: u32 = 2;
/// An arrival of attempt `a` (from 0) is `OP_ARRIVAL + a`.
const OP_ARRIVAL: u32 = 3;
const KIND_BITS: u32 = 10;
/// Width of a chunk of the time-ordered records (2^22 ns, about 4 ms): records are kept per
/// chunk as 4 bytes each and each chunk is sorted on its own.
const CHUNK_SHIFT: u32 = 32 - KIND_BITS;
const KIND_MASK: u64 = (1 << KIND_BITS) - 1;
/// Records kept in one vector before they move to chunks.
const FLAT_MAX: usize = 1 << 16;

#[derive(Default)]
struct Counts {
    /// The intents' own counters, the event loop's type.
    c: Counters,
    // Hop 0.
    sent: u64,
    retries: u64,
    hop_failed: u64,
    timeouts: u64,
    requests_lost: u64,
    responses_lost: u64,
    late_responses: u64,
    retry_after_waits: u64,
    // The server.
    arrivals: u64,
    retry_arrivals: u64,
    orphaned: u64,
    served: u64,
    rejected: u64,
    hung: u64,
    dropped_expired: u64,
    client_errors: u64,
    crashes: u64,
    work: u128,
    wasted: u128,
    last_arrival: Time,
}

struct Direct<'m> {
    m: &'m Model,
    seed: u64,
    horizon: Time,
    retry_on: ClassSet,
    retry_after_cap: Duration,
    req_lat: Dist,
    resp_lat: Dist,
    n: Counts,
    completions: Completions,
    successes: Completions,
    /// Records `(time mod 2^CHUNK_SHIFT) << KIND_BITS | kind` per chunk of `2^CHUNK_SHIFT` ns.
    chunks: Vec<Vec<u32>>,
    /// While a run has few records (a sweep's small runs): `time << KIND_BITS | kind` in one
    /// vector, sorted once (one allocation instead of one per chunk); moved to `chunks` when it
    /// outgrows [`FLAT_MAX`].
    flat: Option<Vec<u64>>,
    /// First tries arriving at `bulk_at` (a burst with no spread and no request latency): counted
    /// instead of stored.
    bulk_at: Option<Time>,
    bulk: u64,
    busy_ops: bool,
    max_op_time: u64,
    /// Events of intents up to their finalisation (or the horizon).
    live_events: u64,
    /// Timeouts still pending when their intent was finalised (stale: the loop pops them only
    /// while some other intent is live).
    stale: Vec<u64>,
    /// Intents not finalised by the horizon.
    unfinished: u64,
    /// Every planned start happened by the horizon.
    all_started: bool,
    last_final: Time,
    /// An intent's pending events `(time, insertion, event)`.
    pending: Vec<(Time, u32, Ev)>,
    seq: u32,
}

#[inline]
fn stream(seed: u64, id: u64, purpose: Purpose, index: u64) -> Stream {
    Stream::new(seed, id, purpose, index)
}

impl<'m> Direct<'m> {
    fn new(m: &'m Model, seed: u64) -> Self {
        let bulk_at = (m.workload.kind == WorkloadKind::Burst
            && m.workload.spread.0 == 0
            && m.network.request_latency().is_zero())
        .then(|| Time::ZERO + m.workload.start);
        Direct {
            m,
            seed,
            horizon: Time::ZERO + m.horizon,
            retry_on: ClassSet::of(&m.retry.retry_on),
            retry_after_cap: m.retry.retry_after_cap.unwrap_or(m.retry.cap),
            req_lat: m.network.request_latency(),
            resp_lat: m.network.response_latency(),
            n: Counts::default(),
            completions: Completions::default(),
            successes: Completions::default(),
            chunks: Vec::new(),
            flat: Some(Vec::new()),
            bulk_at,
            bulk: 0,
            busy_ops: false,
            max_op_time: 0,
            live_events: 0,
            stale: Vec::new(),
            unfinished: 0,
            all_started: true,
            last_final: Time::ZERO,
            pending: Vec::with_capacity(4),
            seq: 0,
        }
    }

    /// Every intent of the workload, in id order.
    fn run_intents(&mut self) {
        let w = &self.m.workload;
        match w.kind {
            WorkloadKind::Burst => {
                for c in 0..w.clients {
                    let offset = if w.spread.0 > 0 {
                        stream(self.seed, c, Purpose::Start, 0).range_u64(0, w.spread.0 - 1)
                    } else {
                        0
                    };
                    let at = Time::ZERO + w.start + Duration(offset);
                    if at > self.horizon {
                        self.all_started = false;
                        continue;
                    }
                    self.intent(c, at);
                }
            }
            WorkloadKind::Open => {
                // `PathSim::schedule_next_arrival`: thinning, one stream for all arrivals.
                let lambda_max = std::iter::once(w.rate.0)
                    .chain(w.schedule.iter().map(|p| p.rate.0))
                    .fold(0.0, f64::max);
                let mut s = stream(self.seed, 0, Purpose::Arrivals, 0);
                let mean_gap_ns = 1e9 / lambda_max;
                let mut t = Time::ZERO;
                let mut id = 0u64;
                'arrivals: loop {
                    if w.intents > 0 && id >= w.intents {
                        break;
                    }
                    loop {
                        t = t + Duration::from_nanos_f64(s.exponential(mean_gap_ns));
                        if t > self.horizon {
                            break 'arrivals;
                        }
                        let accept = w.rate_at(t) / lambda_max;
                        if s.uniform() < accept {
                            break;
                        }
                    }
                    self.intent(id, t);
                    id += 1;
                }
            }
            _ => unreachable!("engine_path admits burst and open workloads only"),
        }
    }

    #[inline]
    fn push(&mut self, at: Time, ev: Ev) {
        self.pending.push((at, self.seq, ev));
        self.seq = self.seq.wrapping_add(1);
    }

    /// The earliest pending event (time, then insertion), if any.
    #[inline]
    fn pop(&mut self) -> Option<(Time, Ev)> {
        let mut best = 0;
        let first = self.pending.first()?;
        let mut key = (first.0, first.1);
        for (i, e) in self.pending.iter().enumerate().skip(1) {
            if (e.0, e.1) < key {
                key = (e.0, e.1);
                best = i;
            }
        }
        let (t, _, ev) = self.pending.swap_remove(best);
        Some((t, ev))
    }

    #[inline]
    fn op(&mut self, t: Time, kind: u32) {
        if kind == OP_ARRIVAL && self.bulk_at == Some(t) {
            self.bulk += 1;
            return;
        }
        self.max_op_time = self.max_op_time.max(t.0);
        if let Some(f) = &mut self.flat {
            if f.len() < FLAT_MAX {
                return f.push(t.0 << KIND_BITS | u64::from(kind));
            }
            for e in std::mem::take(f) {
                self.chunk_op(e >> KIND_BITS, (e & KIND_MASK) as u32);
            }
            self.flat = None;
        }
        self.chunk_op(t.0, kind);
    }

    #[inline]
    fn chunk_op(&mut self, t: u64, kind: u32) {
        let c = (t >> CHUNK_SHIFT) as usize;
        if self.chunks.len() <= c {
            self.chunks.resize_with(c + 1, Vec::new);
        }
        let within = (t & ((1 << CHUNK_SHIFT) - 1)) as u32;
        self.chunks[c].push(within << KIND_BITS | kind);
    }

    /// Runs one intent from its start to its finalisation or the horizon.
    fn intent(&mut self, id: u64, start: Time) {
        let mut it = Intent {
            id,
            start,
            attempts: 0,
            awaiting: false,
            settled: Settled::No,
            in_flight: 0,
            prev_backoff: crate::backoff::NO_STATE,
            applied: 0,
            finalised: None,
        };
        self.pending.clear();
        self.seq = 0;
        // The Start or Arrival event.
        self.live_events += 1;
        self.n.c.intents += 1;
        self.transmit(&mut it, start);
        while it.finalised.is_none() {
            let Some((now, ev)) = self.pop() else { break };
            if now > self.horizon {
                break;
            }
            self.live_events += 1;
            self.handle(&mut it, now, ev);
        }
        match it.finalised {
            Some(t) => {
                self.last_final = self.last_final.max(t);
                for &(at, _, ev) in &self.pending {
                    debug_assert!(matches!(ev, Ev::Timeout { .. }));
                    self.stale.push(at.0);
                }
            }
            None => self.unfinished += 1,
        }
    }

    fn handle(&mut self, it: &mut Intent, now: Time, ev: Ev) {
        match ev {
            Ev::Send => self.transmit(it, now),
            Ev::Arrive { attempt } => self.arrive(it, now, attempt),
            Ev::Done { attempt, service } => self.done(it, now, attempt, service),
            Ev::Reply {
                attempt,
                class,
                ra_ms,
            } => self.reply(it, now, attempt, class, from_retry_after_ms(ra_ms)),
            Ev::Timeout { attempt } => {
                if outstanding(it, attempt) {
                    self.n.timeouts += 1;
                    self.call_sees(it, now, Class::Timeout, None);
                }
            }
        }
    }

    /// `PathSim::transmit_k` for a top call with no limiter, budget, breaker or hedging.
    fn transmit(&mut self, it: &mut Intent, now: Time) {
        let attempt = it.attempts;
        it.attempts += 1;
        it.awaiting = true;
        self.n.sent += 1;
        self.n.retries += u64::from(attempt > 0);
        if let Some(timeout) = self.m.retry.timeout {
            self.push(now + timeout, Ev::Timeout { attempt });
        }
        let net = &self.m.network;
        let index = u64::from(attempt);
        if net.request_loss > 0.0
            && stream(self.seed, it.id, Purpose::RequestLoss, index).bernoulli(net.request_loss)
        {
            self.n.requests_lost += 1;
            if net.loss_notice == LossNotice::Error {
                self.call_sees(it, now, Class::Connection, None);
            }
            return;
        }
        it.in_flight += 1;
        if self.req_lat.is_zero() {
            return self.arrive(it, now, attempt);
        }
        let lat = self.req_lat.sample(&mut stream(
            self.seed,
            it.id,
            Purpose::RequestLatency,
            index,
        ));
        self.push(now + lat, Ev::Arrive { attempt });
    }

    /// `PathSim::admit_request_k` and `begin_k` at a server with no limit of any kind.
    fn arrive(&mut self, it: &mut Intent, now: Time, attempt: u16) {
        let alive = self.chain_alive(it, attempt);
        let s = &self.m.server;
        self.n.arrivals += 1;
        self.n.retry_arrivals += u64::from(attempt > 0);
        self.n.orphaned += u64::from(!alive);
        self.n.last_arrival = self.n.last_arrival.max(now);
        self.op(now, OP_ARRIVAL + u32::from(attempt));
        if s.fail == FailMode::Always {
            self.n.rejected += 1;
            return self.respond(it, now, attempt, Class::Unavailable, None);
        }
        if let Some(o) = s
            .outages
            .iter()
            .find(|o| now >= Time::ZERO + o.from && now < Time::ZERO + o.to)
        {
            if o.answer == OutageAnswer::Hang {
                self.n.hung += 1;
                return self.release(it, now);
            }
            self.n.rejected += 1;
            let ra = o.retry_after;
            return self.respond(it, now, attempt, Class::Unavailable, ra);
        }
        if (s.drop_expired || self.m.retry.cancel) && !alive {
            self.n.dropped_expired += 1;
            return self.release(it, now);
        }
        let mut service = if s.service.is_zero() {
            Duration::ZERO
        } else {
            s.service.sample(&mut stream(
                self.seed,
                it.id,
                Purpose::Service,
                u64::from(attempt),
            ))
        };
        if let Some(w) = s
            .slow_windows
            .iter()
            .find(|w| now >= Time::ZERO + w.from && now < Time::ZERO + w.to)
        {
            service = service.saturating_mul_f64(w.factor);
        }
        self.n.served += 1;
        self.busy_ops = true;
        self.op(now, OP_BEGIN);
        self.push(now + service, Ev::Done { attempt, service });
    }

    /// `PathSim::done_k` at the bottom with no store and no contention.
    fn done(&mut self, it: &mut Intent, now: Time, attempt: u16, service: Duration) {
        let alive = self.chain_alive(it, attempt);
        self.n.work += u128::from(service.0);
        if !alive {
            self.n.wasted += u128::from(service.0);
        }
        let s = &self.m.server;
        let (id, index) = (it.id, u64::from(attempt));
        let failed = match s.fail {
            FailMode::Probability(p) => stream(self.seed, id, Purpose::Failure, index).bernoulli(p),
            _ => false,
        };
        let crashed = !failed
            && s.crash_probability > 0.0
            && stream(self.seed, id, Purpose::Crash, index).bernoulli(s.crash_probability);
        let client_error = !failed
            && !crashed
            && s.client_error > 0.0
            && stream(self.seed, id, Purpose::ClientError, index).bernoulli(s.client_error);
        let (effect, class) = if failed {
            (false, Class::ServerError)
        } else if client_error {
            self.n.client_errors += 1;
            (false, Class::ClientError)
        } else if crashed {
            self.n.crashes += 1;
            let e = match (self.m.idempotency.commit, s.crash_point) {
                (CommitMode::Atomic, _) => false,
                (CommitMode::EffectThenKey, CrashPoint::AfterEffect) => true,
                (CommitMode::KeyThenEffect, CrashPoint::AfterKey) => false,
                (_, _) => true,
            };
            (e, Class::Connection)
        } else {
            (true, Class::Success)
        };
        if effect {
            it.applied += 1;
            self.n.c.effects += 1;
        }
        self.op(now, OP_DONE);
        self.respond(it, now, attempt, class, None);
    }

    /// `PathSim::respond_k`: the answer may be lost on the way back.
    fn respond(
        &mut self,
        it: &mut Intent,
        now: Time,
        attempt: u16,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        let net = &self.m.network;
        let index = u64::from(attempt);
        if net.response_loss > 0.0
            && stream(self.seed, it.id, Purpose::ResponseLoss, index).bernoulli(net.response_loss)
        {
            self.n.responses_lost += 1;
            return self.release(it, now);
        }
        let ra_ms = to_retry_after_ms(retry_after);
        if self.resp_lat.is_zero() {
            return self.reply(it, now, attempt, class, from_retry_after_ms(ra_ms));
        }
        let lat = self.resp_lat.sample(&mut stream(
            self.seed,
            it.id,
            Purpose::ResponseLatency,
            index,
        ));
        self.push(
            now + lat,
            Ev::Reply {
                attempt,
                class,
                ra_ms,
            },
        );
    }

    fn reply(
        &mut self,
        it: &mut Intent,
        now: Time,
        attempt: u16,
        class: Class,
        ra: Option<Duration>,
    ) {
        it.in_flight -= 1;
        if outstanding(it, attempt) {
            self.call_sees(it, now, class, ra);
        } else {
            self.n.late_responses += 1;
        }
        self.maybe_finalise(it, now);
    }

    /// Something of the intent left the path without an answer.
    fn release(&mut self, it: &mut Intent, now: Time) {
        it.in_flight -= 1;
        self.maybe_finalise(it, now);
    }

    /// `PathSim::chain_alive` for a top call: is the client still waiting for this attempt?
    #[inline]
    fn chain_alive(&self, it: &Intent, attempt: u16) -> bool {
        self.m.retry.timeout.is_none() || outstanding(it, attempt)
    }

    /// `PathSim::call_sees_k` with no budget, breaker, limiter or hedging.
    fn call_sees(&mut self, it: &mut Intent, now: Time, class: Class, ra: Option<Duration>) {
        it.awaiting = false;
        if class == Class::Success {
            self.settle(it, now, Settled::Success);
        } else if self.retry_on.contains(class) {
            self.attempt_failed(it, now, class, ra);
        } else {
            self.settle(it, now, Settled::Failure);
        }
    }

    /// `PathSim::attempt_failed_k` for a top call with no budget.
    fn attempt_failed(&mut self, it: &mut Intent, now: Time, class: Class, ra: Option<Duration>) {
        let retry = &self.m.retry;
        let mut backoff = retry.backoff();
        if class == Class::Throttled
            && let Some(b) = retry.throttling_base
        {
            backoff.base = b;
        }
        if u32::from(it.attempts) >= retry.max_attempts {
            return self.settle(it, now, Settled::Failure);
        }
        let retries_made = u32::from(it.attempts) - 1;
        let index = u64::from(retries_made as u16);
        let (mut delay, carry) = backoff.next_delay(
            retries_made,
            it.prev_backoff,
            &mut stream(self.seed, it.id, Purpose::Backoff, index),
        );
        let policy = retry.retry_after;
        let mut honour = ra.filter(|_| policy != RetryAfterPolicy::Ignore);
        if policy == RetryAfterPolicy::Envoy {
            let cap = self.retry_after_cap;
            honour = honour.filter(|ra| *ra <= cap && ra.as_nanos() / 1_000_000 > 1);
        }
        if let Some(ra) = honour {
            delay = if policy == RetryAfterPolicy::Envoy {
                let ms = ra.as_nanos() / 1_000_000;
                let draw = stream(self.seed, it.id, Purpose::RetryAfter, index).next_u64();
                super::envoy_reset_delay(ms, draw)
            } else if policy == RetryAfterPolicy::Aws {
                ra.min(delay + AWS_RETRY_AFTER_MAX_ADDITIONAL).max(delay)
            } else {
                ra.min(self.retry_after_cap)
            };
        }
        if let Some(deadline) = retry.deadline
            && now + delay >= it.start + deadline
        {
            return self.settle(it, now, Settled::Failure);
        }
        self.n.retry_after_waits += u64::from(honour.is_some());
        // (`restart_probability` only changes the idempotency key, which nothing reads here.)
        it.prev_backoff = carry.unwrap_or(delay.0.min(crate::backoff::NO_STATE - 1));
        self.push(now + delay, Ev::Send);
    }

    fn settle(&mut self, it: &mut Intent, now: Time, how: Settled) {
        it.settled = how;
        let took = now.since(it.start);
        self.completions.record(took);
        if how == Settled::Success {
            self.successes.record(took);
            self.n.c.succeeded += 1;
            self.op(now, OP_SUCCESS);
        } else {
            self.n.hop_failed += 1;
            self.n.c.failed += 1;
        }
        self.maybe_finalise(it, now);
    }

    /// `PathSim::maybe_finalise` with no store and no trace keys.
    fn maybe_finalise(&mut self, it: &mut Intent, now: Time) {
        if it.settled == Settled::No || it.in_flight > 0 {
            return;
        }
        let succeeded = it.settled == Settled::Success;
        match it.applied {
            0 => self.n.c.lost += 1,
            1 => self.n.c.applied_once += 1,
            _ => self.n.c.duplicated += 1,
        }
        self.n.c.phantom += u64::from(succeeded && it.applied == 0);
        self.n.c.false_failures += u64::from(!succeeded && it.applied > 0);
        it.finalised = Some(now);
        it.settled = Settled::No;
    }

    /// Where the event loop would stop, how, and after how many events; `None` when that
    /// depends on the global order of events (then the event loop runs the model).
    fn ending(&self) -> Option<(Time, Ended, u64)> {
        let m = self.m;
        if self.unfinished > 0 || !self.all_started {
            // Every event up to the horizon is handled, stale timeouts included.
            let stale = self.stale.iter().filter(|&&t| t <= self.horizon.0).count() as u64;
            let events = self.live_events + stale;
            if events >= m.max_events {
                return None;
            }
            return Some((self.horizon, Ended::Horizon, events));
        }
        let end = self.last_final;
        let mut stale = 0u64;
        for &t in &self.stale {
            if t == end.0 {
                // Popped or not depends on its place among the last intent's events.
                return None;
            }
            stale += u64::from(t < end.0);
        }
        let events = self.live_events + stale;
        if events > m.max_events {
            return None;
        }
        Some((end, Ended::Settled, events))
    }

    /// Feeds the counters, the sorted records and the histograms into a `PathSim` and lets it
    /// build the result, so that the summary is assembled in one place.
    fn finish(mut self, end: Time, ended: Ended, events: u64, full: bool) -> VariantResult {
        let m = self.m;
        // An inert copy of the model builds the sim (no burst order, no arrivals to draw);
        // the result is built from the real model.
        let mut inert = m.clone();
        inert.workload.kind = WorkloadKind::Burst;
        inert.workload.clients = 0;
        inert.workload.spread = Duration::ZERO;
        let mut sim = PathSim::new(&inert, self.seed);
        sim.model = m;
        sim.prepare_windows(full);
        let n = &self.n;
        sim.c = n.c.clone();
        let h = &mut sim.hops[0].n;
        h.received = n.c.intents;
        h.sent = n.sent;
        h.retries = n.retries;
        h.retry_path_sent = n.retries;
        h.failed = n.hop_failed;
        h.timeouts = n.timeouts;
        h.requests_lost = n.requests_lost;
        h.responses_lost = n.responses_lost;
        h.late_responses = n.late_responses;
        h.retry_after_waits = n.retry_after_waits;
        let ts = &mut sim.tiers[0];
        let t = &mut ts.n;
        t.arrivals = n.arrivals;
        t.retry_arrivals = n.retry_arrivals;
        t.orphaned = n.orphaned;
        t.served = n.served;
        t.rejected = n.rejected;
        t.hung = n.hung;
        t.dropped_expired = n.dropped_expired;
        t.client_errors = n.client_errors;
        t.crashes = n.crashes;
        t.work = n.work;
        t.wasted = n.wasted;
        t.last_arrival = n.last_arrival;
        // The records in time order (ties in any order: they change no count, peak or area).
        let mut busy = 0u64;
        if let Some(mut flat) = self.flat.take() {
            if let Some(at) = self.bulk_at {
                // Every record of a burst is at or after its start.
                for _ in 0..self.bulk {
                    ts.buckets.arrival(at, false, 0);
                }
                self.bulk = 0;
            }
            flat.sort_unstable();
            feed(
                ts,
                &flat,
                |e| (e >> KIND_BITS, (e & KIND_MASK) as u32),
                &mut busy,
            );
        }
        let bulk_chunk = self.bulk_at.map(|t| (t.0 >> CHUNK_SHIFT) as usize);
        if let (Some(b), true) = (bulk_chunk, self.bulk > 0)
            && self.chunks.len() <= b
        {
            self.chunks.resize_with(b + 1, Vec::new);
        }
        for (i, chunk) in self.chunks.iter_mut().enumerate() {
            if bulk_chunk == Some(i) {
                let at = self.bulk_at.unwrap_or(Time::ZERO);
                for _ in 0..self.bulk {
                    ts.buckets.arrival(at, false, 0);
                }
            }
            chunk.sort_unstable();
            let base = (i as u64) << CHUNK_SHIFT;
            let decode = |e: u32| (base | u64::from(e >> KIND_BITS), e & KIND_MASK as u32);
            feed(ts, chunk, decode, &mut busy);
            *chunk = Vec::new();
        }
        sim.completions = std::mem::take(&mut self.completions);
        sim.successes = std::mem::take(&mut self.successes);
        sim.calls.live = self.unfinished;
        sim.events = events;
        sim.finish(&m.name, end, ended, full)
    }
}

/// Feeds sorted records, decoded as `(time ns, kind)`, to the server's buckets and levels: one
/// `Levels::set` per instant with a begin or a done (as the event loop sets them at each).
fn feed<T: Copy>(
    ts: &mut super::tier::TierState,
    records: &[T],
    decode: impl Fn(T) -> (u64, u32),
    busy: &mut u64,
) {
    let mut k = 0;
    while k < records.len() {
        let at = decode(records[k]).0;
        let now = Time(at);
        let mut levels = false;
        while let Some(&r) = records.get(k) {
            let (t, kind) = decode(r);
            if t != at {
                break;
            }
            match kind {
                OP_DONE => {
                    // A done may sort before the begin it ends at the same time.
                    *busy = busy.wrapping_sub(1);
                    levels = true;
                }
                OP_BEGIN => {
                    *busy = busy.wrapping_add(1);
                    levels = true;
                }
                OP_SUCCESS => ts.buckets.success(now),
                a => {
                    let attempt = (a - OP_ARRIVAL) as u16;
                    ts.buckets.arrival(now, attempt > 0, attempt);
                }
            }
            k += 1;
        }
        if levels {
            ts.levels.set(&mut ts.buckets, now, 0, *busy);
        }
    }
}

/// Is the client still waiting for attempt `attempt`?
#[inline]
fn outstanding(it: &Intent, attempt: u16) -> bool {
    it.awaiting && it.attempts == attempt + 1
}
