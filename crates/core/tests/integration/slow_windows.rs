//! `server.slow_windows` (latency brown-outs): work that starts service inside a window
//! is served `factor` times its drawn service time; nothing else changes except through
//! queueing; recovery is measured from the window's end; bad windows are refused.

use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::path::run;

use crate::util::shipped;

fn one(text: &str) -> Model {
    load("test.toml", text, &[]).unwrap().base
}

fn refused(text: &str) -> String {
    load("test.toml", text, &[]).unwrap_err().to_string()
}

/// One request sent at `start` (no network latency) to one worker serving 10 ms, with a slow
/// window `[1s, 2s)` of factor 10: its completion time is its service time.
fn single(start: &str) -> f64 {
    let m = one(&format!(
        r#"
        [workload]
        clients = 1
        start = "{start}"
        [server]
        capacity = 1
        service = "10ms"
        slow_windows = [{{ from = "1s", to = "2s", factor = 10 }}]
    "#
    ));
    let s = run(&m, 1).summary;
    assert_eq!(s.work_ms, s.completion_ms.max, "start {start}");
    s.completion_ms.max
}

#[test]
fn work_started_in_the_window_takes_factor_times_its_draw() {
    assert_eq!(single("500ms"), 10.0, "before the window");
    assert_eq!(
        single("999ms"),
        10.0,
        "started just before `from`: unaffected"
    );
    assert_eq!(single("1s"), 100.0, "started at `from`");
    assert_eq!(single("1500ms"), 100.0, "inside");
    assert_eq!(single("1999ms"), 100.0, "started just before `to`");
    assert_eq!(single("2s"), 10.0, "started at `to`: unaffected");
}

#[test]
fn the_start_of_service_decides_not_the_arrival() {
    // Two requests arrive together at 995 ms at one worker: the first is served 995..1005 ms
    // (started before the window, 10 ms), the second waits and starts at 1005 ms, inside the
    // window: 100 ms, done at 1105 ms, 110 ms after it arrived.
    let m = one(r#"
        [workload]
        clients = 2
        start = "995ms"
        [server]
        capacity = 1
        service = "10ms"
        slow_windows = [{ from = "1s", to = "2s", factor = 10 }]
    "#);
    let s = run(&m, 1).summary;
    assert_eq!(s.completion_ms.max, 110.0);
    assert_eq!(s.work_ms, 110.0);
    assert_eq!(s.trigger_from_ms, Some(1000.0));
    assert_eq!(s.trigger_to_ms, Some(2000.0));
}

/// Common random numbers: the same draws, scaled. With the whole run inside one window of factor
/// 2.5, every request's service is 2.5 times the one it drew without the window (each rounded
/// to the nanosecond), whatever the order in which the queue served them.
#[test]
fn the_draws_do_not_change_only_scale() {
    let base = r#"
        horizon = "60s"
        [workload]
        clients = 2000
        spread = "2s"
        [server]
        capacity = 4
        service = "exp(10ms)"
    "#;
    let plain = run(&one(base), 3).summary;
    let slow = run(
        &one(&format!(
            "{base}\nslow_windows = [{{ from = \"0s\", to = \"60s\", factor = 2.5 }}]"
        )),
        3,
    )
    .summary;
    assert_eq!(plain.succeeded, 2000);
    assert_eq!(slow.succeeded, 2000);
    // Rounding: at most half a nanosecond per request.
    let bound = 2000.0 * 0.5e-6;
    assert!(
        (slow.work_ms - 2.5 * plain.work_ms).abs() <= bound,
        "{} vs 2.5 x {}",
        slow.work_ms,
        plain.work_ms
    );
}

/// Open arrivals at 700/s from 20 processes on ten workers of exp(10 ms): a server at 70 %
/// utilisation, clients with a 250 ms timeout and 3 retries without jitter. Ends in `[server]`,
/// so that a test can add its `slow_windows`.
const AT_70_PERCENT: &str = r#"
    horizon = "30s"
    [workload]
    kind = "open"
    rate = "700/s"
    processes = 20
    [retry]
    max_attempts = 4
    timeout = "250ms"
    backoff = "exponential"
    jitter = "none"
    base = "50ms"
    cap = "2s"
    [network]
    latency = "1ms"
    [server]
    capacity = 10
    service = "exp(10ms)"
"#;

/// A window of factor 1 is no window at all: with the trigger pinned (`[recovery] trigger`, so
/// that the window does not become the trigger) the whole result is the same.
#[test]
fn a_window_of_factor_one_changes_nothing() {
    let pinned = "[recovery]\ntrigger = { from = \"5s\", to = \"6s\" }";
    let base = format!("{AT_70_PERCENT}\n{pinned}");
    let with = format!(
        "{AT_70_PERCENT}\nslow_windows = [{{ from = \"5s\", to = \"6s\", factor = 1 }}]\n{pinned}"
    );
    assert_eq!(run(&one(&base), 7), run(&one(&with), 7));
}

/// The issue's finding: a one-second GC pause (service 10x slower) on a server at 70 %
/// utilisation, clients with a 250 ms timeout and 3 retries, tips it into a retry storm that
/// outlives the pause; without the pause the same clients never retry, and without retries the
/// server recovers within about a second and a half. The first tries arrive at the same times in
/// all three (a slow window draws nothing).
#[test]
fn a_one_second_gc_pause_tips_a_server_at_70_percent_into_a_retry_storm() {
    let calm = AT_70_PERCENT;
    let pause = format!("{calm}\nslow_windows = [{{ from = \"10s\", to = \"11s\", factor = 10 }}]");
    let no_retry = pause.replace("max_attempts = 4", "max_attempts = 1");
    let (c, p, n) = (
        run(&one(calm), 1),
        run(&one(&pause), 1),
        run(&one(&no_retry), 1),
    );
    assert_eq!(c.series.first, p.series.first, "the same first tries");
    assert_eq!(c.series.first, n.series.first, "the same first tries");
    let (c, p, n) = (c.summary, p.summary, n.summary);
    assert!(c.amplification < 1.01, "calm: {}", c.amplification);
    assert_eq!(c.trigger_to_ms, None, "no window, no trigger");
    assert!(p.amplification > 2.5, "pause: {}", p.amplification);
    assert!(
        p.timeouts > 10 * n.timeouts,
        "{} vs {}",
        p.timeouts,
        n.timeouts
    );
    assert_eq!(p.trigger_from_ms, Some(10_000.0));
    assert_eq!(p.trigger_to_ms, Some(11_000.0));
    assert_eq!(p.recovered, Some(false), "the storm outlives the pause");
    assert_eq!(n.recovered, Some(true));
    assert!(n.recovery_ms.unwrap() <= 2000.0, "{:?}", n.recovery_ms);
}

/// A backlog flush is not recovery: `models/gc-pause.toml` without retries and with 500 ms
/// timeouts has no success from about 10.6 s to 12 s (work that waited past its timeout completes
/// for nobody), then the backlog drains at the server's full rate, well above the old goodput.
/// Counted in full, that flush filled a 2 s window starting 200 ms after the pause, 800 ms before
/// any request succeeded again; each bucket now counts up to the baseline's mean, so recovery is
/// early by at most the documented `(1 - threshold x c) x window` (about 0.5 s here).
#[test]
fn a_backlog_flush_does_not_pass_for_recovery() {
    let m = shipped("gc-pause.toml", &["retry.timeout=500ms"])
        .into_iter()
        .find(|m| m.retry.max_attempts == 1)
        .expect("the no-retry variant");
    let r = run(&m, 1);
    let (s, bucket) = (&r.summary, r.series.bucket_ms);
    let to = s.trigger_to_ms.unwrap();
    // The end of the last stretch without a success after the trigger, from the goodput series.
    let last_empty = (0..r.series.succeeded.len())
        .filter(|&i| i as f64 * bucket >= to && r.series.succeeded[i] == 0)
        .filter(|&i| (i as f64 * bucket) < to + 5_000.0)
        .max()
        .unwrap();
    let back = (last_empty + 1) as f64 * bucket - to;
    assert!(back >= 900.0, "no success until {back} ms after the pause");
    let recovery = s.recovery_ms.expect("recovered");
    assert!(recovery <= back, "{recovery} ms, goodput back at {back} ms");
    assert!(
        back - recovery <= 500.0,
        "recovery at {recovery} ms, {} ms before goodput came back",
        back - recovery
    );
}

#[test]
fn slow_windows_on_a_tier_slow_that_tier() {
    // A front tier (1 worker, 10 ms) slow 10x from 0 s; the database below at 5 ms is not.
    let m = one(r#"
        [workload]
        clients = 1
        [[tier]]
        name = "front"
        server = { capacity = 1, service = "10ms", slow_windows = [{ from = "0s", to = "1s", factor = 10 }] }
        [server]
        capacity = 1
        service = "5ms"
    "#);
    let s = run(&m, 1).summary;
    assert_eq!(s.completion_ms.max, 105.0);
}

#[test]
fn bad_windows_are_refused_with_the_field() {
    let w = |ws: &str| refused(&format!("[server]\nslow_windows = [{ws}]"));
    let e = w(r#"{ from = "2s", to = "2s", factor = 10 }"#);
    assert!(
        e.contains("server.slow_windows[0].to: must be after `from` (2s)"),
        "{e}"
    );
    for bad in ["0.5", "0", "-2", "nan", "inf"] {
        let e = w(&format!(r#"{{ from = "1s", to = "2s", factor = {bad} }}"#));
        assert!(
            e.contains("server.slow_windows[0].factor: must be a finite number >= 1"),
            "{bad}: {e}"
        );
    }
    let e = w(
        r#"{ from = "1s", to = "3s", factor = 2 }, { from = "5s", to = "6s", factor = 2 }, { from = "2s", to = "4s", factor = 3 }"#,
    );
    assert!(
        e.contains("server.slow_windows[2]: slow windows must not overlap (it overlaps server.slow_windows[0]"),
        "{e}"
    );
    // Touching windows do not overlap.
    one(
        "[server]\nslow_windows = [{ from = \"1s\", to = \"2s\", factor = 2 }, { from = \"2s\", to = \"3s\", factor = 4 }]",
    );
    let e = w(r#"{ from = "-1s", to = "2s", factor = 2 }"#);
    assert!(e.contains("durations cannot be negative"), "{e}");
    let e = w(r#"{ from = "1s", to = "2s" }"#);
    assert!(e.contains("factor"), "{e}");
    let e = refused(
        "[[tier]]\nserver = { slow_windows = [{ from = \"1s\", to = \"2s\", factor = 0.5 }] }",
    );
    assert!(e.contains("tier[0].server.slow_windows[0].factor"), "{e}");
    let e = refused(
        "[server]\nfail = \"always\"\nslow_windows = [{ from = \"1s\", to = \"2s\", factor = 2 }]",
    );
    assert!(e.contains("server.slow_windows: has no effect"), "{e}");
}
