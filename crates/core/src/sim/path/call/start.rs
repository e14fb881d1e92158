//! A call begins: an intent's top call at hop 0, or the inner call a tier's client makes to the
//! tier below for the request its worker is serving.

use super::{Call, Extra, Inner, Loop, Top};
use crate::base::time::Time;
use crate::sim::draws;
use crate::sim::path::PathSim;
use crate::sim::path::callref::CallRef;
use crate::sim::path::tier::Request;
use crate::sim::trace::Step;

/// The worker of a top call not started by a closed-workload worker.
pub(in crate::sim::path) const NO_WORKER: u32 = u32::MAX;

impl PathSim<'_> {
    /// Intent `id` starts, for client process `client` (`worker` in a closed workload, else
    /// [`NO_WORKER`]): its top call sends attempt 0.
    pub(in crate::sim::path) fn start_intent(
        &mut self,
        now: Time,
        id: u64,
        client: u32,
        worker: u32,
    ) {
        let calls = &mut self.calls;
        let slot = calls.place_top(id, now, client, worker);
        if let Some(k) = self.keyed.as_mut() {
            k.start(self.model.workload.replay.arrivals[id as usize].intent);
        }
        calls.live += 1;
        self.c.intents += 1;
        self.hops[0].n.received += 1;
        self.note::<Top>(now, CallRef::top(slot), 0, Step::Start, None);
        self.send::<Top>(now, CallRef::top(slot));
    }

    /// Tier `hop - 1` finished its own work on `parent` (its job `job`): the client inside it
    /// calls the next tier with its own retry loop.
    pub(in crate::sim::path) fn start_inner<P: Call>(
        &mut self,
        now: Time,
        hop: usize,
        job: u32,
        parent: Request,
    ) {
        let pc = parent.call;
        let calls = &mut self.calls;
        let p = calls.get::<P>(pc);
        let top = calls.top_of::<P>(pc) as u32;
        let above = if P::INNER {
            calls.inner[pc.slot()].path
        } else {
            0
        };
        let path = draws::child_path(above, parent.attempt);
        let retry_path = p.retry_path(parent.attempt);
        let wanted = calls.chain_alive::<P>(&self.hops, pc, parent.attempt);
        let mut c = Inner {
            id: calls.tops[top as usize].id,
            start: now,
            path,
            top,
            up: job,
            parent: pc,
            parent_attempt: parent.attempt,
            refs: 0,
            key: parent.key,
            hop: hop as u8,
            retry_path,
            lp: Loop::new(0),
            extra: Extra::NONE,
        };
        let slot = match calls.free_inner.pop() {
            Some(s) => {
                c.lp.epoch = calls.inner[s as usize].lp.epoch.wrapping_add(1);
                calls.inner[s as usize] = c;
                s
            }
            None => {
                calls.inner.push(c);
                (calls.inner.len() - 1) as u32
            }
        };
        // The inner call keeps its intent from being finalised until it is freed.
        calls.tops[top as usize].in_flight += 1;
        let n = &mut self.hops[hop].n;
        n.received += 1;
        n.orphaned += u64::from(!wanted);
        self.send::<Inner>(now, CallRef::inner(slot));
    }
}
