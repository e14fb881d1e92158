//! One stage's particles: where each starts (a fresh run, or a copy of a run that crossed the
//! last level), how far it goes, and the replay that finds where a particle first crossed a
//! level. Which branch a particle draws from is a function of its stage and index only
//! ([`branch`]), never of the order the particles happen to run in.

use super::RareError;
use super::target::{RareSpec, Target};
use super::typical::{Trace, Typical};
use crate::model::Model;
use crate::sim::path::PathSim;
use std::sync::atomic::AtomicBool;

/// The branch of particle `index` of stage `stage`: never 0 (the stage in the high half, from
/// 1), so a particle never repeats the run it was copied from.
pub(super) fn branch(stage: usize, index: usize) -> u64 {
    (stage as u64 + 1) << 32 | index as u64
}

/// The branches of a pilot run ([`super::pilot`]) have the top bit set: a pilot never runs a
/// particle of the estimates made with its levels.
const PILOT: u64 = 1 << 63;

/// How a particle's run went: the highest score it reached, whether the event happened, and
/// the events it took; with `--excess`, a first-stage run's score per bin of time.
#[derive(Clone, Debug)]
pub(super) struct Ended {
    pub(super) max: u64,
    pub(super) hit: bool,
    pub(super) events: u64,
    pub(super) trace: Option<Trace>,
}

/// The particles of one seed: the model, the study, and the runs that crossed the last level
/// (the parents the next stage is copied from).
pub(super) struct Particles<'m> {
    model: &'m Model,
    seed: u64,
    spec: RareSpec,
    stop: &'m AtomicBool,
    pub(super) parents: Vec<PathSim<'m>>,
    /// With `--excess`, the typical score per time, from the first stage (or the pilot's).
    pub(super) typical: Option<Typical>,
    /// The particles of a pilot run, on branches of their own.
    pub(super) pilot: bool,
}

impl<'m> Particles<'m> {
    pub(super) fn new(model: &'m Model, seed: u64, spec: RareSpec, stop: &'m AtomicBool) -> Self {
        Particles {
            model,
            seed,
            spec,
            stop,
            parents: Vec::new(),
            typical: None,
            pilot: false,
        }
    }

    /// The study.
    pub(super) fn spec(&self) -> RareSpec {
        self.spec
    }

    /// Particle `index` of stage `stage` where it starts: a fresh run on its own branch at
    /// stage 0, else a copy of parent `index mod parents` on its own branch (each parent gets
    /// the same number of copies, give or take one).
    fn start(&self, stage: usize, index: usize) -> PathSim<'m> {
        let b = branch(stage, index) | if self.pilot { PILOT } else { 0 };
        let sim = if stage == 0 {
            PathSim::new_branch(self.model, self.seed, b).gauged()
        } else {
            self.parents[index % self.parents.len()].fork(b)
        };
        sim.with_stop(self.stop)
    }

    /// The score where `sim` stands: its gauge (0 before the spec's `score_from`), or once the
    /// typical score is known, the gauge's excess over it.
    fn score(&self, sim: &PathSim) -> u64 {
        let raw = self.raw(sim);
        self.typical
            .as_ref()
            .map_or(raw, |t| t.excess(sim.now(), raw))
    }

    /// The gauge where `sim` stands, 0 before the spec's `score_from`.
    fn raw(&self, sim: &PathSim) -> u64 {
        if sim.now() < self.spec.score_from {
            0
        } else {
            sim.gauge(self.spec.score)
        }
    }

    /// The model's horizon, ns.
    pub(super) fn horizon(&self) -> u64 {
        self.model.horizon.0
    }

    /// Whether the event has happened where `sim` stands (`recovered == false` is known only
    /// at the end).
    fn reached(&self, sim: &PathSim) -> bool {
        match self.spec.target {
            Target::Reaches { gauge, level } => sim.gauge(gauge) >= level,
            Target::NotRecovered => false,
        }
    }

    /// Runs particle `index` of `stage` until the event happens, the run ends, or with
    /// `until_empty` its score is back at 0 after rising above it.
    pub(super) fn run(&self, stage: usize, index: usize) -> Result<Ended, RareError> {
        let mut sim = self.start(stage, index);
        let first = sim.events_handled();
        let mut max = self.score(&sim);
        let mut busy = max > 0;
        let mut hit = self.reached(&sim);
        // The first stage of an `--excess` study records what the typical score is made of.
        let mut trace = (self.spec.excess && self.typical.is_none()).then(Trace::default);
        let horizon = self.horizon();
        if let Some(t) = &mut trace {
            t.record(horizon, sim.now(), max);
        }
        if !hit {
            sim.advance_until(|sim| {
                let v = self.score(sim);
                max = max.max(v);
                if let Some(t) = &mut trace {
                    t.record(horizon, sim.now(), v);
                }
                if self.reached(sim) {
                    hit = true;
                    return true;
                }
                if self.spec.until_empty {
                    if v > 0 {
                        busy = true;
                    } else if busy {
                        return true;
                    }
                }
                false
            });
        }
        let events = sim.events_handled() - first;
        if self.spec.target == Target::NotRecovered {
            let recovered = sim.run_summary("rare").summary.recovered;
            hit = !recovered.ok_or(RareError::NoTrigger { seed: self.seed })?;
        }
        Ok(Ended {
            max,
            hit,
            events,
            trace,
        })
    }

    /// Particle `index` of `stage` run again up to the first event boundary where its score
    /// is at `level` or above (the same run as [`Particles::run`], so it gets there), and the
    /// events that took.
    pub(super) fn replay_to(&self, stage: usize, index: usize, level: u64) -> (PathSim<'m>, u64) {
        let mut sim = self.start(stage, index);
        let first = sim.events_handled();
        if self.score(&sim) < level {
            sim.advance_until(|sim| self.score(sim) >= level);
        }
        let events = sim.events_handled() - first;
        (sim, events)
    }
}
