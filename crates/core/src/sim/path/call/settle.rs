//! The call is over: its own part of settling (the trace, its policies' last word, its hop's
//! tally), freeing a call once nothing refers to it, and what an intent's outcome needs once
//! its client has settled and nothing of it is in flight. What the rest of the path does about
//! it (the tier above answers, the intent is counted) is the engine's (`sim/path/settle.rs`).

use super::{Call, Calls, Settled, Top};
use crate::base::time::Time;
use crate::model::KeyMode;
use crate::policy::Class;
use crate::sim::path::Cx;
use crate::sim::path::callref::CallRef;
use crate::sim::path::hop::HopState;
use crate::sim::trace::Step;

/// An intent whose client has settled and of which nothing is in flight any more.
pub(in crate::sim::path) struct Finished {
    pub(in crate::sim::path) id: u64,
    pub(in crate::sim::path) succeeded: bool,
    /// The effects it had at the last tier.
    pub(in crate::sim::path) applied: u32,
    /// Its idempotency keys are `0..=top`.
    pub(in crate::sim::path) top: u16,
}

impl Calls {
    /// The call settles `how`, `class` being its last result: what it and its hop's policies
    /// record.
    pub(in crate::sim::path) fn settle<C: Call>(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        c: CallRef,
        how: Settled,
        class: Class,
    ) {
        let now = cx.now;
        let call = self.get::<C>(c);
        let (h, attempts) = (call.hop(), call.lp().attempts);
        let last = attempts.saturating_sub(1);
        self.note::<C>(cx, c, last, Step::Settled, Some(class));
        self.lp_mut::<C>(c).settled = how;
        if !C::INNER && self.gauged {
            self.orbit.leave(c.slot());
        }
        let hs = &mut hops[h];
        if let Some(b) = &mut hs.balancing {
            b.settled(self.client::<C>(c), c.slot(), now);
        }
        if attempts > 0 && hs.retry.breaker_around {
            self.breaker_learns::<C>(now, hs, c, how, class);
        }
        if hs.retry.hedging() {
            self.extra_mut::<C>(c).pending.clear();
        }
        if how == Settled::Failure {
            hs.n.failed += 1;
        }
    }

    /// The caller stops waiting for the attempt `c` has out: it is cancelled.
    pub(in crate::sim::path) fn stop_waiting<C: Call>(&mut self, c: CallRef) {
        self.lp_mut::<C>(c).awaiting = false;
    }

    /// `breaker.placement = "around-retries"`: the breaker that permitted the call's first try
    /// records the call's one outcome, a failure when its last result was (as per attempt:
    /// every class but success, 4xx and 409), timed from the call's start for the slow-call
    /// rate. A call that sent nothing (its first try refused by the budget, the breaker or the
    /// limiter) records nothing.
    fn breaker_learns<C: Call>(
        &self,
        now: Time,
        hs: &mut HopState,
        c: CallRef,
        how: Settled,
        class: Class,
    ) {
        let took = now.since(self.get::<C>(c).start());
        if let Some(b) = hs.breaker(self.client::<C>(c)) {
            let failure = how == Settled::Failure && class.is_server_failure();
            b.on_call(now, failure, took);
        }
    }

    /// The tier above inner call `c` and the job there that waits for its answer, or for a call
    /// of a fan-out its fan (`Err`).
    pub(in crate::sim::path) fn waiting_job(&self, c: CallRef) -> Result<(usize, u32), u32> {
        let i = &self.inner[c.slot()];
        if i.leaf {
            Err(i.up)
        } else {
            Ok((usize::from(i.hop) - 1, i.up))
        }
    }

    /// Inner call `c` is one of the calls of fan `fan`, of this epoch, and not settled.
    pub(in crate::sim::path) fn unsettled_leaf(&self, slot: u32, epoch: u32, fan: u32) -> bool {
        let i = &self.inner[slot as usize];
        i.leaf && i.up == fan && i.lp.epoch == epoch && i.lp.settled == Settled::No
    }

    /// Frees a settled inner call nothing refers to any more; its intent's slot, which may be
    /// finalised now.
    pub(in crate::sim::path) fn free_inner(&mut self, c: CallRef) -> Option<usize> {
        let i = &mut self.inner[c.slot()];
        if i.lp.settled == Settled::No || i.refs > 0 {
            return None;
        }
        i.lp.settled = Settled::No;
        i.lp.epoch = i.lp.epoch.wrapping_add(1);
        let top = i.top as usize;
        if i.leaf {
            self.fans.release(i.up);
        }
        self.free_inner.push(c.slot() as u32);
        self.tops[top].in_flight -= 1;
        Some(top)
    }

    /// The intent in `slot`, if nothing of it can change any more (its keys counted by `key`).
    pub(in crate::sim::path) fn finished(&self, slot: usize, key: KeyMode) -> Option<Finished> {
        let t = &self.tops[slot];
        if t.lp.settled == Settled::No || t.in_flight > 0 {
            return None;
        }
        let top = match key {
            KeyMode::None => 0,
            KeyMode::PerIntent => self.extra::<Top>(CallRef::top(slot as u32)).key_gen,
            KeyMode::PerAttempt => t.lp.attempts,
        };
        Some(Finished {
            id: t.id,
            succeeded: t.lp.settled == Settled::Success,
            applied: t.applied,
            top,
        })
    }

    /// Frees the slot of a finished intent.
    pub(in crate::sim::path) fn free_top(&mut self, slot: usize) {
        let t = &mut self.tops[slot];
        t.lp.settled = Settled::No;
        t.lp.epoch = t.lp.epoch.wrapping_add(1);
        self.free_tops.push(slot as u32);
        self.live -= 1;
    }
}
