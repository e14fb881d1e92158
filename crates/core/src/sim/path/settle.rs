//! A call is over, and what that means beyond the call: an inner call's answer becomes its
//! tier's answer; a top call records its intent's completion (and a closed-workload worker
//! thinks before its next intent). A call is freed once nothing refers to it, and an intent is
//! *finalised* (its outcome counted, its slot freed) once its client has settled and nothing of
//! it is in flight anywhere on the path, which touches the store and a trace's keys too.

use super::PathSim;
use super::call::{Call, NO_WORKER, Settled};
use super::callref::CallRef;
use super::tier::Outcome;
use crate::model::{KeyMode, StoreMode};
use crate::policy::Class;

impl PathSim<'_> {
    /// The call settles `how`, `class` being its last result.
    pub(super) fn settle<C: Call>(&mut self, c: CallRef, how: Settled, class: Class) {
        self.calls
            .settle::<C>(&mut self.cx, &mut self.hops, c, how, class);
        if self.calls.fans.carrying() {
            let epoch = self.calls.lp::<C>(c).epoch;
            self.calls.fans.forget(c, epoch);
        }
        if C::INNER {
            let outcome = match (how, class) {
                (Settled::Success, _) => Outcome::Ok,
                (_, Class::ClientError) => Outcome::ClientError,
                (_, Class::Overloaded) => Outcome::Overloaded,
                _ => Outcome::Error,
            };
            match self.calls.waiting_job(c) {
                Ok((tier, job)) => self.job_answers(tier, job, outcome),
                Err(fan) => self.leaf_settled(fan, outcome),
            }
            return self.maybe_free::<C>(c);
        }
        let now = self.cx.now;
        let took = now.since(self.calls.get::<C>(c).start());
        let worker = self.calls.worker(c.slot());
        self.completions.record(took);
        self.c.last_settled = now;
        if how == Settled::Success {
            self.successes.record(took);
            self.c.succeeded += 1;
            self.tiers[self.cx.bottom].buckets.success(now);
        } else {
            self.c.failed += 1;
        }
        if worker != NO_WORKER {
            let cx = &mut self.cx;
            let intents = self.c.intents;
            self.workload
                .think(cx.model, cx.draws, &mut cx.queue, now, worker, intents);
        }
        self.maybe_free::<C>(c);
    }

    /// Something of `c` came back and nothing else of it is in flight: `c` may be freed.
    #[inline(always)]
    pub(super) fn release<C: Call>(&mut self, c: CallRef) {
        self.calls.get_mut::<C>(c).unhold();
        self.maybe_free::<C>(c);
    }

    /// Frees a settled call nothing refers to any more; freeing an inner call may finalise its
    /// intent.
    #[inline(always)]
    pub(super) fn maybe_free<C: Call>(&mut self, c: CallRef) {
        if C::INNER {
            if let Some(top) = self.calls.free_inner(c) {
                self.maybe_finalise(top);
            }
        } else {
            self.maybe_finalise(c.slot())
        }
    }

    /// Counts the intent's outcome once nothing of it can change any more, and frees its slot.
    fn maybe_finalise(&mut self, slot: usize) {
        let model = self.cx.model;
        let idem = &model.idempotency;
        let Some(f) = self.calls.finished(slot, idem.key) else {
            return;
        };
        if let Some(tr) = self.cx.trace.as_deref_mut() {
            tr.finalise(self.cx.queue.now(), f.id, f.succeeded, f.applied);
        }
        let store_live = idem.store != StoreMode::None && !self.store.is_empty();
        // A trace's key: the row is a submission of its key's intent, judged with its last row.
        let (applied, phantom, false_failure) = match self.keyed.as_mut() {
            None => (
                Some(f.applied),
                f.succeeded && f.applied == 0,
                !f.succeeded && f.applied > 0,
            ),
            Some(k) => {
                let key = model.workload.replay.arrivals[f.id as usize].intent;
                match k.finalise(key, f.applied, f.succeeded, f.top) {
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
            self.store.forget(f.id, f.top);
        }
        self.calls.free_top(slot);
    }
}
