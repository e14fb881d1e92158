//! A retryable failure: the call gives up (attempts spent, cancelled, past its deadline, the
//! budget says no) or backs off and schedules its next `Send`. The backoff is the hop's
//! ([`crate::policy::backoff`]); a server's `Retry-After` may replace it ([`RetryAfterRules`]).
//!
//! [`RetryAfterRules`]: crate::sim::path::retry_after::RetryAfterRules

use super::{Call, NO_BACKOFF, Settled};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::sim::path::callref::{CallRef, NO_KEY};
use crate::sim::path::{Event, PathSim};
use crate::sim::trace::Step;

impl PathSim<'_> {
    /// The outstanding attempt failed with a retryable `class`: retry or give up.
    pub(super) fn attempt_failed<C: Call>(
        &mut self,
        now: Time,
        c: CallRef,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        let call = self.calls.get::<C>(c);
        let (h, client, start) = (call.hop(), self.calls.client::<C>(c), call.start());
        let attempts = call.lp().attempts;
        let rules = &self.hops[h].retry;
        let stateful = rules.carries_state;
        let prev = if stateful {
            self.calls.extra::<C>(c).prev_backoff
        } else {
            NO_BACKOFF
        };
        if u32::from(attempts) >= rules.max_attempts {
            return self.settle::<C>(now, c, Settled::Failure, class);
        }
        if self.calls.cancelled::<C>(&self.hops, c) {
            self.hops[h].n.cancelled += 1;
            return self.settle::<C>(now, c, Settled::Failure, class);
        }
        let retries_made = u32::from(attempts) - 1;
        let k = call.key(retries_made as u16);
        let backoff = if class == Class::Throttled {
            &rules.throttled
        } else {
            &rules.backoff
        };
        let draws = self.draws;
        let (delay, carry) = backoff.next_delay(retries_made, prev, None, || draws.backoff(k));
        let honoured = rules
            .retry_after
            .retry_delay(retry_after, delay, || draws.retry_after(k).next_u64());
        let delay = honoured.unwrap_or(delay);
        if let Some(deadline) = rules.deadline
            && now + delay >= start + deadline
        {
            return self.settle::<C>(now, c, Settled::Failure, class);
        }
        let restart = rules.restart_probability;
        let hs = &mut self.hops[h];
        if let Some(b) = hs.budget(client) {
            match b.try_retry(now, class) {
                Some(cost) => self.calls.extra_mut::<C>(c).retry_cost = cost,
                None => {
                    hs.n.budget_denied += 1;
                    return self.settle::<C>(now, c, Settled::Failure, class);
                }
            }
        }
        hs.n.retry_after_waits += u64::from(honoured.is_some());
        let restarted = restart > 0.0 && self.draws.restart(k).bernoulli(restart);
        let persist = self.model.idempotency.persist_key;
        if stateful {
            let x = self.calls.extra_mut::<C>(c);
            x.prev_backoff = carry.unwrap_or(delay.0.min(NO_BACKOFF - 1));
        }
        if restarted && !persist {
            let x = self.calls.extra_mut::<C>(c);
            x.key_gen = x.key_gen.wrapping_add(1) % NO_KEY;
        }
        let epoch = self.calls.lp::<C>(c).epoch;
        if self.trace.is_some() {
            self.note_slow::<C>(now, c, attempts, Step::Backoff, None, Some(delay));
        }
        self.queue.push(now + delay, Event::Send { call: c, epoch });
    }
}
