//! An answer or a timeout reaches the caller: the budget, the breaker and the limiter learn how
//! the attempt ended, then the call succeeds, retries (or hedges) or gives up.

use super::{Call, Settled};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::sim::path::PathSim;
use crate::sim::path::callref::CallRef;
use crate::sim::path::tier::Outcome;
use crate::sim::trace::Step;

impl PathSim<'_> {
    /// An answer reaches `c`.
    #[inline(always)]
    pub(in crate::sim::path) fn reply<C: Call>(
        &mut self,
        now: Time,
        c: CallRef,
        epoch: u32,
        attempt: u16,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        debug_assert_eq!(
            self.calls.lp::<C>(c).epoch,
            epoch,
            "a slot was reused while in flight"
        );
        self.calls.get_mut::<C>(c).unhold();
        if self.calls.outstanding::<C>(&self.hops, c, attempt) {
            self.call_sees::<C>(now, c, attempt, outcome.class(), retry_after);
        } else {
            let h = self.calls.get::<C>(c).hop();
            self.hops[h].n.late_responses += 1;
            self.note::<C>(now, c, attempt, Step::LateReply, Some(outcome.class()));
        }
        self.maybe_free::<C>(c);
    }

    /// The per-attempt timeout of attempt `attempt` fired (its epoch is current).
    pub(in crate::sim::path) fn timeout<C: Call>(&mut self, now: Time, c: CallRef, attempt: u16) {
        if self.calls.outstanding::<C>(&self.hops, c, attempt) {
            let h = self.calls.get::<C>(c).hop();
            self.hops[h].n.timeouts += 1;
            self.call_sees::<C>(now, c, attempt, Class::Timeout, None);
        }
    }

    /// The caller learns how attempt `attempt` ended: budgets and breakers record it, then the
    /// call succeeds, retries (or hedges) or gives up.
    pub(in crate::sim::path) fn call_sees<C: Call>(
        &mut self,
        now: Time,
        c: CallRef,
        attempt: u16,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        self.note::<C>(now, c, attempt, Step::Result, Some(class));
        let h = self.calls.get::<C>(c).hop();
        let client = self.calls.client::<C>(c);
        let hs = &mut self.hops[h];
        if let Some(b) = &mut hs.balancing {
            b.ended(client, c.slot(), attempt, class, now);
        }
        let retryable = hs.retry.retry_on.contains(class);
        if let Some(b) = hs.budget(client) {
            b.on_outcome(now, class, retryable, self.calls.extra::<C>(c).retry_cost);
        }
        if !hs.breakers.is_empty() || !hs.limiters.is_empty() {
            let took = now.since(self.calls.sent_at::<C>(c));
            // Around the retries the breaker learns the call's outcome when it settles.
            let around = hs.retry.breaker_around;
            if let Some(b) = hs.breaker(client).filter(|_| !around) {
                b.on_call(now, class.is_server_failure(), took);
            }
            if !hs.limiters.is_empty() {
                self.limiter_sees(now, h, client, class, took);
            }
        }
        if self.hops[h].retry.hedging() {
            return self.hedge_sees::<C>(now, c, attempt, class, retryable, retry_after);
        }
        self.calls.lp_mut::<C>(c).awaiting = false;
        if class == Class::Success {
            self.settle::<C>(now, c, Settled::Success, class);
        } else if retryable {
            self.attempt_failed::<C>(now, c, class, retry_after);
        } else {
            self.settle::<C>(now, c, Settled::Failure, class);
        }
    }
}
