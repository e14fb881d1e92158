//! A run driven in steps and copied between two of them: the state a rare-event method
//! (multilevel splitting) restarts many times from, each copy on its own draws.
//!
//! The whole run is a value ([`PathSim`] is `Clone`): its queue, calls, policies, tiers, store
//! and tallies. A copy's random draws from the fork on are keyed by a branch number
//! ([`crate::sim::draws::Draws::branch`]), so copies with different branches go their own
//! ways, the same seed and branch give the same bytes, and branch 0 goes on exactly as the
//! run it was copied from.

use super::PathSim;
use crate::model::Model;
use crate::sim::draws::Draws;

impl<'m> PathSim<'m> {
    /// Handles at most `events` more events (fewer if the run ends first); whether it goes on.
    /// The run then stands at an event boundary, where [`PathSim::fork`] may copy it. Finish it
    /// with [`PathSim::run_summary`]: a run advanced in steps keeps what a summary needs (the
    /// per-attempt series of [`PathSim::run`] are not kept while it advances).
    pub fn advance(&mut self, events: u64) -> bool {
        if self.reached.events == 0 {
            self.prepare_windows(false);
        }
        let pause = self.reached.events.saturating_add(events);
        self.drive_on(pause)
    }

    /// A copy of the run where it stands, going on with the draws of branch `branch`: every
    /// per-attempt draw, think time and arrival, every balancer's pick and limiter's probe
    /// jitter from here on is keyed by the branch, so copies with different branches diverge
    /// and the same seed and branch give the same bytes. Branch 0 keeps the run's own draws:
    /// the copy goes on exactly as the run would. What is already scheduled (the next arrival,
    /// a service under way) stays as it was. The copy shares the model and the stop flag and
    /// records no trace.
    ///
    /// Rare-event splitting (`study/rare`) is built on it: a run that crosses a level is
    /// copied, and each copy tries again from there on its own branch.
    #[must_use]
    pub fn fork(&self, branch: u64) -> Self {
        let mut copy = self.clone();
        if branch != 0 {
            let draws = self.cx.draws.branch(branch);
            copy.cx.draws = draws;
            copy.workload.rekey(draws);
            for (k, hop) in copy.hops.iter_mut().enumerate() {
                hop.rekey(k, draws);
            }
        }
        copy
    }

    /// A new run of `model` with `seed` whose every stream is branch `branch`'s from the start
    /// ([`Draws::branch`]): the runs of one seed on different branches are independent; branch
    /// 0 is [`PathSim::new`].
    pub fn new_branch(model: &'m Model, seed: u64, branch: u64) -> Self {
        Self::with_draws(model, Draws::new(seed).branch(branch))
    }

    /// Handles events one at a time until `done` holds after one, or the run ends; whether it
    /// goes on. `done` reads the run at each event boundary (its gauges, [`PathSim::gauge`]).
    pub fn advance_until(&mut self, mut done: impl FnMut(&Self) -> bool) -> bool {
        while self.advance(1) {
            if done(self) {
                return true;
            }
        }
        false
    }

    /// The events handled so far.
    pub fn events_handled(&self) -> u64 {
        self.reached.events
    }

    /// Drives the loop until `pause` events in all have been handled or the run ends; whether
    /// it goes on.
    fn drive_on(&mut self, pause: u64) -> bool {
        let (model, mut at) = (self.cx.model, self.reached);
        let ended = crate::sim::engine::drive(self, model, &mut |_| {}, &mut at, pause);
        self.reached = at;
        ended.is_none()
    }
}
