//! One client's attempts straight from its keyed draws: the event loop's retry loop for one
//! intent, its own few pending events ordered as the loop would pop them.

use super::Direct;
use super::records::{OP_ARRIVAL, OP_BEGIN, OP_DONE, OP_SUCCESS};
use crate::base::rng::EntityKey;
use crate::base::time::{Duration, Time};
use crate::model::{
    CommitMode, CrashPoint, FailMode, LossNotice, OutageAnswer, RetryAfterPolicy, WorkloadKind,
};
use crate::policy::Class;
use crate::policy::backoff::{Backoff, Retry};
use crate::sim::draws::{AttemptKey, Draws, Round};
use crate::sim::path::{from_retry_after_ms, to_retry_after_ms};
use std::sync::atomic::{AtomicBool, Ordering};

/// As in `call.rs`: botocore's `_RETRY_AFTER_MAX_ADDITIONAL`.
const AWS_RETRY_AFTER_MAX_ADDITIONAL: Duration = Duration::from_secs(5);
/// What an intent's own pending event is.
#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    Send,
    Arrive {
        attempt: u16,
    },
    Done {
        attempt: u16,
        service: Duration,
    },
    Reply {
        attempt: u16,
        class: Class,
        ra_ms: u32,
    },
    Timeout {
        attempt: u16,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Settled {
    No,
    Success,
    Failure,
}

/// One intent's retry loop (the event loop's `Top` and `Loop`, less what no eligible model uses).
pub(super) struct Intent {
    pub(super) id: u64,
    /// The `(seed, id)` part of its streams' keys.
    pub(super) key: EntityKey,
    pub(super) start: Time,
    pub(super) attempts: u16,
    awaiting: bool,
    settled: Settled,
    in_flight: u32,
    pub(super) prev_backoff: u64,
    applied: u32,
    /// When the intent was finalised (counted and freed), if it was.
    pub(super) finalised: Option<Time>,
}

impl Intent {
    /// Intent `id`, starting at `start`, before its first attempt.
    pub(super) fn new(draws: Draws, id: u64, start: Time) -> Self {
        Intent {
            id,
            key: draws.intent_key(id),
            start,
            attempts: 0,
            awaiting: false,
            settled: Settled::No,
            in_flight: 0,
            prev_backoff: crate::policy::backoff::NO_STATE,
            applied: 0,
            finalised: None,
        }
    }
}

/// Events between two calls of the progress callback (as the event loop's 65,536).
const PROGRESS_EVERY: u64 = 1 << 16;

impl Direct<'_> {
    /// Every intent of the workload, in id order. `progress` hears, every
    /// [`PROGRESS_EVERY`] events or so, the latest time an intent run so far has reached (it
    /// never decreases and never passes the run's end). Right after it, a set `stop` ends the
    /// workload there. Returns `None`, having stopped early, once the intents run so far have
    /// more than `max_events` events: the run would stop at `max_events`, which the event loop
    /// does (see [`Direct::ending`]), so the rest is not run; also once they keep more records
    /// than [`super::records::MAX_RECORDS`] (the event loop runs it in less memory). Else
    /// whether `stop` ended it.
    pub(super) fn run_intents(
        &mut self,
        progress: &mut dyn FnMut(Time),
        stop: Option<&AtomicBool>,
    ) -> Option<bool> {
        let mut report = PROGRESS_EVERY;
        let mut tick = |d: &mut Self| {
            if d.live_events >= report {
                report = d.live_events + PROGRESS_EVERY;
                progress(d.last_final.min(d.horizon));
                return stop.is_some_and(|s| s.load(Ordering::Relaxed));
            }
            false
        };
        let m = self.m;
        let w = &m.workload;
        match w.kind {
            WorkloadKind::Burst => {
                for c in 0..w.clients {
                    let offset = if w.spread.0 > 0 {
                        self.draws.start(c).range_u64(0, w.spread.0 - 1)
                    } else {
                        0
                    };
                    let at = Time::ZERO + w.start + Duration(offset);
                    if at > self.horizon {
                        self.all_started = false;
                        continue;
                    }
                    self.intent(c, at);
                    if self.live_events > m.max_events || self.rec.over_budget() {
                        return None;
                    }
                    if tick(self) {
                        return Some(true);
                    }
                }
            }
            WorkloadKind::Open => {
                // `PathSim::schedule_next_arrival`: thinning, one stream for all arrivals.
                let lambda_max = std::iter::once(w.rate.0)
                    .chain(w.schedule.iter().map(|p| p.rate.0))
                    .fold(0.0, f64::max);
                let mut s = self.draws.arrivals();
                let mean_gap_ns = 1e9 / lambda_max;
                let mut t = Time::ZERO;
                let mut id = 0u64;
                'arrivals: loop {
                    if w.intents > 0 && id >= w.intents {
                        break;
                    }
                    loop {
                        t = t + Duration::from_nanos_f64(s.exponential(mean_gap_ns));
                        if t > self.horizon {
                            break 'arrivals;
                        }
                        let accept = w.rate_at(t) / lambda_max;
                        if s.uniform() < accept {
                            break;
                        }
                    }
                    self.intent(id, t);
                    if self.live_events > m.max_events || self.rec.over_budget() {
                        return None;
                    }
                    if tick(self) {
                        return Some(true);
                    }
                    id += 1;
                }
            }
            _ => unreachable!("engine_path admits burst and open workloads only"),
        }
        Some(false)
    }

    #[inline]
    fn push(&mut self, at: Time, ev: Ev) {
        self.pending.push((at, self.seq, ev));
        self.seq = self.seq.wrapping_add(1);
    }

    /// The earliest pending event (time, then insertion), if any.
    #[inline]
    fn pop(&mut self) -> Option<(Time, Ev)> {
        let mut best = 0;
        let first = self.pending.first()?;
        let mut key = (first.0, first.1);
        for (i, e) in self.pending.iter().enumerate().skip(1) {
            if (e.0, e.1) < key {
                key = (e.0, e.1);
                best = i;
            }
        }
        let (t, _, ev) = self.pending.swap_remove(best);
        Some((t, ev))
    }

    /// Runs one intent from its start to its finalisation or the horizon.
    fn intent(&mut self, id: u64, start: Time) {
        if self.rejected_at_once {
            return self.intent_rejected(Intent::new(self.draws, id, start));
        }
        let mut it = Intent::new(self.draws, id, start);
        self.pending.clear();
        self.seq = 0;
        // The Start or Arrival event.
        self.live_events += 1;
        self.n.c.intents += 1;
        self.transmit(&mut it, start);
        while it.finalised.is_none() {
            let Some((now, ev)) = self.pop() else { break };
            if now > self.horizon {
                break;
            }
            self.live_events += 1;
            self.handle(&mut it, now, ev);
        }
        self.intent_ended(&it);
    }

    /// An intent's run is over: finalised (its timeouts still pending are stale), or cut by
    /// the horizon.
    pub(super) fn intent_ended(&mut self, it: &Intent) {
        match it.finalised {
            Some(t) => {
                self.last_final = self.last_final.max(t);
                for &(at, _, ev) in &self.pending {
                    debug_assert!(matches!(ev, Ev::Timeout { .. }));
                    self.stale.push(at.0);
                }
            }
            None => self.unfinished += 1,
        }
    }

    fn handle(&mut self, it: &mut Intent, now: Time, ev: Ev) {
        match ev {
            Ev::Send => self.transmit(it, now),
            Ev::Arrive { attempt } => self.arrive(it, now, attempt),
            Ev::Done { attempt, service } => self.done(it, now, attempt, service),
            Ev::Reply {
                attempt,
                class,
                ra_ms,
            } => self.reply(it, now, attempt, class, from_retry_after_ms(ra_ms)),
            Ev::Timeout { attempt } => {
                if outstanding(it, attempt) {
                    self.n.timeouts += 1;
                    self.call_sees(it, now, Class::Timeout, None);
                }
            }
        }
    }

    /// `PathSim::transmit_k` for a top call with no limiter, budget, breaker or hedging.
    fn transmit(&mut self, it: &mut Intent, now: Time) {
        let attempt = it.attempts;
        it.attempts += 1;
        it.awaiting = true;
        self.n.sent += 1;
        self.n.retries += u64::from(attempt > 0);
        if let Some(timeout) = self.m.retry.timeout {
            self.push(now + timeout.ceiling(), Ev::Timeout { attempt });
        }
        let net = &self.m.network;
        let k = AttemptKey::top(it.id, attempt);
        if net.request_loss > 0.0 && self.draws.request_loss(k).bernoulli(net.request_loss) {
            self.n.requests_lost += 1;
            if net.loss_notice == LossNotice::Error {
                self.call_sees(it, now, Class::Connection, None);
            }
            return;
        }
        it.in_flight += 1;
        if self.req_lat.is_zero() {
            return self.arrive(it, now, attempt);
        }
        let lat = self
            .req_lat
            .sample(&mut self.draws.request_latency(k, Round::Only));
        self.push(now + lat, Ev::Arrive { attempt });
    }

    /// `PathSim::admit_request_k` and `begin_k` at a server with no limit of any kind.
    fn arrive(&mut self, it: &mut Intent, now: Time, attempt: u16) {
        let alive = self.chain_alive(it, attempt);
        let s = &self.m.server;
        self.n.arrivals += 1;
        self.n.retry_arrivals += u64::from(attempt > 0);
        self.n.orphaned += u64::from(!alive);
        self.n.last_arrival = self.n.last_arrival.max(now);
        self.rec.op(now, OP_ARRIVAL + u32::from(attempt));
        if s.fail == FailMode::Always {
            self.n.rejected += 1;
            return self.respond(it, now, attempt, Class::Unavailable, None);
        }
        if let Some(o) = s
            .outages
            .iter()
            .find(|o| now >= Time::ZERO + o.from && now < Time::ZERO + o.to)
        {
            if o.answer == OutageAnswer::Hang {
                self.n.hung += 1;
                return self.release(it, now);
            }
            self.n.rejected += 1;
            let ra = o.retry_after;
            return self.respond(it, now, attempt, Class::Unavailable, ra);
        }
        if (s.drop_expired || self.m.retry.cancel) && !alive {
            self.n.dropped_expired += 1;
            return self.release(it, now);
        }
        let mut service = if s.service.is_zero() {
            Duration::ZERO
        } else {
            s.service
                .sample(&mut self.draws.service(AttemptKey::top(it.id, attempt)))
        };
        if let Some(w) = s
            .slow_windows
            .iter()
            .find(|w| now >= Time::ZERO + w.from && now < Time::ZERO + w.to)
        {
            service = service.saturating_mul_f64(w.factor);
        }
        self.n.served += 1;
        self.rec.op(now, OP_BEGIN);
        self.push(now + service, Ev::Done { attempt, service });
    }

    /// `PathSim::done_k` at the bottom with no store and no contention.
    fn done(&mut self, it: &mut Intent, now: Time, attempt: u16, service: Duration) {
        let alive = self.chain_alive(it, attempt);
        self.n.work += u128::from(service.0);
        if !alive {
            self.n.wasted += u128::from(service.0);
        }
        let s = &self.m.server;
        let k = AttemptKey::top(it.id, attempt);
        let failed = match s.fail {
            FailMode::Probability(p) => self.draws.failure(k).bernoulli(p),
            _ => false,
        };
        let crashed = !failed
            && s.crash_probability > 0.0
            && self.draws.crash(k).bernoulli(s.crash_probability);
        let client_error = !failed
            && !crashed
            && s.client_error > 0.0
            && self.draws.client_error(k).bernoulli(s.client_error);
        let (effect, class) = if failed {
            (false, Class::ServerError)
        } else if client_error {
            self.n.client_errors += 1;
            (false, Class::ClientError)
        } else if crashed {
            self.n.crashes += 1;
            let e = match (self.m.idempotency.commit, s.crash_point) {
                (CommitMode::Atomic, _) => false,
                (CommitMode::EffectThenKey, CrashPoint::AfterEffect) => true,
                (CommitMode::KeyThenEffect, CrashPoint::AfterKey) => false,
                (_, _) => true,
            };
            (e, Class::Connection)
        } else {
            (true, Class::Success)
        };
        if effect {
            it.applied += 1;
            self.n.c.effects += 1;
        }
        self.rec.op(now, OP_DONE);
        self.respond(it, now, attempt, class, None);
    }

    /// `PathSim::respond_k`: the answer may be lost on the way back.
    fn respond(
        &mut self,
        it: &mut Intent,
        now: Time,
        attempt: u16,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        let net = &self.m.network;
        let k = AttemptKey::top(it.id, attempt);
        if net.response_loss > 0.0 && self.draws.response_loss(k).bernoulli(net.response_loss) {
            self.n.responses_lost += 1;
            return self.release(it, now);
        }
        let ra_ms = to_retry_after_ms(retry_after);
        if self.resp_lat.is_zero() {
            return self.reply(it, now, attempt, class, from_retry_after_ms(ra_ms));
        }
        let lat = self
            .resp_lat
            .sample(&mut self.draws.response_latency(k, Round::Only));
        self.push(
            now + lat,
            Ev::Reply {
                attempt,
                class,
                ra_ms,
            },
        );
    }

    fn reply(
        &mut self,
        it: &mut Intent,
        now: Time,
        attempt: u16,
        class: Class,
        ra: Option<Duration>,
    ) {
        it.in_flight -= 1;
        if outstanding(it, attempt) {
            self.call_sees(it, now, class, ra);
        } else {
            self.n.late_responses += 1;
        }
        self.maybe_finalise(it, now);
    }

    /// Something of the intent left the path without an answer.
    fn release(&mut self, it: &mut Intent, now: Time) {
        it.in_flight -= 1;
        self.maybe_finalise(it, now);
    }

    /// `PathSim::chain_alive` for a top call: is the client still waiting for this attempt?
    #[inline]
    fn chain_alive(&self, it: &Intent, attempt: u16) -> bool {
        self.m.retry.timeout.is_none() || outstanding(it, attempt)
    }

    /// `PathSim::call_sees_k` with no budget, breaker, limiter or hedging.
    fn call_sees(&mut self, it: &mut Intent, now: Time, class: Class, ra: Option<Duration>) {
        it.awaiting = false;
        if class == Class::Success {
            self.settle(it, now, Settled::Success);
        } else if self.retry_on.contains(class) {
            self.attempt_failed(it, now, class, ra);
        } else {
            self.settle(it, now, Settled::Failure);
        }
    }

    /// `PathSim::attempt_failed_k` for a top call with no budget.
    fn attempt_failed(&mut self, it: &mut Intent, now: Time, class: Class, ra: Option<Duration>) {
        let retry = &self.m.retry;
        let mut backoff = self.backoff;
        if class == Class::Throttled
            && let Some(b) = retry.throttling_base
        {
            backoff.base = b;
        }
        if u32::from(it.attempts) >= retry.max_attempts {
            return self.settle(it, now, Settled::Failure);
        }
        let retries_made = u32::from(it.attempts) - 1;
        let throttled = class == Class::Throttled && retry.throttling_base.is_some();
        let (mut delay, carry) =
            self.backoff_delay(&backoff, it.key, retries_made, it.prev_backoff, throttled);
        let policy = retry.retry_after;
        let mut honour = ra.filter(|_| policy != RetryAfterPolicy::Ignore);
        if policy == RetryAfterPolicy::Envoy {
            let cap = self.retry_after_cap;
            honour = honour.filter(|ra| *ra <= cap && ra.as_nanos() / 1_000_000 > 1);
        }
        if let Some(ra) = honour {
            delay = if policy == RetryAfterPolicy::Envoy {
                let ms = ra.as_nanos() / 1_000_000;
                let k = AttemptKey::top(it.id, retries_made as u16);
                let draw = self.draws.retry_after(k).next_u64();
                crate::sim::path::envoy_reset_delay(ms, draw)
            } else if policy == RetryAfterPolicy::Aws {
                ra.min(delay + AWS_RETRY_AFTER_MAX_ADDITIONAL).max(delay)
            } else {
                ra.min(self.retry_after_cap)
            };
        }
        if let Some(deadline) = retry.deadline
            && now + delay >= it.start + deadline
        {
            return self.settle(it, now, Settled::Failure);
        }
        self.n.retry_after_waits += u64::from(honour.is_some());
        // (`restart_probability` only changes the idempotency key, which nothing reads here.)
        it.prev_backoff = carry.unwrap_or(delay.0.min(crate::policy::backoff::NO_STATE - 1));
        self.push(now + delay, Ev::Send);
    }

    /// The backoff before retry `retries_made + 1` of the intent keyed `key` (and the state the
    /// next draw carries, if any): `Backoff::next_delay`; when the backoff is tabled and not
    /// `throttled`, its jitter straight from the window in [`Direct::windows`] (the tabled kinds,
    /// exponential, linear and constant, leave the delay to the jitter).
    #[inline]
    pub(super) fn backoff_delay(
        &self,
        backoff: &Backoff,
        key: EntityKey,
        retries_made: u32,
        prev: u64,
        throttled: bool,
    ) -> (Duration, Option<u64>) {
        let index = u64::from(retries_made as u16);
        let draws = self.draws;
        let draw = || draws.backoff_of(key, index);
        match self.windows.get(retries_made as usize) {
            Some(&w) if !throttled => {
                let r = Retry {
                    backoff,
                    n: retries_made,
                    tabled: Some(w),
                };
                backoff.jitter.delay(&r, prev, draw)
            }
            _ => backoff.next_delay(retries_made, prev, None, draw),
        }
    }

    pub(super) fn settle(&mut self, it: &mut Intent, now: Time, how: Settled) {
        it.settled = how;
        let took = now.since(it.start);
        self.completions.record(took);
        // Intents run one after another here, not in time order.
        self.n.c.last_settled = self.n.c.last_settled.max(now);
        if how == Settled::Success {
            self.successes.record(took);
            self.n.c.succeeded += 1;
            self.rec.op(now, OP_SUCCESS);
        } else {
            self.n.hop_failed += 1;
            self.n.c.failed += 1;
        }
        self.maybe_finalise(it, now);
    }

    /// `PathSim::maybe_finalise` with no store and no trace keys.
    fn maybe_finalise(&mut self, it: &mut Intent, now: Time) {
        if it.settled == Settled::No || it.in_flight > 0 {
            return;
        }
        let succeeded = it.settled == Settled::Success;
        match it.applied {
            0 => self.n.c.lost += 1,
            1 => self.n.c.applied_once += 1,
            _ => self.n.c.duplicated += 1,
        }
        self.n.c.phantom += u64::from(succeeded && it.applied == 0);
        self.n.c.false_failures += u64::from(!succeeded && it.applied > 0);
        it.finalised = Some(now);
        it.settled = Settled::No;
    }
}

/// Is the client still waiting for attempt `attempt`?
#[inline]
fn outstanding(it: &Intent, attempt: u16) -> bool {
    it.awaiting && it.attempts == attempt + 1
}
