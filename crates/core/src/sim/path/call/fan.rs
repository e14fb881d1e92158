//! A fan-out (`server.fanout`): the calls a tier's client makes to the next tier for one
//! request, and the rule the tier's answer waits for. Each call is an inner call of its own (a
//! *leaf*, with the tier's retry policy); the fan counts what they answer and says when the tier
//! answers: a success once `needed` calls succeeded, a failure as soon as too many failed for
//! that. A fan's slot is kept until every one of its calls is freed, since each names it.

use crate::model::{Fanout, Resend};
use crate::sim::path::callref::CallRef;
use crate::sim::path::tier::Outcome;
use std::collections::BTreeMap;

/// One request's fan-out.
#[derive(Clone, Debug)]
pub(in crate::sim::path) struct Fan {
    /// The tier that fans out and its job that waits for the answer.
    pub(in crate::sim::path) tier: u8,
    pub(in crate::sim::path) job: u32,
    /// The call whose request the job serves, and its epoch: what `resend = "missing"` keys the
    /// successes it carries by.
    parent: CallRef,
    parent_epoch: u32,
    /// Calls this fan sends, and the successes its answer waits for.
    calls: u32,
    needed: u32,
    ok: u32,
    failed: u32,
    /// Successes carried in from the parent's earlier attempts (`resend = "missing"`).
    carried: u32,
    /// Calls started, and those not settled.
    started: u32,
    unsettled: u32,
    /// Calls not freed, plus one while the fan is being sent or cancelled.
    held: u32,
    /// The tier has not answered yet.
    pub(in crate::sim::path) open: bool,
    /// The answer passed up when the fan fails: the first failure's.
    failure: Outcome,
    /// With `cancel`: the calls as (slot, epoch), to cancel once the tier has answered.
    leaves: Vec<(u32, u32)>,
}

/// What the fans of one tier did (`summary.fanout[]`).
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::sim::path) struct FanCounters {
    /// Requests fanned out.
    pub(in crate::sim::path) fans: u64,
    /// Calls started (each a retry loop at the next hop).
    pub(in crate::sim::path) leaves: u64,
    pub(in crate::sim::path) answered_ok: u64,
    pub(in crate::sim::path) answered_failed: u64,
    /// Calls not settled when the tier answered their request.
    pub(in crate::sim::path) running_after: u64,
    /// Calls cancelled once the tier had answered (`cancel`), or never sent for that reason.
    pub(in crate::sim::path) cancelled: u64,
    /// Requests of calls a worker of the next tier started on after the tier had answered.
    pub(in crate::sim::path) served_after: u64,
}

/// Every fan in progress, their free slots, the successes `resend = "missing"` carries between
/// a call's attempts, and each tier's counts.
#[derive(Clone, Default)]
pub(in crate::sim::path) struct Fans {
    fans: Vec<Fan>,
    free: Vec<u32>,
    /// `resend = "missing"`: the successes the fans of a call's attempts gathered, by the call
    /// and its epoch, until the call settles. Looked up, never iterated.
    carried: BTreeMap<(u32, u32), u32>,
    /// Recycled `leaves` lists.
    lists: Vec<Vec<(u32, u32)>>,
    /// Per tier.
    pub(in crate::sim::path) n: Vec<FanCounters>,
}

/// A fan that has just answered.
pub(in crate::sim::path) struct Answer {
    pub(in crate::sim::path) tier: usize,
    pub(in crate::sim::path) job: u32,
    pub(in crate::sim::path) outcome: Outcome,
}

impl Fans {
    /// Sized for a path of `tiers` tiers.
    pub(in crate::sim::path) fn new(tiers: usize) -> Self {
        Fans {
            n: vec![FanCounters::default(); tiers],
            ..Fans::default()
        }
    }

    #[inline(always)]
    pub(in crate::sim::path) fn get(&self, fan: u32) -> &Fan {
        &self.fans[fan as usize]
    }

    /// Tier `tier`'s job `job` fans out for request `parent` (of epoch `parent_epoch`): the
    /// fan's slot (held while its calls are sent) and the calls to send; `None` when the
    /// parent's earlier attempts already gathered every success needed (nothing to send: the
    /// tier answers at once).
    pub(in crate::sim::path) fn open(
        &mut self,
        f: &Fanout,
        tier: usize,
        job: u32,
        parent: CallRef,
        parent_epoch: u32,
    ) -> Option<(u32, u32)> {
        let n = &mut self.n[tier];
        n.fans += 1;
        let carried = match f.resend {
            Resend::All => 0,
            Resend::Missing => self
                .carried
                .get(&(parent.0, parent_epoch))
                .copied()
                .unwrap_or(0),
        };
        if carried >= f.needed() {
            n.answered_ok += 1;
            return None;
        }
        let calls = f.k - carried;
        n.leaves += u64::from(calls);
        let fan = Fan {
            tier: tier as u8,
            job,
            parent,
            parent_epoch,
            calls,
            needed: f.needed() - carried,
            ok: 0,
            failed: 0,
            carried,
            started: 0,
            unsettled: 0,
            held: 1,
            open: true,
            failure: Outcome::Error,
            leaves: if f.cancel {
                self.lists.pop().unwrap_or_default()
            } else {
                Vec::new()
            },
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.fans[s as usize] = fan;
                s
            }
            None => {
                self.fans.push(fan);
                (self.fans.len() - 1) as u32
            }
        };
        Some((slot, calls))
    }

    /// Call `c` (inner slot and epoch) of `fan` has started.
    pub(in crate::sim::path) fn started(&mut self, fan: u32, slot: u32, epoch: u32, cancel: bool) {
        let x = &mut self.fans[fan as usize];
        x.started += 1;
        x.unsettled += 1;
        x.held += 1;
        if cancel {
            x.leaves.push((slot, epoch));
        }
    }

    /// A call of `fan` settled with `outcome`: the tier's answer, if the fan answers now.
    pub(in crate::sim::path) fn settled(
        &mut self,
        fan: u32,
        outcome: Outcome,
        resend: Resend,
    ) -> Option<Answer> {
        let x = &mut self.fans[fan as usize];
        x.unsettled -= 1;
        if !x.open {
            return None;
        }
        if outcome == Outcome::Ok {
            x.ok += 1;
        } else {
            if x.failed == 0 {
                x.failure = outcome;
            }
            x.failed += 1;
        }
        let answer = if x.ok >= x.needed {
            Outcome::Ok
        } else if x.failed > x.calls - x.needed {
            x.failure
        } else {
            return None;
        };
        x.open = false;
        let n = &mut self.n[usize::from(x.tier)];
        n.running_after += u64::from(x.calls - x.ok - x.failed);
        if answer == Outcome::Ok {
            n.answered_ok += 1;
        } else {
            n.answered_failed += 1;
        }
        if resend == Resend::Missing && x.ok > 0 {
            let key = (x.parent.0, x.parent_epoch);
            self.carried.insert(key, x.carried + x.ok);
        }
        Some(Answer {
            tier: usize::from(x.tier),
            job: x.job,
            outcome: answer,
        })
    }

    /// The calls of `fan` to cancel now that it has answered (its slot held until
    /// [`Fans::release`]); those it will not send now are counted as cancelled.
    pub(in crate::sim::path) fn take_leaves(&mut self, fan: u32) -> Vec<(u32, u32)> {
        let x = &mut self.fans[fan as usize];
        x.held += 1;
        self.n[usize::from(x.tier)].cancelled += u64::from(x.calls - x.started);
        std::mem::take(&mut x.leaves)
    }

    /// A cancelled call counted; `list` handed back for reuse.
    pub(in crate::sim::path) fn cancelled(&mut self, fan: u32, n: u64, mut list: Vec<(u32, u32)>) {
        let tier = usize::from(self.fans[fan as usize].tier);
        self.n[tier].cancelled += n;
        list.clear();
        self.lists.push(list);
    }

    /// A call of `fan` was freed (or its sending or cancelling is over): the fan's slot is
    /// freed with the last.
    pub(in crate::sim::path) fn release(&mut self, fan: u32) {
        let x = &mut self.fans[fan as usize];
        x.held -= 1;
        if x.held == 0 {
            debug_assert!(!x.open, "a fan's calls were freed before it answered");
            if x.leaves.capacity() > 0 {
                let mut list = std::mem::take(&mut x.leaves);
                list.clear();
                self.lists.push(list);
            }
            self.free.push(fan);
        }
    }

    /// A request of a call of `fan` is being served at the next tier: counted when the tier
    /// above has answered already.
    #[inline]
    pub(in crate::sim::path) fn served(&mut self, fan: u32) {
        let x = &self.fans[fan as usize];
        if !x.open {
            self.n[usize::from(x.tier)].served_after += 1;
        }
    }

    /// `resend = "missing"` carries successes for some call.
    #[inline(always)]
    pub(in crate::sim::path) fn carrying(&self) -> bool {
        !self.carried.is_empty()
    }

    /// Call `c` (of epoch `epoch`) settled: what `resend = "missing"` carried for it is
    /// forgotten.
    pub(in crate::sim::path) fn forget(&mut self, c: CallRef, epoch: u32) {
        self.carried.remove(&(c.0, epoch));
    }
}
