//! An attempt goes out: a cancelled call stops, the budget and the breaker may refuse it
//! locally, the `[limiter]` may hold it, then it is counted, timed and sent over the hop's
//! network (where it may be lost).

use super::{Call, Calls, Next, Settled};
use crate::model::{KeyMode, LossNotice};
use crate::policy::Class;
use crate::sim::draws::Round;
use crate::sim::path::callref::{CallRef, NO_KEY};
use crate::sim::path::connect::Link;
use crate::sim::path::hop::HopState;
use crate::sim::path::limit::Gate;
use crate::sim::path::tier::Request;
use crate::sim::path::{Cx, Event};
use crate::sim::trace::Step;

impl Calls {
    /// The call's next attempt (its first, a retry after backoff, or a hedged copy).
    pub(in crate::sim::path) fn send<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
    ) -> Next {
        let (h, client) = (self.get::<C>(c).hop(), self.client::<C>(c));
        let attempts = self.lp::<C>(c).attempts;
        if attempts > 0 && self.cancelled::<C>(hops, c) {
            let hs = &mut hops[h];
            if let Some(b) = hs.budget(client) {
                b.unsent(false, self.extra::<C>(c).retry_cost > 0);
            }
            hs.n.cancelled += 1;
            self.lp_mut::<C>(c).awaiting = false;
            return Next::Settle(Settled::Failure, Class::Timeout);
        }
        if !self.admit::<C>(cx, hops, c) {
            return self.rejected_locally::<C>(c);
        }
        if !hops[h].limiters.is_empty() {
            let epoch = self.lp::<C>(c).epoch;
            match hops[h].limiter_gate(cx, h, client, c, epoch) {
                Gate::Go => {}
                // Waiting for the client's rate limiter: `transmit` sends it with the token.
                Gate::Waits => return Next::Idle,
                Gate::Rejected => {
                    let hs = &mut hops[h];
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
                        let cost = self.extra::<C>(c).retry_cost;
                        b.unsent(true, attempts > 0 && cost > 0);
                    }
                    return self.rejected_locally::<C>(c);
                }
            }
        }
        self.transmit::<C>(cx, hops, c)
    }

    /// Before an attempt goes out: adaptive throttling and the circuit breaker may reject it in
    /// the caller (it is never sent); Finagle's budget takes a first try's deposit.
    fn admit<C: Call>(&mut self, cx: &Cx, hops: &mut [HopState], c: CallRef) -> bool {
        let now = cx.now;
        let call = self.get::<C>(c);
        let (h, client) = (call.hop(), self.client::<C>(c));
        let attempt = call.lp().attempts;
        let hs = &mut hops[h];
        let u = if hs.budget_draws {
            cx.draws.throttle(call.key(attempt)).uniform()
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
                b.unsent(true, attempt > 0 && self.extra::<C>(c).retry_cost > 0);
            }
            return false;
        }
        true
    }

    /// An attempt was rejected in the caller: the call fails at once (a local rejection is not
    /// retried), unless hedged copies are still out.
    fn rejected_locally<C: Call>(&mut self, c: CallRef) -> Next {
        self.lp_mut::<C>(c).awaiting = false;
        if self.extra::<C>(c).pending.is_empty() {
            Next::Settle(Settled::Failure, Class::Unavailable)
        } else {
            Next::Idle
        }
    }

    /// An admitted attempt goes out: counted, timed, and sent over the hop's network.
    pub(in crate::sim::path) fn transmit<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
    ) -> Next {
        let now = cx.now;
        let h = self.get::<C>(c).hop();
        let hs = &mut hops[h];
        if hs.timed {
            self.mark_sent::<C>(c, now);
        }
        if !C::INNER && self.gauged {
            self.pace.count(now);
        }
        let (hedge_delay, max_attempts) = (hs.retry.hedge_delay, hs.retry.max_attempts);
        let l = self.lp_mut::<C>(c);
        let attempt = l.attempts;
        l.attempts += 1;
        l.awaiting = true;
        let epoch = l.epoch;
        if !C::INNER && attempt > 0 && self.gauged {
            // A retry after no backoff, or a hedged copy.
            self.orbit.enter(c.slot());
        }
        if let Some(delay) = hedge_delay {
            self.extra_mut::<C>(c).pending.insert(attempt);
            if u32::from(attempt) + 1 < max_attempts {
                let delay = match &mut hops[h].learned_hedge {
                    Some(l) => l.value(now, attempt),
                    None => delay,
                };
                let next = attempt + 1;
                let ev = Event::Hedge {
                    call: c,
                    epoch,
                    attempt: next,
                };
                cx.queue.push(now + delay, ev);
            }
        }
        let call = self.get::<C>(c);
        let key = if C::INNER {
            self.inner[c.slot()].key
        } else {
            match cx.model.idempotency.key {
                KeyMode::None => NO_KEY,
                KeyMode::PerIntent => self.extra::<C>(c).key_gen,
                KeyMode::PerAttempt => attempt,
            }
        };
        let (retry_path, k) = (call.retry_path(attempt), call.key(attempt));
        let hs = &mut hops[h];
        hs.n.sent += 1;
        hs.n.retries += u64::from(attempt > 0);
        hs.n.retry_path_sent += u64::from(retry_path);
        let replica = match &mut hs.balancing {
            Some(b) => b.pick(self.client::<C>(c), c.slot(), attempt, now),
            None => 0,
        };
        if let Some(timeout) = hs.retry.timeout {
            let timeout = match &mut hs.learned_timeout {
                Some(l) => l.value(now, attempt),
                None => timeout,
            };
            let ev = Event::Timeout {
                call: c,
                epoch,
                attempt,
            };
            cx.queue.push(now + timeout, ev);
        }
        let connect = match self.link::<C>(cx, &mut hops[h], c, replica) {
            Some(Link::Open) | None => false,
            Some(Link::Connect) => true,
            // Refused, or waiting out the reconnect backoff: it fails at once, as a connection.
            Some(Link::Refused | Link::Backoff) => return Next::Sees(attempt, Class::Connection),
        };
        let net = &cx.spec.hops[h].network;
        let (loss, notice, lat) = (net.request_loss, net.loss_notice, net.request_latency());
        self.note::<C>(cx, c, attempt, Step::Send, None);
        if loss > 0.0 && cx.draws.request_loss(k).bernoulli(loss) {
            hops[h].n.requests_lost += 1;
            self.note::<C>(cx, c, attempt, Step::RequestLost, None);
            if notice == LossNotice::Error {
                return Next::Sees(attempt, Class::Connection);
            }
            return Next::Idle;
        }
        self.get_mut::<C>(c).hold();
        if lat.is_zero() {
            // A hop that takes no time is taken now, not through the queue: one event (and one
            // cache miss on the intent) less per attempt. It is the last thing `send` does.
            let mut req = Request::new(c, epoch, attempt, key, now);
            req.connect = connect;
            return Next::Arrive(req, replica);
        }
        // Under write contention the read and the write are two round trips, drawn apart.
        let round = if hops[h].contention {
            Round::Read
        } else {
            Round::Only
        };
        let at = now + lat.sample(&mut cx.draws.request_latency(k, round));
        let ev = Event::Arrive {
            call: c,
            epoch,
            attempt,
            key,
            replica,
            connect,
        };
        cx.queue.push(at, ev);
        Next::Idle
    }

    /// The connection the attempt of `c` finds to `replica`, on a hop to a tier with
    /// `server.connections` (`None` elsewhere).
    #[inline(always)]
    fn link<C: Call>(&self, cx: &Cx, hs: &mut HopState, c: CallRef, replica: u16) -> Option<Link> {
        let cn = hs.connections.as_deref_mut()?;
        let client = self.client::<C>(c);
        let link = cn.link(client, usize::from(replica), cx.now);
        if link == Link::Refused {
            cn.refused(client, cx.now, cx.draws);
        }
        Some(link)
    }
}
