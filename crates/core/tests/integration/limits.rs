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

#[test]
fn a_variant_cannot_set_the_seed() {
    let text = "seed = 3\n[[variant]]\nname = \"a\"\n\n[[variant]]\nname = \"b\"\nseed = 7\n";
    let e = load("m.toml", text, &[]).unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert_eq!(e.field.as_deref(), Some("variant[1].seed"), "{e}");
    assert!(e.message.contains("common random numbers"), "{e}");
    assert!(e.message.contains("\"b\""), "{e}");
}

#[test]
fn a_burst_cut_by_the_horizon_is_truncated() {
    // 1000 starts spread over 100 s; the run stops at 10 s after about 100 of them, all settled.
    let text = "horizon = \"10s\"\n[workload]\nclients = 1000\nspread = \"100s\"\n[server]\nservice = \"1ms\"\n";
    let model = load("m.toml", text, &[]).unwrap().base;
    let r = run_model(&model, 1, &mut |_| {});
    assert_eq!(r.summary.ended, Ended::Horizon);
    assert!(r.summary.intents < 1000, "{}", r.summary.intents);
    assert_eq!(r.summary.unsettled, 0);
    assert!(
        r.summary.truncated,
        "only {} of 1000 intents started",
        r.summary.intents
    );
    // A burst that starts after the horizon starts nothing: cut too.
    let text = text.replace("spread = \"100s\"", "start = \"20s\"");
    let model = load("m.toml", &text, &[]).unwrap().base;
    let r = run_model(&model, 1, &mut |_| {});
    assert_eq!(r.summary.intents, 0);
    assert!(r.summary.truncated);
}

#[test]
fn a_zero_hedge_delay_is_refused() {
    let e = load(
        "m.toml",
        "[retry]\nmax_attempts = 3\n[hedge]\ndelay = \"0ns\"\n",
        &[],
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("hedge.delay"), "{e}");
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("positive"), "{e}");
}

#[test]
fn success_percentiles_count_successes_only() {
    // Half the attempts fail; a failure needs three attempts, so failures are the slow ones.
    let text = "[workload]\nclients = 400\n[retry]\nmax_attempts = 3\njitter = \"none\"\nbase = \"100ms\"\n[server]\nfail = 0.5\nservice = \"1ms\"\n";
    let model = load("m.toml", text, &[]).unwrap().base;
    let s = run_model(&model, 1, &mut |_| {}).summary;
    assert!(s.succeeded > 0 && s.failed > 0);
    assert!(
        s.success_ms.mean < s.completion_ms.mean,
        "{:?} vs {:?}",
        s.success_ms,
        s.completion_ms
    );
    assert!(s.success_ms.max <= s.completion_ms.max);
    // Without failures the two agree; without successes success_ms is all zeros.
    let none_fail = load(
        "m.toml",
        &text.replace("fail = 0.5", "fail = \"never\""),
        &[],
    )
    .unwrap()
    .base;
    let s = run_model(&none_fail, 1, &mut |_| {}).summary;
    assert_eq!(s.success_ms, s.completion_ms);
    let all_fail = load(
        "m.toml",
        &text.replace("fail = 0.5\nservice = \"1ms\"", "fail = \"always\""),
        &[],
    )
    .unwrap()
    .base;
    let s = run_model(&all_fail, 1, &mut |_| {}).summary;
    assert_eq!(s.success_ms, Default::default());
    assert!(s.completion_ms.max > 0.0);
}
