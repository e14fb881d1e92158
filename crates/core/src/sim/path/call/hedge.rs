//! Hedging: copies of one request sent `hedge.delay` apart, the first answer wins.
//!
//! A success or a fatal answer commits the call and cancels the other copies (the server may
//! still run them); a non-fatal one sends the next copy now. Server pushback (gRFC A6,
//! "Pushback" and its summary's cases 4 and 5): a Retry-After the client honours holds the next
//! copy until it has passed (later copies follow at `hedgingDelay` from there); "overloaded;
//! don't retry" sends no more copies but lets those already out answer.

use super::{Call, Calls, Extra, HEDGE_STOPPED, NO_BACKOFF, Next, Seen, Settled};
use crate::policy::Class;
use crate::sim::path::callref::CallRef;
use crate::sim::path::hop::HopState;
use crate::sim::path::{Cx, Event};

impl Calls {
    /// Hedging: one copy answered.
    pub(super) fn hedge_sees<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
        seen: Seen,
        retryable: bool,
    ) -> Next {
        let (now, class) = (cx.now, seen.class);
        let h = self.get::<C>(c).hop();
        let client = self.client::<C>(c);
        let hs = &mut hops[h];
        let max_attempts = hs.retry.max_attempts;
        let pushback = hs.retry.retry_after.pushback(seen.retry_after, retryable);
        let (l, x) = self.lp_extra_mut::<C>(c);
        x.pending.remove(seen.attempt);
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
            cx.queue.push(until, ev);
            return Next::Idle;
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
            return Next::Settle(how, class);
        }
        if u32::from(l.attempts) < max_attempts && !stopped {
            self.hedge::<C>(cx, hops, c)
        } else if x.pending.is_empty() {
            l.awaiting = false;
            Next::Settle(Settled::Failure, class)
        } else {
            Next::Idle
        }
    }

    /// Hedging: send the next copy, if the deadline and the retry budget allow it.
    pub(in crate::sim::path) fn hedge<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
    ) -> Next {
        let now = cx.now;
        let call = self.get::<C>(c);
        let Extra {
            prev_backoff: hold,
            pending,
            ..
        } = self.extra::<C>(c);
        if hold != NO_BACKOFF && now.0 < hold {
            // Held by pushback: the Hedge event at the hold's end sends it (or, stopped, none).
            return Next::Idle;
        }
        let (h, client, start) = (call.hop(), self.client::<C>(c), call.start());
        let hs = &mut hops[h];
        let past_deadline = hs.retry.deadline.is_some_and(|d| now >= start + d);
        let denied = !past_deadline
            && hs
                .budget(client)
                // A hedge follows no failure: the quota's plain retry cost.
                .is_some_and(|b| b.try_retry(now, Class::Success).is_none());
        if past_deadline || denied {
            hs.n.budget_denied += u64::from(denied);
            if pending.is_empty() {
                return Next::Settle(Settled::Failure, Class::Unavailable);
            }
            return Next::Idle;
        }
        self.send::<C>(cx, hops, c)
    }
}
