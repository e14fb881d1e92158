//! An answer or a timeout reaches the caller: the budget, the breaker and the limiter learn how
//! the attempt ended ([`Calls::learn`]), then the call succeeds, retries (or hedges) or gives up
//! ([`Calls::decide`]).

use super::{Call, Calls, Next, Seen, Settled};
use crate::base::time::Time;
use crate::policy::Class;
use crate::sim::path::Cx;
use crate::sim::path::callref::CallRef;
use crate::sim::path::hop::HopState;
use crate::sim::trace::Step;

/// What the caller's policies made of an outcome.
pub(in crate::sim::path) struct Learnt {
    /// The hop retries this class.
    pub(in crate::sim::path) retryable: bool,
    /// The limiter instance whose waiting sends are to be re-timed, if any.
    pub(in crate::sim::path) drain: Option<usize>,
}

impl Calls {
    /// An answer to attempt `attempt` reaches `c` (nothing of it is in flight any more): does
    /// its caller still wait for it? A late one is only counted.
    #[inline(always)]
    pub(in crate::sim::path) fn answered<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
        epoch: u32,
        attempt: u16,
        class: Class,
    ) -> bool {
        debug_assert_eq!(
            self.lp::<C>(c).epoch,
            epoch,
            "a slot was reused while in flight"
        );
        self.get_mut::<C>(c).unhold();
        if hops[self.get::<C>(c).hop()].timed {
            self.learn_latency::<C>(cx.now, hops, c, attempt);
        }
        if self.outstanding::<C>(hops, c, attempt) {
            return true;
        }
        let h = self.get::<C>(c).hop();
        hops[h].n.late_responses += 1;
        self.note::<C>(cx, c, attempt, Step::LateReply, Some(class));
        false
    }

    /// The hop's learned timeout and hedging delay count the latency of the answer to attempt
    /// `attempt`, when its send time is known (`sim::path::learn`).
    fn learn_latency<C: Call>(
        &mut self,
        now: Time,
        hops: &mut [HopState],
        c: CallRef,
        attempt: u16,
    ) {
        let call = self.get::<C>(c);
        let (h, start, hedging) = (call.hop(), call.start(), hops[call.hop()].retry.hedging());
        let sent = if call.lp().attempts == attempt + 1 {
            self.sent_at::<C>(c)
        } else if hedging && attempt == 0 {
            start
        } else {
            return;
        };
        let hs = &mut hops[h];
        for l in [&mut hs.learned_timeout, &mut hs.learned_hedge]
            .into_iter()
            .flatten()
        {
            l.record(now, now.since(sent));
        }
    }

    /// The per-attempt timeout of attempt `attempt` fired (its epoch is current): does the
    /// caller still wait for it?
    #[inline(always)]
    pub(in crate::sim::path) fn timed_out<C: Call>(
        &self,
        hops: &mut [HopState],
        c: CallRef,
        attempt: u16,
    ) -> bool {
        let waits = self.outstanding::<C>(hops, c, attempt);
        if waits {
            hops[self.get::<C>(c).hop()].n.timeouts += 1;
        }
        waits
    }

    /// The caller's policies learn how attempt `attempt` ended: the balancer, the budget, the
    /// breaker and the limiter.
    #[inline(always)]
    pub(in crate::sim::path) fn learn<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
        attempt: u16,
        class: Class,
    ) -> Learnt {
        let now = cx.now;
        self.note::<C>(cx, c, attempt, Step::Result, Some(class));
        let h = self.get::<C>(c).hop();
        let client = self.client::<C>(c);
        let hs = &mut hops[h];
        if let Some(b) = &mut hs.balancing {
            b.ended(client, c.slot(), attempt, class, now);
        }
        let retryable = hs.retry.retry_on.contains(class);
        if let Some(b) = hs.budget(client) {
            b.on_outcome(now, class, retryable, self.extra::<C>(c).retry_cost);
        }
        let mut drain = None;
        if !hs.breakers.is_empty() || !hs.limiters.is_empty() {
            let took = now.since(self.sent_at::<C>(c));
            // Around the retries the breaker learns the call's outcome when it settles.
            let around = hs.retry.breaker_around;
            if let Some(b) = hs.breaker(client).filter(|_| !around) {
                b.on_call(now, class.is_server_failure(), took);
            }
            if !hs.limiters.is_empty() {
                drain = hs.limiter_sees(now, client, class, took);
            }
        }
        Learnt { retryable, drain }
    }

    /// After its policies learnt the outcome `seen`: the call succeeds, retries (or hedges) or
    /// gives up.
    #[inline(always)]
    pub(in crate::sim::path) fn decide<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
        seen: Seen,
        retryable: bool,
    ) -> Next {
        let h = self.get::<C>(c).hop();
        if hops[h].retry.hedging() {
            return self.hedge_sees::<C>(cx, hops, c, seen, retryable);
        }
        self.lp_mut::<C>(c).awaiting = false;
        let class = seen.class;
        if class == Class::Success {
            Next::Settle(Settled::Success, class)
        } else if retryable {
            self.attempt_failed::<C>(cx, hops, c, class, seen.retry_after)
        } else {
            Next::Settle(Settled::Failure, class)
        }
    }
}
