//! The probability of a rare event in one model, by multilevel splitting: fixed effort, with
//! the levels placed adaptively at a quantile of the score.
//!
//! Each stage runs `particles` runs (particles); each is scored as it goes ([`RareSpec::score`],
//! read off the engine's state at every event boundary) and stops when the event happens or
//! its run ends. If at least the `keep` share of them saw the event, the stage is the last one.
//! Otherwise the next level is the highest score that the `keep` share reached; the particles
//! that reached it are replayed to the event boundary where they first did, and the next stage's
//! particles are copies of those states ([`PathSim::fork`](crate::sim::path::PathSim::fork)),
//! each on its own branch of draws. The estimate is the product of the stages' pass rates: the
//! fixed-effort splitting of Glasserman, Heidelberger, Shahabuddin and Zajic (1999, "Multilevel
//! splitting for estimating rare event probabilities", Operations Research 47(4)) with the
//! adaptive levels of Cérou and Guyader (2007, "Adaptive multilevel splitting for rare event
//! analysis", Stochastic Analysis and Applications 25(2)).
//!
//! A stage whose pass rate falls below [`FLOOR_RATE`] or whose passing particles are fewer than
//! [`FLOOR_PASSED`] is refused ([`RareError::Floor`]): a pass rate from so few particles has no
//! interval worth reporting. Each particle's branch comes from its stage and index, and the
//! stage's particles are spread over threads by the caller ([`Spread`]) with their results put
//! back in index order: the same seed gives the same estimate on any number of threads.

pub mod interval;
mod particle;
pub mod target;
mod typical;

use crate::model::Model;
use particle::Particles;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
pub use target::{RareSpec, Target};

/// A stage's pass rate below this is refused.
pub const FLOOR_RATE: f64 = 0.02;

/// A stage with fewer passing particles than this is refused.
pub const FLOOR_PASSED: u32 = 10;

/// The most stages one estimate may take before it is refused.
pub const MAX_STAGES: usize = 200;

/// Runs a stage's independent particles, on as many threads as it likes, and returns their
/// results in index order.
pub trait Spread {
    fn spread<T: Send>(&self, n: usize, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T>;
}

/// One particle after the other on the calling thread.
pub struct InOrder;

impl Spread for InOrder {
    fn spread<T: Send>(&self, n: usize, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
        (0..n).map(f).collect()
    }
}

/// Why a rare-event estimate was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RareError {
    #[error(
        "seed {seed}: {passed} of {particles} particles passed {what}, below the floor (a pass rate of at least 2% and at least 10 particles): its interval cannot be trusted; give more --particles or a score that rises on the way to the event"
    )]
    Floor {
        seed: u64,
        what: String,
        passed: u32,
        particles: u32,
    },
    #[error(
        "seed {seed}: the run has no `recovered` (the model has no trigger: an outage, a capacity drop or a burst whose end recovery is measured from)"
    )]
    NoTrigger { seed: u64 },
    #[error("seed {seed}: the levels did not reach the event within {MAX_STAGES} stages")]
    TooManyStages { seed: u64 },
    #[error("stopped by Ctrl-C before an estimate")]
    Interrupted,
    #[error("the pilot run that places the levels: {0}")]
    Pilot(Box<RareError>),
}

/// One stage: the level its particles had to reach (`None`: the event itself, the last stage)
/// and how many of them did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub level: Option<u64>,
    pub passed: u32,
    pub particles: u32,
}

impl Stage {
    pub fn rate(&self) -> f64 {
        f64::from(self.passed) / f64::from(self.particles)
    }
}

/// One seed's estimate by splitting (read back from a `rare` shard's file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitRun {
    pub seed: u64,
    /// The product of the stages' pass rates.
    pub estimate: f64,
    pub stages: Vec<Stage>,
    /// Events handled by every particle and replay.
    pub events: u64,
    /// The mean events of a stage-0 particle: a plain run, stopped as the study stops one.
    pub events_per_plain_run: f64,
}

impl SplitRun {
    /// The estimate's relative variance if every stage's passes were independent binomial
    /// draws: the sum of `(1 - r) / (r n)` over the stages.
    pub fn relative_variance(&self) -> f64 {
        self.stages
            .iter()
            .map(|s| (1.0 - s.rate()) / (s.rate() * f64::from(s.particles)))
            .sum()
    }
}

/// The level the next stage must reach: the highest score at least `keep` particles reached,
/// or, when that is no higher than `current`, the lowest score above it any reached.
fn next_level(maxes: &mut [u64], keep: usize, current: u64) -> Option<u64> {
    maxes.sort_unstable_by(|a, b| b.cmp(a));
    let at_quantile = maxes[keep - 1];
    if at_quantile > current {
        return Some(at_quantile);
    }
    maxes.iter().rev().copied().find(|&m| m > current)
}

/// A stage checked against the floor.
fn floored(seed: u64, stage: Stage, what: impl FnOnce() -> String) -> Result<Stage, RareError> {
    if stage.rate() < FLOOR_RATE || stage.passed < FLOOR_PASSED {
        return Err(RareError::Floor {
            seed,
            what: what(),
            passed: stage.passed,
            particles: stage.particles,
        });
    }
    Ok(stage)
}

/// `--excess`: the typical score from the first stage's runs, and each of them scored by its
/// highest excess over it.
fn measure_from_typical(ps: &mut Particles, ends: &mut [particle::Ended]) {
    let traces: Vec<typical::Trace> = ends.iter_mut().filter_map(|e| e.trace.take()).collect();
    let typical = typical::Typical::of(ps.horizon(), &traces);
    for (e, t) in ends.iter_mut().zip(&traces) {
        e.max = typical.highest_excess(t);
    }
    ps.typical = Some(typical);
}

/// The probability of `spec`'s event in `model` with `seed`, by splitting, each level placed at
/// the `keep` quantile of the stage before it. Stops with [`RareError::Interrupted`] once
/// `stop` is set.
///
/// Levels placed from the very particles whose pass rates are then multiplied make the estimate
/// biased upward by a relative amount of order `stages (1 - keep) / (keep particles)` (Cérou and
/// Guyader 2007): independent seeds narrow the interval around it but do not remove it. Levels
/// placed once by a [`pilot`] run and used as they are ([`split_at`]) do.
pub fn split<S: Spread>(
    model: &Model,
    seed: u64,
    spec: RareSpec,
    stop: &AtomicBool,
    spread: &S,
) -> Result<SplitRun, RareError> {
    let mut ps = Particles::new(model, seed, spec, stop);
    stages(&mut ps, seed, stop, spread, None)
}

/// Levels placed once by a pilot run, for estimates that use them as they are ([`split_at`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Levels {
    /// The levels, lowest first; the stage after the last is the event.
    pub levels: Vec<u64>,
    /// The events the pilot spent.
    pub events: u64,
    /// With `--excess`, the typical score the pilot measured.
    typical: Option<typical::Typical>,
}

/// An adaptive splitting run of `seed` on branches of its own (no particle of it is a particle
/// of an estimate with the same seed), kept for its levels: where a quarter (`keep`) of its
/// particles passed, and with `--excess` the typical score. Its estimate is not used.
pub fn pilot<S: Spread>(
    model: &Model,
    seed: u64,
    spec: RareSpec,
    stop: &AtomicBool,
    spread: &S,
) -> Result<Levels, RareError> {
    let mut ps = Particles::new(model, seed, spec, stop);
    ps.pilot = true;
    let run = stages(&mut ps, seed, stop, spread, None).map_err(|e| match e {
        RareError::Interrupted => e,
        e => RareError::Pilot(Box::new(e)),
    })?;
    Ok(Levels {
        levels: run.stages.iter().filter_map(|s| s.level).collect(),
        events: run.events,
        typical: ps.typical,
    })
}

/// The probability of `spec`'s event in `model` with `seed`, by splitting at `levels` as they
/// are: fixed-effort splitting at levels fixed beforehand, whose estimate is unbiased
/// (Glasserman et al. 1999; the product of the stages' pass rates of a Feynman-Kac particle
/// system). A stage below the floor is refused as in [`split`].
pub fn split_at<S: Spread>(
    model: &Model,
    seed: u64,
    spec: RareSpec,
    levels: &Levels,
    stop: &AtomicBool,
    spread: &S,
) -> Result<SplitRun, RareError> {
    let mut ps = Particles::new(model, seed, spec, stop);
    ps.typical = levels.typical.clone();
    stages(&mut ps, seed, stop, spread, Some(&levels.levels))
}

/// The stages of one splitting run: at the `fixed` levels, else each placed at the `keep`
/// quantile of the stage before.
fn stages<S: Spread>(
    ps: &mut Particles,
    seed: u64,
    stop: &AtomicBool,
    spread: &S,
    fixed: Option<&[u64]>,
) -> Result<SplitRun, RareError> {
    let spec = ps.spec();
    let n = spec.particles as usize;
    let keep = ((spec.keep * n as f64).ceil() as usize).clamp(1, n);
    let (mut stages, mut estimate, mut current) = (Vec::new(), 1.0, 0);
    let (mut events, mut plain) = (0, 0.0);
    for k in 0..MAX_STAGES {
        let ends = spread.spread(n, &|i| ps.run(k, i));
        let mut ends = ends.into_iter().collect::<Result<Vec<_>, _>>()?;
        if k == 0 && spec.excess && ps.typical.is_none() {
            measure_from_typical(ps, &mut ends);
        }
        if stop.load(Ordering::Relaxed) {
            return Err(RareError::Interrupted);
        }
        let spent: u64 = ends.iter().map(|e| e.events).sum();
        events += spent;
        if k == 0 {
            plain = spent as f64 / n as f64;
        }
        let count = |pass: &dyn Fn(&particle::Ended) -> bool| -> Stage {
            let passed = ends.iter().filter(|e| pass(e)).count() as u32;
            let particles = n as u32;
            Stage {
                level: None,
                passed,
                particles,
            }
        };
        let hits = count(&|e| e.hit);
        let next = match fixed {
            Some(levels) => levels.get(k).copied(),
            None => {
                let mut maxes: Vec<u64> = ends.iter().map(|e| e.max).collect();
                next_level(&mut maxes, keep, current).filter(|_| (hits.passed as usize) < keep)
            }
        };
        let Some(level) = next else {
            let last = floored(seed, hits, || "the event".to_string())?;
            estimate *= last.rate();
            stages.push(last);
            return Ok(SplitRun {
                seed,
                estimate,
                stages,
                events,
                events_per_plain_run: plain,
            });
        };
        let stage = Stage {
            level: Some(level),
            ..count(&|e| e.max >= level)
        };
        let stage = floored(seed, stage, || {
            format!("level {} {level}", spec.score.name())
        })?;
        estimate *= stage.rate();
        stages.push(stage);
        let survivors: Vec<usize> = (0..n).filter(|&i| ends[i].max >= level).collect();
        let replays = spread.spread(survivors.len(), &|j| ps.replay_to(k, survivors[j], level));
        events += replays.iter().map(|r| r.1).sum::<u64>();
        ps.parents = replays.into_iter().map(|r| r.0).collect();
        current = level;
    }
    Err(RareError::TooManyStages { seed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_level_is_the_keep_quantile_or_the_next_score_up() {
        assert_eq!(next_level(&mut [1, 5, 3, 2], 2, 0), Some(3));
        // Three of four at the current level: the lowest score above it.
        assert_eq!(next_level(&mut [2, 2, 2, 4], 2, 2), Some(4));
        assert_eq!(next_level(&mut [2, 2, 2, 2], 2, 2), None);
    }

    #[test]
    fn a_stage_below_the_floor_is_refused() {
        let s = |passed| Stage {
            level: Some(3),
            passed,
            particles: 100,
        };
        assert!(floored(1, s(10), String::new).is_ok());
        let e = floored(1, s(9), || "level queue 3".into()).unwrap_err();
        assert!(
            e.to_string()
                .contains("9 of 100 particles passed level queue 3")
        );
    }
}
