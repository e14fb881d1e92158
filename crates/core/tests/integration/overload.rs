//! Integration tests of the overload signals, client policies and recovery metric
//! (`docs/policies.md`). Small, fast models; each test can fail. Where the breaker sits (its
//! placement, its half-open permits) is `breaker_placement`.

use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::path::run;

use crate::util::always_failing;

fn model_file(name: &str) -> Vec<Model> {
    model_file_with(name, &[])
}

fn model_file_with(name: &str, sets: &[&str]) -> Vec<Model> {
    crate::util::shipped(name, sets)
}

fn one(text: &str) -> Model {
    load("test.toml", text, &[]).unwrap().base
}

fn refused(text: &str) -> String {
    let e = load("test.toml", text, &[]).unwrap_err();
    e.to_string()
}

// ---- Server signals -------------------------------------------------------------------------

#[test]
fn client_errors_are_never_retried() {
    let m = one(r#"
        [workload]
        clients = 200
        [retry]
        max_attempts = 5
        [server]
        service = "1ms"
        client_error = 1.0
    "#);
    let s = run(&m, 1).summary;
    assert_eq!(s.client_errors, 200);
    assert_eq!(s.attempts, 200);
    assert_eq!(s.failed, 200);
    assert_eq!(s.effects, 0, "a 4xx has no effect");
}

#[test]
fn shedding_answers_503_or_overloaded() {
    // One worker, no queue: of 10 simultaneous clients one is served, nine are shed.
    let base = r#"
        [workload]
        clients = 10
        [retry]
        max_attempts = 3
        backoff = "constant"
        jitter = "none"
        base = "50ms"
        [server]
        capacity = 1
        queue = 0
        service = "10ms"
    "#;
    let s = run(&one(base), 1).summary;
    assert!(s.rejected >= 9 && s.retries > 0, "{s:?}");
    let s = run(&one(&format!("{base}\nshed_answer = \"overloaded\"")), 1).summary;
    assert_eq!(s.overloaded, 9);
    assert_eq!(s.retries, 0, "\"overloaded; don't retry\" is not retried");
    assert_eq!(s.failed, 9);
}

#[test]
fn concurrency_limit_sheds_beyond_it() {
    let m = one(r#"
        [workload]
        clients = 10
        [retry]
        max_attempts = 1
        [server]
        concurrency_limit = 4
        service = "10ms"
    "#);
    let s = run(&m, 1).summary;
    assert_eq!(s.rejected, 6);
    assert_eq!(s.succeeded, 4);
}

#[test]
fn retry_after_is_honoured_capped_or_ignored() {
    // Nine clients are shed with `Retry-After: 2s`.
    let base = r#"
        [workload]
        clients = 10
        [retry]
        max_attempts = 2
        backoff = "constant"
        jitter = "none"
        base = "10ms"
        [server]
        capacity = 1
        queue = 0
        service = "1ms"
        retry_after = "2s"
    "#;
    let honour = run(&one(base), 1).summary;
    assert_eq!(honour.retry_after_waits, 9);
    assert_eq!(honour.last_arrival_ms, 2000.0);
    let capped = run(
        &one(&base.replace(
            "base = \"10ms\"",
            "base = \"10ms\"\nretry_after_cap = \"500ms\"",
        )),
        1,
    )
    .summary;
    assert_eq!(capped.last_arrival_ms, 500.0);
    let ignore = run(
        &one(&base.replace(
            "base = \"10ms\"",
            "base = \"10ms\"\nretry_after = \"ignore\"",
        )),
        1,
    )
    .summary;
    assert_eq!(ignore.retry_after_waits, 0);
    assert_eq!(ignore.last_arrival_ms, 10.0);
}

#[test]
fn rate_limiter_answers_429_with_derived_retry_after() {
    // A bucket of 1 refilled at 10/s: of 5 clients at t = 0 one passes; the rest are told to come
    // back after the next token (100 ms), rounded up to whole seconds: 1 s.
    let m = one(r#"
        [workload]
        clients = 5
        [retry]
        max_attempts = 2
        [server]
        service = "1ms"
        [server.rate_limit]
        rate = "10/s"
        burst = 1
    "#);
    let s = run(&m, 1).summary;
    // At 1 s the bucket holds one token again (burst 1): one of the four passes.
    assert_eq!(s.rate_limited, 4 + 3);
    assert_eq!(s.succeeded, 2);
    assert_eq!(s.retry_after_waits, 4);
    assert_eq!(s.last_arrival_ms, 1000.0);
}

#[test]
fn service_time_rises_with_concurrency() {
    // 100 requests start together; the k-th to begin sees k others in service: 10 ms * (1 + 0.1 k).
    let m = one(r#"
        [workload]
        clients = 100
        [server]
        service = "10ms"
        slowdown = 0.1
    "#);
    let s = run(&m, 1).summary;
    assert!(
        (s.completion_ms.max - 109.0).abs() < 1e-9,
        "{}",
        s.completion_ms.max
    );
    assert!(
        (s.work_ms - (0..100).map(|k| 10.0 * (1.0 + 0.1 * k as f64)).sum::<f64>()).abs() < 1e-6
    );
}

/// Four clients at once on four workers of 100 ms each.
fn four_on_four() -> String {
    crate::util::four_at_once(4, "100ms")
}

#[test]
fn capacity_drop_serialises_the_workers() {
    let text = &four_on_four();
    assert_eq!(run(&one(text), 1).summary.completion_ms.max, 100.0);
    let dropped =
        format!("{text}\ncapacity_drops = [{{ from = \"0s\", to = \"1s\", capacity = 1 }}]");
    assert_eq!(run(&one(&dropped), 1).summary.completion_ms.max, 400.0);
    // The drop ends at 150 ms: the two still queued start together then.
    let short =
        format!("{text}\ncapacity_drops = [{{ from = \"0s\", to = \"150ms\", capacity = 1 }}]");
    let s = run(&one(&short), 1).summary;
    assert_eq!(s.completion_ms.max, 250.0);
    assert_eq!(s.trigger_to_ms, Some(150.0));
}

/// A drop to 0 workers is a stop-the-world pause: what is in service finishes, nothing new
/// starts, the queue waits (nothing is refused or answered) and is served when the pause ends.
#[test]
fn a_capacity_drop_to_zero_pauses_the_server() {
    let text = &format!(
        "{}capacity_drops = [{{ from = \"50ms\", to = \"1s\", capacity = 0 }}]\n",
        four_on_four()
    );
    // The first four start at 0 and finish at 100 ms, inside the pause: nothing else waits.
    let s = run(&one(text), 1).summary;
    assert_eq!((s.succeeded, s.completion_ms.max), (4, 100.0));
    // Eight clients: four wait through the pause, start at 1 s and finish at 1.1 s.
    let r = run(&one(&text.replace("clients = 4", "clients = 8")), 1);
    let s = &r.summary;
    assert_eq!((s.succeeded, s.rejected, s.failed), (8, 0, 0));
    assert_eq!(s.completion_ms.max, 1100.0);
    assert_eq!(
        (s.trigger_from_ms, s.trigger_to_ms),
        (Some(50.0), Some(1000.0))
    );
    // No worker busy between the first four's end and the pause's end.
    let b = r.series.bucket_ms;
    let paused = (0..r.series.busy.len()).filter(|&i| {
        let t = i as f64 * b;
        (100.0..1000.0).contains(&t) && t + b <= 1000.0
    });
    assert!(paused.clone().count() > 0);
    assert!(paused.into_iter().all(|i| r.series.busy[i] == 0.0));
}

// ---- Retry budgets under 100 % failure ------------------------------------------------------

#[test]
fn no_budget_gives_max_attempts_times_the_load() {
    let s = run(&one(&always_failing("kind = \"none\"")), 1).summary;
    assert_eq!(s.amplification, 3.0);
}

#[test]
fn grpc_throttling_stops_retries_at_half_its_tokens() {
    // 10 tokens, every attempt's failure takes one. The first intent: 9 (retry), 8 (retry), 7
    // (third attempt, no retry left). The second: 6 (retry), 5 (not > 10 / 2: refused). No
    // success ever refills them, so every later intent is refused its first retry: 3 retries.
    let s = run(&one(&always_failing("kind = \"grpc\"")), 1).summary;
    assert_eq!(s.retries, 3);
    assert_eq!(s.budget_denied, 999);
}

#[test]
fn aws_quota_pays_for_100_retries() {
    // 500 tokens at 5 a retry; a 503 is not a timeout.
    let s = run(&one(&always_failing("kind = \"aws\"")), 1).summary;
    assert_eq!(s.retries, 100);
    // After timeouts a retry costs 10: 50 retries.
    let t = always_failing("kind = \"aws\"")
        .replace("fail = \"always\"", "service = \"1s\"")
        .replace(
            "backoff = \"immediate\"",
            "backoff = \"immediate\"\ntimeout = \"10ms\"",
        );
    assert_eq!(run(&one(&t), 1).summary.retries, 50);
}

#[test]
fn finagle_allows_its_percentage_of_requests() {
    let s = run(
        &one(&always_failing(
            "kind = \"finagle\"\npercent_can_retry = 0.1\nmin_retries_per_sec = 0",
        )),
        1,
    )
    .summary;
    assert!((95..=100).contains(&s.retries), "{}", s.retries);
    // The reserve alone: 10 retries/s for a 10 s ttl, 100 on top of the 10 %.
    let s = run(
        &one(&always_failing(
            "kind = \"finagle\"\npercent_can_retry = 0.1",
        )),
        1,
    )
    .summary;
    assert!((195..=200).contains(&s.retries), "{}", s.retries);
}

#[test]
fn tower_and_linkerd_budgets_allow_their_reserve_under_total_failure() {
    // No success deposits (tower) and every failure is retryable (Linkerd): the reserve alone,
    // min_per_sec * ttl = 10 * 10 retries (withdrawals of 5 against a reserve of 500).
    for kind in ["tower", "linkerd"] {
        let s = run(&one(&always_failing(&format!("kind = \"{kind}\""))), 1).summary;
        assert_eq!(s.retries, 100, "{kind}");
        let s = run(
            &one(&always_failing(&format!(
                "kind = \"{kind}\"\nmin_retries_per_sec = 0"
            ))),
            1,
        )
        .summary;
        assert_eq!(s.retries, 0, "{kind}");
    }
    let e = refused("[budget]\nkind = \"linkerd\"\nttl = \"500ms\"");
    assert!(
        e.contains("budget.ttl") && e.contains("does not retry"),
        "{e}"
    );
    let e = refused("[budget]\nkind = \"tower\"\npercent_can_retry = 2000");
    assert!(e.contains("budget.percent_can_retry"), "{e}");
}

#[test]
fn adaptive_throttling_rejects_locally_when_nothing_is_accepted() {
    let s = run(&one(&always_failing("kind = \"adaptive\"")), 1).summary;
    assert!(s.throttled_locally > 900, "{s:?}");
    assert!(s.amplification < 0.2, "{}", s.amplification);
    // A backend that accepts everything (500s are accepted) is never throttled.
    let t = always_failing("kind = \"adaptive\"").replace("fail = \"always\"", "fail = 1.0");
    let s = run(&one(&t), 1).summary;
    assert_eq!(s.throttled_locally, 0);
    assert_eq!(s.amplification, 3.0);
}

// ---- Circuit breaker ------------------------------------------------------------------------

#[test]
fn breaker_opens_and_drops_first_tries_and_retries() {
    let text = always_failing("kind = \"none\"")
        + r#"
        [breaker]
        enabled = true
        scope = "shared"
        window_size = 10
        minimum_calls = 10
        wait_in_open = "200ms"
        permitted_in_half_open = 2
    "#;
    let s = run(&one(&text), 1).summary;
    assert!(s.breaker_opened >= 2, "{s:?}");
    // Closed: 10 calls; then every 200 ms two half-open probes over the 1 s spread.
    assert!(s.attempts <= 10 + 2 * 6, "{}", s.attempts);
    assert_eq!(s.failed, 1000);
    assert!(s.breaker_rejected > 950, "{}", s.breaker_rejected);
    // Breaking only retries: every first try still goes out.
    let s = run(
        &one(&text.replace("enabled = true", "enabled = true\nretries_only = true")),
        1,
    )
    .summary;
    assert!(s.attempts >= 1000 && s.attempts < 1050, "{}", s.attempts);
}

// ---- Hedging --------------------------------------------------------------------------------

#[test]
fn hedging_cuts_the_tail_and_wastes_the_losers() {
    let text = r#"
        [workload]
        clients = 2000
        spread = "20s"
        [retry]
        max_attempts = 1
        [server]
        service = "lognormal(10ms, 1.2)"
    "#;
    let plain = run(&one(text), 1).summary;
    let hedged = run(
        &one(&text.replace(
            "max_attempts = 1",
            "max_attempts = 3\n[hedge]\ndelay = \"20ms\"",
        )),
        1,
    )
    .summary;
    assert_eq!(hedged.succeeded, 2000);
    assert!(
        hedged.completion_ms.p99 < 0.6 * plain.completion_ms.p99,
        "{} vs {}",
        hedged.completion_ms.p99,
        plain.completion_ms.p99
    );
    assert!(
        hedged.attempts > 2000 && hedged.attempts < 3000,
        "{}",
        hedged.attempts
    );
    // Cancelled copies keep running at the server.
    assert!(hedged.wasted_share > 0.0 && plain.wasted_share == 0.0);
    // gRPC throttling stops hedges as it stops retries: once failures have taken the tokens to
    // half, no copy beyond the first goes out.
    let hedged_text = text.replace(
        "max_attempts = 1",
        "max_attempts = 3\n[hedge]\ndelay = \"20ms\"",
    );
    let throttled = run(
        &one(&format!(
            "{}\nfail = \"always\"\n[budget]\nkind = \"grpc\"\nscope = \"shared\"",
            // No service time: `fail = "always"` answers before any (the loader says so).
            hedged_text.replace("service = \"lognormal(10ms, 1.2)\"", "")
        )),
        1,
    )
    .summary;
    assert!(throttled.attempts < 2010, "{}", throttled.attempts);
    assert!(
        throttled.budget_denied > 1990,
        "{}",
        throttled.budget_denied
    );
    assert_eq!(throttled.failed, 2000);
}

// ---- Metastable failure and recovery --------------------------------------------------------

#[test]
fn metastable_spike_persists_without_a_budget_and_recovers_with_one() {
    let v = model_file("metastable-spike.toml");
    let by_name = |n: &str| v.iter().find(|m| m.name == n).unwrap();
    let no_backoff = run(by_name("no-backoff"), 1);
    let budget = run(by_name("grpc-budget"), 1);
    let breaker = run(by_name("breaker"), 1);
    for r in [&no_backoff, &budget, &breaker] {
        assert_eq!(r.summary.trigger_from_ms, Some(10_000.0));
        assert_eq!(r.summary.trigger_to_ms, Some(12_000.0));
    }
    let s = &no_backoff.summary;
    assert_eq!(s.recovered, Some(false));
    assert_eq!(s.recovery_ms, None);
    assert!(s.wasted_share > 0.5 && s.amplification > 2.5, "{s:?}");
    for r in [&budget, &breaker] {
        let s = &r.summary;
        assert_eq!(s.recovered, Some(true), "{}", r.name);
        assert!(s.recovery_ms.unwrap() < 15_000.0, "{}", r.name);
        assert!(s.amplification < 1.1, "{}", r.name);
    }
    // The budget changes no arrival: first tries reach the server at the same instants.
    assert_eq!(no_backoff.series.first, budget.series.first);
}

#[test]
fn runs_are_deterministic() {
    let v = model_file("budgets.toml");
    for m in v
        .iter()
        .filter(|m| m.name == "adaptive" || m.name == "breaker")
    {
        crate::util::assert_deterministic(m, 7);
    }
}

// ---- Validation -----------------------------------------------------------------------------

#[test]
fn bad_policy_input_is_refused_with_the_field() {
    let e = refused("[retry]\nretry_on = [\"timeout\", \"4xx\"]");
    assert!(
        e.contains("retry.retry_on[1]") && e.contains("never retried"),
        "{e}"
    );
    let e = refused("[budget]\nkind = \"finagle\"\nttl = \"2m\"");
    assert!(e.contains("budget.ttl"), "{e}");
    let e = refused("[server]\ncapacity_drops = [{ from = \"1s\", to = \"2s\", capacity = 1 }]");
    assert!(e.contains("limited server.capacity"), "{e}");
    let e = refused("[breaker]\nenabled = true\nfailure_rate_threshold = 0");
    assert!(e.contains("breaker.failure_rate_threshold"), "{e}");
    let e = refused("[retry]\nmax_attempts = 100\n[hedge]\ndelay = \"10ms\"");
    assert!(e.contains("retry.max_attempts"), "{e}");
    let e = refused("[server.rate_limit]\nrate = \"10/s\"\nburst = 0");
    assert!(e.contains("server.rate_limit.burst"), "{e}");
    let e = refused("[recovery]\nfraction = 1.5");
    assert!(e.contains("recovery.fraction"), "{e}");
    let e = refused("[server]\nretry_after = \"soon\"");
    assert!(e.contains("derived"), "{e}");
}
