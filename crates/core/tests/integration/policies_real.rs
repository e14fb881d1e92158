//! The retry policies of real clients and proxies (`docs/policies.md`, "SDK retry modes" and
//! after), checked against each source's own published behaviour. Each test says where its
//! numbers come from.

use retrystorm_core::load::load;
use retrystorm_core::model::{Model, RetryAfterPolicy};
use retrystorm_core::path::run;
use retrystorm_core::policy::Class;
use retrystorm_core::policy::budget::{
    AwsQuota, AwsVersion, BudgetConfig, BudgetKind, EnvoyBudget,
};
use retrystorm_core::time::{Duration, Time};

fn one(text: &str) -> Model {
    load("test.toml", text, &[]).unwrap().base
}

fn refused(text: &str) -> String {
    load("test.toml", text, &[]).unwrap_err().to_string()
}

fn quota(version: AwsVersion) -> AwsQuota {
    AwsQuota::new(&BudgetConfig {
        kind: BudgetKind::Aws,
        version,
        ..BudgetConfig::default()
    })
}

// ---- AWS SDK retry quota ----------------------------------------------------------------------

#[test]
fn aws_classic_quota_refuses_the_101st_retry() {
    // botocore quota.py INITIAL_CAPACITY = 500, standard.py _RETRY_COST = 5.
    let mut q = quota(AwsVersion::Classic);
    for _ in 0..100 {
        assert_eq!(q.acquire(Class::Unavailable), Some(5));
    }
    assert_eq!(q.available(), 0);
    assert_eq!(q.acquire(Class::Unavailable), None, "the 101st");
    // botocore tests/unit/retries/test_quota.py: release is capped at the initial capacity.
    q.release(5);
    assert_eq!(q.available(), 5);
    // _TIMEOUT_RETRY_REQUEST = 10: a timeout retry cannot be paid from 5.
    assert_eq!(q.acquire(Class::Timeout), None);
}

#[test]
fn aws_2026_quota_follows_botocores_own_tests() {
    // botocore tests/unit/retries/test_standard_retry_v2_1.py: a 500 takes 14 (500 -> 486), a
    // throttling error 5 (-> 495), a timeout 14; a success gives back what was taken; the
    // DynamoDB test's sequence 486, 472, 458.
    let mut q = quota(AwsVersion::V2026);
    assert_eq!(q.acquire(Class::ServerError), Some(14));
    assert_eq!(q.available(), 486);
    q.release(14);
    assert_eq!(q.available(), 500);
    assert_eq!(q.acquire(Class::Throttled), Some(5));
    assert_eq!(q.available(), 495);
    q.release(5);
    assert_eq!(q.acquire(Class::Timeout), Some(14));
    let seq: Vec<u32> = (0..3)
        .map(|_| {
            q.acquire(Class::ServerError).unwrap();
            q.available()
        })
        .collect();
    assert_eq!(seq, [472, 458, 444]);
    // A retry after no retry at all refunds _NO_RETRY_INCREMENT = 1.
    q.release(0);
    assert_eq!(q.available(), 445);
}

#[test]
fn aws_js_quota_charges_ten_for_every_transient_error() {
    // smithy-typescript StandardRetryStrategy.getCapacityCost: errorType "TRANSIENT" (timeouts,
    // connection errors, 500/502/503/504) costs TIMEOUT_RETRY_COST = 10, others RETRY_COST = 5.
    let mut q = quota(AwsVersion::Js);
    for c in [
        Class::Timeout,
        Class::Connection,
        Class::Unavailable,
        Class::ServerError,
    ] {
        assert_eq!(q.cost(c), 10, "{c:?}");
    }
    assert_eq!(q.cost(Class::Throttled), 5);
    assert_eq!(q.acquire(Class::Unavailable), Some(10));
}

// ---- retry.mode presets ---------------------------------------------------------------------

#[test]
fn modes_fill_the_sdk_defaults_and_the_user_overrides() {
    let m = one("[retry]\nmode = \"aws-standard\"\n");
    assert_eq!(m.retry.max_attempts, 3);
    assert_eq!(m.retry.base, Duration::from_secs(1));
    assert_eq!(m.retry.cap, Duration::from_secs(20));
    assert_eq!(m.retry.retry_after, RetryAfterPolicy::Ignore);
    assert!(!m.retry.retry_on.contains(&Class::Conflict));
    assert_eq!(m.budget.kind, BudgetKind::Aws);
    assert_eq!(m.budget.version, AwsVersion::Classic);
    let m = one("[retry]\nmode = \"aws-standard-2026\"\nmax_attempts = 5\n[budget]\nquota = 50\n");
    assert_eq!(m.retry.max_attempts, 5, "the user's key wins");
    assert_eq!(m.budget.quota, 50);
    assert_eq!(m.budget.version, AwsVersion::V2026);
    assert_eq!(m.retry.throttling_base, Some(Duration::from_secs(1)));
    assert_eq!(m.retry.retry_after, RetryAfterPolicy::Aws);
    // botocore test_standard_retry_v2_1.py, random = 1: 0.05, 0.1, ..., 12.8, 20, 20 seconds.
    let b = m.retry.backoff();
    let w: Vec<u64> = (0..11).map(|n| b.window(n).0 / 1_000_000).collect();
    assert_eq!(
        w,
        [
            50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000, 20000
        ]
    );
    // The DynamoDB test: 4 attempts, 0.025, 0.05, 0.1.
    let d = one("[retry]\nmode = \"aws-standard-2026-dynamodb\"\n").retry;
    assert_eq!(d.max_attempts, 4);
    let w: Vec<u64> = (0..3).map(|n| d.backoff().window(n).0 / 1_000).collect();
    assert_eq!(w, [25_000, 50_000, 100_000]);
    // smithy constants.ts: 100 ms and 500 ms after throttling.
    let js = one("[retry]\nmode = \"aws-js-standard\"\n");
    assert_eq!(js.retry.base, Duration::from_millis(100));
    assert_eq!(js.retry.throttling_base, Some(Duration::from_millis(500)));
    assert_eq!(js.budget.version, AwsVersion::Js);
    // In a tier too.
    let t = one(
        "[[tier]]\nname = \"db\"\n[tier.retry]\nmode = \"aws-legacy\"\n[tier.server]\ncapacity = 1\n",
    );
    assert_eq!(t.tiers[0].retry.max_attempts, 5);
    assert_eq!(t.tiers[0].budget.kind, BudgetKind::None);
    let e = refused("[retry]\nmode = \"aws-standart\"\n");
    assert!(
        e.contains("retry.mode") && e.contains("did you mean `aws-standard`"),
        "{e}"
    );
}

fn always_failing(mode: &str, fail: &str) -> String {
    format!(
        r#"
        horizon = "120s"
        [workload]
        clients = 1000
        spread = "1s"
        [retry]
        mode = "{mode}"
        [server]
        {fail}
        [budget]
        scope = "shared"
    "#
    )
}

#[test]
fn each_mode_spends_its_quota_as_published() {
    // 1000 intents all answered 503 share one quota of 500: botocore classic pays 5 a retry
    // (100 retries), the JS SDK 10 (50), the 2026 rule 14 (35); legacy has no quota and makes
    // its 4 retries every time.
    for (mode, retries) in [
        ("aws-standard", 100),
        ("aws-js-standard", 50),
        ("aws-standard-2026", 35),
        ("aws-js-standard-2026", 35),
        ("aws-legacy", 4000),
    ] {
        let s = run(&one(&always_failing(mode, "fail = \"always\"")), 1).summary;
        assert_eq!(s.retries, retries, "{mode}");
    }
}

#[test]
fn aws_retry_after_is_kept_within_five_seconds_of_the_backoff() {
    // Two clients, one token: the second is answered 429 with Retry-After 10 s. Honoured as
    // HTTP says, it would wait 10 s; the AWS rule waits max(t, min(10 s, t + 5 s)) = t + 5 s
    // with t < 1 s (throttling_base = 1 s in the 2026 mode).
    let text = |mode: &str| {
        format!(
            r#"
            horizon = "60s"
            [workload]
            clients = 2
            [retry]
            mode = "{mode}"
            max_attempts = 2
            [server]
            capacity = 1
            [server.rate_limit]
            rate = "1/h"
            burst = 1
            retry_after = "10s"
        "#
        )
    };
    let s = run(&one(&text("aws-standard-2026")), 3).summary;
    assert_eq!(s.retry_after_waits, 1);
    assert!(
        s.completion_ms.max >= 5000.0 && s.completion_ms.max < 6100.0,
        "{}",
        s.completion_ms.max
    );
    // Classic botocore ignores the header: the delay is U(0, 1 s).
    let s = run(&one(&text("aws-standard")), 3).summary;
    assert_eq!(s.retry_after_waits, 0);
    assert!(s.completion_ms.max < 1100.0, "{}", s.completion_ms.max);
}

// ---- Envoy ----------------------------------------------------------------------------------

fn envoy(percent: Option<f64>, min: Option<u32>) -> EnvoyBudget {
    EnvoyBudget::new(&BudgetConfig {
        kind: BudgetKind::Envoy,
        budget_percent: percent,
        min_retry_concurrency: min,
        ..BudgetConfig::default()
    })
}

#[test]
fn envoy_budget_allows_the_larger_of_its_floor_and_its_share() {
    // resource_manager_impl.h RetryBudgetImpl::max(): max(budget_percent / 100 * active,
    // min_retry_concurrency), defaults 20 and 3 once either is set.
    let mut e = envoy(Some(20.0), None);
    for _ in 0..100 {
        e.sent(Time::ZERO);
    }
    assert_eq!(e.max(Time::ZERO), 20);
    let granted = (0..30).filter(|_| e.try_start(Time::ZERO)).count();
    assert_eq!(granted, 20, "20 % of 100 active");
    // An attempt made by a retry ends: its slot is free, but 20 % of 99 active is 19.
    e.ended(true);
    assert_eq!(e.retries_in_progress(), 19);
    assert!(!e.try_start(Time::ZERO));
    e.sent(Time::ZERO);
    assert!(e.try_start(Time::ZERO), "100 active again");
    // Few requests in flight: the floor of 3 (the product truncates: 20 % of 14 = 2.8 -> 2).
    let mut f = envoy(None, Some(3));
    for _ in 0..14 {
        f.sent(Time::ZERO);
    }
    assert_eq!(f.max(Time::ZERO), 3);
    assert_eq!((0..10).filter(|_| f.try_start(Time::ZERO)).count(), 3);
    // Neither key: the max_retries circuit breaker (circuit_breaker.proto default 3).
    let mut g = envoy(None, None);
    for _ in 0..1000 {
        g.sent(Time::ZERO);
    }
    assert_eq!(g.max(Time::ZERO), 3);
}

#[test]
fn envoy_budget_bounds_concurrent_retries_in_a_run() {
    // 1000 intents at once against a server that always fails, one shared proxy budget of
    // max_retries = 3 and immediate retries: never more than 3 retries in progress, so at most 3
    // of the first 1000 failures are retried at that instant, and every later retry waits for
    // one to end. Without the budget every intent retries twice (2000 retries).
    let text = |budget: &str| {
        format!(
            r#"
            [workload]
            clients = 1000
            [retry]
            max_attempts = 3
            backoff = "immediate"
            [server]
            fail = "always"
            [network]
            latency = "1ms"
            [budget]
            scope = "shared"
            {budget}
        "#
        )
    };
    let none = run(&one(&text("kind = \"none\"")), 1).summary;
    assert_eq!(none.retries, 2000);
    let e = run(&one(&text("kind = \"envoy\"")), 1).summary;
    assert!(e.retries < 100 && e.retries >= 3, "{}", e.retries);
    assert_eq!(
        e.retries + e.budget_denied,
        1000 + e.retries / 2 + e.retries % 2
    );
    let pct = run(&one(&text("kind = \"envoy\"\nbudget_percent = 50.0")), 1).summary;
    assert!(pct.retries > e.retries, "{} vs {}", pct.retries, e.retries);
    let err = refused(&text("kind = \"envoy\"\nbudget_percent = 150.0"));
    assert!(err.contains("budget.budget_percent"), "{err}");
}

// ---- Envoy rate_limited_retry_back_off ---------------------------------------------------------

/// Two clients, one token: the second is answered 429 with `Retry-After: hint` and retries once.
fn envoy_reset(hint: &str, cap: &str, seed: u64) -> retrystorm_core::summary::Summary {
    let text = format!(
        r#"
        horizon = "60s"
        [workload]
        clients = 2
        [retry]
        max_attempts = 2
        backoff = "envoy"
        base = "25ms"
        cap = "250ms"
        retry_after = "envoy"
        retry_after_cap = "{cap}"
        [server]
        capacity = 1
        [server.rate_limit]
        rate = "1/h"
        burst = 1
        retry_after = "{hint}"
    "#
    );
    run(&one(&text), seed).summary
}

#[test]
fn envoy_reset_header_waits_between_the_hint_and_one_and_a_half_times_it() {
    // retry_state_impl.cc `parseResetInterval` + `JitteredLowerBoundBackOffStrategy`: a 4 s
    // header within max_interval waits 4000 + random() % 2000 ms, i.e. [4 s, 6 s).
    let mut seen = Vec::new();
    for seed in 1..=20 {
        let s = envoy_reset("4s", "300s", seed);
        assert_eq!(s.retry_after_waits, 1);
        let t = s.completion_ms.max;
        assert!((4000.0..6000.0).contains(&t), "seed {seed}: {t}");
        seen.push(t);
    }
    // Jittered, not a constant 4 s.
    assert!(seen.iter().any(|t| *t > 4500.0), "{seen:?}");
    // A header above max_interval is discarded, not cut: Envoy's own backoff, < 25 ms.
    let s = envoy_reset("4s", "3s", 1);
    assert_eq!(s.retry_after_waits, 0);
    assert!(s.completion_ms.max < 25.0, "{}", s.completion_ms.max);
}

#[test]
fn envoy_reset_delay_is_envoys_integer_arithmetic() {
    use retrystorm_core::path::envoy_reset_delay;
    // (random() % (min_interval >> 1)) + min_interval, in ms.
    assert_eq!(envoy_reset_delay(4000, 0), Duration::from_millis(4000));
    assert_eq!(envoy_reset_delay(4000, 1999), Duration::from_millis(5999));
    assert_eq!(envoy_reset_delay(4000, 2000), Duration::from_millis(4000));
    assert_eq!(envoy_reset_delay(3, 7), Duration::from_millis(3));
    let hedged =
        refused("[retry]\nretry_after = \"envoy\"\nmax_attempts = 3\n[hedge]\ndelay = \"10ms\"\n");
    assert!(hedged.contains("retry.retry_after"), "{hedged}");
}
