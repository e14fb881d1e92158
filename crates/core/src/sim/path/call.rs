//! Calls: the retry loop of one caller for one request, written once for every hop.
//!
//! A *top* call is an intent: its client sends attempts (one outstanding at a time, or several
//! with hedging), waits for an answer or its timeout, backs off and retries, under the hop's
//! budget, breaker and Retry-After handling. An *inner* call is the same loop run by the client
//! inside a tier for one request that tier is serving; its answer becomes the tier's answer.

use super::callref::{CallRef, NO_KEY};
use super::limit::Gate;
use super::tier::{Outcome, Request};
use super::{Event, PathSim, pidx};
use crate::model::{KeyMode, LossNotice, RetryAfterPolicy, StoreMode};
use crate::policy::Class;
use crate::policy::hedge::Pending;
use crate::sim::draws::{self, AttemptKey, Round};
use crate::time::{Duration, Time};
use crate::trace::{Step, TraceEvent};

const NO_BACKOFF: u64 = crate::backoff::NO_STATE;
/// botocore `ExponentialBackoff._RETRY_AFTER_MAX_ADDITIONAL` (5 s), smithy's `delayFromErrorType + 5_000`.
const AWS_RETRY_AFTER_MAX_ADDITIONAL: Duration = Duration::from_secs(5);

/// Envoy `JitteredLowerBoundBackOffStrategy::nextBackOffMs` (`backoff_strategy.cc`):
/// `(random() % (min_interval >> 1)) + min_interval` ms, for a reset-header interval of `ms` > 1.
pub fn envoy_reset_delay(ms: u64, draw: u64) -> Duration {
    Duration::from_millis(draw % (ms >> 1) + ms)
}
/// Hedging never backs off, so a hedged call keeps the server's pushback in `prev_backoff`
/// instead (gRFC A6, "Pushback"): the time in ns before which no further copy goes out,
/// [`NO_BACKOFF`] for none, or this value once an answer said "don't retry".
const HEDGE_STOPPED: u64 = u64::MAX - 1;
pub(super) const NO_WORKER: u32 = u32::MAX;
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Settled {
    No,
    Success,
    Failure,
}

/// The state every retry loop has.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loop {
    /// The last backoff delay drawn (decorrelated jitter), [`NO_BACKOFF`] before the first;
    /// with hedging, the pushback hold ([`HEDGE_STOPPED`]).
    prev_backoff: u64,
    /// Hedging: copies awaiting an answer.
    pending: Pending,
    pub(super) epoch: u32,
    /// What the AWS quota charged for the retry that sent the latest attempt (0 = first try).
    retry_cost: u32,
    /// Attempts sent so far; the outstanding one is `attempts - 1`.
    pub(super) attempts: u16,
    key_gen: u16,
    awaiting: bool,
    pub(super) settled: Settled,
}

impl Loop {
    fn new(epoch: u32) -> Self {
        Loop {
            prev_backoff: NO_BACKOFF,
            pending: Pending::default(),
            epoch,
            retry_cost: 0,
            attempts: 0,
            key_gen: 0,
            awaiting: false,
            settled: Settled::No,
        }
    }
}

/// An intent and its client's retry loop. One cache line: the herd touches a random one per event.
#[derive(Clone, Debug)]
#[repr(align(64))]
pub(crate) struct Top {
    pub(super) id: u64,
    start: Time,
    pub(super) applied: u32,
    /// Everything of the intent in flight anywhere on the path (messages, queued and served
    /// requests, inner calls not yet freed).
    in_flight: u32,
    worker: u32,
    /// The client process (index of per-client budgets, breakers and rate limits).
    pub(super) client: u32,
    pub(super) lp: Loop,
}

/// The retry loop of the client inside a tier, for one request that tier serves.
#[derive(Clone, Debug)]
pub(crate) struct Inner {
    id: u64,
    start: Time,
    /// This call's key within its intent: draws of its attempts hash it with the attempt number.
    path: u64,
    /// The top call's slot.
    top: u32,
    /// The job serving the parent request at the tier above this call's hop.
    up: u32,
    /// The parent request's call and attempt (what `up` serves), for walking up without
    /// touching the tier's job table.
    parent: CallRef,
    parent_attempt: u16,
    /// Requests of this call in flight.
    refs: u32,
    key: u16,
    hop: u8,
    /// Some attempt above this call was a retry.
    retry_path: bool,
    pub(super) lp: Loop,
}

impl PathSim<'_> {
    /// Traces one step of call `c`'s attempt `attempt` (its hop is the tier it sends to); a
    /// branch on `None` when tracing is off.
    #[inline(always)]
    pub(super) fn note_k<const I: bool>(
        &mut self,
        now: Time,
        c: CallRef,
        attempt: u16,
        step: Step,
        class: Option<Class>,
    ) {
        if self.trace.is_some() {
            self.note_slow::<I>(now, c, attempt, step, class, None);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn note_slow<const I: bool>(
        &mut self,
        now: Time,
        c: CallRef,
        attempt: u16,
        step: Step,
        class: Option<Class>,
        delay: Option<Duration>,
    ) {
        let mut ev = TraceEvent::new(now, self.id_k::<I>(c), self.hop_k::<I>(c), attempt, step);
        ev.class = class;
        ev.delay_ns = delay.map(|d| d.0);
        if let Some(t) = self.trace.as_deref_mut() {
            t.record(ev);
        }
    }
}

impl PathSim<'_> {
    // Accessors come in two forms: `*_k::<I>` where the kind of call is known at compile time
    // (`I` = inner), which the retry loop uses so that a top call (every call of a one-tier
    // path) pays for no branch on its kind, and a dynamic form for the tiers, which see
    // requests of both kinds.

    #[inline(always)]
    pub(super) fn lp_k<const I: bool>(&self, c: CallRef) -> &Loop {
        if I {
            &self.inner[c.slot()].lp
        } else {
            &self.tops[c.0 as usize].lp
        }
    }
    #[inline(always)]
    pub(super) fn lp_mut_k<const I: bool>(&mut self, c: CallRef) -> &mut Loop {
        if I {
            &mut self.inner[c.slot()].lp
        } else {
            &mut self.tops[c.0 as usize].lp
        }
    }
    /// The hop this call sends over (and the tier it sends to).
    #[inline(always)]
    pub(super) fn hop_k<const I: bool>(&self, c: CallRef) -> usize {
        if I {
            self.inner[c.slot()].hop as usize
        } else {
            0
        }
    }
    #[inline(always)]
    pub(super) fn id_k<const I: bool>(&self, c: CallRef) -> u64 {
        if I {
            self.inner[c.slot()].id
        } else {
            self.tops[c.0 as usize].id
        }
    }
    /// The draw key of attempt `attempt` of `c` ([`AttemptKey`]).
    #[inline(always)]
    pub(super) fn key_k<const I: bool>(&self, c: CallRef, attempt: u16) -> AttemptKey {
        if I {
            let i = &self.inner[c.slot()];
            AttemptKey::below(i.id, i.path, attempt)
        } else {
            AttemptKey::top(self.tops[c.0 as usize].id, attempt)
        }
    }
    /// Is some attempt on the way to attempt `attempt` of `c` a retry?
    #[inline(always)]
    pub(super) fn retry_path_k<const I: bool>(&self, c: CallRef, attempt: u16) -> bool {
        attempt > 0 || (I && self.inner[c.slot()].retry_path)
    }
    /// The client process whose per-client policies apply at `c`'s hop (0 below the top).
    #[inline(always)]
    pub(super) fn client_k<const I: bool>(&self, c: CallRef) -> u32 {
        if I { 0 } else { self.tops[c.0 as usize].client }
    }
    #[inline(always)]
    pub(super) fn start_k<const I: bool>(&self, c: CallRef) -> Time {
        if I {
            self.inner[c.slot()].start
        } else {
            self.tops[c.0 as usize].start
        }
    }
    /// Something of `c` goes in flight.
    #[inline(always)]
    pub(super) fn hold_k<const I: bool>(&mut self, c: CallRef) {
        if I {
            self.inner[c.slot()].refs += 1;
        } else {
            self.tops[c.0 as usize].in_flight += 1;
        }
    }
    #[inline(always)]
    pub(super) fn unhold_k<const I: bool>(&mut self, c: CallRef) {
        if I {
            self.inner[c.slot()].refs -= 1;
        } else {
            self.tops[c.0 as usize].in_flight -= 1;
        }
    }
    /// Is the caller still waiting for this attempt's answer? With hedging several copies may be.
    #[inline(always)]
    pub(super) fn outstanding_k<const I: bool>(&self, c: CallRef, attempt: u16) -> bool {
        let l = self.lp_k::<I>(c);
        if self.hops[self.hop_k::<I>(c)].hedging {
            l.settled == Settled::No && l.pending.contains(attempt)
        } else {
            l.awaiting && l.attempts == attempt + 1
        }
    }
    /// Frees a settled call nothing refers to any more; freeing an inner call may finalise its
    /// intent.
    #[inline(always)]
    pub(super) fn maybe_free_k<const I: bool>(&mut self, c: CallRef) {
        if I {
            self.free_inner_call(c)
        } else {
            self.maybe_finalise(c.0 as usize)
        }
    }

    #[inline(always)]
    pub(super) fn lp(&self, c: CallRef) -> &Loop {
        if c.is_inner() {
            self.lp_k::<true>(c)
        } else {
            self.lp_k::<false>(c)
        }
    }
    #[inline(always)]
    pub(super) fn hop(&self, c: CallRef) -> usize {
        if c.is_inner() {
            self.hop_k::<true>(c)
        } else {
            0
        }
    }
    #[inline(always)]
    pub(super) fn id(&self, c: CallRef) -> u64 {
        if c.is_inner() {
            self.id_k::<true>(c)
        } else {
            self.id_k::<false>(c)
        }
    }
    #[inline(always)]
    pub(super) fn key(&self, c: CallRef, attempt: u16) -> AttemptKey {
        if c.is_inner() {
            self.key_k::<true>(c, attempt)
        } else {
            self.key_k::<false>(c, attempt)
        }
    }
    #[inline(always)]
    pub(super) fn retry_path(&self, c: CallRef, attempt: u16) -> bool {
        if c.is_inner() {
            self.retry_path_k::<true>(c, attempt)
        } else {
            attempt > 0
        }
    }
    /// The top call `c` belongs to.
    #[inline(always)]
    pub(super) fn top_of(&self, c: CallRef) -> usize {
        if c.is_inner() {
            self.inner[c.slot()].top as usize
        } else {
            c.0 as usize
        }
    }
    #[inline(always)]
    pub(super) fn outstanding(&self, c: CallRef, attempt: u16) -> bool {
        if c.is_inner() {
            self.outstanding_k::<true>(c, attempt)
        } else {
            self.outstanding_k::<false>(c, attempt)
        }
    }
    /// Is attempt `attempt` of `c` still awaited all the way up to the user?
    #[inline(always)]
    pub(super) fn chain_alive(&self, c: CallRef, attempt: u16) -> bool {
        // Without timeouts and hedging at or above this hop, nobody stops waiting early.
        !self.hops[self.hop(c)].can_orphan || self.chain_walk(c, attempt)
    }
    #[inline(always)]
    pub(super) fn chain_alive_k<const I: bool>(&self, c: CallRef, attempt: u16) -> bool {
        !self.hops[self.hop_k::<I>(c)].can_orphan || self.chain_walk(c, attempt)
    }
    /// `release` for a call of a known kind.
    #[inline(always)]
    pub(super) fn release_k<const I: bool>(&mut self, c: CallRef) {
        self.unhold_k::<I>(c);
        self.maybe_free_k::<I>(c);
    }
    #[inline(always)]
    pub(super) fn top_of_k<const I: bool>(&self, c: CallRef) -> usize {
        if I {
            self.inner[c.slot()].top as usize
        } else {
            c.0 as usize
        }
    }

    fn chain_walk(&self, mut c: CallRef, mut attempt: u16) -> bool {
        loop {
            if !self.outstanding(c, attempt) {
                return false;
            }
            if !c.is_inner() {
                return true;
            }
            let i = &self.inner[c.slot()];
            c = i.parent;
            attempt = i.parent_attempt;
        }
    }

    /// Dispatches on the kind of `c` to the retry loop's `send`.
    pub(super) fn send(&mut self, now: Time, c: CallRef) {
        if c.is_inner() {
            self.send_k::<true>(now, c)
        } else {
            self.send_k::<false>(now, c)
        }
    }
    /// Dispatches on the kind of `c` to the retry loop's `reply`.
    #[inline(always)]
    pub(super) fn reply(
        &mut self,
        now: Time,
        c: CallRef,
        epoch: u32,
        attempt: u16,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        if c.is_inner() {
            self.reply_k::<true>(now, c, epoch, attempt, outcome, retry_after)
        } else {
            self.reply_k::<false>(now, c, epoch, attempt, outcome, retry_after)
        }
    }
    pub(super) fn call_sees(
        &mut self,
        now: Time,
        c: CallRef,
        attempt: u16,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        if c.is_inner() {
            self.call_sees_k::<true>(now, c, attempt, class, retry_after)
        } else {
            self.call_sees_k::<false>(now, c, attempt, class, retry_after)
        }
    }
    pub(super) fn hedge(&mut self, now: Time, c: CallRef) {
        if c.is_inner() {
            self.hedge_k::<true>(now, c)
        } else {
            self.hedge_k::<false>(now, c)
        }
    }

    pub(super) fn start_intent(&mut self, now: Time, id: u64, worker: u32) {
        let w = &self.model.workload;
        let client = if worker != NO_WORKER {
            worker
        } else if w.kind == crate::model::WorkloadKind::Open {
            (id % w.processes.max(1)) as u32
        } else if w.kind == crate::model::WorkloadKind::Trace {
            // The row's class, or round-robin over `processes` without a class column.
            match w.replay.classes.len() {
                0 => (id % w.processes.max(1)) as u32,
                _ => w.replay.arrivals[id as usize].class,
            }
        } else {
            id as u32
        };
        let top = |epoch| Top {
            id,
            start: now,
            applied: 0,
            in_flight: 0,
            worker,
            client,
            lp: Loop::new(epoch),
        };
        let slot = match self.free_tops.pop() {
            Some(s) => {
                let epoch = self.tops[s as usize].lp.epoch.wrapping_add(1);
                self.tops[s as usize] = top(epoch);
                s
            }
            None => {
                self.tops.push(top(0));
                (self.tops.len() - 1) as u32
            }
        };
        if let Some(k) = self.keyed.as_mut() {
            k.start(w.replay.arrivals[id as usize].intent);
        }
        self.live += 1;
        self.c.intents += 1;
        self.hops[0].n.received += 1;
        self.note_k::<false>(now, CallRef::top(slot), 0, Step::Start, None);
        self.send_k::<false>(now, CallRef::top(slot));
    }

    /// Tier `hop - 1` finished its own work on `parent` (its job `job`): the client inside it
    /// calls the next tier with its own retry loop.
    pub(super) fn start_inner(&mut self, now: Time, hop: usize, job: u32, parent: Request) {
        let pc = parent.call;
        let top = self.top_of(pc) as u32;
        let path = if pc.is_inner() {
            draws::child_path(self.inner[pc.slot()].path, parent.attempt)
        } else {
            draws::child_path(0, parent.attempt)
        };
        let wanted = self.chain_alive(pc, parent.attempt);
        let call = |epoch| Inner {
            id: 0,
            start: now,
            path,
            top,
            up: job,
            parent: pc,
            parent_attempt: parent.attempt,
            refs: 0,
            key: parent.key,
            hop: hop as u8,
            retry_path: self.retry_path(pc, parent.attempt),
            lp: Loop::new(epoch),
        };
        let mut c = call(0);
        c.id = self.tops[top as usize].id;
        let slot = match self.free_inner.pop() {
            Some(s) => {
                c.lp.epoch = self.inner[s as usize].lp.epoch.wrapping_add(1);
                self.inner[s as usize] = c;
                s
            }
            None => {
                self.inner.push(c);
                (self.inner.len() - 1) as u32
            }
        };
        // The inner call keeps its intent from being finalised until it is freed.
        self.tops[top as usize].in_flight += 1;
        let n = &mut self.hops[hop].n;
        n.received += 1;
        n.orphaned += u64::from(!wanted);
        self.send_k::<true>(now, CallRef::inner(slot));
    }

    /// The call above an inner call stopped waiting, and the hop it came over propagates
    /// cancellation: the inner call makes no more attempts.
    #[inline(always)]
    fn cancelled_k<const I: bool>(&self, c: CallRef) -> bool {
        I && self.hops[self.hop_k::<I>(c)].cancel_above && self.parent_gone(c)
    }

    fn parent_gone(&self, c: CallRef) -> bool {
        let i = &self.inner[c.slot()];
        !self.chain_alive(i.parent, i.parent_attempt)
    }

    fn send_k<const I: bool>(&mut self, now: Time, c: CallRef) {
        let h = self.hop_k::<I>(c);
        if self.lp_k::<I>(c).attempts > 0 && self.cancelled_k::<I>(c) {
            let (client, cost) = (self.client_k::<I>(c), self.lp_k::<I>(c).retry_cost);
            let hs = &mut self.hops[h];
            if !hs.budgets.is_empty() {
                hs.budgets[pidx(hs.budget_shared, client)].unsent(false, cost > 0);
            }
            self.hops[h].n.cancelled += 1;
            self.lp_mut_k::<I>(c).awaiting = false;
            return self.settle_k::<I>(now, c, Settled::Failure, Class::Timeout);
        }
        if !self.admit_k::<I>(now, c) {
            return self.rejected_locally_k::<I>(now, c);
        }
        if !self.hops[h].limiters.is_empty() {
            let (client, epoch) = (self.client_k::<I>(c), self.lp_k::<I>(c).epoch);
            match self.limiter_gate(now, h, client, c, epoch) {
                Gate::Go => {}
                // Waiting for the client's rate limiter: `transmit` sends it with the token.
                Gate::Waits => return,
                Gate::Rejected => {
                    let l = self.lp_k::<I>(c);
                    let (first, retry) = (l.attempts == 0, l.attempts > 0 && l.retry_cost > 0);
                    let hs = &mut self.hops[h];
                    hs.n.limiter_rejected += 1;
                    hs.n.first_tries_refused += u64::from(first);
                    if !hs.budgets.is_empty() {
                        hs.budgets[pidx(hs.budget_shared, client)].unsent(true, retry);
                    }
                    return self.rejected_locally_k::<I>(now, c);
                }
            }
        }
        self.transmit_k::<I>(now, c);
    }

    /// Records when `c`'s latest attempt went out (slow calls of the breaker).
    fn mark_sent<const I: bool>(&mut self, c: CallRef, now: Time) {
        let v = if I {
            &mut self.sent_inner
        } else {
            &mut self.sent_top
        };
        if v.len() <= c.slot() {
            v.resize(c.slot() + 1, Time::ZERO);
        }
        v[c.slot()] = now;
    }

    /// When `c`'s latest attempt went out; with hedging, the latest copy (an approximation:
    /// an earlier copy's answer is timed from the latest copy).
    fn sent_at<const I: bool>(&self, c: CallRef) -> Time {
        let v = if I { &self.sent_inner } else { &self.sent_top };
        v.get(c.slot()).copied().unwrap_or(Time::ZERO)
    }

    /// Dispatches on the kind of `c` to [`Self::transmit_k`].
    pub(super) fn transmit(&mut self, now: Time, c: CallRef) {
        if c.is_inner() {
            self.transmit_k::<true>(now, c)
        } else {
            self.transmit_k::<false>(now, c)
        }
    }

    /// An admitted attempt goes out: counted, timed, and sent over the hop's network.
    fn transmit_k<const I: bool>(&mut self, now: Time, c: CallRef) {
        let h = self.hop_k::<I>(c);
        if self.hops[h].timed {
            self.mark_sent::<I>(c, now);
        }
        let hedge_delay = self.hops[h].hedge_delay;
        let max_attempts = self.hops[h].max_attempts;
        let l = self.lp_mut_k::<I>(c);
        let attempt = l.attempts;
        l.attempts += 1;
        l.awaiting = true;
        let epoch = l.epoch;
        let key_gen = l.key_gen;
        if let Some(delay) = hedge_delay {
            l.pending.insert(attempt);
            if u32::from(attempt) + 1 < max_attempts {
                self.queue.push(
                    now + delay,
                    Event::Hedge {
                        call: c,
                        epoch,
                        attempt: attempt + 1,
                    },
                );
            }
        }
        let key = if I {
            self.inner[c.slot()].key
        } else {
            match self.model.idempotency.key {
                KeyMode::None => NO_KEY,
                KeyMode::PerIntent => key_gen,
                KeyMode::PerAttempt => attempt,
            }
        };
        let retry_path = self.retry_path_k::<I>(c, attempt);
        let n = &mut self.hops[h].n;
        n.sent += 1;
        n.retries += u64::from(attempt > 0);
        n.retry_path_sent += u64::from(retry_path);
        let hop = &self.spec.hops[h];
        let timeout = self.hops[h].timeout;
        let (loss, notice, lat) = (
            hop.network.request_loss,
            hop.network.loss_notice,
            hop.network.request_latency(),
        );
        if let Some(timeout) = timeout {
            self.queue.push(
                now + timeout,
                Event::Timeout {
                    call: c,
                    epoch,
                    attempt,
                },
            );
        }
        self.note_k::<I>(now, c, attempt, Step::Send, None);
        let k = self.key_k::<I>(c, attempt);
        if loss > 0.0 && self.draws.request_loss(k).bernoulli(loss) {
            self.hops[h].n.requests_lost += 1;
            self.note_k::<I>(now, c, attempt, Step::RequestLost, None);
            if notice == LossNotice::Error {
                self.call_sees_k::<I>(now, c, attempt, Class::Connection, None);
            }
            return;
        }
        self.hold_k::<I>(c);
        if lat.is_zero() {
            // A hop that takes no time is taken now, not through the queue: one event (and one
            // cache miss on the intent) less per attempt. It is the last thing `send` does.
            return self.arrive(now, Request::new(c, epoch, attempt, key, now));
        }
        // Under write contention the read and the write are two round trips, drawn apart.
        let round = if self.hops[h].contention {
            Round::Read
        } else {
            Round::Only
        };
        let at = now + lat.sample(&mut self.draws.request_latency(k, round));
        self.queue.push(
            at,
            Event::Arrive {
                call: c,
                epoch,
                attempt,
                key,
            },
        );
    }

    /// An answer reaches `c`.
    pub(super) fn reply_k<const I: bool>(
        &mut self,
        now: Time,
        c: CallRef,
        epoch: u32,
        attempt: u16,
        outcome: Outcome,
        retry_after: Option<Duration>,
    ) {
        debug_assert_eq!(
            self.lp_k::<I>(c).epoch,
            epoch,
            "a slot was reused while in flight"
        );
        self.unhold_k::<I>(c);
        if self.outstanding_k::<I>(c, attempt) {
            self.call_sees_k::<I>(now, c, attempt, outcome.class(), retry_after);
        } else {
            let h = self.hop_k::<I>(c);
            self.hops[h].n.late_responses += 1;
            self.note_k::<I>(now, c, attempt, Step::LateReply, Some(outcome.class()));
        }
        self.maybe_free_k::<I>(c);
    }

    /// Before an attempt goes out: adaptive throttling and the circuit breaker may reject it in
    /// the caller (it is never sent); Finagle's budget takes a first try's deposit.
    fn admit_k<const I: bool>(&mut self, now: Time, c: CallRef) -> bool {
        let h = self.hop_k::<I>(c);
        let attempt = self.lp_k::<I>(c).attempts;
        let client = self.client_k::<I>(c);
        let retries_only = self.spec.hops[h].breaker.retries_only;
        if !self.hops[h].budgets.is_empty() {
            let hs = &self.hops[h];
            let k = pidx(hs.budget_shared, client);
            let u = if hs.budget_adaptive {
                self.draws.throttle(self.key_k::<I>(c, attempt)).uniform()
            } else {
                0.0
            };
            if !self.hops[h].budgets[k].on_send(now, attempt == 0, u) {
                self.hops[h].n.throttled_locally += 1;
                self.hops[h].n.first_tries_refused += u64::from(attempt == 0);
                return false;
            }
        }
        let bypass = attempt == 0 && retries_only;
        let hs = &mut self.hops[h];
        if !hs.breakers.is_empty() && !bypass {
            let k = pidx(hs.breaker_shared, client);
            if !hs.breakers[k].try_acquire(now) {
                hs.n.breaker_rejected += 1;
                hs.n.first_tries_refused += u64::from(attempt == 0);
                if !hs.budgets.is_empty() {
                    let retry = attempt > 0 && self.lp_k::<I>(c).retry_cost > 0;
                    let hs = &mut self.hops[h];
                    hs.budgets[pidx(hs.budget_shared, client)].unsent(true, retry);
                }
                return false;
            }
        }
        true
    }

    /// An attempt was rejected in the caller: the call fails at once (a local rejection is not
    /// retried), unless hedged copies are still out.
    fn rejected_locally_k<const I: bool>(&mut self, now: Time, c: CallRef) {
        let l = self.lp_mut_k::<I>(c);
        l.awaiting = false;
        if l.pending.is_empty() {
            self.settle_k::<I>(now, c, Settled::Failure, Class::Unavailable);
        }
    }

    /// The caller learns how attempt `attempt` ended: budgets and breakers record it, then the
    /// call succeeds, retries (or hedges) or gives up.
    fn call_sees_k<const I: bool>(
        &mut self,
        now: Time,
        c: CallRef,
        attempt: u16,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        self.note_k::<I>(now, c, attempt, Step::Result, Some(class));
        let h = self.hop_k::<I>(c);
        let client = self.client_k::<I>(c);
        let cost = self.lp_k::<I>(c).retry_cost;
        let hs = &mut self.hops[h];
        let retryable = hs.retry_on.contains(class);
        if !hs.budgets.is_empty() {
            let k = pidx(hs.budget_shared, client);
            hs.budgets[k].on_outcome(now, class, retryable, cost);
        }
        if !hs.breakers.is_empty() {
            let took = now.since(self.sent_at::<I>(c));
            let hs = &mut self.hops[h];
            let k = pidx(hs.breaker_shared, client);
            hs.breakers[k].on_call(now, class.is_server_failure(), took);
        }
        if !self.hops[h].limiters.is_empty() {
            let took = now.since(self.sent_at::<I>(c));
            self.limiter_sees(now, h, client, class, took);
        }
        let hs = &self.hops[h];
        if hs.hedge_delay.is_some() {
            return self.hedge_sees_k::<I>(now, c, attempt, class, retryable, retry_after);
        }
        self.lp_mut_k::<I>(c).awaiting = false;
        if class == Class::Success {
            self.settle_k::<I>(now, c, Settled::Success, class);
        } else if retryable {
            self.attempt_failed_k::<I>(now, c, class, retry_after);
        } else {
            self.settle_k::<I>(now, c, Settled::Failure, class);
        }
    }

    /// Hedging: one copy answered. A success or a fatal answer commits the call and cancels the
    /// other copies (the server may still run them); a non-fatal one sends the next copy now.
    /// Server pushback (gRFC A6, "Pushback" and its summary's cases 4 and 5): a Retry-After the
    /// client honours holds the next copy until it has passed (later copies follow at
    /// `hedgingDelay` from there); "overloaded; don't retry" sends no more copies but lets those
    /// already out answer.
    fn hedge_sees_k<const I: bool>(
        &mut self,
        now: Time,
        c: CallRef,
        attempt: u16,
        class: Class,
        retryable: bool,
        retry_after: Option<Duration>,
    ) {
        let h = self.hop_k::<I>(c);
        let client = self.client_k::<I>(c);
        let max_attempts = self.hops[h].max_attempts;
        let honour = self.spec.hops[h].retry.retry_after == RetryAfterPolicy::Honour;
        let pushback = retry_after
            .filter(|_| honour && retryable)
            .map(|ra| ra.min(self.hops[h].retry_after_cap));
        let l = self.lp_mut_k::<I>(c);
        l.pending.remove(attempt);
        if class == Class::Overloaded {
            l.prev_backoff = HEDGE_STOPPED;
        } else if let Some(wait) = pushback
            && l.prev_backoff != HEDGE_STOPPED
            && u32::from(l.attempts) < max_attempts
        {
            let until = now + wait;
            l.prev_backoff = until.0.min(HEDGE_STOPPED - 1);
            let (epoch, next) = (l.epoch, l.attempts);
            self.hops[h].n.retry_after_waits += 1;
            let ev = Event::Hedge {
                call: c,
                epoch,
                attempt: next,
            };
            return self.queue.push(until, ev);
        }
        let l = self.lp_mut_k::<I>(c);
        let stopped = l.prev_backoff == HEDGE_STOPPED;
        if class == Class::Success || (!retryable && class != Class::Overloaded) {
            let cancelled = l.pending.0.count_ones();
            l.pending.clear();
            l.awaiting = false;
            let hs = &mut self.hops[h];
            if !hs.breakers.is_empty() {
                let k = pidx(hs.breaker_shared, client);
                for _ in 0..cancelled {
                    hs.breakers[k].release();
                }
            }
            let how = if class == Class::Success {
                Settled::Success
            } else {
                Settled::Failure
            };
            return self.settle_k::<I>(now, c, how, class);
        }
        if u32::from(l.attempts) < max_attempts && !stopped {
            self.hedge_k::<I>(now, c);
        } else if l.pending.is_empty() {
            l.awaiting = false;
            self.settle_k::<I>(now, c, Settled::Failure, class);
        }
    }

    /// Hedging: send the next copy, if the deadline and the retry budget allow it.
    fn hedge_k<const I: bool>(&mut self, now: Time, c: CallRef) {
        let hold = self.lp_k::<I>(c).prev_backoff;
        if hold != NO_BACKOFF && now.0 < hold {
            // Held by pushback: the Hedge event at the hold's end sends it (or, stopped, none).
            return;
        }
        let h = self.hop_k::<I>(c);
        let client = self.client_k::<I>(c);
        let start = self.start_k::<I>(c);
        let past_deadline = self.spec.hops[h]
            .retry
            .deadline
            .is_some_and(|d| now >= start + d);
        let hs = &mut self.hops[h];
        let denied = !past_deadline
            && !hs.budgets.is_empty()
            && hs.budgets[pidx(hs.budget_shared, client)]
                // A hedge follows no failure: the quota's plain retry cost.
                .try_retry(now, Class::Success)
                .is_none();
        if past_deadline || denied {
            hs.n.budget_denied += u64::from(denied);
            if self.lp_k::<I>(c).pending.is_empty() {
                self.settle_k::<I>(now, c, Settled::Failure, Class::Unavailable);
            }
            return;
        }
        self.send_k::<I>(now, c);
    }

    /// The outstanding attempt failed with a retryable `class`: retry or give up.
    fn attempt_failed_k<const I: bool>(
        &mut self,
        now: Time,
        c: CallRef,
        class: Class,
        retry_after: Option<Duration>,
    ) {
        let h = self.hop_k::<I>(c);
        let (attempts, prev) = {
            let l = self.lp_k::<I>(c);
            (l.attempts, l.prev_backoff)
        };
        let retry = &self.spec.hops[h].retry;
        let mut backoff = retry.backoff();
        if class == Class::Throttled
            && let Some(b) = retry.throttling_base
        {
            // The AWS SDKs back off from a larger base after a throttling error.
            backoff.base = b;
        }
        let (max_attempts, policy, deadline, restart) = (
            retry.max_attempts,
            retry.retry_after,
            retry.deadline,
            retry.restart_probability,
        );
        if u32::from(attempts) >= max_attempts {
            return self.settle_k::<I>(now, c, Settled::Failure, class);
        }
        if self.cancelled_k::<I>(c) {
            self.hops[h].n.cancelled += 1;
            return self.settle_k::<I>(now, c, Settled::Failure, class);
        }
        let retries_made = u32::from(attempts) - 1;
        let (start, client) = (self.start_k::<I>(c), self.client_k::<I>(c));
        let k = self.key_k::<I>(c, retries_made as u16);
        let (mut delay, carry) = backoff.next_delay(retries_made, prev, &mut self.draws.backoff(k));
        let mut honour = retry_after.filter(|_| policy != RetryAfterPolicy::Ignore);
        if policy == RetryAfterPolicy::Envoy {
            // Envoy's reset header: whole ms, used only when above 1 ms and within
            // `max_interval`; a longer one is discarded and the exponential backoff stands.
            let cap = self.hops[h].retry_after_cap;
            honour = honour.filter(|ra| *ra <= cap && ra.as_nanos() / 1_000_000 > 1);
        }
        if let Some(ra) = honour {
            delay = if policy == RetryAfterPolicy::Envoy {
                let ms = ra.as_nanos() / 1_000_000;
                let draw = self.draws.retry_after(k).next_u64();
                envoy_reset_delay(ms, draw)
            } else if policy == RetryAfterPolicy::Aws {
                // botocore `ExponentialBackoff.delay_amount` (2026) and smithy's
                // `StandardRetryStrategy`: the hint, kept within [t, t + 5 s].
                ra.min(delay + AWS_RETRY_AFTER_MAX_ADDITIONAL).max(delay)
            } else {
                // The server's Retry-After replaces the backoff (gRPC pushback, urllib3), up to a cap.
                ra.min(self.hops[h].retry_after_cap)
            };
        }
        if let Some(deadline) = deadline
            && now + delay >= start + deadline
        {
            return self.settle_k::<I>(now, c, Settled::Failure, class);
        }
        let hs = &mut self.hops[h];
        if !hs.budgets.is_empty() {
            let k = pidx(hs.budget_shared, client);
            match hs.budgets[k].try_retry(now, class) {
                Some(cost) => self.lp_mut_k::<I>(c).retry_cost = cost,
                None => {
                    self.hops[h].n.budget_denied += 1;
                    return self.settle_k::<I>(now, c, Settled::Failure, class);
                }
            }
        }
        self.hops[h].n.retry_after_waits += u64::from(honour.is_some());
        let restarted = restart > 0.0 && self.draws.restart(k).bernoulli(restart);
        let persist = self.model.idempotency.persist_key;
        let l = self.lp_mut_k::<I>(c);
        l.prev_backoff = carry.unwrap_or(delay.0.min(NO_BACKOFF - 1));
        if restarted && !persist {
            l.key_gen = l.key_gen.wrapping_add(1) % NO_KEY;
        }
        let epoch = l.epoch;
        if self.trace.is_some() {
            self.note_slow::<I>(now, c, attempts, Step::Backoff, None, Some(delay));
        }
        self.queue.push(now + delay, Event::Send { call: c, epoch });
    }

    /// The call is over: a top call records the intent's completion; an inner call's answer
    /// becomes its tier's answer to the request it serves.
    fn settle_k<const I: bool>(&mut self, now: Time, c: CallRef, how: Settled, class: Class) {
        let attempts = self.lp_k::<I>(c).attempts;
        self.note_k::<I>(
            now,
            c,
            attempts.saturating_sub(1),
            Step::Settled,
            Some(class),
        );
        let l = self.lp_mut_k::<I>(c);
        l.settled = how;
        l.pending.clear();
        if how == Settled::Failure {
            let h = self.hop_k::<I>(c);
            self.hops[h].n.failed += 1;
        }
        if I {
            let i = &self.inner[c.slot()];
            let (tier, job) = (i.hop as usize - 1, i.up);
            let outcome = match (how, class) {
                (Settled::Success, _) => Outcome::Ok,
                (_, Class::ClientError) => Outcome::ClientError,
                (_, Class::Overloaded) => Outcome::Overloaded,
                _ => Outcome::Error,
            };
            self.job_answers(now, tier, job, outcome);
            return self.maybe_free_k::<I>(c);
        }
        let t = &self.tops[c.slot()];
        let (start, worker) = (t.start, t.worker);
        self.completions.record(now.since(start));
        if how == Settled::Success {
            self.successes.record(now.since(start));
            self.c.succeeded += 1;
            self.tiers[self.bottom].buckets.success(now);
        } else {
            self.c.failed += 1;
        }
        if worker != NO_WORKER {
            let think = self.model.workload.think;
            let d = if think.is_zero() {
                Duration::ZERO
            } else {
                think.sample(&mut self.draws.think(worker, self.c.intents))
            };
            self.queue.push(now + d, Event::Think { worker });
        }
        self.maybe_free_k::<I>(c);
    }

    /// Frees a settled inner call nothing refers to any more, which may finalise its intent.
    fn free_inner_call(&mut self, c: CallRef) {
        let i = &mut self.inner[c.slot()];
        if i.lp.settled == Settled::No || i.refs > 0 {
            return;
        }
        i.lp.settled = Settled::No;
        i.lp.epoch = i.lp.epoch.wrapping_add(1);
        let top = i.top as usize;
        self.free_inner.push(c.slot() as u32);
        self.tops[top].in_flight -= 1;
        self.maybe_finalise(top);
    }

    /// Counts the intent's outcome once nothing of it can change any more, and frees its slot.
    fn maybe_finalise(&mut self, slot: usize) {
        let t = &self.tops[slot];
        if t.lp.settled == Settled::No || t.in_flight > 0 {
            return;
        }
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.finalise(
                self.queue.now(),
                t.id,
                t.lp.settled == Settled::Success,
                t.applied,
            );
        }
        let idem = &self.model.idempotency;
        let succeeded = t.lp.settled == Settled::Success;
        let top = match idem.key {
            KeyMode::None => 0,
            KeyMode::PerIntent => t.lp.key_gen,
            KeyMode::PerAttempt => t.lp.attempts,
        };
        let store_live = idem.store != StoreMode::None && !self.store.is_empty();
        // A trace's key: the row is a submission of its key's intent, judged with its last row.
        let (applied, phantom, false_failure) = match self.keyed.as_mut() {
            None => (
                Some(t.applied),
                succeeded && t.applied == 0,
                !succeeded && t.applied > 0,
            ),
            Some(k) => {
                let key = self.model.workload.replay.arrivals[t.id as usize].intent;
                match k.finalise(key, t.applied, succeeded, top) {
                    None => (None, false, false),
                    Some(o) => {
                        if store_live && idem.key == KeyMode::PerIntent {
                            self.store.forget(u64::from(key), o.top);
                        }
                        (Some(o.applied), o.phantom, o.false_failure)
                    }
                }
            }
        };
        match applied {
            None => {}
            Some(0) => self.c.lost += 1,
            Some(1) => self.c.applied_once += 1,
            Some(_) => self.c.duplicated += 1,
        }
        self.c.phantom += u64::from(phantom);
        self.c.false_failures += u64::from(false_failure);
        let keyed_store = self.keyed.is_some() && idem.key == KeyMode::PerIntent;
        if store_live && !keyed_store {
            self.store.forget(t.id, top);
        }
        let t = &mut self.tops[slot];
        t.lp.settled = Settled::No;
        t.lp.epoch = t.lp.epoch.wrapping_add(1);
        self.free_tops.push(slot as u32);
        self.live -= 1;
    }
}
