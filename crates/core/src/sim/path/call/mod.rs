//! Calls: the retry loop of one caller for one request, written once for every hop.
//!
//! A *top* call is an intent: its client sends attempts (one outstanding at a time, or several
//! with hedging), waits for an answer or its timeout, backs off and retries, under the hop's
//! budget, breaker and Retry-After handling. An *inner* call is the same loop run by the client
//! inside a tier for one request that tier is serving; its answer becomes the tier's answer.
//!
//! [`Calls`] owns both slabs. The loop is written once, generic over [`Call`] (implemented by
//! [`Top`] and [`Inner`]) and monomorphised for each: a one-tier path, whose calls are all top
//! calls, pays no branch on the kind of call. Where a call of either kind turns up (an event, a
//! tier's queue), [`by_kind!`] picks the instance once.
//!
//! - `start.rs`: a call begins (an intent at the top, an inner call below a tier).
//! - `fan.rs`: a fan-out's calls and the rule the tier's answer waits for.
//! - `attempt.rs`: an attempt goes out: cancellation, local admission, the limiter, the network.
//! - `answer.rs`: an answer or a timeout reaches the caller: what its policies learn from it.
//! - `retry.rs`: a retryable failure: backoff, Retry-After, deadline, budget, the next `Send`.
//! - `hedge.rs`: hedging's copies and pushback.
//! - `orbit.rs`, `pace.rs`: the retry orbit and the attempts of the last second, for studies
//!   that score a run by them.
//! - `settle.rs`: the call is over; freeing calls and what an intent's outcome needs.
//! - `slabs.rs`: [`Calls`], the slabs of both kinds and the side state only some models keep.
//!
//! The handlers are [`Calls`]' own, beside the hops' policies ([`HopState`](super::hop::HopState)) and the shared
//! [`Cx`]. Where the loop hands over to another owner (the attempt reaches its tier, the call
//! settles, the caller learns an outcome its limiter must hear), a handler returns [`Next`] and
//! the engine routes it.

mod answer;
mod attempt;
mod fan;
mod hedge;
mod orbit;
mod pace;
mod retry;
mod settle;
mod slabs;
mod start;

pub(super) use fan::{Answer, Fans};
pub(super) use slabs::Calls;
pub(super) use start::NO_WORKER;

use super::Cx;
use super::callref::CallRef;
use super::tier::Request;
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::hedge::Pending;
use crate::sim::draws::AttemptKey;
use crate::sim::trace::{Step, TraceEvent};

/// What a call's handler leaves to another owner, for the call it ran on.
#[derive(Clone, Copy, Debug)]
pub(super) enum Next {
    /// Nothing more now.
    Idle,
    /// The call is over, its last result of this class.
    Settle(Settled, Class),
    /// The caller learns at once how this attempt ended (a lost request with
    /// `loss_notice = "error"`).
    Sees(u16, Class),
    /// The attempt reaches replica `.1` of its tier now (a hop that takes no time).
    Arrive(Request, u16),
}

/// How an attempt ended, as its caller learns it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Seen {
    pub(super) attempt: u16,
    pub(super) class: Class,
    /// The server's `Retry-After`, if any.
    pub(super) retry_after: Option<Duration>,
}

const NO_BACKOFF: u64 = crate::policy::backoff::NO_STATE;
/// Hedging never backs off, so a hedged call keeps the server's pushback in `prev_backoff`
/// instead (gRFC A6, "Pushback"): the time in ns before which no further copy goes out,
/// [`NO_BACKOFF`] for none, or this value once an answer said "don't retry".
const HEDGE_STOPPED: u64 = u64::MAX - 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Settled {
    No,
    Success,
    Failure,
}

/// The state every retry loop reads on every event: eight bytes, so that a top call fits in
/// half a cache line.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loop {
    pub(super) epoch: u32,
    /// Attempts sent so far; the outstanding one is `attempts - 1`.
    pub(super) attempts: u16,
    awaiting: bool,
    pub(super) settled: Settled,
}

impl Loop {
    fn new(epoch: u32) -> Self {
        Loop {
            epoch,
            attempts: 0,
            awaiting: false,
            settled: Settled::No,
        }
    }
}

/// The state only some policies need: decorrelated or Polly jitter (the last delay), hedging
/// (its copies and the pushback hold), retry budgets that charge a cost, and restarts that take
/// a new idempotency key. A top call keeps it in a side slab that exists only when hop 0 has
/// such a policy ([`Keep::extra`]); an inner call keeps it inline.
#[derive(Clone, Copy, Debug)]
pub(super) struct Extra {
    /// The last backoff delay drawn (decorrelated jitter), [`NO_BACKOFF`] before the first;
    /// with hedging, the pushback hold ([`HEDGE_STOPPED`]).
    prev_backoff: u64,
    /// Hedging: copies awaiting an answer.
    pending: Pending,
    /// What the AWS quota charged for the retry that sent the latest attempt (0 = first try).
    retry_cost: u32,
    /// The idempotency key's generation: a restart (`restart_probability`) takes a new key.
    key_gen: u16,
}

impl Extra {
    /// The state of a call that has not retried: what a call without these policies always reads.
    const NONE: Extra = Extra {
        prev_backoff: NO_BACKOFF,
        pending: Pending(0),
        retry_cost: 0,
        key_gen: 0,
    };
}

impl Default for Extra {
    fn default() -> Self {
        Extra::NONE
    }
}

/// Which of a top call's side state a run keeps, chosen once from the model: what the herd does
/// not need costs it no memory.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Keep {
    /// Hop 0 or tier 0 has per-client policy instances: each intent's client process.
    pub(super) clients: bool,
    /// A closed workload: the worker that starts the next intent.
    pub(super) workers: bool,
    /// Hop 0 needs [`Extra`].
    pub(super) extra: bool,
}

/// An intent and its client's retry loop: what an event reads, in half a cache line (the
/// forced herd touches a random one per event, and 10^7 of them are live at once). What only
/// some events or models need lives beside it in [`Calls`].
#[derive(Clone, Debug)]
#[repr(align(32))]
pub(crate) struct Top {
    pub(super) id: u64,
    start: Time,
    /// Everything of the intent in flight anywhere on the path (messages, queued and served
    /// requests, inner calls not yet freed).
    in_flight: u32,
    /// The effects the intent has had at the last tier.
    applied: u32,
    pub(super) lp: Loop,
}

// Two top calls a cache line: the layout the forced herd's memory and misses are measured with.
const _: () = assert!(std::mem::size_of::<Top>() == 32);

/// The retry loop of the client inside a tier, for one request that tier serves.
#[derive(Clone, Debug)]
pub(crate) struct Inner {
    id: u64,
    start: Time,
    /// This call's key within its intent: draws of its attempts hash it with the attempt number.
    path: u64,
    /// The top call's slot.
    top: u32,
    /// The job serving the parent request at the tier above this call's hop; for a call of a
    /// fan-out (`leaf`), the fan it is a call of.
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
    /// One of the calls of a fan-out (`up` is its fan).
    leaf: bool,
    pub(super) lp: Loop,
    extra: Extra,
}

/// What the retry loop needs of a kind of call; implemented by [`Top`] and [`Inner`], each
/// function a field read the compiler folds into the generic loop.
pub(super) trait Call: Sized + 'static {
    /// An inner call (a retry loop inside a tier).
    const INNER: bool;
    /// This kind's slab in [`Calls`].
    fn slab(calls: &Calls) -> &[Self];
    fn slab_mut(calls: &mut Calls) -> &mut [Self];
    /// When this kind's latest attempts went out (kept on `timed` hops only).
    fn sent(calls: &mut Calls) -> &mut Vec<Time>;
    fn lp(&self) -> &Loop;
    fn lp_mut(&mut self) -> &mut Loop;
    /// The hop this call sends over (and the tier it sends to).
    fn hop(&self) -> usize;
    /// The intent's id.
    fn id(&self) -> u64;
    fn start(&self) -> Time;
    /// The call's [`Extra`] state: [`Extra::NONE`] for a top call when the run keeps none.
    fn extra(calls: &Calls, slot: usize) -> Extra;
    /// The call's [`Extra`] state to change; when the run keeps none for top calls, a scratch
    /// copy reset to [`Extra::NONE`] that nothing reads back.
    fn extra_mut(calls: &mut Calls, slot: usize) -> &mut Extra;
    /// The top call's slot, given this call's own.
    fn top_slot(&self, slot: usize) -> usize;
    /// The draw key of attempt `attempt` ([`AttemptKey`]).
    fn key(&self, attempt: u16) -> AttemptKey;
    /// Is some attempt on the way to attempt `attempt` a retry?
    fn retry_path(&self, attempt: u16) -> bool;
    /// Something of the call goes in flight, or comes back.
    fn hold(&mut self);
    fn unhold(&mut self);
}

/// The accessors of the fields [`Top`] and [`Inner`] share, and of the kind's slab and send
/// times in [`Calls`] (`slab`, `sent`: their fields there); `held` counts what is in flight.
macro_rules! common_fields {
    ($slab:ident, $sent:ident, $held:ident) => {
        #[inline(always)]
        fn hold(&mut self) {
            self.$held += 1;
        }
        #[inline(always)]
        fn unhold(&mut self) {
            self.$held -= 1;
        }
        #[inline(always)]
        fn slab(calls: &Calls) -> &[Self] {
            &calls.$slab
        }
        #[inline(always)]
        fn slab_mut(calls: &mut Calls) -> &mut [Self] {
            &mut calls.$slab
        }
        #[inline(always)]
        fn sent(calls: &mut Calls) -> &mut Vec<Time> {
            &mut calls.$sent
        }
        #[inline(always)]
        fn lp(&self) -> &Loop {
            &self.lp
        }
        #[inline(always)]
        fn lp_mut(&mut self) -> &mut Loop {
            &mut self.lp
        }
        #[inline(always)]
        fn id(&self) -> u64 {
            self.id
        }
        #[inline(always)]
        fn start(&self) -> Time {
            self.start
        }
    };
}

impl Call for Top {
    const INNER: bool = false;
    common_fields!(tops, sent_top, in_flight);
    #[inline(always)]
    fn extra(calls: &Calls, slot: usize) -> Extra {
        if calls.keep.extra {
            calls.top_extra[slot]
        } else {
            Extra::NONE
        }
    }
    #[inline(always)]
    fn extra_mut(calls: &mut Calls, slot: usize) -> &mut Extra {
        if calls.keep.extra {
            &mut calls.top_extra[slot]
        } else {
            calls.scratch = Extra::NONE;
            &mut calls.scratch
        }
    }
    #[inline(always)]
    fn hop(&self) -> usize {
        0
    }
    #[inline(always)]
    fn top_slot(&self, slot: usize) -> usize {
        slot
    }
    #[inline(always)]
    fn key(&self, attempt: u16) -> AttemptKey {
        AttemptKey::top(self.id, attempt)
    }
    #[inline(always)]
    fn retry_path(&self, attempt: u16) -> bool {
        attempt > 0
    }
}

impl Call for Inner {
    const INNER: bool = true;
    common_fields!(inner, sent_inner, refs);
    #[inline(always)]
    fn extra(calls: &Calls, slot: usize) -> Extra {
        calls.inner[slot].extra
    }
    #[inline(always)]
    fn extra_mut(calls: &mut Calls, slot: usize) -> &mut Extra {
        &mut calls.inner[slot].extra
    }
    #[inline(always)]
    fn hop(&self) -> usize {
        self.hop as usize
    }
    #[inline(always)]
    fn top_slot(&self, _slot: usize) -> usize {
        self.top as usize
    }
    #[inline(always)]
    fn key(&self, attempt: u16) -> AttemptKey {
        AttemptKey::below(self.id, self.path, attempt)
    }
    #[inline(always)]
    fn retry_path(&self, attempt: u16) -> bool {
        attempt > 0 || self.retry_path
    }
}

/// Runs `$body` with `$C` the kind of call `$c` is ([`Top`] or [`Inner`]): the one place a
/// call of either kind is dispatched to the loop's generic code.
macro_rules! by_kind {
    ($c:expr, $C:ident => $body:expr) => {
        if $c.is_inner() {
            type $C = $crate::sim::path::call::Inner;
            $body
        } else {
            type $C = $crate::sim::path::call::Top;
            $body
        }
    };
}
pub(super) use by_kind;

impl Calls {
    /// Traces one step of call `c`'s attempt `attempt` (its hop is the tier it sends to); a
    /// branch on `None` when tracing is off.
    #[inline(always)]
    pub(super) fn note<C: Call>(
        &self,
        cx: &mut Cx,
        c: CallRef,
        attempt: u16,
        step: Step,
        class: Option<Class>,
    ) {
        if cx.trace.is_some() {
            self.note_slow::<C>(cx, c, attempt, step, class, None);
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn note_slow<C: Call>(
        &self,
        cx: &mut Cx,
        c: CallRef,
        attempt: u16,
        step: Step,
        class: Option<Class>,
        delay: Option<Duration>,
    ) {
        let call = self.get::<C>(c);
        let mut ev = TraceEvent::new(cx.now, call.id(), call.hop(), attempt, step);
        ev.class = class;
        ev.delay_ns = delay.map(|d| d.0);
        if let Some(t) = cx.trace.as_deref_mut() {
            t.record(ev);
        }
    }
}
