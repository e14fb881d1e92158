//! Hedging: copies of one request sent `hedge.delay` apart, the first answer wins.
//!
//! A success or a fatal answer commits the call and cancels the other copies (the server may
//! still run them); a non-fatal one sends the next copy now. Server pushback (gRFC A6,
//! "Pushback" and its summary's cases 4 and 5): a Retry-After the client honours holds the next
//! copy until it has passed (later copies follow at `hedgingDelay` from there); "overloaded;
//! don't retry" sends no more copies but lets those already out answer.

use super::{Call, Extra, HEDGE_STOPPED, NO_BACKOFF, Settled};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::sim::path::callref::CallRef;
use crate::sim::path::{Event, PathSim};

impl PathSim<'_> {
    /// Hedging: one copy answered.
    pub(super) fn hedge_sees<C: Call>(
        &mut self,
        now: Time,
        c: CallRef,
        attempt: u16,
        class: Class,
        retryable: bool,
        retry_after: Option<Duration>,
    ) {
        let h = self.calls.get::<C>(c).hop();
        let client = self.calls.client::<C>(c);
        let hs = &mut self.hops[h];
        let max_attempts = hs.retry.max_attempts;
        let pushback = hs.retry.retry_after.pushback(retry_after, retryable);
        let (l, x) = self.calls.lp_extra_mut::<C>(c);
        x.pending.remove(attempt);
        if class == Class::Overloaded {
            x.prev_backoff = HEDGE_STOPPED;
        } else if let Some(wait) = pushback
            && x.prev_backoff != HEDGE_STOPPED
            && u32::from(l.attempts) < max_attempts
        {
            let until = now + wait;
            x.prev_backoff = until.0.min(HEDGE_STOPPED - 1);
            let (epoch, next) = (l.epoch, l.attempts);
            hs.n.retry_after_waits += 1;
            let ev = Event::Hedge {
                call: c,
                epoch,
                attempt: next,
            };
            return self.queue.push(until, ev);
        }
        let stopped = x.prev_backoff == HEDGE_STOPPED;
        if class == Class::Success || (!retryable && class != Class::Overloaded) {
            let cancelled = x.pending.0.count_ones();
            x.pending.clear();
            l.awaiting = false;
            // Around the retries the copies took no permit of their own.
            let around = hs.retry.breaker_around;
            if let Some(b) = hs.breaker(client).filter(|_| !around) {
                for _ in 0..cancelled {
                    b.release();
                }
            }
            let how = if class == Class::Success {
                Settled::Success
            } else {
                Settled::Failure
            };
            return self.settle::<C>(now, c, how, class);
        }
        if u32::from(l.attempts) < max_attempts && !stopped {
            self.hedge::<C>(now, c);
        } else if x.pending.is_empty() {
            l.awaiting = false;
            self.settle::<C>(now, c, Settled::Failure, class);
        }
    }

    /// Hedging: send the next copy, if the deadline and the retry budget allow it.
    pub(in crate::sim::path) fn hedge<C: Call>(&mut self, now: Time, c: CallRef) {
        let call = self.calls.get::<C>(c);
        let Extra {
            prev_backoff: hold,
            pending,
            ..
        } = self.calls.extra::<C>(c);
        if hold != NO_BACKOFF && now.0 < hold {
            // Held by pushback: the Hedge event at the hold's end sends it (or, stopped, none).
            return;
        }
        let (h, client, start) = (call.hop(), self.calls.client::<C>(c), call.start());
        let hs = &mut self.hops[h];
        let past_deadline = hs.retry.deadline.is_some_and(|d| now >= start + d);
        let denied = !past_deadline
            && hs
                .budget(client)
                // A hedge follows no failure: the quota's plain retry cost.
                .is_some_and(|b| b.try_retry(now, Class::Success).is_none());
        if past_deadline || denied {
            hs.n.budget_denied += u64::from(denied);
            if pending.is_empty() {
                self.settle::<C>(now, c, Settled::Failure, Class::Unavailable);
            }
            return;
        }
        self.send::<C>(now, c);
    }
}
