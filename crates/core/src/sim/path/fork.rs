//! A run driven in steps and copied between two of them: the state a rare-event method
//! (multilevel splitting) restarts many times from, each copy on its own draws.
//!
//! The whole run is a value ([`PathSim`] is `Clone`): its queue, calls, policies, tiers, store
//! and tallies. A copy's random draws from the fork on are keyed by a branch number
//! ([`crate::sim::draws::Draws::branch`]), so copies with different branches go their own
//! ways, the same seed and branch give the same bytes, and branch 0 goes on exactly as the
//! run it was copied from.

use super::PathSim;

impl PathSim<'_> {
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
    /// per-attempt draw, think time and arrival from here on is keyed by the branch, so copies
    /// with different branches diverge and the same seed and branch give the same bytes.
    /// Branch 0 keeps the run's own draws: the copy goes on exactly as the run would. A
    /// balancer's picks and a limiter's probe jitter go on from their streams as they stood
    /// (each is one stream per instance, read in order). The copy shares the model and the
    /// stop flag and records no trace.
    ///
    /// No command uses it yet: it is the step rare-event splitting is built on (a run that
    /// crosses a level is copied, and each copy tries again from there on its own branch).
    #[must_use]
    pub fn fork(&self, branch: u64) -> Self {
        let mut copy = self.clone();
        if branch != 0 {
            copy.cx.draws = self.cx.draws.branch(branch);
            copy.workload.rekey(copy.cx.draws);
        }
        copy
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
