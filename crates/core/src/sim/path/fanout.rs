//! A tier fans out (`server.fanout`): its client sends `k` calls to the next tier for one
//! request, the tier answers when the fan's rule is met ([`super::call::Fans`]), and with
//! `cancel` the calls still running are cancelled then: they settle at once (no more
//! attempts), and their requests still queued or on the way are dropped before service.

use super::PathSim;
use super::call::{Answer, Call, Inner, Settled};
use super::callref::CallRef;
use super::tier::{Outcome, Request};
use crate::model::Fanout;
use crate::policy::Class;

impl PathSim<'_> {
    /// Tier `t`'s worker finished its own work on `req` (job `job`): the client inside the tier
    /// sends the fan's calls while the worker waits.
    pub(super) fn fan_out<C: Call>(&mut self, t: usize, job: u32, req: Request, f: Fanout) {
        let opened = self.calls.fans.open(&f, t, job, req.call, req.epoch);
        let Some((fan, calls)) = opened else {
            // `resend = "missing"`: the earlier attempts gathered every success needed.
            return self.job_answers(t, job, Outcome::Ok);
        };
        for leaf in 0..calls {
            // With `cancel`, a fan answered already (a call failed at once) sends no more.
            if f.cancel && !self.calls.fans.get(fan).open {
                break;
            }
            let c =
                self.calls
                    .start_inner::<C>(&self.cx, &mut self.hops, t + 1, fan, req, Some(leaf));
            let epoch = self.calls.lp::<Inner>(c).epoch;
            self.calls
                .fans
                .started(fan, c.slot() as u32, epoch, f.cancel);
            self.send::<Inner>(c);
        }
        self.calls.fans.release(fan);
    }

    /// A call of fan `fan` settled with `outcome`: the tier answers if the fan's rule is met
    /// (or can no longer be), and with `cancel` the calls still running are cancelled.
    pub(super) fn leaf_settled(&mut self, fan: u32, outcome: Outcome) {
        let tier = usize::from(self.calls.fans.get(fan).tier);
        let Some(f) = self.cx.spec.tiers[tier].server.fanout else {
            return;
        };
        let Some(Answer { tier, job, outcome }) = self.calls.fans.settled(fan, outcome, f.resend)
        else {
            return;
        };
        self.job_answers(tier, job, outcome);
        if f.cancel {
            self.cancel_leaves(fan);
        }
    }

    /// Fan `fan` has answered: each of its calls still running gives up now.
    fn cancel_leaves(&mut self, fan: u32) {
        let leaves = self.calls.fans.take_leaves(fan);
        let mut n = 0;
        for &(slot, epoch) in &leaves {
            if !self.calls.unsettled_leaf(slot, epoch, fan) {
                continue;
            }
            let c = CallRef::inner(slot);
            let hop = self.calls.get::<Inner>(c).hop();
            self.hops[hop].n.cancelled += 1;
            self.calls.stop_waiting::<Inner>(c);
            n += 1;
            self.settle::<Inner>(c, Settled::Failure, Class::Timeout);
        }
        self.calls.fans.cancelled(fan, n, leaves);
        self.calls.fans.release(fan);
    }

    /// A request of a fan-out's call reaches a worker of tier `t`: counted when the tier above
    /// has answered already; with `cancel`, dropped instead when its call is over.
    pub(super) fn leaf_unwanted<C: Call>(&mut self, t: usize, req: Request) -> bool {
        if !C::INNER {
            return false;
        }
        let Err(fan) = self.calls.waiting_job(req.call) else {
            return false;
        };
        if self.hops[t].fan_cancel && self.calls.lp::<C>(req.call).settled != Settled::No {
            return true;
        }
        self.calls.fans.served(fan);
        false
    }
}
