//! Fan-out (`server.fanout`) against its closed forms ("The Tail at Scale", Dean and Barroso,
//! CACM 2013): a request that waits for all of K calls with exponential times takes the
//! maximum of K exponentials (mean `10 ms × H_K`); a quorum of 2 of 3 the second order
//! statistic; a leaf's rare slowness becomes the request's common one; and retries at the root
//! re-send every call while retries at the leaves re-send one. Each run is sized for a debug
//! build (20,000 intents, 100,000 for the quorum), and each tolerance is about four standard
//! errors of its estimate at that size (the numbers in `docs/validation.md` are from 200,000).

use crate::util::assert_deterministic;
use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::{FanoutSummary, Summary, VariantResult};

/// A closed loop of `intents` over 50 workers into a tier that fans out (`fanout`, with the
/// tier's `retry`) to `[server]` (`server`), every capacity unlimited.
fn model(intents: u64, fanout: &str, root_retry: &str, leaf_retry: &str, server: &str) -> Model {
    let text = format!(
        r#"
        [workload]
        kind = "closed"
        workers = 50
        intents = {intents}
        [retry]
        {root_retry}
        [[tier]]
        name = "root"
        server = {{ fanout = {fanout} }}
        retry = {leaf_retry}
        [server]
        {server}
        "#
    );
    load("fanout.toml", &text, &[]).unwrap().base
}

fn run(m: &Model) -> VariantResult {
    let r = run_model(m, 1, &mut |_| {});
    assert_eq!(r.summary.unsettled, 0, "{:?}", r.summary.ended);
    r
}

fn fan(s: &Summary) -> &FanoutSummary {
    assert_eq!(s.fanout.len(), 1, "one fan-out tier");
    &s.fanout[0]
}

/// `got` within `tol` (relative) of `want`.
fn near(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * want.abs(),
        "{what}: got {got}, closed form {want} (tolerance {:.2}%)",
        tol * 100.0
    );
}

/// `H_k`, the k-th harmonic number: the mean of the largest of k unit exponentials.
fn harmonic(k: u32) -> f64 {
    (1..=k).map(|i| 1.0 / f64::from(i)).sum()
}

/// The quantile `q` of the largest of `k` exponentials of mean `mean`: `-mean ln(1 - q^(1/k))`.
fn max_quantile(k: u32, mean: f64, q: f64) -> f64 {
    -mean * (1.0 - q.powf(1.0 / f64::from(k))).ln()
}

const ONCE: &str = "max_attempts = 1";
const LEAF_ONCE: &str = "{ max_attempts = 1 }";

/// `intents` requests fanned out as `fanout` to leaves of `exp(10ms)`, one try everywhere.
fn exp_leaves(intents: u64, fanout: &str) -> Summary {
    run(&model(
        intents,
        fanout,
        ONCE,
        LEAF_ONCE,
        "service = \"exp(10ms)\"",
    ))
    .summary
}

#[test]
fn waiting_for_all_of_k_takes_the_maximum_of_k_leaves() {
    for (k, mean, p50, p99) in [(100, 51.87, 49.75, 92.05), (10, 29.29, 27.04, 69.03)] {
        let fanout = format!("{{ k = {k}, wait = \"all\" }}");
        let s = exp_leaves(20_000, &fanout);
        // The published numbers are the closed forms to four figures.
        near("H_k", 10.0 * harmonic(k), mean, 1e-3);
        near("p50 closed form", max_quantile(k, 10.0, 0.5), p50, 1e-3);
        near("p99 closed form", max_quantile(k, 10.0, 0.99), p99, 1e-3);
        near(&format!("k={k} mean"), s.completion_ms.mean, mean, 0.01);
        near(&format!("k={k} p50"), s.completion_ms.p50, p50, 0.015);
        near(&format!("k={k} p99"), s.completion_ms.p99, p99, 0.035);
        let f = fan(&s);
        assert_eq!(
            (f.fans, f.leaves, f.leaf_calls),
            (20_000, 20_000 * u64::from(k), 20_000 * u64::from(k))
        );
        assert_eq!(f.leaves_per_intent, f64::from(k));
        assert_eq!(
            (f.answered_ok, f.answered_failed, f.leaves_running_after),
            (20_000, 0, 0)
        );
        assert_eq!(s.succeeded, 20_000);
    }
}

#[test]
fn a_one_in_a_hundred_slow_leaf_makes_most_requests_slow() {
    // A leaf fails its first try with p = 0.01 after 1 ms and retries 998 ms later: it takes
    // 1 ms, or 1 s or more. A request of 100 leaves takes 1 s or more unless all are fast.
    let leaf = r#"{ max_attempts = 5, backoff = "constant", base = "998ms", jitter = "none" }"#;
    let m = model(
        20_000,
        "{ k = 100 }",
        ONCE,
        leaf,
        "service = \"1ms\"\nfail = 0.01",
    );
    let r = run(&m);
    let slow = 1.0 - 0.99f64.powi(100);
    near("closed form", slow, 0.6340, 1e-4);
    let fast = r
        .completion_cdf
        .iter()
        .filter(|&&(ms, _)| ms < 999.0)
        .map(|&(_, q)| q)
        .fold(0.0, f64::max);
    // The CDF is read at steps of 0.5%: the share at or above 1 s is within one step.
    let measured = 1.0 - fast;
    assert!(
        (measured - slow).abs() <= 0.005 + 0.0035,
        "share of requests >= 1 s: {measured}, closed form {slow}"
    );
    assert!(r.summary.completion_ms.p50 >= 1000.0);
    assert!(r.summary.completion_ms.p99 < 2100.0);
}

/// Each leaf fails with p = 0.01; retried at the root (3 attempts, one try per leaf) or at the
/// leaves (one root attempt, 3 tries per leaf).
#[test]
fn retries_at_the_root_resend_every_leaf_and_at_the_leaves_one() {
    let leaf = "service = \"1ms\"\nfail = 0.01";
    let n = 20_000.0;
    // Retried at the root: an attempt succeeds when all 100 leaves do.
    let q = 0.99f64.powi(100);
    let attempts = 1.0 + (1.0 - q) + (1.0 - q).powi(2);
    let success = 1.0 - (1.0 - q).powi(3);
    near("root attempts closed form", attempts, 2.0359, 1e-4);
    near("root success closed form", success, 0.7452, 1e-4);
    let root = "max_attempts = 3\nbackoff = \"immediate\"";
    let s = run(&model(20_000, "{ k = 100 }", root, LEAF_ONCE, leaf)).summary;
    let layers = &s.layered.as_ref().unwrap().layers;
    let sd = |p: f64| (p * (1.0 - p) / n).sqrt();
    near("root attempts", layers[0].sent as f64 / n, attempts, 0.01);
    near(
        "leaf calls per intent",
        fan(&s).leaf_calls_per_intent,
        100.0 * attempts,
        0.01,
    );
    let got = s.succeeded as f64 / n;
    assert!(
        (got - success).abs() <= 4.0 * sd(success),
        "root success {got}, closed form {success}"
    );
    // Retried at the leaves: each leaf call fails only when all three tries do.
    let leaf_retry = "{ max_attempts = 3, backoff = \"immediate\" }";
    let s = run(&model(20_000, "{ k = 100 }", ONCE, leaf_retry, leaf)).summary;
    near(
        "leaf calls closed form",
        100.0 * (1.0 + 0.01 + 0.0001),
        101.01,
        1e-6,
    );
    near(
        "leaf calls per intent",
        fan(&s).leaf_calls_per_intent,
        101.01,
        0.01,
    );
    let success = (1.0 - 1e-6f64).powi(100);
    near("success", s.succeeded as f64 / n, success, 0.01);
    assert_eq!(layers.len(), 2);
}

#[test]
fn a_quorum_of_two_of_three_takes_the_second_leaf() {
    let s = exp_leaves(100_000, "{ k = 3, wait = { quorum = 2 } }");
    // The second smallest of three exponentials: 10 ms × (1/3 + 1/2).
    near("quorum 2 of 3 mean", s.completion_ms.mean, 8.333, 0.01);
    let f = fan(&s);
    // Each request answers with one leaf still running.
    assert_eq!(f.leaves_running_after, 100_000);
    assert!(f.leaf_served_after == 0, "no leaf waits for a worker here");
}

#[test]
fn waiting_for_the_first_takes_the_fastest_leaf() {
    let s = exp_leaves(20_000, "{ k = 10, wait = \"first\" }");
    // The smallest of ten exponentials of mean 10 ms: 1 ms, with a standard deviation of 1 ms.
    near("first of 10 mean", s.completion_ms.mean, 1.0, 0.03);
    assert_eq!(fan(&s).leaves_running_after, 20_000 * 9);
}

/// Leaves queue at a small leaf tier; the request waits for the first.
fn queued(cancel: bool) -> Summary {
    let fanout = format!("{{ k = 10, wait = \"first\", cancel = {cancel} }}");
    let m = model(
        2_000,
        &fanout,
        ONCE,
        LEAF_ONCE,
        "capacity = 4\nservice = \"exp(10ms)\"",
    );
    run(&m).summary
}

#[test]
fn cancelled_leaves_are_not_served_after_their_request_settled() {
    let kept = queued(false);
    let cancelled = queued(true);
    let (k, c) = (fan(&kept), fan(&cancelled));
    assert!(k.leaf_served_after > 1000, "{k:?}");
    assert_eq!(k.leaves_cancelled, 0);
    assert_eq!(c.leaf_served_after, 0, "{c:?}");
    assert_eq!(c.leaves_cancelled, c.leaves_running_after);
    assert!(c.leaves_cancelled > 0);
    // The cancelled leaves left the queue unserved: the tier below did much less work.
    assert!(
        cancelled.tiers[1].served * 3 < kept.tiers[1].served,
        "{} vs {}",
        cancelled.tiers[1].served,
        kept.tiers[1].served
    );
    assert!(cancelled.completion_ms.mean < kept.completion_ms.mean);
    assert_eq!(
        cancelled.tiers[1].dropped_expired + cancelled.tiers[1].served,
        cancelled.tiers[1].arrivals
    );
}

#[test]
fn resending_only_the_missing_leaves_sends_fewer() {
    let leaf = "service = \"exp(1ms)\"\nfail = 0.01";
    let root = "max_attempts = 3\nbackoff = \"immediate\"";
    let all = run(&model(
        5_000,
        "{ k = 100, resend = \"all\" }",
        root,
        LEAF_ONCE,
        leaf,
    ))
    .summary;
    let missing = run(&model(
        5_000,
        "{ k = 100, resend = \"missing\" }",
        root,
        LEAF_ONCE,
        leaf,
    ))
    .summary;
    let (a, m) = (fan(&all), fan(&missing));
    // Same first attempts; the retries re-send only what had not succeeded.
    assert!(m.leaf_calls < a.leaf_calls, "{m:?} vs {a:?}");
    assert!(m.leaf_calls > 100 * 5_000);
    assert!(
        missing.succeeded > all.succeeded,
        "{} vs {}",
        missing.succeeded,
        all.succeeded
    );
    // With no failures the two are one.
    let ok = "service = \"exp(1ms)\"";
    let a = run(&model(
        1_000,
        "{ k = 20, resend = \"all\" }",
        root,
        LEAF_ONCE,
        ok,
    ));
    let m = run(&model(
        1_000,
        "{ k = 20, resend = \"missing\" }",
        root,
        LEAF_ONCE,
        ok,
    ));
    assert_eq!(a.summary.completion_ms, m.summary.completion_ms);
}

#[test]
fn a_fan_out_run_is_deterministic_and_a_fan_of_one_is_the_plain_call() {
    let m = model(
        2_000,
        "{ k = 8, wait = { quorum = 5 }, cancel = true }",
        "max_attempts = 3\ntimeout = \"30ms\"",
        "{ max_attempts = 2, timeout = \"20ms\" }",
        "capacity = 20\nservice = \"exp(5ms)\"\nfail = 0.05",
    );
    assert_deterministic(&m, 7);
    // k = 1 waits for its one call, drawn as the call of a tier without fan-out.
    let one = model(
        2_000,
        "{ k = 1 }",
        "max_attempts = 3",
        "{ max_attempts = 2 }",
        "service = \"exp(5ms)\"\nfail = 0.1",
    );
    let text = r#"
        [workload]
        kind = "closed"
        workers = 50
        intents = 2000
        [retry]
        max_attempts = 3
        [[tier]]
        name = "root"
        retry = { max_attempts = 2 }
        [server]
        service = "exp(5ms)"
        fail = 0.1
    "#;
    let plain = load("plain.toml", text, &[]).unwrap().base;
    let (a, b) = (run(&one).summary, run(&plain).summary);
    assert_eq!(a.completion_ms, b.completion_ms);
    assert_eq!(a.tiers, b.tiers);
    assert_eq!(a.succeeded, b.succeeded);
}
