//! Service at a tier: a worker begins (the dedupe store first at the last tier), the handler
//! fails, crashes or succeeds; success at the last tier is the effect, anywhere else the call to
//! the tier below while the worker waits; then the tier answers over the hop's network.

use super::{Outcome, Request, failure_probability, slow_at};
use crate::base::time::{Duration, Time};
use crate::model::{CommitMode, CrashPoint};
use crate::sim::draws::Round;
use crate::sim::metrics::ReplicaEvent;
use crate::sim::path::call::{Call, by_kind};
use crate::sim::path::callref::NO_KEY;
use crate::sim::path::{Event, PathSim, from_retry_after_ms, to_retry_after_ms};
use crate::sim::trace::Step;

impl PathSim<'_> {
    /// A worker of tier `t` finished its own work on `in_service[job]`.
    pub(in crate::sim::path) fn done(&mut self, now: Time, t: usize, job: u32) {
        let call = self.tiers[t].in_service[job as usize].call;
        by_kind!(call, C => self.done_job::<C>(now, t, job));
    }

    /// The handler starts: deadline and cancellation checks, the dedupe store, then a worker.
    pub(in crate::sim::path) fn begin<C: Call>(
        &mut self,
        now: Time,
        t: usize,
        r: usize,
        mut req: Request,
    ) {
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
        if let Some(w) = slow_at(s, r, now) {
            // A latency brown-out: the same draw, `factor` times longer (common random numbers).
            service = service.saturating_mul_f64(w.factor);
        }
        let ts = &mut self.tiers[t];
        ts.n.waits += u128::from(now.since(req.arrived).0);
        ts.n.served += 1;
        ts.replica_saw(now, r, ReplicaEvent::Served);
        let rs = &ts.replicas[r];
        if s.slowdown > 0.0 && rs.busy > 0 {
            // Latency rising with load: each other request in service adds `slowdown`.
            service = service.saturating_mul_f64(1.0 + s.slowdown * rs.busy as f64);
        }
        req.service = service;
        self.note::<C>(now, req.call, req.attempt, Step::Serve, None);
        let ts = &mut self.tiers[t];
        ts.work(r, true);
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
        if ts.replicas.len() > 1 {
            if ts.job_replica.len() <= job as usize {
                ts.job_replica.resize(job as usize + 1, 0);
            }
            ts.job_replica[job as usize] = r as u16;
        }
        self.queue
            .push(now + service, Event::Done { tier: t as u8, job });
    }

    /// A worker finished its own work on a request: it fails, crashes or succeeds; success at
    /// the last tier is the effect, anywhere else the call to the next tier.
    pub(in crate::sim::path) fn done_job<C: Call>(&mut self, now: Time, t: usize, job: u32) {
        let req = self.tiers[t].in_service[job as usize];
        let r = self.tiers[t].replica_of(job);
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
        let failed = match failure_probability(s, r, now) {
            Some(p) => self.draws.failure(k).bernoulli(p),
            None => false,
        };
        if failed && self.tiers[t].replicas.len() > 1 {
            self.tiers[t].replicas[r].n.errors += 1;
        }
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
            self.calls.count_applied(top);
            self.c.effects += 1;
            self.note::<C>(now, req.call, req.attempt, Step::Applied, None);
        }
        let ts = &mut self.tiers[t];
        ts.free_jobs.push(job);
        ts.work(r, false);
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
        self.dispatch(now, t, r);
    }

    /// A job of tier `t` that waited for the call below answers with that call's outcome.
    pub(in crate::sim::path) fn job_answers(
        &mut self,
        now: Time,
        t: usize,
        job: u32,
        outcome: Outcome,
    ) {
        let ts = &mut self.tiers[t];
        let req = ts.in_service[job as usize];
        let r = ts.replica_of(job);
        ts.free_jobs.push(job);
        ts.work(r, false);
        ts.set_levels(now);
        by_kind!(req.call, C => self.respond::<C>(now, t, req, outcome, None));
        self.dispatch(now, t, r);
    }

    /// Tier `t` answers `req`; the reply may be lost on the way back.
    pub(in crate::sim::path) fn respond<C: Call>(
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
            let ra = from_retry_after_ms(retry_after_ms);
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
