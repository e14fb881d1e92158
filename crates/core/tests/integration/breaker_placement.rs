//! Integration tests of where the circuit breaker sits (`docs/policies.md`):
//! Retry(CircuitBreaker(call)), the default, against CircuitBreaker(Retry(call))
//! (`placement = "around-retries"`), and the half-open permit a refused attempt gives back.
//! Small, fast models; each test can fail.

use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::path::run;

use crate::util::always_failing;

fn one(text: &str) -> Model {
    load("test.toml", text, &[]).unwrap().base
}

fn refused(text: &str) -> String {
    let e = load("test.toml", text, &[]).unwrap_err();
    e.to_string()
}

/// A shared breaker that opens at 50 % over its last 10 outcomes and stays open for `wait`.
fn breaker_placed(placement: &str, wait: &str) -> String {
    format!(
        r#"
        [breaker]
        enabled = true
        scope = "shared"
        window_size = 10
        minimum_calls = 10
        wait_in_open = "{wait}"
        permitted_in_half_open = 1
        placement = "{placement}"
    "#
    )
}

#[test]
fn breaker_around_retries_never_sees_first_tries_that_a_retry_rescues() {
    // Every first try lands in a 503 outage; every retry, 1 s later, after it and succeeds.
    let text = |placement: &str| {
        r#"
        [workload]
        clients = 200
        spread = "500ms"
        [retry]
        max_attempts = 3
        backoff = "constant"
        jitter = "none"
        base = "1s"
        [server]
        service = "1ms"
        outages = [{ from = "0s", to = "600ms" }]
    "#
        .to_string()
            + &breaker_placed(placement, "1h")
    };
    // Per attempt the ten failed first tries open it, and it fails every call after them.
    let per = run(&one(&text("per-attempt")), 1).summary;
    assert_eq!(per.breaker_opened, 1, "{per:?}");
    assert_eq!(per.attempts, 10);
    assert_eq!(per.succeeded, 0);
    // Around the retries it sees 200 successful calls and never opens.
    let around = run(&one(&text("around-retries")), 1).summary;
    assert_eq!(around.breaker_opened, 0, "{around:?}");
    assert_eq!(around.breaker_rejected, 0);
    assert_eq!(around.attempts, 400);
    assert_eq!(around.succeeded, 200);
}

#[test]
fn breaker_around_retries_opens_after_n_calls_not_n_attempts() {
    // Every attempt fails and each call's three attempts go out back to back, one call after
    // the other: the breaker opens on its 10th outcome, the 10th attempt or the 10th call.
    let text =
        |placement: &str| always_failing("kind = \"none\"") + &breaker_placed(placement, "1h");
    let per = run(&one(&text("per-attempt")), 1).summary;
    assert_eq!(per.breaker_opened, 1, "{per:?}");
    assert_eq!(per.attempts, 10);
    // The 4th call's first try was the 10th attempt: its retry is refused (and a local refusal
    // ends the call), and so is every later call's first try.
    assert_eq!(per.breaker_rejected, 1 + 996);
    let around = run(&one(&text("around-retries")), 1).summary;
    assert_eq!(around.breaker_opened, 1, "{around:?}");
    assert_eq!(around.attempts, 30);
    // Only first tries are refused: each of the other 990 calls once.
    assert_eq!(around.breaker_rejected, 990);
    assert_eq!(around.failed, 1000);
}

#[test]
fn breaker_around_retries_half_open_call_keeps_its_permit_for_its_retries() {
    // One call permitted in half-open every 100 ms; per attempt it is one probe attempt (its
    // retry finds the permit spent), around the retries it is one call of three attempts.
    let text =
        |placement: &str| always_failing("kind = \"none\"") + &breaker_placed(placement, "100ms");
    let per = run(&one(&text("per-attempt")), 1).summary;
    assert!(per.breaker_opened >= 5, "{per:?}");
    assert_eq!(per.attempts, 10 + (per.breaker_opened - 1));
    let around = run(&one(&text("around-retries")), 1).summary;
    assert!(around.breaker_opened >= 5, "{around:?}");
    assert_eq!(around.attempts, 30 + 3 * (around.breaker_opened - 1));
    // Every call it permitted sent all its attempts; the refused ones sent none.
    assert_eq!(
        around.attempts,
        3 * (around.intents - around.breaker_rejected)
    );
}

#[test]
fn breaker_around_retries_spans_backoffs_and_hedged_copies() {
    // Calls overlap (attempts 30 ms apart, a call every 1 ms): around the retries every
    // permitted call sends all its attempts, retried or hedged, and only first tries are refused.
    for extra in ["", "[hedge]\ndelay = \"30ms\"\n"] {
        let text = always_failing("kind = \"none\"").replace(
            "backoff = \"immediate\"",
            "backoff = \"constant\"\njitter = \"none\"\nbase = \"30ms\"",
        ) + &breaker_placed("around-retries", "100ms")
            + extra;
        let s = run(&one(&text), 1).summary;
        assert!(s.breaker_opened >= 2, "{extra}: {s:?}");
        assert!(s.breaker_rejected > 0, "{extra}: {s:?}");
        assert_eq!(
            s.attempts,
            3 * (s.intents - s.breaker_rejected),
            "{extra}: {s:?}"
        );
    }
}

#[test]
fn breaker_placement_changes_no_draw_when_the_breaker_never_opens() {
    // A breaker that never fills its window decides nothing: both placements run the same
    // arrivals, services, losses and backoffs (common random numbers), so the same summary.
    let text = |placement: &str| {
        format!(
            r#"
            horizon = "20s"
            [workload]
            kind = "open"
            rate = "200/s"
            [retry]
            max_attempts = 4
            timeout = "30ms"
            [network]
            request_loss = 0.05
            latency = "exp(1ms)"
            [server]
            capacity = 8
            service = "lognormal(10ms, 1.0)"
            fail = 0.2
            [breaker]
            enabled = true
            window_size = 1000000
            minimum_calls = 1000000
            placement = "{placement}"
        "#
        )
    };
    let per = run(&one(&text("per-attempt")), 1).summary;
    let around = run(&one(&text("around-retries")), 1).summary;
    assert!(per.retries > 100 && per.succeeded > 1000, "{per:?}");
    assert_eq!(per.breaker_opened, 0);
    assert_eq!(per, around);
}

#[test]
fn breaker_around_retries_with_retries_only_is_refused() {
    let e =
        refused("[breaker]\nenabled = true\nretries_only = true\nplacement = \"around-retries\"");
    assert!(e.contains("breaker.placement"), "{e}");
    let e = refused(
        "[[tier]]\nname = \"proxy\"\nbreaker = { enabled = true, retries_only = true, placement = \"around-retries\" }",
    );
    assert!(e.contains("tier[0].breaker.placement"), "{e}");
}

/// Every `[breaker]` key but `enabled` needs the breaker on (its key table says so): written
/// beside `enabled = false` it would change nothing, so it is refused at its line, in a tier too;
/// `enabled = false` alone, or the keys beside `enabled = true`, load.
#[test]
fn breaker_keys_without_the_breaker_are_refused() {
    assert_eq!(
        refused("[breaker]\nplacement = \"around-retries\""),
        "test.toml:2:1: breaker.placement: has no effect while breaker.enabled = false: set breaker.enabled = true, or remove it"
    );
    let e = refused("[breaker]\nenabled = false\nwait_in_open = \"5s\"");
    assert!(
        e.starts_with("test.toml:3:1: breaker.wait_in_open: has no effect"),
        "{e}"
    );
    let e = refused("[[tier]]\nname = \"proxy\"\nbreaker = { forced = \"open\" }");
    assert!(
        e.contains("tier[0].breaker.forced: has no effect while tier[0].breaker.enabled = false"),
        "{e}"
    );
    // A variant that turns the breaker off inherits the base's keys.
    let e = refused(
        "[breaker]\nenabled = true\nwait_in_open = \"5s\"\n[[variant]]\nname = \"off\"\nbreaker.enabled = false",
    );
    assert!(
        e.contains("breaker.wait_in_open: has no effect") && e.contains("(with variant \"off\")"),
        "{e}"
    );
    let off = one("[breaker]\nenabled = false");
    assert!(!off.breaker.enabled);
    let on = one("[breaker]\nenabled = true\nplacement = \"around-retries\"");
    assert!(on.breaker.enabled);
}

/// A per-attempt breaker in half-open permits two calls; a concurrency limiter of one refuses the
/// second. Its permit must come back, or the breaker waits for ever for an outcome that never
/// comes and refuses every call after the outage.
#[test]
fn a_half_open_permit_the_limiter_refuses_is_given_back() {
    let m = load(
        "test.toml",
        r#"
        horizon = "20s"
        [workload]
        kind = "open"
        rate = "100/s"
        intents = 1500
        [retry]
        max_attempts = 1
        [server]
        service = "5ms"
        outages = [{ from = "0s", to = "2s" }]
        [breaker]
        enabled = true
        scope = "shared"
        window_size = 10
        minimum_calls = 10
        wait_in_open = "100ms"
        automatic_transition = true
        permitted_in_half_open = 2
        [limiter]
        kind = "aimd"
        scope = "shared"
        initial_limit = 1
        min_limit = 1
        max_limit = 1
    "#,
        &[],
    )
    .unwrap()
    .base;
    let s = super::util::assert_deterministic(&m, 1).summary;
    // After the outage (2 s of 15 s of arrivals) the breaker closes again and most intents succeed.
    assert!(
        s.succeeded > s.intents / 2,
        "succeeded {} of {}: the breaker stayed half-open",
        s.succeeded,
        s.intents
    );
}
