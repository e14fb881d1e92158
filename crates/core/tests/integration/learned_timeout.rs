//! A timeout and a hedging delay learned from a percentile of recent latencies
//! (`retry.timeout = { percentile, window, factor, ... }`, `hedge.delay = { ... }`), against the
//! percentiles of textbook latency distributions.

use retrystorm_core::load::load;
use retrystorm_core::run_model;
use retrystorm_core::summary::VariantResult;

fn run(text: &str, seed: u64) -> VariantResult {
    let m = load("m.toml", text, &[]).unwrap().base;
    run_model(&m, seed, &mut |_| {})
}

/// M/M/1 at 500 arrivals a second and a mean service of 1 ms: the sojourn is exponential with
/// rate 1000 - 500 = 500/s. One attempt per intent, so timeouts add no load.
fn mm1(factor: u32) -> String {
    format!(
        r#"
horizon = "61s"
bucket = "1s"
[workload]
kind = "open"
rate = "500/s"
[retry]
max_attempts = 1
timeout = {{ percentile = 99, window = "60s", factor = {factor}, max = "1s" }}
[server]
capacity = 1
service = "exp(1ms)"
"#
    )
}

/// The learned timeout after 60 s (the series' bucket [60 s, 61 s)), ms, averaged over seeds.
fn learned_after_60s(text: &str) -> f64 {
    let seeds = [1, 2, 3, 4, 5, 6, 7, 8];
    let sum: f64 = seeds
        .iter()
        .map(|&s| {
            let v = run(text, s).series.learned_timeout_ms[60];
            println!("seed {s}: {v} ms");
            f64::from(v)
        })
        .sum();
    sum / seeds.len() as f64
}

#[test]
fn a_learned_p99_on_mm1_is_the_sojourns_p99_times_the_factor() {
    let p99 = (100f64).ln() / 500.0 * 1e3;
    for factor in [1, 2] {
        let want = p99 * f64::from(factor);
        let got = learned_after_60s(&mm1(factor));
        println!("factor {factor}: learned {got:.3} ms, ln(100)/500 x {factor} = {want:.3} ms");
        assert!(
            (got / want - 1.0).abs() < 0.05,
            "factor {factor}: {got} ms, want {want} ms"
        );
    }
}

#[test]
fn before_any_answer_the_timeout_is_max_and_the_series_starts_there() {
    let r = run(&mm1(2), 1);
    let s = &r.series.learned_timeout_ms;
    assert_eq!(s.len(), r.series.first.len());
    // The first slice (6 s) has no value yet: max, 1 s.
    assert!(s[..6].iter().all(|&v| v == 1000.0), "{:?}", &s[..7]);
    assert!(s[6] < 30.0, "learned from 6 s on: {}", s[6]);
    assert!(r.series.learned_hedge_delay_ms.is_empty());
}

/// Enough workers that nobody queues: a latency is the service time, exponential with mean
/// 10 ms, so its p95 is 10 ms x ln(20) = 29.96 ms; a hedge goes out after the p95, for about
/// 5 % of the calls.
#[test]
fn a_learned_hedging_delay_is_the_p95_and_hedges_five_percent() {
    let text = r#"
horizon = "31s"
bucket = "1s"
[workload]
kind = "open"
rate = "1000/s"
[retry]
max_attempts = 2
[hedge]
delay = { percentile = 95, window = "10s", max = "1s" }
[server]
service = "exp(10ms)"
"#;
    let r = run(text, 1);
    let want = 10.0 * (20f64).ln();
    let got = f64::from(r.series.learned_hedge_delay_ms[30]);
    println!("learned hedging delay {got:.3} ms, 10 ms x ln(20) = {want:.3} ms");
    assert!((got / want - 1.0).abs() < 0.05, "{got} ms, want {want} ms");
    // The first second hedges nobody (the delay is max, 1 s); later, about one call in twenty.
    let s = &r.summary;
    let hedged = (s.attempts - s.intents) as f64 / s.intents as f64;
    println!("hedged share {hedged:.4}");
    assert!((0.04..0.06).contains(&hedged), "{hedged}");
    assert!(r.series.learned_timeout_ms.is_empty());
}
