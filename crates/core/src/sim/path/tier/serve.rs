//! Service at a tier: a worker takes a request for a drawn service time, then the handler
//! fails, crashes or succeeds ([`Served`]); a worker lets its job go once the tier has answered.
//! What success means (the effect at the last tier, the call to the tier below elsewhere) is
//! decided by the engine, which knows the tiers around this one.

use super::{Request, TierState, failure_probability, slow_at};
use crate::base::time::{Duration, Time};
use crate::model::Server;
use crate::sim::draws::{AttemptKey, Draws};
use crate::sim::metrics::ReplicaEvent;
use crate::sim::path::{Cx, Event};

/// How a worker's own work on a request ended.
pub(in crate::sim::path) struct Served {
    pub(in crate::sim::path) req: Request,
    /// The replica that served it.
    pub(in crate::sim::path) replica: usize,
    /// The handler failed (500).
    pub(in crate::sim::path) failed: bool,
    /// The worker crashed (the connection breaks).
    pub(in crate::sim::path) crashed: bool,
    /// The request was refused as wrong (a non-retryable 4xx).
    pub(in crate::sim::path) client_error: bool,
}

impl TierState {
    /// A worker of replica `r` of tier `t` takes `req` (drawn from `k`): it is served for a
    /// drawn time, its `Done` scheduled.
    #[inline(always)]
    pub(in crate::sim::path) fn serve(
        &mut self,
        cx: &mut Cx,
        t: usize,
        r: usize,
        mut req: Request,
        k: AttemptKey,
    ) {
        let now = cx.now;
        let s = &cx.spec.tiers[t].server;
        // Every served request's wait counts (zero when it started on arrival); a request taken
        // from the queue by the last free worker leaves `busy == 0` and the queue empty, so a
        // condition on those would drop exactly the waits that end a busy period.
        let mut service = if s.service.is_zero() {
            Duration::ZERO
        } else {
            s.service.sample(&mut cx.draws.service(k))
        };
        if let Some(w) = slow_at(s, r, now) {
            // A latency brown-out: the same draw, `factor` times longer (common random numbers).
            service = service.saturating_mul_f64(w.factor);
        }
        self.n.waits += u128::from(now.since(req.arrived).0);
        self.n.served += 1;
        self.replica_saw(now, r, ReplicaEvent::Served);
        let rs = &self.replicas[r];
        if s.slowdown > 0.0 && rs.busy > 0 {
            // Latency rising with load: each other request in service adds `slowdown`.
            service = service.saturating_mul_f64(1.0 + s.slowdown * rs.busy as f64);
        }
        if req.connect
            && let Some(c) = &s.connections
        {
            // The connect comes first, on the same worker.
            let connect = c.connect.sample(&mut cx.draws.connect(k));
            self.n.connect_work += u128::from(connect.0);
            service = service + connect;
        }
        req.service = service;
        self.work(r, true);
        self.set_levels(now);
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
        if self.replicas.len() > 1 {
            if self.job_replica.len() <= job as usize {
                self.job_replica.resize(job as usize + 1, 0);
            }
            self.job_replica[job as usize] = r as u16;
        }
        cx.queue
            .push(now + service, Event::Done { tier: t as u8, job });
    }

    /// The worker of job `job` finished its own work (`alive`: somebody above still waits for
    /// it): the handler fails, crashes or succeeds, drawn from `k`. The worker stays busy.
    #[inline(always)]
    pub(in crate::sim::path) fn served(
        &mut self,
        s: &Server,
        draws: Draws,
        now: Time,
        job: u32,
        alive: bool,
        k: AttemptKey,
    ) -> Served {
        let req = self.in_service[job as usize];
        let r = self.replica_of(job);
        self.n.work += u128::from(req.service.0);
        if !alive {
            self.n.wasted += u128::from(req.service.0);
        }
        let failed = match failure_probability(s, r, now) {
            Some(p) => draws.failure(k).bernoulli(p),
            None => false,
        };
        if failed && self.replicas.len() > 1 {
            self.replicas[r].n.errors += 1;
        }
        let crashed =
            !failed && s.crash_probability > 0.0 && draws.crash(k).bernoulli(s.crash_probability);
        let client_error = !failed
            && !crashed
            && s.client_error > 0.0
            && draws.client_error(k).bernoulli(s.client_error);
        self.n.client_errors += u64::from(client_error);
        self.n.crashes += u64::from(crashed);
        Served {
            req,
            replica: r,
            failed,
            crashed,
            client_error,
        }
    }

    /// The worker of job `job` (of replica `r`) lets it go.
    #[inline]
    pub(in crate::sim::path) fn free_job(&mut self, now: Time, job: u32, r: usize) {
        self.free_jobs.push(job);
        self.work(r, false);
        self.set_levels(now);
    }

    /// The job `job` that waited for the call below is over: its request and replica.
    pub(in crate::sim::path) fn end_job(&mut self, now: Time, job: u32) -> (Request, usize) {
        let req = self.in_service[job as usize];
        let r = self.replica_of(job);
        self.free_job(now, job, r);
        (req, r)
    }

    /// Replica `r`'s workers at `now`, as the capacity drops of `s` say.
    pub(in crate::sim::path) fn set_capacity(&mut self, s: &Server, r: usize, now: Time) {
        self.replicas[r].capacity = TierState::capacity_at(s, r, now);
    }
}
