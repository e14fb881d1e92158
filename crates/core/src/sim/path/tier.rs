//! Tiers: servers with workers, a bounded queue and the overload behaviours of `[server]`.
//!
//! A request arrives, may be refused at once (outage, `fail = "always"`, the rate limiter, a
//! concurrency limit, a full queue), waits for a worker, and is served for a drawn service time.
//! Then it fails, crashes or succeeds. At the last tier success is the effect (through the
//! dedupe store and write contention, [`super::store`]); at any other tier the client inside
//! the tier calls the next tier down while the worker waits (a thread held per request, as in a
//! thread-per-request gateway), and the call's answer is this tier's answer.

use super::call::{Call, by_kind};
use super::callref::{CallRef, NO_KEY};
use super::{Event, PathSim, to_retry_after_ms};
use crate::metrics::{Buckets, Levels};
use crate::model::{
    CommitMode, CrashPoint, Discipline, FailMode, Outage, OutageAnswer, Server, ShedAnswer,
    SlowWindow,
};
use crate::policy::Class;
use crate::policy::ratelimit::{RetryAfter, TokenBucket, whole_seconds};
use crate::shedding::{Codel, SheddingKind};
use crate::sim::draws::Round;
use crate::time::{Duration, Time};
use crate::trace::Step;
use std::collections::VecDeque;

/// The answer a caller gets for one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Outcome {
    Ok,
    /// 500: the handler failed (or, at a tier with a tier below, the call below failed).
    Error,
    /// 503: outage, `fail = "always"` or a full queue.
    Unavailable,
    /// 409: a concurrent duplicate is still in progress, or a write lost its version race.
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
    pub(super) fn class(self) -> Class {
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

/// A request at a tier (on its way, queued, in service, or waiting on a key).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub(super) call: CallRef,
    pub(super) epoch: u32,
    pub(super) attempt: u16,
    pub(super) key: u16,
    /// Write contention: the version the read saw.
    pub(super) version: u32,
    pub(super) arrived: Time,
    pub(super) service: Duration,
}

impl Request {
    pub(super) fn new(call: CallRef, epoch: u32, attempt: u16, key: u16, now: Time) -> Self {
        Request {
            call,
            epoch,
            attempt,
            key,
            version: u32::MAX,
            arrived: now,
            service: Duration::ZERO,
        }
    }
}

/// What one tier did.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TierCounters {
    pub(super) arrivals: u64,
    pub(super) retry_arrivals: u64,
    /// Arrivals whose result could no longer reach the user.
    pub(super) orphaned: u64,
    pub(super) served: u64,
    pub(super) rejected: u64,
    /// Arrivals held without an answer by a hanging outage.
    pub(super) hung: u64,
    pub(super) dropped_expired: u64,
    pub(super) rate_limited: u64,
    pub(super) overloaded: u64,
    /// Queued requests CoDel dropped at dequeue (`[server.shedding]`).
    pub(super) shed: u64,
    pub(super) client_errors: u64,
    pub(super) crashes: u64,
    pub(super) work: u128,
    pub(super) wasted: u128,
    pub(super) waits: u128,
    pub(super) last_arrival: Time,
}

pub(crate) struct TierState {
    pub(super) capacity: u64,
    queue_limit: u64,
    concurrency_limit: u64,
    pub(super) busy: u64,
    waiting: VecDeque<Request>,
    /// When the wait queue last went from empty to non-empty (adaptive LIFO).
    queued_since: Time,
    codel: Option<Codel>,
    pub(super) in_service: Vec<Request>,
    free_jobs: Vec<u32>,
    limiters: Vec<TokenBucket>,
    limiter_shared: bool,
    pub(super) buckets: Buckets,
    pub(super) levels: Levels,
    pub(super) n: TierCounters,
}

impl TierState {
    pub(super) fn new(
        s: &Server,
        bucket: Duration,
        limiters: Vec<TokenBucket>,
        limiter_shared: bool,
    ) -> Self {
        TierState {
            capacity: s.capacity.0.unwrap_or(u64::MAX),
            queue_limit: s.queue.0.unwrap_or(u64::MAX),
            concurrency_limit: s.concurrency_limit.0.unwrap_or(u64::MAX),
            busy: 0,
            waiting: VecDeque::new(),
            queued_since: Time::ZERO,
            codel: (s.shedding.kind == SheddingKind::Codel).then(|| Codel::new(&s.shedding)),
            in_service: Vec::new(),
            free_jobs: Vec::new(),
            limiters,
            limiter_shared,
            buckets: Buckets::new(bucket),
            levels: Levels::default(),
            n: TierCounters::default(),
        }
    }

    /// The worker count at `now` (lower inside a capacity drop).
    pub(super) fn capacity_at(&self, s: &Server, now: Time) -> u64 {
        let base = s.capacity.0.unwrap_or(u64::MAX);
        s.capacity_drops
            .iter()
            .find(|d| now >= Time::ZERO + d.from && now < Time::ZERO + d.to)
            .map_or(base, |d| d.capacity)
    }

    /// The index of the rate limiter client `client` meets.
    #[inline(always)]
    fn limiter_index(&self, client: u32) -> usize {
        if self.limiter_shared {
            0
        } else {
            client as usize
        }
    }

    #[inline]
    fn set_levels(&mut self, now: Time) {
        self.levels
            .set(&mut self.buckets, now, self.waiting.len() as u64, self.busy);
    }
}

/// The outage window `now` falls in, if any (the first listed wins).
#[inline]
fn outage_at(s: &Server, now: Time) -> Option<&Outage> {
    s.outages
        .iter()
        .find(|o| now >= Time::ZERO + o.from && now < Time::ZERO + o.to)
}

/// The slow window `now` falls in, if any (windows do not overlap).
#[inline]
fn slow_at(s: &Server, now: Time) -> Option<&SlowWindow> {
    s.slow_windows
        .iter()
        .find(|w| now >= Time::ZERO + w.from && now < Time::ZERO + w.to)
}

impl PathSim<'_> {
    /// A request reaches the tier its call sends to.
    #[inline(always)]
    pub(in crate::sim::path) fn arrive<C: Call>(&mut self, now: Time, req: Request) {
        self.note::<C>(now, req.call, req.attempt, Step::Arrive, None);
        let t = self.calls.get::<C>(req.call).hop();
        if self.hops[t].contention {
            return self.read::<C>(now, req);
        }
        self.admit_request::<C>(now, t, req);
    }

    /// A worker of tier `t` finished its own work on `in_service[job]`.
    pub(in crate::sim::path) fn done(&mut self, now: Time, t: usize, job: u32) {
        let call = self.tiers[t].in_service[job as usize].call;
        by_kind!(call, C => self.done_job::<C>(now, t, job));
    }

    pub(super) fn admit_request<C: Call>(&mut self, now: Time, t: usize, req: Request) {
        let retry = self.calls.get::<C>(req.call).retry_path(req.attempt);
        let orphan = !self
            .calls
            .chain_alive::<C>(&self.hops, req.call, req.attempt);
        let s = &self.spec.tiers[t].server;
        let ts = &mut self.tiers[t];
        ts.n.arrivals += 1;
        ts.n.retry_arrivals += u64::from(retry);
        ts.n.orphaned += u64::from(orphan);
        ts.n.last_arrival = now;
        ts.buckets.arrival(now, retry, req.attempt);
        if s.fail == FailMode::Always {
            ts.n.rejected += 1;
            return self.respond::<C>(now, t, req, Outcome::Unavailable, None);
        }
        if let Some(o) = outage_at(s, now) {
            if o.answer == OutageAnswer::Hang {
                // Held without work and never answered: only the caller's timeout ends the
                // attempt, and the request is gone from the path (like a silent loss).
                ts.n.hung += 1;
                self.note::<C>(now, req.call, req.attempt, Step::Dropped, None);
                return self.release::<C>(req.call);
            }
            ts.n.rejected += 1;
            let ra = o.retry_after;
            return self.respond::<C>(now, t, req, Outcome::Unavailable, ra);
        }
        if !ts.limiters.is_empty() {
            let k = ts.limiter_index(self.calls.get::<C>(req.call).client());
            let ts = &mut self.tiers[t];
            if let Err(wait) = ts.limiters[k].try_take(now) {
                ts.n.rate_limited += 1;
                let ra = match s.rate_limit.retry_after {
                    RetryAfter::None => None,
                    RetryAfter::Fixed(d) => Some(d),
                    RetryAfter::Derived => Some(whole_seconds(wait)),
                };
                return self.respond::<C>(now, t, req, Outcome::Throttled, ra);
            }
        }
        let ts = &mut self.tiers[t];
        if ts.busy + ts.waiting.len() as u64 >= ts.concurrency_limit {
            return self.shed::<C>(now, t, req);
        }
        if ts.busy < ts.capacity && ts.waiting.is_empty() {
            if let Some(c) = &mut ts.codel {
                // Straight to a worker is a dequeue after no wait (every request goes through
                // the queue in folly's executors): it feeds the interval's minimum delay.
                c.should_drop(Duration::ZERO, now);
            }
            self.begin::<C>(now, t, req);
        } else if (ts.waiting.len() as u64) < ts.queue_limit {
            if ts.waiting.is_empty() {
                ts.queued_since = now;
            }
            ts.waiting.push_back(req);
            ts.set_levels(now);
        } else {
            self.shed::<C>(now, t, req);
        }
    }

    /// Load shedding: a full queue or the concurrency limit refuses `req` at once.
    fn shed<C: Call>(&mut self, now: Time, t: usize, req: Request) {
        self.tiers[t].n.rejected += 1;
        self.shed_answer::<C>(now, t, req);
    }

    /// CoDel drops `req` as it leaves the queue.
    fn codel_drop(&mut self, now: Time, t: usize, req: Request) {
        self.tiers[t].n.shed += 1;
        by_kind!(req.call, C => self.shed_answer::<C>(now, t, req));
    }

    /// What a shed request is told: `shed_answer`, with `retry_after` on a 503.
    fn shed_answer<C: Call>(&mut self, now: Time, t: usize, req: Request) {
        let s = &self.spec.tiers[t].server;
        let ts = &mut self.tiers[t];
        if s.shed_answer == ShedAnswer::Overloaded {
            ts.n.overloaded += 1;
            return self.respond::<C>(now, t, req, Outcome::Overloaded, None);
        }
        let ra = match s.retry_after {
            RetryAfter::None => None,
            RetryAfter::Fixed(d) => Some(d),
            RetryAfter::Derived => {
                // Time for the workers to drain the queue ahead of a retry, whole seconds.
                let workers = ts.capacity.min(ts.concurrency_limit).max(1) as f64;
                let ns = (ts.waiting.len() as f64 + 1.0) * s.service.mean_ns() / workers;
                Some(whole_seconds(Duration::from_nanos_f64(ns)))
            }
        };
        self.respond::<C>(now, t, req, Outcome::Unavailable, ra);
    }

    /// Fills free workers from the wait queue; CoDel may drop what it takes out.
    pub(super) fn dispatch(&mut self, now: Time, t: usize) {
        let s = &self.spec.tiers[t].server;
        let (discipline, interval) = (s.discipline, s.shedding.interval);
        loop {
            let ts = &mut self.tiers[t];
            if ts.busy >= ts.capacity {
                break;
            }
            let newest_first = match discipline {
                Discipline::Fifo => false,
                Discipline::Lifo => true,
                // "Not empty for the last interval": Fail at Scale's sign of a standing queue.
                Discipline::AdaptiveLifo => {
                    !ts.waiting.is_empty() && now.since(ts.queued_since) >= interval
                }
            };
            let next = if newest_first {
                ts.waiting.pop_back()
            } else {
                ts.waiting.pop_front()
            };
            let Some(req) = next else { break };
            ts.set_levels(now);
            if let Some(c) = &mut ts.codel
                && c.should_drop(now.since(req.arrived), now)
            {
                self.codel_drop(now, t, req);
                continue;
            }
            by_kind!(req.call, C => self.begin::<C>(now, t, req));
        }
    }

    /// The handler starts: deadline and cancellation checks, the dedupe store, then a worker.
    fn begin<C: Call>(&mut self, now: Time, t: usize, mut req: Request) {
        let s = &self.spec.tiers[t].server;
        let drop = s.drop_expired || self.hops[t].retry.cancel;
        // (The first is the one-tier form of the second.)
        if drop
            && !self
                .calls
                .chain_alive::<C>(&self.hops, req.call, req.attempt)
        {
            self.tiers[t].n.dropped_expired += 1;
            self.note::<C>(now, req.call, req.attempt, Step::Dropped, None);
            return self.release::<C>(req.call);
        }
        if t == self.bottom
            && req.key != NO_KEY
            && self.store_enabled()
            && !self.store_admits::<C>(now, t, req)
        {
            return;
        }
        // Every served request's wait counts (zero when it started on arrival); a request taken
        // from the queue by the last free worker leaves `busy == 0` and the queue empty, so a
        // condition on those would drop exactly the waits that end a busy period.
        let k = self.calls.get::<C>(req.call).key(req.attempt);
        let s = &self.spec.tiers[t].server;
        let mut service = if s.service.is_zero() {
            Duration::ZERO
        } else {
            s.service.sample(&mut self.draws.service(k))
        };
        if let Some(w) = slow_at(s, now) {
            // A latency brown-out: the same draw, `factor` times longer (common random numbers).
            service = service.saturating_mul_f64(w.factor);
        }
        let ts = &mut self.tiers[t];
        ts.n.waits += u128::from(now.since(req.arrived).0);
        ts.n.served += 1;
        if s.slowdown > 0.0 && ts.busy > 0 {
            // Latency rising with load: each other request in service adds `slowdown`.
            service = service.saturating_mul_f64(1.0 + s.slowdown * ts.busy as f64);
        }
        req.service = service;
        self.note::<C>(now, req.call, req.attempt, Step::Serve, None);
        let ts = &mut self.tiers[t];
        ts.busy += 1;
        ts.set_levels(now);
        let job = match ts.free_jobs.pop() {
            Some(j) => {
                ts.in_service[j as usize] = req;
                j
            }
            None => {
                ts.in_service.push(req);
                (ts.in_service.len() - 1) as u32
            }
        };
        self.queue
            .push(now + service, Event::Done { tier: t as u8, job });
    }

    /// A worker finished its own work on a request: it fails, crashes or succeeds; success at
    /// the last tier is the effect, anywhere else the call to the next tier.
    fn done_job<C: Call>(&mut self, now: Time, t: usize, job: u32) {
        let req = self.tiers[t].in_service[job as usize];
        let alive = self
            .calls
            .chain_alive::<C>(&self.hops, req.call, req.attempt);
        let ts = &mut self.tiers[t];
        ts.n.work += u128::from(req.service.0);
        if !alive {
            ts.n.wasted += u128::from(req.service.0);
        }
        let s = &self.spec.tiers[t].server;
        let k = self.calls.get::<C>(req.call).key(req.attempt);
        let failed = match s.fail {
            FailMode::Probability(p) => self.draws.failure(k).bernoulli(p),
            _ => false,
        };
        let crashed = !failed
            && s.crash_probability > 0.0
            && self.draws.crash(k).bernoulli(s.crash_probability);
        let client_error = !failed
            && !crashed
            && s.client_error > 0.0
            && self.draws.client_error(k).bernoulli(s.client_error);
        if t < self.bottom {
            let outcome = if failed {
                Outcome::Error
            } else if client_error {
                self.tiers[t].n.client_errors += 1;
                Outcome::ClientError
            } else if crashed {
                self.tiers[t].n.crashes += 1;
                Outcome::ConnError
            } else {
                // The worker stays busy while the client inside this tier calls the next one.
                return self.start_inner::<C>(now, t + 1, job, req);
            };
            return self.job_answers(now, t, job, outcome);
        }
        let commit = self.model.idempotency.commit;
        let (effect, key_recorded, outcome) = if failed {
            (false, false, Outcome::Error)
        } else if client_error {
            // The request is refused as wrong: no effect, and not stored as the key's result.
            self.tiers[t].n.client_errors += 1;
            (false, false, Outcome::ClientError)
        } else if crashed {
            self.tiers[t].n.crashes += 1;
            let (e, k) = match (commit, s.crash_point) {
                (CommitMode::Atomic, _) => (false, false),
                (CommitMode::EffectThenKey, CrashPoint::AfterEffect) => (true, false),
                (CommitMode::KeyThenEffect, CrashPoint::AfterKey) => (false, true),
                (_, _) => (true, true),
            };
            (e, k, Outcome::ConnError)
        } else if s.contention && !self.store.commit_write(req.version) {
            // The record's version moved since the read: the write is refused.
            self.c.conflicts += 1;
            (false, false, Outcome::Conflict)
        } else {
            (true, true, Outcome::Ok)
        };
        if effect {
            let top = self.calls.top_of::<C>(req.call);
            self.calls.top_mut(top).applied += 1;
            self.c.effects += 1;
            self.note::<C>(now, req.call, req.attempt, Step::Applied, None);
        }
        let ts = &mut self.tiers[t];
        ts.free_jobs.push(job);
        ts.busy -= 1;
        ts.set_levels(now);
        let keyed = req.key != NO_KEY && self.store_enabled();
        let mut waiters = if keyed {
            self.store_commit::<C>(now, &req, key_recorded)
        } else {
            Vec::new()
        };
        self.respond::<C>(now, t, req, outcome, None);
        // Duplicates that waited on this key share its committed result (or its failure).
        let shared = if key_recorded { Outcome::Ok } else { outcome };
        for w in waiters.drain(..) {
            if key_recorded {
                self.c.replayed += 1;
            }
            by_kind!(w.call, C => self.respond::<C>(now, t, w, shared, None));
        }
        self.store.recycle(waiters);
        self.dispatch(now, t);
    }

    /// A job of tier `t` that waited for the call below answers with that call's outcome.
    pub(super) fn job_answers(&mut self, now: Time, t: usize, job: u32, outcome: Outcome) {
        let ts = &mut self.tiers[t];
        let req = ts.in_service[job as usize];
        ts.free_jobs.push(job);
        ts.busy -= 1;
        ts.set_levels(now);
        by_kind!(req.call, C => self.respond::<C>(now, t, req, outcome, None));
        self.dispatch(now, t);
    }

    /// Tier `t` answers `req`; the reply may be lost on the way back.
    pub(super) fn respond<C: Call>(
        &mut self,
        now: Time,
        t: usize,
        req: Request,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        self.note::<C>(
            now,
            req.call,
            req.attempt,
            Step::Respond,
            Some(outcome.class()),
        );
        let net = &self.spec.hops[t].network;
        let (loss, lat) = (net.response_loss, net.response_latency());
        let k = self.calls.get::<C>(req.call).key(req.attempt);
        if loss > 0.0 && self.draws.response_loss(k).bernoulli(loss) {
            self.hops[t].n.responses_lost += 1;
            self.note::<C>(now, req.call, req.attempt, Step::ResponseLost, None);
            return self.release::<C>(req.call);
        }
        let retry_after_ms = to_retry_after_ms(retry_after);
        if lat.is_zero() {
            // As in `send`: taken now, and the last thing done here.
            let ra = super::from_retry_after_ms(retry_after_ms);
            return self.reply::<C>(now, req.call, req.epoch, req.attempt, outcome, ra);
        }
        let round = if self.hops[t].contention {
            Round::Write
        } else {
            Round::Only
        };
        let at = now + lat.sample(&mut self.draws.response_latency(k, round));
        self.queue.push(
            at,
            Event::Reply {
                call: req.call,
                epoch: req.epoch,
                attempt: req.attempt,
                outcome,
                retry_after_ms,
            },
        );
    }
}
