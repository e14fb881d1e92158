//! Admission at a tier: a request arrives and is refused at once (outage, `fail = "always"`,
//! the rate limiter, the concurrency limit, a full queue) or waits for a worker; the queue is
//! served FIFO, LIFO or adaptive LIFO, and CoDel may drop what leaves it.

use super::{Outcome, Request, outage_at};
use crate::base::time::{Duration, Time};
use crate::model::{Discipline, FailMode, OutageAnswer, ShedAnswer};
use crate::policy::ratelimit::{RetryAfter, whole_seconds};
use crate::sim::metrics::ReplicaEvent;
use crate::sim::path::PathSim;
use crate::sim::path::call::{Call, by_kind};
use crate::sim::trace::Step;

impl PathSim<'_> {
    /// A request reaches the tier its call sends to.
    #[inline(always)]
    pub(in crate::sim::path) fn arrive<C: Call>(&mut self, now: Time, req: Request, r: usize) {
        self.note::<C>(now, req.call, req.attempt, Step::Arrive, None);
        let t = self.calls.get::<C>(req.call).hop();
        if self.hops[t].contention {
            return self.read::<C>(now, req, r);
        }
        self.admit_request::<C>(now, t, r, req);
    }

    pub(in crate::sim::path) fn admit_request<C: Call>(
        &mut self,
        now: Time,
        t: usize,
        r: usize,
        req: Request,
    ) {
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
        ts.replica_saw(now, r, ReplicaEvent::Arrival);
        if s.fail == FailMode::Always {
            ts.n.rejected += 1;
            ts.replica_saw(now, r, ReplicaEvent::Rejected);
            return self.respond::<C>(now, t, req, Outcome::Unavailable, None);
        }
        if let Some(o) = outage_at(s, r, now) {
            if o.answer == OutageAnswer::Hang {
                // Held without work and never answered: only the caller's timeout ends the
                // attempt, and the request is gone from the path (like a silent loss).
                ts.n.hung += 1;
                self.note::<C>(now, req.call, req.attempt, Step::Dropped, None);
                return self.release::<C>(req.call);
            }
            ts.n.rejected += 1;
            ts.replica_saw(now, r, ReplicaEvent::Rejected);
            let ra = o.retry_after;
            return self.respond::<C>(now, t, req, Outcome::Unavailable, ra);
        }
        if !ts.limiters.is_empty() {
            let k = ts.limiter_index(self.calls.client::<C>(req.call));
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
        let (queue_limit, concurrency_limit) = (ts.queue_limit, ts.concurrency_limit);
        let rs = &mut ts.replicas[r];
        if rs.busy + rs.waiting.len() as u64 >= concurrency_limit {
            return self.shed::<C>(now, t, r, req);
        }
        if rs.busy < rs.capacity && rs.waiting.is_empty() {
            if let Some(c) = &mut rs.codel {
                // Straight to a worker is a dequeue after no wait (every request goes through
                // the queue in folly's executors): it feeds the interval's minimum delay.
                c.should_drop(Duration::ZERO, now);
            }
            self.begin::<C>(now, t, r, req);
        } else if (rs.waiting.len() as u64) < queue_limit {
            if rs.waiting.is_empty() {
                rs.queued_since = now;
            }
            rs.waiting.push_back(req);
            ts.queued += 1;
            ts.set_levels(now);
        } else {
            self.shed::<C>(now, t, r, req);
        }
    }

    /// Load shedding: a full queue or the concurrency limit refuses `req` at once.
    pub(in crate::sim::path) fn shed<C: Call>(
        &mut self,
        now: Time,
        t: usize,
        r: usize,
        req: Request,
    ) {
        let ts = &mut self.tiers[t];
        ts.n.rejected += 1;
        ts.replica_saw(now, r, ReplicaEvent::Rejected);
        self.shed_answer::<C>(now, t, r, req);
    }

    /// CoDel drops `req` as it leaves replica `r`'s queue.
    pub(in crate::sim::path) fn codel_drop(&mut self, now: Time, t: usize, r: usize, req: Request) {
        self.tiers[t].n.shed += 1;
        by_kind!(req.call, C => self.shed_answer::<C>(now, t, r, req));
    }

    /// What a shed request is told: `shed_answer`, with `retry_after` on a 503.
    pub(in crate::sim::path) fn shed_answer<C: Call>(
        &mut self,
        now: Time,
        t: usize,
        r: usize,
        req: Request,
    ) {
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
                let rs = &ts.replicas[r];
                let workers = rs.capacity.min(ts.concurrency_limit).max(1) as f64;
                let ns = (rs.waiting.len() as f64 + 1.0) * s.service.mean_ns() / workers;
                Some(whole_seconds(Duration::from_nanos_f64(ns)))
            }
        };
        self.respond::<C>(now, t, req, Outcome::Unavailable, ra);
    }

    /// Fills replica `r`'s free workers from its wait queue; CoDel may drop what it takes out.
    pub(in crate::sim::path) fn dispatch(&mut self, now: Time, t: usize, r: usize) {
        let s = &self.spec.tiers[t].server;
        let (discipline, interval) = (s.discipline, s.shedding.interval);
        loop {
            let ts = &mut self.tiers[t].replicas[r];
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
            let codel_drops = ts
                .codel
                .as_mut()
                .is_some_and(|c| c.should_drop(now.since(req.arrived), now));
            let ts = &mut self.tiers[t];
            ts.queued -= 1;
            ts.set_levels(now);
            if codel_drops {
                self.codel_drop(now, t, r, req);
                continue;
            }
            by_kind!(req.call, C => self.begin::<C>(now, t, r, req));
        }
    }
}
