//! The Markov chain of a one-tier model (`study::verdict::chain`) on the shipped
//! `models/metafor.toml`: its time to tip against Metafor's own CTMC (61.2 s from an empty queue
//! to a queue of 90, `docs/validation.md`), the modes it finds, and its refusals.

use crate::util::shipped;
use retrystorm_core::model::Model;
use retrystorm_core::study::verdict::chain::{ChainError, MAX_STATES, solve};

fn metafor(variant: &str, sets: &[&str]) -> Model {
    shipped("metafor.toml", sets)
        .into_iter()
        .find(|m| m.name == variant)
        .unwrap()
}

#[test]
fn metafor_tips_within_5_percent_of_metafors_chain_and_stays_tipped() {
    let t = std::time::Instant::now();
    let c = solve(&metafor("retry-at-once", &[])).unwrap();
    eprintln!("{c:?} in {:?}", t.elapsed());
    assert_eq!(
        (c.tipped_at, c.healthy_below, c.queue_lengths),
        (90, 30, 102)
    );
    assert!(
        (c.time_to_tip_s / 61.2 - 1.0).abs() < 0.05,
        "{}",
        c.time_to_tip_s
    );
    // Metafor's way back from a full queue: about 3.3 x 10^11 s; nearly all the time tipped.
    assert!(c.time_to_recover_s > 1e10, "{}", c.time_to_recover_s);
    assert!(c.tipped_share > 0.9 && c.healthy_share < 1e-6, "{c:?}");
}

#[test]
fn at_8_per_s_it_tips_later_and_without_retries_it_is_refused() {
    let slower = solve(&metafor("retry-at-once-8rps", &[])).unwrap();
    let fast = solve(&metafor("retry-at-once", &[])).unwrap();
    assert!(
        slower.time_to_tip_s > 10.0 * fast.time_to_tip_s,
        "{slower:?}"
    );
    let none = solve(&metafor("no-retries", &[])).unwrap_err();
    assert!(matches!(none, ChainError::Outside { .. }), "{none}");
}

#[test]
fn refusals_name_the_model_and_the_limit() {
    let big = solve(&metafor("retry-at-once", &["server.queue=100000"])).unwrap_err();
    assert!(matches!(big, ChainError::TooLarge { .. }), "{big}");
    let text = big.to_string();
    assert!(
        text.starts_with("retry-at-once: the Markov chain would have"),
        "{text}"
    );
    assert!(
        text.contains(&format!("limits of {MAX_STATES} states")),
        "{text}"
    );
    let unbounded = solve(&metafor("retry-at-once", &["server.queue=unlimited"])).unwrap_err();
    assert_eq!(
        unbounded.to_string(),
        "retry-at-once: the Markov chain does not model it: it truncates the queue at server.queue, and the queue is unbounded"
    );
}
