//! The clients' `[limiter]` on the request path: a send the limiter holds waits, in simulated
//! time, until it has a token (botocore's `TokenBucket.acquire` blocks the sending thread).
//!
//! Waiting sends queue first come, first served behind one wake-up event per limiter instance.
//! botocore's waiting threads race for the lock instead; the rate at which they leave is the
//! same. Every response changes the fill rate, so the wake-up is recomputed after each one.

use super::call::by_kind;
use super::callref::CallRef;
use super::{Event, PathSim};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::limiter::Admit;

/// What the limiter decided about a send.
pub(super) enum Gate {
    Go,
    Waits,
    Rejected,
}
impl PathSim<'_> {
    /// Before attempt of `c` (epoch `epoch`) goes out over hop `h`: send it now, wait for a
    /// token (then [`Self::limiter_wake`] transmits it), or refuse it.
    pub(super) fn limiter_gate(
        &mut self,
        now: Time,
        h: usize,
        client: u32,
        c: CallRef,
        epoch: u32,
    ) -> Gate {
        let hs = &mut self.hops[h];
        let k = hs.limiter_index(client);
        let slot = &mut hs.limiters[k];
        if slot.waiting.is_empty() {
            match slot.limiter.acquire(now) {
                Admit::Go => return Gate::Go,
                Admit::Reject => return Gate::Rejected,
                Admit::Wait(d) => {
                    slot.waiting.push_back((c, epoch, now));
                    slot.generation = slot.generation.wrapping_add(1);
                    let ev = Event::Limiter {
                        hop: h as u8,
                        slot: k as u32,
                        generation: slot.generation,
                    };
                    self.queue.push(now + d, ev);
                }
            }
        } else {
            slot.waiting.push_back((c, epoch, now));
        }
        Gate::Waits
    }

    /// The caller at hop `h` learnt how an attempt ended: the limiter adjusts its rate, and the
    /// sends waiting for it are re-timed.
    pub(super) fn limiter_sees(
        &mut self,
        now: Time,
        h: usize,
        client: u32,
        class: Class,
        took: Duration,
    ) {
        let hs = &mut self.hops[h];
        let k = hs.limiter_index(client);
        let slot = &mut hs.limiters[k];
        slot.limiter.on_outcome(now, class, took);
        if !slot.waiting.is_empty() {
            self.limiter_drain(now, h, k);
        }
    }

    /// First tries still waiting for a token (at the end of a run): never sent, so in neither
    /// `attempts` nor `first_tries_refused`.
    pub(super) fn first_tries_waiting(&self) -> u64 {
        let hops = self.hops.iter().flat_map(|h| h.limiters.iter());
        hops.flat_map(|l| l.waiting.iter())
            .filter(|&&(c, epoch, _)| {
                let l = self.calls.loop_of(c);
                l.epoch == epoch && l.attempts == 0
            })
            .count() as u64
    }

    /// The wake-up event of limiter `k` at hop `h`.
    pub(super) fn limiter_wake(&mut self, now: Time, h: usize, k: usize, generation: u32) {
        if self.hops[h].limiters[k].generation == generation {
            self.limiter_drain(now, h, k);
        }
    }

    /// Sends the waiting attempts that have a token, then schedules a wake-up for the next.
    fn limiter_drain(&mut self, now: Time, h: usize, k: usize) {
        loop {
            let slot = &mut self.hops[h].limiters[k];
            let Some(&(c, epoch, since)) = slot.waiting.front() else {
                return;
            };
            match slot.limiter.acquire(now) {
                Admit::Go => {
                    slot.waiting.pop_front();
                    let n = &mut self.hops[h].n;
                    n.limiter_delayed += 1;
                    n.limiter_wait_ns += now.since(since).0;
                    if self.calls.loop_of(c).epoch == epoch {
                        by_kind!(c, C => self.transmit::<C>(now, c));
                    }
                }
                Admit::Wait(d) => {
                    slot.generation = slot.generation.wrapping_add(1);
                    let ev = Event::Limiter {
                        hop: h as u8,
                        slot: k as u32,
                        generation: slot.generation,
                    };
                    return self.queue.push(now + d, ev);
                }
                // Only a waiting limiter parks sends, and it never refuses.
                Admit::Reject => return,
            }
        }
    }
}
