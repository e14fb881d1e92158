//! Admission at a tier: a request arrives and is refused at once (outage, `fail = "always"`,
//! the rate limiter, the concurrency limit, a full queue) or waits for a worker; the queue is
//! served FIFO, LIFO or adaptive LIFO, and CoDel may drop what leaves it.

use super::{Outcome, Request, TierState, outage_at};
use crate::base::time::{Duration, Time};
use crate::model::{Discipline, FailMode, OutageAnswer, Server, ShedAnswer};
use crate::policy::ratelimit::{RetryAfter, whole_seconds};
use crate::sim::metrics::ReplicaEvent;

/// What a tier does with a request that arrives.
pub(in crate::sim::path) enum Admission {
    /// Answered at once, with a `Retry-After` or none.
    Answer(Outcome, Option<Duration>),
    /// Held without work and never answered (a hanging outage).
    Hung,
    /// A worker takes it now.
    Serve,
    /// It waits in the queue.
    Queued,
}

/// A request taken from a replica's wait queue.
pub(in crate::sim::path) enum Taken {
    /// A worker takes it.
    Serve(Request),
    /// CoDel dropped it: it is answered so.
    Shed(Request, Outcome, Option<Duration>),
}

impl TierState {
    /// Counts a request arriving at replica `r` (`retry`: some attempt on its path was a retry;
    /// `orphan`: nobody above waits for it any more).
    #[inline(always)]
    pub(in crate::sim::path) fn arrival(
        &mut self,
        now: Time,
        r: usize,
        req: &Request,
        retry: bool,
        orphan: bool,
    ) {
        self.n.arrivals += 1;
        self.n.retry_arrivals += u64::from(retry);
        self.n.orphaned += u64::from(orphan);
        self.n.last_arrival = now;
        self.buckets.arrival(now, retry, req.attempt);
        self.replica_saw(now, r, ReplicaEvent::Arrival);
    }

    /// Whether replica `r` of this tier (`s`) refuses `req`, queues it or serves it now;
    /// `client` names the client process, asked only when a rate limiter is per client.
    #[inline(always)]
    pub(in crate::sim::path) fn admit(
        &mut self,
        s: &Server,
        now: Time,
        r: usize,
        req: Request,
        client: impl FnOnce() -> u32,
    ) -> Admission {
        if s.fail == FailMode::Always {
            self.n.rejected += 1;
            self.replica_saw(now, r, ReplicaEvent::Rejected);
            return Admission::Answer(Outcome::Unavailable, None);
        }
        if let Some(o) = outage_at(s, r, now) {
            if o.answer == OutageAnswer::Hang {
                // Held without work and never answered: only the caller's timeout ends the
                // attempt, and the request is gone from the path (like a silent loss).
                self.n.hung += 1;
                return Admission::Hung;
            }
            self.n.rejected += 1;
            self.replica_saw(now, r, ReplicaEvent::Rejected);
            return Admission::Answer(Outcome::Unavailable, o.retry_after);
        }
        if !self.limiters.is_empty() {
            let k = self.limiter_index(client());
            if let Err(wait) = self.limiters[k].try_take(now) {
                self.n.rate_limited += 1;
                let ra = match s.rate_limit.retry_after {
                    RetryAfter::None => None,
                    RetryAfter::Fixed(d) => Some(d),
                    RetryAfter::Derived => Some(whole_seconds(wait)),
                };
                return Admission::Answer(Outcome::Throttled, ra);
            }
        }
        let (queue_limit, concurrency_limit) = (self.queue_limit, self.concurrency_limit);
        let rs = &mut self.replicas[r];
        if rs.busy + rs.waiting.len() as u64 >= concurrency_limit {
            return self.shed(s, now, r);
        }
        if rs.busy < rs.capacity && rs.waiting.is_empty() {
            if let Some(c) = &mut rs.codel {
                // Straight to a worker is a dequeue after no wait (every request goes through
                // the queue in folly's executors): it feeds the interval's minimum delay.
                c.should_drop(Duration::ZERO, now);
            }
            Admission::Serve
        } else if (rs.waiting.len() as u64) < queue_limit {
            if rs.waiting.is_empty() {
                rs.queued_since = now;
            }
            rs.waiting.push_back(req);
            self.queued += 1;
            self.set_levels(now);
            Admission::Queued
        } else {
            self.shed(s, now, r)
        }
    }

    /// Load shedding: a full queue or the concurrency limit refuses a request at once.
    fn shed(&mut self, s: &Server, now: Time, r: usize) -> Admission {
        self.n.rejected += 1;
        self.replica_saw(now, r, ReplicaEvent::Rejected);
        let (outcome, ra) = self.shed_answer(s, r);
        Admission::Answer(outcome, ra)
    }

    /// What a shed request is told: `shed_answer`, with `retry_after` on a 503.
    fn shed_answer(&mut self, s: &Server, r: usize) -> (Outcome, Option<Duration>) {
        if s.shed_answer == ShedAnswer::Overloaded {
            self.n.overloaded += 1;
            return (Outcome::Overloaded, None);
        }
        let ra = match s.retry_after {
            RetryAfter::None => None,
            RetryAfter::Fixed(d) => Some(d),
            RetryAfter::Derived => {
                // Time for the workers to drain the queue ahead of a retry, whole seconds.
                let rs = &self.replicas[r];
                let workers = rs.capacity.min(self.concurrency_limit).max(1) as f64;
                let ns = (rs.waiting.len() as f64 + 1.0) * s.service.mean_ns() / workers;
                Some(whole_seconds(Duration::from_nanos_f64(ns)))
            }
        };
        (Outcome::Unavailable, ra)
    }

    /// The next request for a free worker of replica `r` from its wait queue, if a worker is
    /// free and one waits; CoDel may drop it as it leaves.
    #[inline(always)]
    pub(in crate::sim::path) fn take_waiting(
        &mut self,
        s: &Server,
        now: Time,
        r: usize,
    ) -> Option<Taken> {
        let rs = &mut self.replicas[r];
        if rs.busy >= rs.capacity {
            return None;
        }
        let newest_first = match s.discipline {
            Discipline::Fifo => false,
            Discipline::Lifo => true,
            // "Not empty for the last interval": Fail at Scale's sign of a standing queue.
            Discipline::AdaptiveLifo => {
                !rs.waiting.is_empty() && now.since(rs.queued_since) >= s.shedding.interval
            }
        };
        let req = if newest_first {
            rs.waiting.pop_back()
        } else {
            rs.waiting.pop_front()
        }?;
        let codel_drops = rs
            .codel
            .as_mut()
            .is_some_and(|c| c.should_drop(now.since(req.arrived), now));
        self.queued -= 1;
        self.set_levels(now);
        if codel_drops {
            self.n.shed += 1;
            let (outcome, ra) = self.shed_answer(s, r);
            return Some(Taken::Shed(req, outcome, ra));
        }
        Some(Taken::Serve(req))
    }
}
