//! A caller's stop flag (`run_model_until`, the CLI's Ctrl-C): checked only where the engine calls
//! `progress`, so a run stopped from `progress` itself ends at the same place every time, with a
//! truncated summary; a flag never set changes nothing.

use retrystorm_core::load::load;
use retrystorm_core::path::{EnginePath, engine_path};
use retrystorm_core::summary::{Ended, VariantResult};
use retrystorm_core::{run_model, run_model_until, run_summary, run_summary_until};
use std::sync::atomic::{AtomicBool, Ordering};

/// Open arrivals into 4 workers: the event loop (a shared queue), about 1.6 M events to the
/// horizon.
const QUEUED: &str = r#"
horizon = "20s"
[workload]
kind = "open"
rate = "20000/s"
[server]
capacity = 4
service = "exp(150us)"
"#;

/// 200,000 clients against a server that always fails, 4 attempts each: the direct path
/// (nothing shared), about 2.4 M events.
const DIRECT: &str = r#"
[workload]
clients = 200000
spread = "10s"
[retry]
max_attempts = 4
jitter = "full"
[server]
fail = "always"
"#;

/// Runs `text` and sets the flag at the `k`-th progress call.
fn stopped_at(text: &str, k: u32) -> VariantResult {
    let model = load("m.toml", text, &[]).unwrap().base;
    let stop = AtomicBool::new(false);
    let mut calls = 0;
    run_model_until(
        &model,
        1,
        &mut |_| {
            calls += 1;
            if calls == k {
                stop.store(true, Ordering::Relaxed);
            }
        },
        &stop,
    )
}

#[test]
fn the_event_loop_stops_at_the_progress_point_and_says_so() {
    let model = load("m.toml", QUEUED, &[]).unwrap().base;
    assert!(matches!(engine_path(&model), EnginePath::EventLoop { .. }));
    let full = run_model(&model, 1, &mut |_| {});
    let r = stopped_at(QUEUED, 3);
    let s = &r.summary;
    assert_eq!(s.ended, Ended::Interrupted);
    assert!(s.truncated);
    // The third progress call comes at event 3 x 65,536, which is handled before the stop.
    assert_eq!(s.events, 3 * 65_536);
    assert!(
        s.end_ms < full.summary.end_ms && s.end_ms > 0.0,
        "{}",
        s.end_ms
    );
    assert!(s.intents < full.summary.intents);
    assert_eq!(s.intents, s.succeeded + s.failed + s.unsettled);
    // The same stop, the same run.
    assert_eq!(stopped_at(QUEUED, 3).summary, r.summary);
}

#[test]
fn the_direct_path_stops_after_the_intents_run_so_far() {
    let model = load("m.toml", DIRECT, &[]).unwrap().base;
    assert_eq!(engine_path(&model), EnginePath::Direct);
    let full = run_model(&model, 1, &mut |_| {});
    let r = stopped_at(DIRECT, 2);
    let s = &r.summary;
    assert_eq!(s.ended, Ended::Interrupted);
    assert!(s.truncated);
    assert!(s.intents > 0 && s.intents < 200_000, "{}", s.intents);
    // Every intent run so far ran to its end: 4 attempts, all failed.
    assert_eq!(s.attempts, 4 * s.intents);
    assert_eq!(s.failed, s.intents);
    assert!(s.events < full.summary.events);
    assert_eq!(stopped_at(DIRECT, 2).summary, r.summary);
}

#[test]
fn a_flag_never_set_changes_nothing() {
    let never = AtomicBool::new(false);
    for text in [QUEUED, DIRECT] {
        let model = load("m.toml", text, &[]).unwrap().base;
        let plain = run_model(&model, 7, &mut |_| {});
        let until = run_model_until(&model, 7, &mut |_| {}, &never);
        assert_eq!(until.summary, plain.summary);
        assert_eq!(until.series, plain.series);
        assert_eq!(
            run_summary_until(&model, 7, &never).summary,
            run_summary(&model, 7).summary
        );
        assert!(!plain.summary.truncated);
    }
}
