//! `drain_ms`: when the last intent settled, on models where it is known by construction, on
//! both engine paths; absent when the workload did not drain.

use retrystorm_core::catalogue::{MetricError, metric};
use retrystorm_core::expect::Expectation;
use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::path::{EnginePath, engine_path};
use retrystorm_core::run_model;
use retrystorm_core::summary::Summary;

fn summary(text: &str) -> Summary {
    let model = load("m.toml", text, &[]).unwrap().base;
    run_model(&model, 1, &mut |_| {}).summary
}

/// The small herd (`tests/fixtures/small-herd.toml`) without jitter, 50 clients that start at 1 s
/// against a server that always fails at once; base 100 ms, doubling: attempts at +0, +100, +300
/// and +700 ms, then they give up, all at 1.7 s.
fn herd() -> Model {
    let sets = ["workload.clients=50", "workload.start=1s"];
    let no_jitter = crate::util::fixture("small-herd.toml", &sets).remove(0);
    assert_eq!(no_jitter.name, "no-jitter");
    no_jitter
}

#[test]
fn a_herd_that_gives_up_drains_when_its_last_retry_fails() {
    let model = herd();
    assert_eq!(engine_path(&model), EnginePath::Direct);
    let s = run_model(&model, 1, &mut |_| {}).summary;
    assert_eq!((s.failed, s.attempts), (50, 200));
    assert_eq!(s.drain_ms, Some(1_700.0));
    assert_eq!(metric(&s, "drain_ms"), Ok(1_700.0));
    assert_eq!(
        Expectation::parse("drain_ms <= 1700").unwrap().holds(&s),
        Ok(true)
    );
}

/// 4 clients at once, one worker, 50 ms each, first come first served: served at 50, 100, 150
/// and 200 ms.
fn queue() -> String {
    crate::util::four_at_once(1, "50ms")
}

#[test]
fn a_queue_drains_when_its_last_request_is_served() {
    let model = load("m.toml", &queue(), &[]).unwrap().base;
    assert!(matches!(engine_path(&model), EnginePath::EventLoop { .. }));
    let s = summary(&queue());
    assert_eq!(s.succeeded, 4);
    assert_eq!(s.drain_ms, Some(200.0));
    assert_eq!(s.completion_ms.max, 200.0);
}

#[test]
fn a_workload_cut_by_the_horizon_never_drained() {
    let cut = format!("horizon = \"120ms\"\n{}", queue());
    let s = summary(&cut);
    assert!(s.truncated && s.unsettled > 0);
    assert_eq!(s.drain_ms, None);
    assert!(matches!(
        metric(&s, "drain_ms"),
        Err(MetricError::Absent(_))
    ));
    let json = serde_json::to_value(&s).unwrap();
    assert!(json.get("drain_ms").is_none());
}
