//! Rare-event splitting (`retrystorm_core::rare`) against a known answer: in an M/M/1 queue at
//! load 0.5 a busy period reaches B requests in the system before it empties with probability
//! 1 / (2^B - 1) (gambler's ruin: each step is up with probability 1/3). And its determinism:
//! the same seed gives the same estimate on one thread or two.

use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::path::gauge::Gauge;
use retrystorm_core::rare::interval::{IntervalKind, combine};
use retrystorm_core::rare::{InOrder, RareError, RareSpec, Spread, Target, pilot, split, split_at};
use std::sync::atomic::AtomicBool;

/// Poisson arrivals at 1000/s, one worker serving exp(0.5 ms): load 0.5; no retries.
const MM1: &str = include_str!("../../../../tests/fixtures/mm1.toml");

fn mm1() -> Model {
    load("mm1.toml", MM1, &[]).unwrap().base
}

/// `queue >= b` within one busy period.
fn busy_period(b: u64) -> RareSpec {
    let target = Target::Reaches {
        gauge: Gauge::Queue,
        level: b,
    };
    RareSpec::new(target, Gauge::Queue, true).unwrap()
}

/// Two threads, each taking every other particle: the order they finish in varies.
struct TwoThreads;

impl Spread for TwoThreads {
    fn spread<T: Send>(&self, n: usize, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
        let (evens, odds) = std::thread::scope(|s| {
            let odds = s.spawn(|| (1..n).step_by(2).map(f).collect::<Vec<_>>());
            let evens = (0..n).step_by(2).map(f).collect::<Vec<_>>();
            (evens, odds.join().unwrap())
        });
        let (mut e, mut o) = (evens.into_iter(), odds.into_iter());
        (0..n)
            .map(|i| if i % 2 == 0 { e.next() } else { o.next() }.unwrap())
            .collect()
    }
}

#[test]
fn mm1_busy_periods_reach_b_as_gamblers_ruin_says() {
    let (m, stop) = (mm1(), AtomicBool::new(false));
    for b in [7u32, 14] {
        let truth = 1.0 / (2f64.powi(b as i32) - 1.0);
        let mut covered = 0;
        for rep in 0..20u64 {
            // Ten independent repetitions per estimate: the interval over the seeds.
            let runs = (0..10)
                .map(|s| {
                    split(
                        &m,
                        1000 * rep + s,
                        busy_period(u64::from(b)),
                        &stop,
                        &InOrder,
                    )
                })
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            let e = combine(runs);
            assert_eq!(e.interval, IntervalKind::Seeds);
            if e.low <= truth && truth <= e.high {
                covered += 1;
            }
            eprintln!(
                "B={b} rep {rep}: {:.4e} [{:.4e}, {:.4e}]",
                e.probability, e.low, e.high
            );
        }
        assert!(
            covered >= 19,
            "B = {b}: {covered} of 20 intervals hold {truth:.4e}"
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_estimate_on_two_threads() {
    let (m, stop) = (mm1(), AtomicBool::new(false));
    let one = split(&m, 5, busy_period(7), &stop, &InOrder).unwrap();
    let two = split(&m, 5, busy_period(7), &stop, &TwoThreads).unwrap();
    assert_eq!(one, two);
    assert!(one.stages.len() >= 2, "{:?}", one.stages);
    let other = split(&m, 6, busy_period(7), &stop, &InOrder).unwrap();
    assert_ne!(one.estimate, other.estimate);
}

#[test]
fn too_few_particles_are_refused_with_the_reason() {
    let (m, stop) = (mm1(), AtomicBool::new(false));
    let spec = RareSpec {
        particles: 12,
        ..busy_period(7)
    };
    match split(&m, 5, spec, &stop, &InOrder) {
        Err(RareError::Floor { passed, .. }) => assert!(passed < 10),
        other => panic!("{other:?}"),
    }
}

#[test]
fn levels_fixed_by_a_pilot_are_used_as_they_are_on_any_threads() {
    let (m, stop) = (mm1(), AtomicBool::new(false));
    // A pass rate at a fixed level varies more from seed to seed than at a level placed on the
    // stage's own particles: 200 particles keep every stage above the floor.
    let spec = RareSpec {
        particles: 200,
        ..busy_period(14)
    };
    let levels = pilot(&m, 5, spec, &stop, &InOrder).unwrap();
    assert_eq!(levels, pilot(&m, 5, spec, &stop, &TwoThreads).unwrap());
    assert!(levels.levels.len() >= 2, "{levels:?}");
    assert!(levels.levels.windows(2).all(|w| w[0] < w[1]));
    // The pilot's particles are not the estimate's: the same seed splits on other draws.
    let adaptive = split(&m, 5, spec, &stop, &InOrder).unwrap();
    let at: Vec<u64> = adaptive.stages.iter().filter_map(|s| s.level).collect();
    let runs: Vec<_> = (5..15)
        .map(|seed| split_at(&m, seed, spec, &levels, &stop, &InOrder).unwrap())
        .collect();
    let two = split_at(&m, 5, spec, &levels, &stop, &TwoThreads).unwrap();
    assert_eq!(runs[0], two);
    assert!(at != levels.levels || adaptive != runs[0]);
    for r in &runs {
        let used: Vec<u64> = r.stages.iter().filter_map(|s| s.level).collect();
        assert_eq!(used, levels.levels);
        assert!(r.stages.last().unwrap().level.is_none());
    }
    let e = combine(runs);
    assert!(e.probability > 0.0 && e.low < e.probability && e.probability < e.high);
}
