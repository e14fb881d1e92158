//! A run forked at an event boundary (`PathSim::advance`, `PathSim::fork`): a fork that never
//! diverges (branch 0) reproduces the run it was copied from byte for byte; forks on different
//! branches diverge; the same seed and branch give the same bytes. Checked on the three-tier
//! stack (open arrivals, inner calls, a dedupe store: the calendar queue) and the herd (a burst:
//! the radix heap).

use crate::util::shipped;
use retrystorm_core::model::Model;
use retrystorm_core::path::PathSim;

fn summary_json(sim: PathSim) -> String {
    serde_json::to_string(&sim.run_summary("fork").summary).unwrap()
}

/// The models, small enough for a debug build, and how many events to run before the fork.
fn cases() -> Vec<(Model, u64)> {
    let stack = shipped("stack.toml", &["horizon=10s"]).remove(0);
    let herd = shipped("thundering-herd.toml", &[]).remove(1);
    // Forked inside the storm: the clients' connections and backoffs are copied.
    let storm = shipped("reconnect-storm.toml", &["horizon=25s"]).remove(3);
    vec![(stack, 20_000), (herd, 1_500), (storm, 30_000)]
}

#[test]
fn an_undiverged_fork_reproduces_the_run() {
    for (m, at) in cases() {
        let whole = summary_json(PathSim::new(&m, 7));
        let mut sim = PathSim::new(&m, 7);
        assert!(sim.advance(at), "{}: ended before the fork", m.name);
        let fork = sim.fork(0);
        assert_eq!(summary_json(fork), whole, "{}: the fork", m.name);
        assert_eq!(summary_json(sim), whole, "{}: the run forked from", m.name);
    }
}

#[test]
fn branches_diverge_and_each_replays() {
    for (m, at) in cases() {
        let mut sim = PathSim::new(&m, 7);
        assert!(sim.advance(at), "{}: ended before the fork", m.name);
        let one = summary_json(sim.fork(1));
        assert_eq!(summary_json(sim.fork(1)), one, "{}: branch 1 twice", m.name);
        assert_ne!(
            summary_json(sim.fork(2)),
            one,
            "{}: branches 1 and 2",
            m.name
        );
        assert_ne!(summary_json(sim), one, "{}: branch 1 and the run", m.name);
    }
}

#[test]
fn a_run_advanced_to_its_end_reports_as_one_run_at_once() {
    let (m, _) = cases().remove(1);
    let whole = summary_json(PathSim::new(&m, 3));
    let mut sim = PathSim::new(&m, 3);
    while sim.advance(1_000) {}
    assert_eq!(summary_json(sim), whole);
}
