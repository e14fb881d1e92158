//! An attempt goes out: a cancelled call stops, the budget and the breaker may refuse it
//! locally, the `[limiter]` may hold it, then it is counted, timed and sent over the hop's
//! network (where it may be lost).

use super::{Call, Settled};
use crate::base::time::Time;
use crate::model::{KeyMode, LossNotice};
use crate::policy::Class;
use crate::sim::draws::Round;
use crate::sim::path::callref::{CallRef, NO_KEY};
use crate::sim::path::limit::Gate;
use crate::sim::path::tier::Request;
use crate::sim::path::{Event, PathSim};
use crate::sim::trace::Step;

impl PathSim<'_> {
    /// The call's next attempt (its first, a retry after backoff, or a hedged copy).
    pub(in crate::sim::path) fn send<C: Call>(&mut self, now: Time, c: CallRef) {
        let (h, client) = (self.calls.get::<C>(c).hop(), self.calls.client::<C>(c));
        let attempts = self.calls.lp::<C>(c).attempts;
        if attempts > 0 && self.calls.cancelled::<C>(&self.hops, c) {
            let hs = &mut self.hops[h];
            if let Some(b) = hs.budget(client) {
                b.unsent(false, self.calls.extra::<C>(c).retry_cost > 0);
            }
            hs.n.cancelled += 1;
            self.calls.lp_mut::<C>(c).awaiting = false;
            return self.settle::<C>(now, c, Settled::Failure, Class::Timeout);
        }
        if !self.admit::<C>(now, c) {
            return self.rejected_locally::<C>(now, c);
        }
        if !self.hops[h].limiters.is_empty() {
            let epoch = self.calls.lp::<C>(c).epoch;
            match self.limiter_gate(now, h, client, c, epoch) {
                Gate::Go => {}
                // Waiting for the client's rate limiter: `transmit` sends it with the token.
                Gate::Waits => return,
                Gate::Rejected => {
                    let hs = &mut self.hops[h];
                    // What the breaker permitted sends nothing: no outcome, and in half-open
                    // its permit is given back (else it would be held for good).
                    let r = &hs.retry;
                    let permitted = if r.breaker_around {
                        attempts == 0
                    } else {
                        attempts > 0 || !r.breaker_retries_only
                    };
                    if permitted && let Some(br) = hs.breaker(client) {
                        br.release();
                    }
                    hs.n.limiter_rejected += 1;
                    hs.n.first_tries_refused += u64::from(attempts == 0);
                    if let Some(b) = hs.budget(client) {
                        let cost = self.calls.extra::<C>(c).retry_cost;
                        b.unsent(true, attempts > 0 && cost > 0);
                    }
                    return self.rejected_locally::<C>(now, c);
                }
            }
        }
        self.transmit::<C>(now, c);
    }

    /// Before an attempt goes out: adaptive throttling and the circuit breaker may reject it in
    /// the caller (it is never sent); Finagle's budget takes a first try's deposit.
    fn admit<C: Call>(&mut self, now: Time, c: CallRef) -> bool {
        let call = self.calls.get::<C>(c);
        let (h, client) = (call.hop(), self.calls.client::<C>(c));
        let attempt = call.lp().attempts;
        let hs = &mut self.hops[h];
        let u = if hs.budget_draws {
            self.draws.throttle(call.key(attempt)).uniform()
        } else {
            0.0
        };
        if let Some(b) = hs.budget(client)
            && !b.on_send(now, attempt == 0, u)
        {
            hs.n.throttled_locally += 1;
            hs.n.first_tries_refused += u64::from(attempt == 0);
            return false;
        }
        // Per attempt the breaker is asked before every attempt (with `retries_only`, before
        // every retry); around the retries, before the call's first try only: its retries and
        // hedged copies are inside the call the breaker permitted.
        let bypass = if hs.retry.breaker_around {
            attempt > 0
        } else {
            attempt == 0 && hs.retry.breaker_retries_only
        };
        if let Some(br) = hs.breaker(client).filter(|_| !bypass)
            && !br.try_acquire(now)
        {
            hs.n.breaker_rejected += 1;
            hs.n.first_tries_refused += u64::from(attempt == 0);
            if let Some(b) = hs.budget(client) {
                b.unsent(true, attempt > 0 && self.calls.extra::<C>(c).retry_cost > 0);
            }
            return false;
        }
        true
    }

    /// An attempt was rejected in the caller: the call fails at once (a local rejection is not
    /// retried), unless hedged copies are still out.
    fn rejected_locally<C: Call>(&mut self, now: Time, c: CallRef) {
        self.calls.lp_mut::<C>(c).awaiting = false;
        if self.calls.extra::<C>(c).pending.is_empty() {
            self.settle::<C>(now, c, Settled::Failure, Class::Unavailable);
        }
    }

    /// An admitted attempt goes out: counted, timed, and sent over the hop's network.
    pub(in crate::sim::path) fn transmit<C: Call>(&mut self, now: Time, c: CallRef) {
        let h = self.calls.get::<C>(c).hop();
        let hs = &mut self.hops[h];
        if hs.timed {
            self.calls.mark_sent::<C>(c, now);
        }
        let (hedge_delay, max_attempts) = (hs.retry.hedge_delay, hs.retry.max_attempts);
        let l = self.calls.lp_mut::<C>(c);
        let attempt = l.attempts;
        l.attempts += 1;
        l.awaiting = true;
        let epoch = l.epoch;
        if let Some(delay) = hedge_delay {
            self.calls.extra_mut::<C>(c).pending.insert(attempt);
            if u32::from(attempt) + 1 < max_attempts {
                let next = attempt + 1;
                let ev = Event::Hedge {
                    call: c,
                    epoch,
                    attempt: next,
                };
                self.queue.push(now + delay, ev);
            }
        }
        let call = self.calls.get::<C>(c);
        let key = if C::INNER {
            self.calls.inner[c.slot()].key
        } else {
            match self.model.idempotency.key {
                KeyMode::None => NO_KEY,
                KeyMode::PerIntent => self.calls.extra::<C>(c).key_gen,
                KeyMode::PerAttempt => attempt,
            }
        };
        let (retry_path, k) = (call.retry_path(attempt), call.key(attempt));
        let hs = &mut self.hops[h];
        hs.n.sent += 1;
        hs.n.retries += u64::from(attempt > 0);
        hs.n.retry_path_sent += u64::from(retry_path);
        let replica = match &mut hs.balancing {
            Some(b) => b.pick(self.calls.client::<C>(c), c.slot(), attempt, now),
            None => 0,
        };
        let hs = &mut self.hops[h];
        if let Some(timeout) = hs.retry.timeout {
            let ev = Event::Timeout {
                call: c,
                epoch,
                attempt,
            };
            self.queue.push(now + timeout, ev);
        }
        let net = &self.spec.hops[h].network;
        let (loss, notice, lat) = (net.request_loss, net.loss_notice, net.request_latency());
        self.note::<C>(now, c, attempt, Step::Send, None);
        if loss > 0.0 && self.draws.request_loss(k).bernoulli(loss) {
            self.hops[h].n.requests_lost += 1;
            self.note::<C>(now, c, attempt, Step::RequestLost, None);
            if notice == LossNotice::Error {
                self.call_sees::<C>(now, c, attempt, Class::Connection, None);
            }
            return;
        }
        self.calls.get_mut::<C>(c).hold();
        if lat.is_zero() {
            // A hop that takes no time is taken now, not through the queue: one event (and one
            // cache miss on the intent) less per attempt. It is the last thing `send` does.
            let req = Request::new(c, epoch, attempt, key, now);
            return self.arrive::<C>(now, req, usize::from(replica));
        }
        // Under write contention the read and the write are two round trips, drawn apart.
        let round = if self.hops[h].contention {
            Round::Read
        } else {
            Round::Only
        };
        let at = now + lat.sample(&mut self.draws.request_latency(k, round));
        let ev = Event::Arrive {
            call: c,
            epoch,
            attempt,
            key,
            replica,
        };
        self.queue.push(at, ev);
    }
}
