//! The call is over. A top call records its intent's completion (and a closed-workload worker
//! thinks before its next intent); an inner call's answer becomes its tier's answer. A call is
//! freed once nothing refers to it, and an intent is *finalised* (its outcome counted, its slot
//! freed) once its client has settled and nothing of it is in flight anywhere on the path.

use super::{Call, NO_WORKER, Settled, Top};
use crate::base::time::Time;
use crate::model::{KeyMode, StoreMode};
use crate::policy::Class;
use crate::sim::path::PathSim;
use crate::sim::path::callref::CallRef;
use crate::sim::path::tier::Outcome;
use crate::sim::trace::Step;

impl PathSim<'_> {
    /// The call settles `how`, `class` being its last result.
    pub(in crate::sim::path) fn settle<C: Call>(
        &mut self,
        now: Time,
        c: CallRef,
        how: Settled,
        class: Class,
    ) {
        let call = self.calls.get::<C>(c);
        let (h, attempts) = (call.hop(), call.lp().attempts);
        self.note::<C>(
            now,
            c,
            attempts.saturating_sub(1),
            Step::Settled,
            Some(class),
        );
        self.calls.lp_mut::<C>(c).settled = how;
        if let Some(b) = &mut self.hops[h].balancing {
            b.settled(self.calls.client::<C>(c), c.slot(), now);
        }
        if attempts > 0 && self.hops[h].retry.breaker_around {
            self.breaker_learns::<C>(now, c, how, class);
        }
        if self.hops[h].retry.hedging() {
            self.calls.extra_mut::<C>(c).pending.clear();
        }
        if how == Settled::Failure {
            self.hops[h].n.failed += 1;
        }
        if C::INNER {
            let i = &self.calls.inner[c.slot()];
            let (tier, job) = (h - 1, i.up);
            let outcome = match (how, class) {
                (Settled::Success, _) => Outcome::Ok,
                (_, Class::ClientError) => Outcome::ClientError,
                (_, Class::Overloaded) => Outcome::Overloaded,
                _ => Outcome::Error,
            };
            self.job_answers(now, tier, job, outcome);
            return self.maybe_free::<C>(c);
        }
        let took = now.since(self.calls.top(c.slot()).start);
        let worker = self.calls.worker(c.slot());
        self.completions.record(took);
        self.c.last_settled = now;
        if how == Settled::Success {
            self.successes.record(took);
            self.c.succeeded += 1;
            self.tiers[self.bottom].buckets.success(now);
        } else {
            self.c.failed += 1;
        }
        if worker != NO_WORKER {
            let (model, draws, intents) = (self.model, self.draws, self.c.intents);
            self.workload
                .think(model, draws, &mut self.queue, now, worker, intents);
        }
        self.maybe_free::<C>(c);
    }

    /// `breaker.placement = "around-retries"`: the breaker that permitted the call's first try
    /// records the call's one outcome, a failure when its last result was (as per attempt:
    /// every class but success, 4xx and 409), timed from the call's start for the slow-call
    /// rate. A call that sent nothing (its first try refused by the budget, the breaker or the
    /// limiter) records nothing.
    fn breaker_learns<C: Call>(&mut self, now: Time, c: CallRef, how: Settled, class: Class) {
        let call = self.calls.get::<C>(c);
        let (h, took) = (call.hop(), now.since(call.start()));
        let client = self.calls.client::<C>(c);
        if let Some(b) = self.hops[h].breaker(client) {
            let failure = how == Settled::Failure && class.is_server_failure();
            b.on_call(now, failure, took);
        }
    }

    /// Frees a settled inner call nothing refers to any more, which may finalise its intent.
    pub(super) fn free_inner_call(&mut self, c: CallRef) {
        let calls = &mut self.calls;
        let i = &mut calls.inner[c.slot()];
        if i.lp.settled == Settled::No || i.refs > 0 {
            return;
        }
        i.lp.settled = Settled::No;
        i.lp.epoch = i.lp.epoch.wrapping_add(1);
        let top = i.top as usize;
        calls.free_inner.push(c.slot() as u32);
        calls.tops[top].in_flight -= 1;
        self.maybe_finalise(top);
    }

    /// Counts the intent's outcome once nothing of it can change any more, and frees its slot.
    pub(super) fn maybe_finalise(&mut self, slot: usize) {
        let t = &self.calls.tops[slot];
        if t.lp.settled == Settled::No || t.in_flight > 0 {
            return;
        }
        let applied = self.calls.applied(slot);
        let succeeded = t.lp.settled == Settled::Success;
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.finalise(self.queue.now(), t.id, succeeded, applied);
        }
        let idem = &self.model.idempotency;
        let top = match idem.key {
            KeyMode::None => 0,
            KeyMode::PerIntent => self.calls.extra::<Top>(CallRef::top(slot as u32)).key_gen,
            KeyMode::PerAttempt => t.lp.attempts,
        };
        let store_live = idem.store != StoreMode::None && !self.store.is_empty();
        // A trace's key: the row is a submission of its key's intent, judged with its last row.
        let (applied, phantom, false_failure) = match self.keyed.as_mut() {
            None => (
                Some(applied),
                succeeded && applied == 0,
                !succeeded && applied > 0,
            ),
            Some(k) => {
                let key = self.model.workload.replay.arrivals[t.id as usize].intent;
                match k.finalise(key, applied, succeeded, top) {
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
        let calls = &mut self.calls;
        let t = &mut calls.tops[slot];
        t.lp.settled = Settled::No;
        t.lp.epoch = t.lp.epoch.wrapping_add(1);
        calls.free_tops.push(slot as u32);
        calls.live -= 1;
    }
}
