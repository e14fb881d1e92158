//! A call begins: an intent's top call at hop 0, or the inner call a tier's client makes to the
//! tier below for the request its worker is serving.

use super::{Call, Calls, Extra, Inner, Loop, Top};
use crate::sim::draws;
use crate::sim::path::Cx;
use crate::sim::path::callref::CallRef;
use crate::sim::path::hop::HopState;
use crate::sim::path::tier::Request;
use crate::sim::trace::Step;

/// The worker of a top call not started by a closed-workload worker.
pub(in crate::sim::path) const NO_WORKER: u32 = u32::MAX;

impl Calls {
    /// Intent `id` starts, for client process `client` (`worker` in a closed workload, else
    /// [`NO_WORKER`]): its top call, about to send attempt 0.
    #[inline(always)]
    pub(in crate::sim::path) fn start_top(
        &mut self,
        cx: &mut Cx,
        hops: &mut [HopState],
        id: u64,
        client: u32,
        worker: u32,
    ) -> CallRef {
        let slot = self.place_top(id, cx.now, client, worker);
        self.live += 1;
        hops[0].n.received += 1;
        let c = CallRef::top(slot);
        self.note::<Top>(cx, c, 0, Step::Start, None);
        c
    }

    /// Tier `hop - 1` finished its own work on `parent` (its job `job`): the client inside it
    /// calls the next tier with its own retry loop, about to send attempt 0. With a fan-out,
    /// `leaf` is the call's number in fan `job` (else `None`).
    #[inline(always)]
    pub(in crate::sim::path) fn start_inner<P: Call>(
        &mut self,
        cx: &Cx,
        hops: &mut [HopState],
        hop: usize,
        job: u32,
        parent: Request,
        leaf: Option<u32>,
    ) -> CallRef {
        let pc = parent.call;
        let p = self.get::<P>(pc);
        let top = self.top_of::<P>(pc) as u32;
        let above = if P::INNER {
            self.inner[pc.slot()].path
        } else {
            0
        };
        let path = draws::leaf_path(draws::child_path(above, parent.attempt), leaf.unwrap_or(0));
        let retry_path = p.retry_path(parent.attempt);
        let wanted = self.chain_alive::<P>(hops, pc, parent.attempt);
        let mut c = Inner {
            id: self.tops[top as usize].id,
            start: cx.now,
            path,
            top,
            up: job,
            parent: pc,
            parent_attempt: parent.attempt,
            refs: 0,
            key: parent.key,
            hop: hop as u8,
            retry_path,
            leaf: leaf.is_some(),
            lp: Loop::new(0),
            extra: Extra::NONE,
        };
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
        let n = &mut hops[hop].n;
        n.received += 1;
        n.orphaned += u64::from(!wanted);
        CallRef::inner(slot)
    }
}
