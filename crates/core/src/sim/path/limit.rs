//! The clients' `[limiter]` on the request path: a send the limiter holds waits, in simulated
//! time, until it has a token (botocore's `TokenBucket.acquire` blocks the sending thread).
//!
//! Waiting sends queue first come, first served behind one wake-up event per limiter instance.
//! botocore's waiting threads race for the lock instead; the rate at which they leave is the
//! same. Every response changes the fill rate, so the wake-up is recomputed after each one.
//! These are the hop's own handlers; the engine transmits the sends they let go.

use super::call::Calls;
use super::callref::CallRef;
use super::hop::{HopState, LimiterSlot};
use super::{Cx, Event};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::limiter::Admit;

/// What the limiter decided about a send.
pub(super) enum Gate {
    Go,
    Waits,
    Rejected,
}

impl HopState {
    /// Before attempt of `c` (epoch `epoch`) goes out over this hop, `h`: send it now, wait for
    /// a token (then [`HopState::limiter_next`] lets it go), or refuse it.
    pub(super) fn limiter_gate(
        &mut self,
        cx: &mut Cx,
        h: usize,
        client: u32,
        c: CallRef,
        epoch: u32,
    ) -> Gate {
        let now = cx.now;
        let k = self.limiter_index(client);
        let slot = &mut self.limiters[k];
        if slot.waiting.is_empty() {
            match slot.limiter.acquire(now) {
                Admit::Go => return Gate::Go,
                Admit::Reject => return Gate::Rejected,
                Admit::Wait(d) => {
                    slot.waiting.push_back((c, epoch, now));
                    wake_in(cx, slot, h, k, d);
                }
            }
        } else {
            slot.waiting.push_back((c, epoch, now));
        }
        Gate::Waits
    }

    /// The caller learnt how an attempt ended: the limiter adjusts its rate. The instance
    /// whose waiting sends are to be re-timed ([`HopState::limiter_next`]), if any.
    pub(super) fn limiter_sees(
        &mut self,
        now: Time,
        client: u32,
        class: Class,
        took: Duration,
    ) -> Option<usize> {
        let k = self.limiter_index(client);
        let slot = &mut self.limiters[k];
        slot.limiter.on_outcome(now, class, took);
        (!slot.waiting.is_empty()).then_some(k)
    }

    /// The oldest send waiting for limiter `k` of this hop, `h`, if it has a token now (its
    /// call and epoch); else the wake-up for it is scheduled and there is none.
    pub(super) fn limiter_next(
        &mut self,
        cx: &mut Cx,
        h: usize,
        k: usize,
    ) -> Option<(CallRef, u32)> {
        let now = cx.now;
        let slot = &mut self.limiters[k];
        let &(c, epoch, since) = slot.waiting.front()?;
        match slot.limiter.acquire(now) {
            Admit::Go => {
                slot.waiting.pop_front();
                self.n.limiter_delayed += 1;
                self.n.limiter_wait_ns += now.since(since).0;
                Some((c, epoch))
            }
            Admit::Wait(d) => {
                wake_in(cx, slot, h, k, d);
                None
            }
            // Only a waiting limiter parks sends, and it never refuses.
            Admit::Reject => None,
        }
    }

    /// First tries still waiting for a token (at the end of a run): never sent, so in neither
    /// `attempts` nor `first_tries_refused`.
    pub(super) fn first_tries_waiting(&self, calls: &Calls) -> u64 {
        self.limiters
            .iter()
            .flat_map(|l| l.waiting.iter())
            .filter(|&&(c, epoch, _)| {
                let l = calls.loop_of(c);
                l.epoch == epoch && l.attempts == 0
            })
            .count() as u64
    }
}

/// Schedules the wake-up of limiter `k` of hop `h` (`slot`) in `d`; the one pending before it
/// goes stale.
fn wake_in(cx: &mut Cx, slot: &mut LimiterSlot, h: usize, k: usize, d: Duration) {
    slot.generation = slot.generation.wrapping_add(1);
    let ev = Event::Limiter {
        hop: h as u8,
        slot: k as u32,
        generation: slot.generation,
    };
    cx.queue.push(cx.now + d, ev);
}
