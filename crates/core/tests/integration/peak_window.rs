//! The sliding-window peaks (`peak_window`): exact over the arrival times, checked
//! against a brute-force count over every arrival the tracer saw; per-attempt counts that add up
//! to `arrivals`; the first retry's window peak at or above its bucket peak; determinism.

use retrystorm_core::load::{Override, load};
use retrystorm_core::model::Model;
use retrystorm_core::summary::Summary;
use retrystorm_core::trace::{Step, TraceOptions};
use retrystorm_core::{run_model, run_model_traced, run_summary};

fn models(text: &str, sets: &[&str]) -> Vec<Model> {
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    load("m.toml", text, &sets).unwrap().variants
}

/// 500 clients at once, 6 attempts from 1 s, a variant per jitter.
const HERD: &str = include_str!("../../../../tests/fixtures/herd-500.toml");

/// Served, with timeouts and a queue: arrivals spread by service and by retries of timeouts.
const OPEN: &str = r#"
name = "open"
bucket = "10ms"
horizon = "20s"
[workload]
kind = "open"
rate = "400/s"
intents = 3000
[retry]
max_attempts = 4
timeout = "60ms"
base = "20ms"
cap = "1s"
jitter = "full"
[server]
capacity = 4
service = "exp(10ms)"
fail = 0.3
"#;

/// The most of `times` (sorted) in any `[s, s + w)`: for every start `s` among the times and
/// the times minus `w - 1`, a count by binary search.
fn brute(times: &[u64], w: u64) -> u64 {
    let count = |s: u64| {
        let lo = times.partition_point(|&t| t < s);
        let hi = times.partition_point(|&t| t < s.saturating_add(w));
        (hi - lo) as u64
    };
    times
        .iter()
        .flat_map(|&t| [t, t.saturating_sub(w - 1)])
        .map(count)
        .max()
        .unwrap_or(0)
}

/// Every arrival at the server, from a trace that keeps every intent: `(time, attempt)`.
fn arrivals(m: &Model, seed: u64) -> (Summary, Vec<(u64, u16)>) {
    let opt = TraceOptions {
        intents: u64::MAX,
        outcome: None,
        max_events: 10_000_000,
    };
    let (r, log) = run_model_traced(m, seed, &mut |_| {}, opt);
    assert_eq!(log.dropped, 0);
    let mut a: Vec<(u64, u16)> = log
        .events()
        .filter(|e| e.event == Step::Arrive)
        .map(|e| (e.time_ns, e.attempt))
        .collect();
    a.sort_unstable();
    assert_eq!(
        a.len() as u64,
        r.summary.arrivals,
        "the trace saw every arrival"
    );
    (r.summary, a)
}

fn check_against_brute_force(s: &Summary, a: &[(u64, u16)], w: u64, what: &str) {
    let times = |f: &dyn Fn(u16) -> bool| -> Vec<u64> {
        a.iter().filter(|x| f(x.1)).map(|x| x.0).collect()
    };
    assert_eq!(s.peak_window_ms, w as f64 / 1e6, "{what}");
    assert_eq!(
        s.peak_arrivals_window,
        brute(&times(&|_| true), w),
        "{what}"
    );
    assert_eq!(
        s.peak_retries_window,
        brute(&times(&|n| n > 0), w),
        "{what}"
    );
    let top = a
        .iter()
        .map(|x| x.1)
        .max()
        .map_or(0, |n| usize::from(n) + 1);
    assert_eq!(s.attempt_peaks.len(), top, "{what}");
    for p in &s.attempt_peaks {
        let mine = times(&|n| u64::from(n) + 1 == p.attempt);
        assert_eq!(
            p.arrivals,
            mine.len() as u64,
            "{what} attempt {}",
            p.attempt
        );
        assert_eq!(
            p.peak_window,
            brute(&mine, w),
            "{what} attempt {}",
            p.attempt
        );
    }
}

/// Windows that divide the bucket, straddle its edges (37 ms, 130 ms against 100 ms buckets), are
/// one nanosecond wide (ties only: the burst's first tries all arrive at 0) or span seconds.
#[test]
fn window_peaks_are_the_brute_force_counts_over_every_arrival() {
    for (text, windows) in [
        (HERD, &["100ms", "37ms", "130ms", "1ns", "2s"][..]),
        (OPEN, &["10ms", "7ms", "1ns", "333ms"][..]),
    ] {
        for w in windows {
            let set = format!("peak_window={w}");
            for m in models(text, &[&set]) {
                let (s, a) = arrivals(&m, 11);
                let what = format!("{} {w}", m.name);
                check_against_brute_force(&s, &a, m.peak_window().0, &what);
            }
        }
    }
}

/// Without the key the window is the bucket; a burst at one instant is all ties.
#[test]
fn the_default_window_is_the_bucket_and_ties_count_together() {
    for m in models(HERD, &[]) {
        let s = run_model(&m, 3, &mut |_| {}).summary;
        assert_eq!(s.peak_window_ms, s.bucket_ms);
        assert_eq!(s.attempt_peaks[0].peak_window, 500, "{}", m.name);
        assert!(s.peak_arrivals_window >= s.peak_arrivals);
        assert!(s.peak_retries_window >= s.peak_retries);
    }
}

/// The issue's case: 500 agents, 1 s base doubling, equal jitter, 100 ms: the fixed grid splits
/// the first retry's burst, the sliding window does not.
#[test]
fn first_retry_window_peak_is_at_least_its_bucket_peak() {
    let m = &models(HERD, &["peak_window=100ms"])[0];
    let mut above = 0;
    for seed in 1..=5 {
        let s = run_model(m, seed, &mut |_| {}).summary;
        let first_retry = &s.attempt_peaks[1];
        assert_eq!(first_retry.attempt, 2);
        assert_eq!(first_retry.arrivals, 500);
        assert!(
            first_retry.peak_window >= first_retry.peak,
            "{first_retry:?}"
        );
        // Equal jitter puts the first retries in [0.5 s, 1 s): 5 buckets, about 100 each.
        assert!(
            (90..=160).contains(&first_retry.peak_window),
            "{first_retry:?}"
        );
        above += usize::from(first_retry.peak_window > first_retry.peak);
        for p in &s.attempt_peaks {
            assert!(p.peak_window >= p.peak, "{p:?}");
        }
    }
    assert!(
        above >= 3,
        "the window sees more than the grid in most seeds"
    );
}

/// The per-attempt arrivals add up to `arrivals` in every shipped model (the bottom's
/// arrivals, first tries and retries, of every variant).
#[test]
fn per_attempt_arrivals_add_up_in_every_shipped_model() {
    let files = crate::util::shipped_files();
    let mut checked = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let origin = f.display().to_string();
        let cap = Override::parse("max_events=300000").unwrap();
        let Ok(sc) = load(&origin, &text, &[cap]) else {
            continue;
        };
        for m in &sc.variants {
            let s = run_summary(m, 1).summary;
            let sum: u64 = s.attempt_peaks.iter().map(|a| a.arrivals).sum();
            assert_eq!(sum, s.arrivals, "{origin} {}", m.name);
            let later: u64 = s.attempt_peaks.iter().skip(1).map(|a| a.arrivals).sum();
            if m.layers.is_empty() && m.tiers.is_empty() {
                // One hop: a retry is an attempt after the first.
                assert_eq!(
                    later,
                    s.tiers.last().unwrap().retries,
                    "{origin} {}",
                    m.name
                );
            }
            assert!(
                s.attempt_peaks
                    .iter()
                    .enumerate()
                    .all(|(i, a)| a.attempt == i as u64 + 1)
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} variants ran");
}

/// Same model and seed, same numbers; another window changes the window fields only.
#[test]
fn deterministic_and_the_window_changes_nothing_else() {
    let a = models(OPEN, &["peak_window=10ms"]).remove(0);
    let b = models(OPEN, &["peak_window=250ms"]).remove(0);
    let ra = crate::util::assert_deterministic(&a, 5);
    let mut rb = run_model(&b, 5, &mut |_| {});
    assert!(rb.summary.peak_arrivals_window > ra.summary.peak_arrivals_window);
    rb.summary.peak_arrivals_window = ra.summary.peak_arrivals_window;
    rb.summary.peak_retries_window = ra.summary.peak_retries_window;
    rb.summary.peak_window_ms = ra.summary.peak_window_ms;
    for (x, y) in rb
        .summary
        .attempt_peaks
        .iter_mut()
        .zip(&ra.summary.attempt_peaks)
    {
        x.peak_window = y.peak_window;
    }
    assert_eq!(rb, ra);
}
