//! Tiers: servers with workers, a bounded queue and the overload behaviours of `[server]`.
//!
//! A request arrives, may be refused at once (outage, `fail = "always"`, the rate limiter, a
//! concurrency limit, a full queue), waits for a worker, and is served for a drawn service time.
//! Then it fails, crashes or succeeds. At the last tier success is the effect (through the
//! dedupe store and write contention, [`super::store`]); at any other tier the client inside
//! the tier calls the next tier down while the worker waits (a thread held per request, as in a
//! thread-per-request gateway), and the call's answer is this tier's answer.
//!
//! This file holds a tier's state ([`TierState`]) and what travels through it ([`Request`],
//! [`Outcome`]); `admit.rs` is admission and the queue, `serve.rs` the workers. These are the
//! tier's own handlers: they decide, and the engine hands the request on (to the call below,
//! back over the network) as they say.

use super::callref::CallRef;
use crate::base::time::{Duration, Time};
use crate::model::{FailMode, Fanout, Outage, Server, SlowWindow};
use crate::policy::Class;
use crate::policy::ratelimit::TokenBucket;
use crate::policy::shedding::{Codel, SheddingKind};
use crate::sim::metrics::{Buckets, Levels, ReplicaEvent};
use std::collections::VecDeque;

mod admit;
mod scale;
mod serve;

pub(super) use admit::{Admission, Taken};
pub(super) use scale::{Scaler, Tick};
pub(super) use serve::Served;

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
    /// The attempt opened a connection: a worker pays its connect before the request.
    pub(super) connect: bool,
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
            connect: false,
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
    /// The part of `work` that was connects (`server.connections`).
    pub(super) connect_work: u128,
    pub(super) wasted: u128,
    pub(super) waits: u128,
    pub(super) last_arrival: Time,
}

/// One replica's server: its workers, its wait queue and what it did. A tier without
/// `server.replicas` is one replica.
#[derive(Clone)]
pub(crate) struct Replica {
    pub(super) capacity: u64,
    pub(super) busy: u64,
    waiting: VecDeque<Request>,
    /// When the wait queue last went from empty to non-empty (adaptive LIFO).
    queued_since: Time,
    codel: Option<Codel>,
    pub(super) n: ReplicaCounters,
}

/// What one replica did (the per-replica report of a replicated tier).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ReplicaCounters {
    pub(super) arrivals: u64,
    pub(super) served: u64,
    /// Refused at once: full queue, concurrency limit, outage or `fail = "always"`.
    pub(super) rejected: u64,
    /// Served requests that failed (500).
    pub(super) errors: u64,
}

#[derive(Clone)]
pub(crate) struct TierState {
    queue_limit: u64,
    concurrency_limit: u64,
    pub(super) replicas: Vec<Replica>,
    /// Requests waiting and busy workers over every replica (the tier's levels).
    queued: u64,
    busy: u64,
    /// Requests in service, each with the replica serving it; jobs are numbered across the
    /// tier's replicas (an inner call names its parent's job).
    pub(super) in_service: Vec<Request>,
    job_replica: Vec<u16>,
    free_jobs: Vec<u32>,
    limiters: Vec<TokenBucket>,
    limiter_shared: bool,
    /// `server.fanout`: the tier calls the next tier `k` times per request.
    pub(super) fanout: Option<Fanout>,
    pub(super) buckets: Buckets,
    pub(super) levels: Levels,
    pub(super) n: TierCounters,
    /// The autoscaler of a tier with `[server.autoscale]`.
    pub(super) scaler: Option<Box<Scaler>>,
}

impl TierState {
    pub(super) fn new(
        s: &Server,
        bucket: Duration,
        limiters: Vec<TokenBucket>,
        limiter_shared: bool,
    ) -> Self {
        let replica = || Replica {
            capacity: s.capacity.0.unwrap_or(u64::MAX),
            busy: 0,
            waiting: VecDeque::new(),
            queued_since: Time::ZERO,
            codel: (s.shedding.kind == SheddingKind::Codel).then(|| Codel::new(&s.shedding)),
            n: ReplicaCounters::default(),
        };
        let slots = s.replica_slots().max(1);
        let scaler = s.autoscale.as_ref().map(|a| {
            let capacity = s.capacity.0.unwrap_or(u64::MAX);
            Box::new(Scaler::new(a, s.replicas, slots, capacity))
        });
        TierState {
            queue_limit: s.queue.0.unwrap_or(u64::MAX),
            concurrency_limit: s.concurrency_limit.0.unwrap_or(u64::MAX),
            replicas: (0..slots).map(|_| replica()).collect(),
            queued: 0,
            busy: 0,
            in_service: Vec::new(),
            job_replica: Vec::new(),
            free_jobs: Vec::new(),
            limiters,
            limiter_shared,
            fanout: s.fanout,
            buckets: Buckets::new(bucket),
            levels: Levels::default(),
            n: TierCounters::default(),
            scaler,
        }
    }

    /// The worker count of replica `r` at `now` (lower inside a capacity drop).
    pub(super) fn capacity_at(s: &Server, r: usize, now: Time) -> u64 {
        let base = s.capacity.0.unwrap_or(u64::MAX);
        s.capacity_drops
            .iter()
            .find(|d| {
                strikes(d.replica, r) && now >= Time::ZERO + d.from && now < Time::ZERO + d.to
            })
            .map_or(base, |d| d.capacity)
    }

    /// The rate limiter keeps a bucket per client process: requests must know their client.
    pub(super) fn per_client(&self) -> bool {
        self.limiters.len() > 1
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

    /// The replica serving job `job`.
    #[inline(always)]
    pub(super) fn replica_of(&self, job: u32) -> usize {
        if self.replicas.len() == 1 {
            0
        } else {
            usize::from(self.job_replica[job as usize])
        }
    }

    /// Replica `r` saw `what` at `now`: its counters and its series (a tier of one replica
    /// reports none: its counters are the tier's).
    #[inline(always)]
    pub(super) fn replica_saw(&mut self, now: Time, r: usize, what: ReplicaEvent) {
        if self.replicas.len() < 2 {
            return;
        }
        let n = &mut self.replicas[r].n;
        match what {
            ReplicaEvent::Arrival => n.arrivals += 1,
            ReplicaEvent::Served => n.served += 1,
            ReplicaEvent::Rejected => n.rejected += 1,
            ReplicaEvent::Ejected => {}
        }
        self.buckets.replica(now, r, what);
    }

    /// The requests at the tier, waiting or in service, over every replica.
    #[inline]
    pub(super) fn load(&self) -> u64 {
        self.queued + self.busy
    }

    /// The queue length and the busy workers over every replica, from `now` on.
    #[inline]
    fn set_levels(&mut self, now: Time) {
        self.levels
            .set(&mut self.buckets, now, self.queued, self.busy);
        if let Some(sc) = &mut self.scaler {
            sc.observe(now, &self.replicas);
        }
    }

    /// A worker of replica `r` takes a request (`+1`) or lets one go (`-1`).
    #[inline(always)]
    fn work(&mut self, r: usize, started: bool) {
        let rs = &mut self.replicas[r];
        if started {
            rs.busy += 1;
            self.busy += 1;
        } else {
            rs.busy -= 1;
            self.busy -= 1;
        }
    }
}

/// A window with `replica` applies to replica `r`: it names no replica, or this one.
#[inline(always)]
fn strikes(replica: Option<u32>, r: usize) -> bool {
    replica.is_none_or(|x| x as usize == r)
}

/// The outage window of replica `r` that `now` falls in, if any (the first listed wins).
#[inline]
fn outage_at(s: &Server, r: usize, now: Time) -> Option<&Outage> {
    s.outages
        .iter()
        .find(|o| strikes(o.replica, r) && now >= Time::ZERO + o.from && now < Time::ZERO + o.to)
}

/// The slow window of replica `r` that `now` falls in, if any (windows on one replica do not
/// overlap).
#[inline]
fn slow_at(s: &Server, r: usize, now: Time) -> Option<&SlowWindow> {
    s.slow_windows
        .iter()
        .find(|w| strikes(w.replica, r) && now >= Time::ZERO + w.from && now < Time::ZERO + w.to)
}

/// The probability that a request served by replica `r` and finishing at `now` fails: a
/// failure window's, else `server.fail`'s (`None`: it cannot fail, and nothing is drawn).
#[inline]
fn failure_probability(s: &Server, r: usize, now: Time) -> Option<f64> {
    let window = s
        .failure_windows
        .iter()
        .find(|w| strikes(w.replica, r) && now >= Time::ZERO + w.from && now < Time::ZERO + w.to);
    match (window, s.fail) {
        (Some(w), _) => Some(w.probability),
        (None, FailMode::Probability(p)) => Some(p),
        (None, _) => None,
    }
}
