//! Where one owner hands over to another: a call's attempt reaches its tier, the tier serves it
//! (the dedupe store first at the last tier, the call to the tier below elsewhere) and answers
//! over the hop's network, and the caller learns the answer. Each owner decides within its own
//! state ([`Calls`], [`HopState`], [`TierState`], [`Store`]); these functions only carry what
//! one decided to the next, in the order the path takes it.
//!
//! [`Calls`]: super::call::Calls
//! [`HopState`]: super::hop::HopState
//! [`TierState`]: super::tier::TierState
//! [`Store`]: super::store::Store

use super::call::{Call, Inner, Next, Seen, Top, by_kind};
use super::callref::{CallRef, NO_KEY};
use super::store::{Lookup, Store};
use super::tier::{Admission, Outcome, Request, Taken};
use super::{Event, PathSim, from_retry_after_ms, to_retry_after_ms};
use crate::base::time::Duration;
use crate::model::{KeyMode, StoreMode};
use crate::policy::Class;
use crate::sim::draws::Round;
use crate::sim::trace::Step;

impl PathSim<'_> {
    /// Intent `id` starts, for client process `client` (`worker` in a closed workload): its top
    /// call sends attempt 0.
    pub(super) fn start_intent(&mut self, id: u64, client: u32, worker: u32) {
        let c = self
            .calls
            .start_top(&mut self.cx, &mut self.hops, id, client, worker);
        if let Some(k) = self.keyed.as_mut() {
            k.start(self.cx.model.workload.replay.arrivals[id as usize].intent);
        }
        self.c.intents += 1;
        self.send::<Top>(c);
    }

    /// The call's next attempt (its first, a retry after backoff).
    #[inline(always)]
    pub(super) fn send<C: Call>(&mut self, c: CallRef) {
        let next = self.calls.send::<C>(&mut self.cx, &mut self.hops, c);
        self.follow::<C>(c, next);
    }

    /// Hedging: the next copy, if the call still wants one.
    pub(super) fn hedge<C: Call>(&mut self, c: CallRef) {
        let next = self.calls.hedge::<C>(&mut self.cx, &mut self.hops, c);
        self.follow::<C>(c, next);
    }

    /// Carries out what a handler of call `c` left to another owner.
    #[inline(always)]
    fn follow<C: Call>(&mut self, c: CallRef, next: Next) {
        match next {
            Next::Idle => {}
            Next::Settle(how, class) => self.settle::<C>(c, how, class),
            Next::Sees(attempt, class) => self.call_sees::<C>(c, attempt, class, None),
            Next::Arrive(req, replica) => self.arrive::<C>(req, usize::from(replica)),
        }
    }

    /// An answer reaches `c`; nothing of it is in flight any more.
    #[inline(always)]
    pub(super) fn reply<C: Call>(
        &mut self,
        c: CallRef,
        epoch: u32,
        attempt: u16,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        let class = outcome.class();
        let (cx, hops) = (&mut self.cx, &mut self.hops);
        if self.calls.answered::<C>(cx, hops, c, epoch, attempt, class) {
            self.connection_ended::<C>(c, class);
            self.call_sees::<C>(c, attempt, class, retry_after);
        }
        self.maybe_free::<C>(c);
    }

    /// The per-attempt timeout of attempt `attempt` fired (its epoch is current).
    pub(super) fn timeout<C: Call>(&mut self, c: CallRef, attempt: u16) {
        if self.calls.timed_out::<C>(&mut self.hops, c, attempt) {
            self.connection_ended::<C>(c, Class::Timeout);
            self.call_sees::<C>(c, attempt, Class::Timeout, None);
        }
    }

    /// An attempt of `c` ended as `class`: on a hop with `server.connections` its client's
    /// connections prove themselves or are dropped.
    #[inline(always)]
    fn connection_ended<C: Call>(&mut self, c: CallRef, class: Class) {
        let h = self.calls.get::<C>(c).hop();
        if let Some(cn) = self.hops[h].connections.as_deref_mut() {
            let client = self.calls.client::<C>(c);
            cn.ended(client, class, self.cx.now, self.cx.draws);
        }
    }

    /// The caller learns how attempt `attempt` ended: its policies record it (a limiter's
    /// waiting sends are re-timed first), then the call succeeds, retries (or hedges) or gives
    /// up.
    pub(super) fn call_sees<C: Call>(
        &mut self,
        c: CallRef,
        attempt: u16,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        let learnt = self
            .calls
            .learn::<C>(&mut self.cx, &mut self.hops, c, attempt, class);
        if let Some(k) = learnt.drain {
            self.limiter_drain(self.calls.get::<C>(c).hop(), k);
        }
        let seen = Seen {
            attempt,
            class,
            retry_after,
        };
        let next = self
            .calls
            .decide::<C>(&mut self.cx, &mut self.hops, c, seen, learnt.retryable);
        self.follow::<C>(c, next);
    }

    /// Sends the attempts waiting for limiter `k` of hop `h` that have a token now.
    pub(super) fn limiter_drain(&mut self, h: usize, k: usize) {
        while let Some((c, epoch)) = self.hops[h].limiter_next(&mut self.cx, h, k) {
            if self.calls.loop_of(c).epoch == epoch {
                by_kind!(c, C => {
                    let next = self.calls.transmit::<C>(&mut self.cx, &mut self.hops, c);
                    self.follow::<C>(c, next);
                });
            }
        }
    }

    /// A request reaches replica `r` of the tier its call sends to.
    #[inline(always)]
    pub(super) fn arrive<C: Call>(&mut self, req: Request, r: usize) {
        let (call, attempt) = (req.call, req.attempt);
        self.calls
            .note::<C>(&mut self.cx, call, attempt, Step::Arrive, None);
        let t = self.calls.get::<C>(call).hop();
        if self.hops[t].contention {
            let k = self.calls.get::<C>(call).key(attempt);
            if let Some(write) = self.store.read(&mut self.cx, req, r, k) {
                self.write_arrive(write, r);
            }
            return;
        }
        self.admit_request::<C>(t, r, req);
    }

    /// Write contention: the write that follows a read reaches the last tier, which admits and
    /// serves it like any request.
    pub(super) fn write_arrive(&mut self, req: Request, r: usize) {
        let bottom = self.cx.bottom;
        by_kind!(req.call, C => self.admit_request::<C>(bottom, r, req));
    }

    /// Replica `r` of tier `t` admits `req`, queues it or answers it at once.
    fn admit_request<C: Call>(&mut self, t: usize, r: usize, req: Request) {
        let now = self.cx.now;
        let (calls, hops) = (&self.calls, &self.hops);
        let retry = calls.get::<C>(req.call).retry_path(req.attempt);
        let orphan = !calls.chain_alive::<C>(hops, req.call, req.attempt);
        let s = &self.cx.spec.tiers[t].server;
        let ts = &mut self.tiers[t];
        ts.arrival(now, r, &req, retry, orphan);
        match ts.admit(s, now, r, req, || calls.client::<C>(req.call)) {
            Admission::Answer(outcome, ra) => self.respond::<C>(t, req, outcome, ra),
            Admission::Hung => {
                let (call, attempt) = (req.call, req.attempt);
                self.calls
                    .note::<C>(&mut self.cx, call, attempt, Step::Dropped, None);
                self.release::<C>(call);
            }
            Admission::Serve => self.begin::<C>(t, r, req),
            Admission::Queued => {}
        }
    }

    /// Fills replica `r`'s free workers from its wait queue.
    pub(super) fn dispatch(&mut self, t: usize, r: usize) {
        loop {
            let s = &self.cx.spec.tiers[t].server;
            match self.tiers[t].take_waiting(s, self.cx.now, r) {
                None => return,
                Some(Taken::Serve(req)) => by_kind!(req.call, C => self.begin::<C>(t, r, req)),
                Some(Taken::Shed(req, outcome, ra)) => {
                    by_kind!(req.call, C => self.respond::<C>(t, req, outcome, ra));
                }
            }
        }
    }

    /// The handler starts: deadline and cancellation checks, the dedupe store, then a worker.
    fn begin<C: Call>(&mut self, t: usize, r: usize, req: Request) {
        let s = &self.cx.spec.tiers[t].server;
        let drop = s.drop_expired || self.hops[t].retry.cancel;
        // (The first is the one-tier form of the second.)
        if (drop
            && !self
                .calls
                .chain_alive::<C>(&self.hops, req.call, req.attempt))
            || (self.hops[t].leaves && self.leaf_unwanted::<C>(t, req))
        {
            self.tiers[t].n.dropped_expired += 1;
            let (call, attempt) = (req.call, req.attempt);
            self.calls
                .note::<C>(&mut self.cx, call, attempt, Step::Dropped, None);
            return self.release::<C>(call);
        }
        if t == self.cx.bottom
            && req.key != NO_KEY
            && self.store_enabled()
            && !self.store_admits::<C>(t, req)
        {
            return;
        }
        let k = self.calls.get::<C>(req.call).key(req.attempt);
        self.calls
            .note::<C>(&mut self.cx, req.call, req.attempt, Step::Serve, None);
        self.tiers[t].serve(&mut self.cx, t, r, req, k);
    }

    /// A worker of tier `t` finished its own work on `in_service[job]`.
    pub(super) fn done(&mut self, t: usize, job: u32) {
        let call = self.tiers[t].in_service[job as usize].call;
        by_kind!(call, C => self.done_job::<C>(t, job));
    }

    /// A worker finished its own work on a request: it fails, crashes or succeeds; success at
    /// the last tier is the effect, anywhere else the call to the next tier.
    fn done_job<C: Call>(&mut self, t: usize, job: u32) {
        let now = self.cx.now;
        let req = self.tiers[t].in_service[job as usize];
        let alive = self
            .calls
            .chain_alive::<C>(&self.hops, req.call, req.attempt);
        let k = self.calls.get::<C>(req.call).key(req.attempt);
        let s = &self.cx.spec.tiers[t].server;
        let sv = self.tiers[t].served(s, self.cx.draws, now, job, alive, k);
        if t < self.cx.bottom {
            let outcome = if sv.failed {
                Outcome::Error
            } else if sv.client_error {
                Outcome::ClientError
            } else if sv.crashed {
                Outcome::ConnError
            } else if let Some(f) = self.tiers[t].fanout {
                return self.fan_out::<C>(t, job, req, f);
            } else {
                // The worker stays busy while the client inside this tier calls the next one.
                let c =
                    self.calls
                        .start_inner::<C>(&self.cx, &mut self.hops, t + 1, job, req, None);
                return self.send::<Inner>(c);
            };
            return self.job_answers(t, job, outcome);
        }
        let e = self.store.effect(self.cx.model.idempotency.commit, s, &sv);
        self.c.conflicts += u64::from(e.outcome == Outcome::Conflict);
        if e.applied {
            let top = self.calls.top_of::<C>(req.call);
            self.calls.count_applied(top);
            self.c.effects += 1;
            self.calls
                .note::<C>(&mut self.cx, req.call, req.attempt, Step::Applied, None);
        }
        let r = sv.replica;
        self.tiers[t].free_job(now, job, r);
        let keyed = req.key != NO_KEY && self.store_enabled();
        let mut waiters = if keyed {
            let k = self.store_key::<C>(&req);
            self.store.commit(now, k, e.key_recorded)
        } else {
            Vec::new()
        };
        self.respond::<C>(t, req, e.outcome, None);
        // Duplicates that waited on this key share its committed result (or its failure).
        let shared = if e.key_recorded {
            Outcome::Ok
        } else {
            e.outcome
        };
        for w in waiters.drain(..) {
            self.c.replayed += u64::from(e.key_recorded);
            by_kind!(w.call, C => self.respond::<C>(t, w, shared, None));
        }
        self.store.recycle(waiters);
        self.dispatch(t, r);
    }

    /// A job of tier `t` that waited for the call below answers with that call's outcome.
    pub(super) fn job_answers(&mut self, t: usize, job: u32, outcome: Outcome) {
        let (req, r) = self.tiers[t].end_job(self.cx.now, job);
        by_kind!(req.call, C => self.respond::<C>(t, req, outcome, None));
        self.dispatch(t, r);
    }

    /// Tier `t` answers `req`; the reply may be lost on the way back.
    fn respond<C: Call>(
        &mut self,
        t: usize,
        req: Request,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        let (call, attempt) = (req.call, req.attempt);
        let class = Some(outcome.class());
        self.calls
            .note::<C>(&mut self.cx, call, attempt, Step::Respond, class);
        let cx = &mut self.cx;
        let net = &cx.spec.hops[t].network;
        let (loss, lat) = (net.response_loss, net.response_latency());
        let k = self.calls.get::<C>(call).key(attempt);
        if loss > 0.0 && cx.draws.response_loss(k).bernoulli(loss) {
            self.hops[t].n.responses_lost += 1;
            self.calls
                .note::<C>(cx, call, attempt, Step::ResponseLost, None);
            return self.release::<C>(call);
        }
        let retry_after_ms = to_retry_after_ms(retry_after);
        if lat.is_zero() {
            // As in `send`: taken now, and the last thing done here.
            let ra = from_retry_after_ms(retry_after_ms);
            return self.reply::<C>(call, req.epoch, attempt, outcome, ra);
        }
        let round = if self.hops[t].contention {
            Round::Write
        } else {
            Round::Only
        };
        let at = cx.now + lat.sample(&mut cx.draws.response_latency(k, round));
        let ev = Event::Reply {
            call,
            epoch: req.epoch,
            attempt,
            outcome,
            retry_after_ms,
        };
        cx.queue.push(at, ev);
    }

    #[inline]
    fn store_enabled(&self) -> bool {
        self.cx.model.idempotency.store != StoreMode::None
    }

    /// The store's key of `req`: its intent's, or with a trace's key column and per-intent keys
    /// the trace key's ([`super::keyed`]), shared by its rows.
    #[inline]
    fn store_key<C: Call>(&self, req: &Request) -> u64 {
        let id = self.calls.get::<C>(req.call).id();
        let model = self.cx.model;
        let owner = match &self.keyed {
            Some(_) if model.idempotency.key == KeyMode::PerIntent => {
                u64::from(model.workload.replay.arrivals[id as usize].intent)
            }
            _ => id,
        };
        Store::key(owner, req.key)
    }

    /// The store's answer to `req` at tier `t` before it is served; whether it goes on to a
    /// worker.
    fn store_admits<C: Call>(&mut self, t: usize, req: Request) -> bool {
        let k = self.store_key::<C>(&req);
        let idem = &self.cx.model.idempotency;
        match self.store.lookup(self.cx.now, k, req, idem) {
            Lookup::Serve => true,
            Lookup::Parked => false,
            Lookup::Replay => {
                self.c.replayed += 1;
                self.respond::<C>(t, req, Outcome::Ok, None);
                false
            }
            Lookup::Conflict => {
                self.c.conflicts += 1;
                self.respond::<C>(t, req, Outcome::Conflict, None);
                false
            }
        }
    }
}
