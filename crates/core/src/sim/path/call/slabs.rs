//! The calls' slabs: the top calls (with the side state only some models keep), the inner
//! calls, their free slots and send times, and the walk up the chain of callers.

use super::orbit::Orbit;
use super::pace::Pace;
use super::{Call, Extra, Fans, Inner, Keep, Loop, NO_WORKER, Settled, Top};
use crate::base::time::Time;
use crate::sim::path::call::by_kind;
use crate::sim::path::callref::CallRef;
use crate::sim::path::hop::HopState;

/// The calls in progress: a top call per live intent, an inner call per request a tier's
/// client is retrying below, their free slots, and when their latest attempts went out.
/// Beside the top slab, indexed by the same slot: what only some events or models read.
#[derive(Clone, Default)]
pub(in crate::sim::path) struct Calls {
    pub(super) tops: Vec<Top>,
    pub(super) free_tops: Vec<u32>,
    /// Each intent's client process, when [`Keep::clients`].
    pub(super) clients: Vec<u32>,
    /// The closed-workload worker of each intent, when [`Keep::workers`].
    pub(super) workers: Vec<u32>,
    /// Each intent's [`Extra`], when [`Keep::extra`].
    pub(super) top_extra: Vec<Extra>,
    pub(super) keep: Keep,
    /// What [`Call::extra_mut`] hands out for a top call when the run keeps no [`Extra`].
    pub(super) scratch: Extra,
    pub(super) inner: Vec<Inner>,
    pub(super) free_inner: Vec<u32>,
    /// The fan-outs in progress (`server.fanout`), whose calls are inner calls.
    pub(in crate::sim::path) fans: Fans,
    /// When the latest attempt of each top and inner call went out, on hops that are `timed`
    /// (indexed by slot; kept apart from the slabs so that a top call stays small).
    pub(super) sent_top: Vec<Time>,
    pub(super) sent_inner: Vec<Time>,
    /// Intents started and not yet finalised.
    pub(in crate::sim::path) live: u64,
    /// Whether a study reads the orbit and the pace (`PathSim::gauged`): off, a run keeps
    /// neither, so the counters cost a plain run one branch per attempt.
    pub(in crate::sim::path) gauged: bool,
    /// Intents past their first attempt and not settled.
    pub(in crate::sim::path) orbit: Orbit,
    /// The top's attempts over the last second.
    pub(in crate::sim::path) pace: Pace,
}

impl Calls {
    pub(in crate::sim::path) fn new(keep: Keep, tiers: usize) -> Self {
        Calls {
            keep,
            fans: Fans::new(tiers),
            ..Calls::default()
        }
    }

    #[inline(always)]
    pub(in crate::sim::path) fn get<C: Call>(&self, c: CallRef) -> &C {
        &C::slab(self)[c.slot()]
    }
    #[inline(always)]
    pub(in crate::sim::path) fn get_mut<C: Call>(&mut self, c: CallRef) -> &mut C {
        &mut C::slab_mut(self)[c.slot()]
    }
    #[inline(always)]
    pub(in crate::sim::path) fn lp<C: Call>(&self, c: CallRef) -> &Loop {
        self.get::<C>(c).lp()
    }
    #[inline(always)]
    pub(in crate::sim::path) fn lp_mut<C: Call>(&mut self, c: CallRef) -> &mut Loop {
        self.get_mut::<C>(c).lp_mut()
    }
    #[inline(always)]
    pub(in crate::sim::path) fn extra<C: Call>(&self, c: CallRef) -> Extra {
        C::extra(self, c.slot())
    }
    #[inline(always)]
    pub(in crate::sim::path) fn extra_mut<C: Call>(&mut self, c: CallRef) -> &mut Extra {
        C::extra_mut(self, c.slot())
    }
    /// The loop state and the [`Extra`] of `c`, both to change.
    #[inline(always)]
    pub(in crate::sim::path) fn lp_extra_mut<C: Call>(
        &mut self,
        c: CallRef,
    ) -> (&mut Loop, &mut Extra) {
        let slot = c.slot();
        if C::INNER {
            let i = &mut self.inner[slot];
            (&mut i.lp, &mut i.extra)
        } else if self.keep.extra {
            (&mut self.tops[slot].lp, &mut self.top_extra[slot])
        } else {
            self.scratch = Extra::NONE;
            (&mut self.tops[slot].lp, &mut self.scratch)
        }
    }
    /// The client process whose per-client policies apply to `c` (0 below the top, and when
    /// no policy is per client).
    #[inline(always)]
    pub(in crate::sim::path) fn client<C: Call>(&self, c: CallRef) -> u32 {
        if C::INNER {
            0
        } else {
            self.clients.get(c.slot()).copied().unwrap_or(0)
        }
    }
    /// The closed-workload worker of the intent in `slot`, [`NO_WORKER`] if none.
    #[inline(always)]
    pub(in crate::sim::path) fn worker(&self, slot: usize) -> u32 {
        self.workers.get(slot).copied().unwrap_or(NO_WORKER)
    }
    /// The intent in `slot` had its effect once more.
    #[inline(always)]
    pub(in crate::sim::path) fn count_applied(&mut self, slot: usize) {
        self.tops[slot].applied += 1;
    }
    /// The top call `c` belongs to.
    #[inline(always)]
    pub(in crate::sim::path) fn top_of<C: Call>(&self, c: CallRef) -> usize {
        self.get::<C>(c).top_slot(c.slot())
    }
    /// A call's epoch and attempts so far, whatever its kind.
    #[inline(always)]
    pub(in crate::sim::path) fn loop_of(&self, c: CallRef) -> &Loop {
        by_kind!(c, C => self.lp::<C>(c))
    }
    /// The top slab, for prefetching the intents of upcoming events.
    #[inline(always)]
    pub(in crate::sim::path) fn tops(&self) -> &[Top] {
        &self.tops
    }
    pub(in crate::sim::path) fn reserve_tops(&mut self, n: usize) {
        self.tops.reserve(n);
        if self.keep.clients {
            self.clients.reserve(n);
        }
        if self.keep.workers {
            self.workers.reserve(n);
        }
        if self.keep.extra {
            self.top_extra.reserve(n);
        }
    }

    /// A slot for a new intent, its side state reset; the slot's epoch moves on when reused.
    pub(super) fn place_top(&mut self, id: u64, start: Time, client: u32, worker: u32) -> u32 {
        let (slot, epoch) = match self.free_tops.pop() {
            Some(s) => (s as usize, self.tops[s as usize].lp.epoch.wrapping_add(1)),
            None => (self.tops.len(), 0),
        };
        let top = Top {
            id,
            start,
            in_flight: 0,
            applied: 0,
            lp: Loop::new(epoch),
        };
        set_or_push(&mut self.tops, slot, top);
        if self.keep.clients {
            set_or_push(&mut self.clients, slot, client);
        }
        if self.keep.workers {
            set_or_push(&mut self.workers, slot, worker);
        }
        if self.keep.extra {
            set_or_push(&mut self.top_extra, slot, Extra::NONE);
        }
        slot as u32
    }

    /// Is the caller of `c` still waiting for attempt `attempt`? With hedging several copies
    /// may be.
    #[inline(always)]
    pub(in crate::sim::path) fn outstanding<C: Call>(
        &self,
        hops: &[HopState],
        c: CallRef,
        attempt: u16,
    ) -> bool {
        let call = self.get::<C>(c);
        let l = call.lp();
        if hops[call.hop()].retry.hedging() {
            l.settled == Settled::No && self.extra::<C>(c).pending.contains(attempt)
        } else {
            l.awaiting && l.attempts == attempt + 1
        }
    }

    /// Is attempt `attempt` of `c` still awaited all the way up to the user?
    #[inline(always)]
    pub(in crate::sim::path) fn chain_alive<C: Call>(
        &self,
        hops: &[HopState],
        c: CallRef,
        attempt: u16,
    ) -> bool {
        // Without timeouts and hedging at or above this hop, nobody stops waiting early.
        !hops[self.get::<C>(c).hop()].can_orphan || self.chain_walk(hops, c, attempt)
    }

    pub(super) fn chain_walk(&self, hops: &[HopState], mut c: CallRef, mut attempt: u16) -> bool {
        loop {
            if !by_kind!(c, C => self.outstanding::<C>(hops, c, attempt)) {
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

    /// The call above inner call `c` stopped waiting, and the hop it came over propagates
    /// cancellation: the inner call makes no more attempts.
    #[inline(always)]
    pub(in crate::sim::path) fn cancelled<C: Call>(&self, hops: &[HopState], c: CallRef) -> bool {
        C::INNER && hops[self.get::<C>(c).hop()].cancel_above && {
            let i = &self.inner[c.slot()];
            !by_kind!(i.parent, P => self.chain_alive::<P>(hops, i.parent, i.parent_attempt))
        }
    }

    /// Records when `c`'s latest attempt went out (slow calls of the breaker).
    pub(super) fn mark_sent<C: Call>(&mut self, c: CallRef, now: Time) {
        let v = C::sent(self);
        if v.len() <= c.slot() {
            v.resize(c.slot() + 1, Time::ZERO);
        }
        v[c.slot()] = now;
    }

    /// When `c`'s latest attempt went out; with hedging, the latest copy (an approximation:
    /// an earlier copy's answer is timed from the latest copy).
    pub(super) fn sent_at<C: Call>(&mut self, c: CallRef) -> Time {
        C::sent(self).get(c.slot()).copied().unwrap_or(Time::ZERO)
    }
}

/// Writes `v` at `slot`, one past the end growing the vector.
#[inline(always)]
fn set_or_push<T>(v: &mut Vec<T>, slot: usize, x: T) {
    if slot < v.len() {
        v[slot] = x;
    } else {
        v.push(x);
    }
}
