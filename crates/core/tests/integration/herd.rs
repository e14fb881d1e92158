//! The thundering herd of `models/thundering-herd.toml`: the AWS blog's jitters, end to end.

use retrystorm_core::{load::load, path::run};

fn herd() -> Vec<retrystorm_core::model::Model> {
    crate::util::shipped("thundering-herd.toml", &[])
}

#[test]
fn no_jitter_peak_is_the_client_count() {
    let v = herd();
    let r = run(&v[0], 42);
    assert_eq!(r.summary.peak_retries, 1000);
    assert_eq!(r.summary.retries, 5000);
    assert_eq!(r.summary.attempts, 6000);
    assert_eq!(r.summary.failed, 1000);
    // Retries at 100, 300, 700, 1500 and 3100 ms.
    assert_eq!(r.summary.last_arrival_ms, 3100.0);
}

#[test]
fn jitter_lowers_the_peak() {
    let v = herd();
    for m in &v[1..] {
        let r = run(m, 42);
        println!(
            "{} peak_retries={} last={}",
            m.name, r.summary.peak_retries, r.summary.last_arrival_ms
        );
        assert_eq!(r.summary.retries, 5000);
        assert!(
            r.summary.peak_retries < 300,
            "{}: {}",
            m.name,
            r.summary.peak_retries
        );
    }
}

/// `jitter = "additive"` with `jitter_factor = 1` is equal jitter with twice the base and cap:
/// the same run, draw for draw (docs/model.md).
#[test]
fn additive_factor_one_is_equal_jitter_with_twice_the_base() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/thundering-herd.toml"
    ))
    .unwrap();
    let with = |sets: &[&str]| {
        let sets: Vec<_> = sets
            .iter()
            .map(|s| retrystorm_core::load::Override::parse(s).unwrap())
            .collect();
        run(
            &load("thundering-herd.toml", &text, &sets).unwrap().base,
            42,
        )
        .summary
    };
    let additive = with(&[
        "retry.jitter=additive",
        "retry.jitter_factor=1",
        "retry.base=50ms",
        "retry.cap=5s",
    ]);
    let equal = with(&["retry.jitter=equal", "retry.base=100ms", "retry.cap=10s"]);
    assert_eq!(additive, equal);
    assert!(additive.peak_retries < 1000, "{}", additive.peak_retries);
}
