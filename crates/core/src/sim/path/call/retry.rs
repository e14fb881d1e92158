//! A retryable failure: the call gives up (attempts spent, cancelled, past its deadline, the
//! budget says no) or backs off and schedules its next `Send`. The backoff is the hop's
//! ([`crate::policy::backoff`]); a server's `Retry-After` may replace it ([`RetryAfterRules`]).
//!
//! [`RetryAfterRules`]: crate::sim::path::retry_after::RetryAfterRules

use super::{Call, Calls, NO_BACKOFF, Next, Settled};
use crate::base::time::Duration;
use crate::policy::Class;
use crate::sim::path::callref::{CallRef, NO_KEY};
use crate::sim::path::hop::HopState;
use crate::sim::path::{Cx, Event};
use crate::sim::trace::Step;

impl Calls {
    /// The outstanding attempt failed with a retryable `class`: retry or give up.
    #[inline(always)]
    pub(super) fn attempt_failed<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
        class: Class,
        retry_after: Option<Duration>,
    ) -> Next {
        let now = cx.now;
        let call = self.get::<C>(c);
        let (h, client, start) = (call.hop(), self.client::<C>(c), call.start());
        let attempts = call.lp().attempts;
        let rules = &hops[h].retry;
        let stateful = rules.carries_state;
        let prev = if stateful {
            self.extra::<C>(c).prev_backoff
        } else {
            NO_BACKOFF
        };
        if u32::from(attempts) >= rules.max_attempts {
            return Next::Settle(Settled::Failure, class);
        }
        if self.cancelled::<C>(hops, c) {
            hops[h].n.cancelled += 1;
            return Next::Settle(Settled::Failure, class);
        }
        let rules = &hops[h].retry;
        let retries_made = u32::from(attempts) - 1;
        let k = call.key(retries_made as u16);
        let backoff = if class == Class::Throttled {
            &rules.throttled
        } else {
            &rules.backoff
        };
        let draws = cx.draws;
        let (delay, carry) = backoff.next_delay(retries_made, prev, None, || draws.backoff(k));
        let honoured = rules
            .retry_after
            .retry_delay(retry_after, delay, || draws.retry_after(k).next_u64());
        let delay = honoured.unwrap_or(delay);
        if let Some(deadline) = rules.deadline
            && now + delay >= start + deadline
        {
            return Next::Settle(Settled::Failure, class);
        }
        let restart = rules.restart_probability;
        let hs = &mut hops[h];
        if let Some(b) = hs.budget(client) {
            match b.try_retry(now, class) {
                Some(cost) => self.extra_mut::<C>(c).retry_cost = cost,
                None => {
                    hs.n.budget_denied += 1;
                    return Next::Settle(Settled::Failure, class);
                }
            }
        }
        hs.n.retry_after_waits += u64::from(honoured.is_some());
        let restarted = restart > 0.0 && draws.restart(k).bernoulli(restart);
        let persist = cx.model.idempotency.persist_key;
        if stateful {
            let x = self.extra_mut::<C>(c);
            x.prev_backoff = carry.unwrap_or(delay.0.min(NO_BACKOFF - 1));
        }
        if restarted && !persist {
            let x = self.extra_mut::<C>(c);
            x.key_gen = x.key_gen.wrapping_add(1) % NO_KEY;
        }
        let epoch = self.lp::<C>(c).epoch;
        if cx.trace.is_some() {
            self.note_slow::<C>(cx, c, attempts, Step::Backoff, None, Some(delay));
        }
        if !C::INNER && self.gauged {
            self.orbit.enter(c.slot());
        }
        cx.queue.push(now + delay, Event::Send { call: c, epoch });
        Next::Idle
    }
}
