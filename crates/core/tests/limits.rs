//! Inputs at the edges of what the model allows: durations near the clock's limit, bursts cut by
//! the horizon, refused keys. Each ends quickly with an honest summary or is refused.

use retrystorm_core::load::load;
use retrystorm_core::run_model;
use retrystorm_core::summary::Ended;

/// 5124095h is 18,446,742 s: within a few seconds of the largest time the clock holds.
const NEAR_THE_LIMIT: &str = r#"
horizon = "5124095h"
bucket = "1h"
[workload]
clients = 3
[retry]
timeout = "5124095h"
[server]
service = "5124095h"
"#;

#[test]
fn durations_near_the_clock_limit_end_at_once() {
    let model = load("big.toml", NEAR_THE_LIMIT, &[]).unwrap().base;
    let started = std::time::Instant::now();
    let r = run_model(&model, 1, &mut |_| {});
    assert!(
        started.elapsed().as_secs() < 10,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(r.summary.ended, Ended::Horizon);
    assert!(r.summary.truncated, "3 intents unsettled at the horizon");
    assert_eq!(r.summary.unsettled, 3);
}

#[test]
fn max_events_stops_a_run_near_the_clock_limit() {
    let text = format!("max_events = 4\n{NEAR_THE_LIMIT}");
    let model = load("big.toml", &text, &[]).unwrap().base;
    let r = run_model(&model, 1, &mut |_| {});
    assert_eq!(r.summary.ended, Ended::MaxEvents);
    assert!(r.summary.truncated);
}
