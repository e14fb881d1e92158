//! The retry loop of a model whose server rejects every attempt the instant it is sent (the
//! thundering herd's `fail = "always"`, with no latency, loss or timeout): an intent has one
//! event at a time, the next send, so its attempts are a plain loop over its backoff draws, with
//! no pending events to order. The counts are those of [`Direct::intent`]'s general loop
//! (`tests: direct_path`, which runs both against the event loop).

use super::Direct;
use super::intent::{Intent, Settled};
use super::records::OP_ARRIVAL;
use crate::model::{FailMode, Model};
use crate::policy::Class;

/// Whether every attempt of `m` is answered at once by a rejection: the server always fails
/// (before any outage, service or effect is looked at), and no latency, loss or timeout puts
/// time or chance between a send and its answer.
pub(super) fn rejects_at_once(m: &Model) -> bool {
    let net = &m.network;
    m.server.fail == FailMode::Always
        && m.retry.timeout.is_none()
        && net.request_latency().is_zero()
        && net.response_latency().is_zero()
        && net.request_loss == 0.0
        && net.response_loss == 0.0
}

impl Direct<'_> {
    /// Runs intent `it` (before its first attempt) of a model that [`rejects_at_once`]: each
    /// attempt arrives and is rejected at its send; a retry follows its backoff unless the
    /// attempts or the deadline are used up. Then the intent fails, with no effect applied.
    pub(super) fn intent_rejected(&mut self, mut it: Intent) {
        let m = self.m;
        let retry = &m.retry;
        let backoff = self.backoff;
        let retries = self.retry_on.contains(Class::Unavailable);
        self.pending.clear();
        // The Start or Arrival event.
        self.live_events += 1;
        self.n.c.intents += 1;
        let mut now = it.start;
        loop {
            let attempt = it.attempts;
            it.attempts += 1;
            let again = u64::from(attempt > 0);
            self.n.sent += 1;
            self.n.retries += again;
            self.n.arrivals += 1;
            self.n.retry_arrivals += again;
            self.n.rejected += 1;
            self.n.last_arrival = self.n.last_arrival.max(now);
            self.rec.op(now, OP_ARRIVAL + u32::from(attempt));
            if !retries || u32::from(it.attempts) >= retry.max_attempts {
                break;
            }
            let retries_made = u32::from(attempt);
            let (delay, carry) =
                self.backoff_delay(&backoff, it.key, retries_made, it.prev_backoff, false);
            if let Some(deadline) = retry.deadline
                && now + delay >= it.start + deadline
            {
                break;
            }
            it.prev_backoff = carry.unwrap_or(delay.0.min(crate::policy::backoff::NO_STATE - 1));
            let at = now + delay;
            if at > self.horizon {
                return self.intent_ended(&it);
            }
            // The Send event.
            self.live_events += 1;
            now = at;
        }
        self.settle(&mut it, now, Settled::Failure);
        self.intent_ended(&it);
    }
}
