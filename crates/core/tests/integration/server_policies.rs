//! Server-side behaviours: outages that fail fast or hang, Retry-After on an outage's 503s.

use retrystorm_core::load::{Override, load};
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::Summary;

fn model(base: &str, sets: &[&str]) -> Result<Model, String> {
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    load("m.toml", base, &sets)
        .map(|s| s.base)
        .map_err(|e| e.to_string())
}

fn run(m: &Model) -> Summary {
    run_model(m, 1, &mut |_| {}).summary
}

/// 100 clients at t = 0 against a server that is down for the first second.
const DOWN: &str = r#"
horizon = "60s"
[workload]
kind = "burst"
clients = 100
[retry]
max_attempts = 3
timeout = "300ms"
backoff = "constant"
base = "100ms"
jitter = "none"
[server]
service = "1ms"
"#;

#[test]
fn a_hanging_outage_answers_nothing_and_does_no_work() {
    let fast = run(&model(DOWN, &[r#"server.outages=[{from="0s", to="1s"}]"#]).unwrap());
    let hang = run(&model(
        DOWN,
        &[r#"server.outages=[{from="0s", to="1s", answer="hang"}]"#],
    )
    .unwrap());
    // Fail fast: three 503s, 100 ms apart, then give up at 200 ms.
    assert_eq!((fast.failed, fast.tiers[0].rejected), (100, 300));
    assert_eq!(fast.tiers[0].hung, 0);
    assert_eq!(fast.timeouts, 0);
    // Hang: attempts at 0, 400 ms and 800 ms each wait out their 300 ms timeout.
    assert_eq!(hang.failed, 100);
    assert_eq!((hang.tiers[0].rejected, hang.tiers[0].hung), (0, 300));
    assert_eq!((hang.tiers[0].served, hang.timeouts), (0, 300));
    assert_eq!(hang.completion_ms.p50, 1100.0);
    assert!(
        fast.completion_ms.p50 <= 201.0,
        "{}",
        fast.completion_ms.p50
    );
    // A window that ends in time lets the third attempt through.
    let short = run(&model(
        DOWN,
        &[r#"server.outages=[{from="0s", to="700ms", answer="hang"}]"#],
    )
    .unwrap());
    assert_eq!((short.succeeded, short.tiers[0].hung), (100, 200));
}

#[test]
fn with_no_timeout_a_hung_request_is_pending_at_the_horizon() {
    let m = model(
        DOWN,
        &[
            r#"server.outages=[{from="0s", to="1s", answer="hang"}]"#,
            "retry.timeout=none",
        ],
    );
    // `timeout` has no "none" word: omit it instead.
    let m = m.or_else(|_| {
        model(
            &DOWN.replace("timeout = \"300ms\"\n", ""),
            &[r#"server.outages=[{from="0s", to="1s", answer="hang"}]"#],
        )
    });
    let s = run(&m.unwrap());
    assert_eq!((s.succeeded, s.failed, s.unsettled), (0, 0, 100));
    assert_eq!(s.outcome_pending, 100);
}

#[test]
fn requests_queued_before_a_hang_are_still_served() {
    // One worker, 10 ms each: the burst queues, the hang starts at 50 ms; the queued ones finish.
    let s = run(&model(
        DOWN,
        &[
            "server.capacity=1",
            "server.service=10ms",
            "retry.max_attempts=1",
            "retry.timeout=10s",
            r#"server.outages=[{from="50ms", to="10s", answer="hang"}]"#,
        ],
    )
    .unwrap());
    assert_eq!((s.succeeded, s.tiers[0].hung), (100, 0));
}

#[test]
fn an_outage_retry_after_is_honoured() {
    let ra = r#"server.outages=[{from="0s", to="1s", retry_after="2s"}]"#;
    let s = run(&model(DOWN, &[ra]).unwrap());
    // The first 503 says "come back in 2 s": the second attempt succeeds after the window.
    assert_eq!((s.succeeded, s.tiers[0].rejected), (100, 100));
    assert_eq!(s.retry_after_waits, 100);
    assert!(s.completion_ms.p50 >= 2000.0, "{}", s.completion_ms.p50);
    let ignored = run(&model(DOWN, &[ra, "retry.retry_after=ignore"]).unwrap());
    assert_eq!((ignored.succeeded, ignored.retry_after_waits), (0, 0));
    // Same keys at a tier.
    let tier = r#"tier=[{name="edge", server={outages=[{from="0s", to="1s", retry_after="2s"}]}, retry={max_attempts=2, timeout="3s"}}]"#;
    let t = run(&model(DOWN, &[tier]).unwrap());
    assert_eq!(t.tiers[0].rejected, 100);
    assert!(t.succeeded == 100, "{t:?}");
}

#[test]
fn bad_outages_are_refused_with_the_field() {
    let cases = [
        (
            r#"server.outages=[{from="0s", to="1s", answer="hang", retry_after="1s"}]"#,
            "server.outages[0].retry_after",
        ),
        (
            r#"server.outages=[{from="0s", to="1s", retry_after="0s"}]"#,
            "server.outages[0].retry_after",
        ),
        (
            r#"server.outages=[{from="0s", to="1s"}, {from="500ms", to="2s", answer="hang"}]"#,
            "server.outages[1]",
        ),
        (
            r#"server.outages=[{from="0s", to="1s", answer="drop"}]"#,
            "answer",
        ),
        (
            r#"tier=[{name="a", server={outages=[{from="0s", to="1s", answer="hang", retry_after="1s"}]}}]"#,
            "outages[0].retry_after",
        ),
    ];
    for (set, field) in cases {
        let e = model(DOWN, &[set]).unwrap_err();
        assert!(e.contains(field), "{set}: {e}");
    }
}

/// gRFC A6, "Pushback": a hedged call waits out a Retry-After before its next copy.
#[test]
fn hedging_honours_retry_after() {
    let down = [
        r#"server.outages=[{from="0s", to="1s", retry_after="2s"}]"#,
        "hedge.delay=100ms",
    ];
    let s = run(&model(DOWN, &down).unwrap());
    // The first copy's 503 holds the second until 2 s, which succeeds.
    assert_eq!(
        (s.succeeded, s.attempts, s.retry_after_waits),
        (100, 200, 100)
    );
    assert_eq!(s.completion_ms.p50, 2001.0); // 1 ms of service
    // Ignoring it, the non-fatal 503s send every copy at once into the outage.
    let ignore = [down[0], down[1], "retry.retry_after=ignore"];
    let i = run(&model(DOWN, &ignore).unwrap());
    assert_eq!((i.failed, i.attempts, i.retry_after_waits), (100, 300, 0));
    // A cap shortens the hold: back at 500 ms, still in the outage, then held again (capped).
    let capped = [down[0], down[1], "retry.retry_after_cap=500ms"];
    let c = run(&model(DOWN, &capped).unwrap());
    assert_eq!((c.succeeded, c.attempts), (100, 3 * 100));
    assert_eq!(c.completion_ms.p50, 1001.0);
}

/// "Overloaded; don't retry" stops further copies but lets the copies already out answer.
#[test]
fn a_dont_retry_answer_stops_hedging_without_cancelling() {
    let sets = [
        "workload.clients=2",
        "server.capacity=1",
        "server.queue=0",
        "server.service=50ms",
        "server.shed_answer=overloaded",
        "hedge.delay=10ms",
    ];
    let s = run(&model(DOWN, &sets).unwrap());
    // The first client's copy 1 is shed at 10 ms, yet its copy 0 completes at 50 ms; the
    // second client's only copy was shed and it sends no more.
    assert_eq!((s.succeeded, s.failed, s.attempts), (1, 1, 3));
    assert_eq!(s.overloaded, 2);
}

/// resilience4j's two timers on a whole run: with the half-open limit a breaker whose probes
/// hang opens again instead of waiting for them forever.
#[test]
fn breaker_timers_act_on_a_run() {
    let breaker = [
        r#"server.outages=[{from="0s", to="30s", answer="hang"}]"#,
        "retry.timeout=2s",
        "retry.max_attempts=1",
        "breaker.enabled=true",
        "breaker.scope=shared",
        "breaker.minimum_calls=1",
        "breaker.window_size=1",
        "breaker.wait_in_open=1s",
        "workload.kind=open",
        "workload.rate=20/s",
        "workload.intents=1000",
    ];
    let plain = run(&model(DOWN, &breaker).unwrap());
    let limited = [&breaker[..], &["breaker.max_wait_in_half_open=500ms"]].concat();
    let l = run(&model(DOWN, &limited).unwrap());
    // Each half-open probe hangs until its 2 s timeout; the limit reopens it after 500 ms.
    assert!(
        l.breaker_opened > plain.breaker_opened,
        "{} vs {}",
        l.breaker_opened,
        plain.breaker_opened
    );
    let e = model(
        DOWN,
        &["breaker.enabled=true", "breaker.max_wait_in_half_open=0s"],
    )
    .unwrap_err();
    assert!(e.contains("breaker.max_wait_in_half_open"), "{e}");
}

/// Ten workers at 10 ms (1000/s) offered 1300/s for 5 s: a backlog that FIFO serves in order.
const OVERLOAD: &str = r#"
horizon = "30s"
[workload]
kind = "open"
rate = "1300/s"
intents = 6500
[retry]
max_attempts = 3
base = "100ms"
cap = "2s"
[server]
capacity = 10
service = "10ms"
"#;

#[test]
fn codel_sheds_at_dequeue_and_keeps_successes_fast() {
    let fifo = run(&model(OVERLOAD, &[]).unwrap());
    let codel = run(&model(OVERLOAD, &[r#"server.shedding.kind="codel""#]).unwrap());
    // The FIFO backlog reaches 5 s x 300/s = 1500 requests, 1.5 s of work.
    assert_eq!((fifo.shed, fifo.succeeded), (0, 6500));
    assert!(fifo.success_ms.p99 > 1000.0, "{}", fifo.success_ms.p99);
    // CoDel drops whatever waited over 2 x 5 ms once the queue stood above 5 ms for 100 ms.
    assert!(codel.shed > 0 && codel.tiers[0].shed == codel.shed);
    assert!(codel.success_ms.p99 < 400.0, "{}", codel.success_ms.p99);
    // Every arrival is served or shed; shed requests got a 503 and some were retried.
    let t = &codel.tiers[0];
    assert_eq!(t.served + t.shed + t.rejected, t.arrivals);
    assert!(codel.retries > 0 && codel.succeeded + codel.failed == codel.intents);
    // The wait of a request that was served is bounded by the slough timeout (plus the
    // interval it takes CoDel to notice).
    assert!(t.mean_wait_ms < 100.0, "{}", t.mean_wait_ms);
}

#[test]
fn shedding_with_a_longer_target_sheds_less() {
    let short = run(&model(OVERLOAD, &[r#"server.shedding.kind="codel""#]).unwrap());
    let long = run(&model(
        OVERLOAD,
        &[
            r#"server.shedding.kind="codel""#,
            r#"server.shedding.target="50ms""#,
            r#"server.shedding.interval="500ms""#,
        ],
    )
    .unwrap());
    assert!(long.shed < short.shed, "{} vs {}", long.shed, short.shed);
    assert!(long.success_ms.p99 > short.success_ms.p99);
}

#[test]
fn shed_requests_get_the_servers_shed_answer() {
    let m = model(
        OVERLOAD,
        &[
            r#"server.shedding.kind="codel""#,
            r#"server.shed_answer="overloaded""#,
        ],
    )
    .unwrap();
    let s = run(&m);
    // "Overloaded; don't retry": never retried, so each shed request is a failed intent.
    assert!(s.shed > 0);
    assert_eq!((s.overloaded, s.failed, s.retries), (s.shed, s.shed, 0));
}

#[test]
fn adaptive_lifo_serves_newest_first_once_the_queue_stands() {
    let fifo = run(&model(OVERLOAD, &[]).unwrap());
    let lifo = run(&model(OVERLOAD, &[r#"server.discipline="adaptive-lifo""#]).unwrap());
    // The same requests are served (nothing is shed); most wait little, a few wait for the
    // backlog to drain.
    assert_eq!(lifo.succeeded, fifo.succeeded);
    assert!(lifo.success_ms.p50 < fifo.success_ms.p50 / 2.0);
    assert!(lifo.success_ms.max >= fifo.success_ms.p99);
    // Below the overload, the queue never stands for 100 ms: exactly FIFO.
    let calm = |d: &str| {
        run(&model(
            OVERLOAD,
            &["workload.rate=700/s", &format!("server.discipline={d:?}")],
        )
        .unwrap())
    };
    assert_eq!(calm("fifo"), calm("adaptive-lifo"));
}

#[test]
fn bad_shedding_settings_name_the_field() {
    let e = model(OVERLOAD, &[r#"server.shedding.interval="1ms""#]).unwrap_err();
    assert!(e.contains("server.shedding.interval"), "{e}");
    assert!(e.contains("longer than server.shedding.target"), "{e}");
    let e = model(OVERLOAD, &[r#"server.shedding.kind="red""#]).unwrap_err();
    assert!(e.contains("server.shedding.kind"), "{e}");
    let e = model(OVERLOAD, &[r#"server.shedding.targett="1ms""#]).unwrap_err();
    assert!(e.contains("did you mean `target`"), "{e}");
}

#[test]
fn shedding_keys_without_a_kind_are_refused() {
    // `target` is read by CoDel alone; `interval` by CoDel and adaptive LIFO.
    let e = model(OVERLOAD, &[r#"server.shedding.target="10ms""#]).unwrap_err();
    assert!(
        e.contains("server.shedding.target: has no effect without a shedding kind: set server.shedding.kind = \"codel\", or remove it"),
        "{e}"
    );
    let e = model(OVERLOAD, &[r#"server.shedding.interval="200ms""#]).unwrap_err();
    assert!(
        e.contains("server.shedding.interval: has no effect without a shedding kind: set server.shedding.kind = \"codel\" or server.discipline = \"adaptive-lifo\""),
        "{e}"
    );
    model(
        OVERLOAD,
        &[
            r#"server.shedding.interval="200ms""#,
            r#"server.discipline="adaptive-lifo""#,
        ],
    )
    .unwrap();
    model(
        OVERLOAD,
        &[
            r#"server.shedding.kind="codel""#,
            r#"server.shedding.target="10ms""#,
        ],
    )
    .unwrap();
    // In a tier, named by its index.
    let e = model(
        "[[tier]]\nname = \"proxy\"\n[tier.server.shedding]\ntarget = \"10ms\"\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.contains("tier[0].server.shedding.target: has no effect"),
        "{e}"
    );
}

#[test]
fn a_list_of_more_windows_than_the_limit_is_refused_before_the_overlap_check() {
    // Every pair is compared for overlap: the cap keeps that to 5 * 10^7 comparisons.
    let windows = |n: usize| {
        let w: Vec<String> = (0..n)
            .map(|i| format!("{{ from = \"{}ms\", to = \"{}ms\" }}", 2 * i, 2 * i + 1))
            .collect();
        format!("[server]\noutages = [{}]\n", w.join(", "))
    };
    let e = model(&windows(retrystorm_core::model::MAX_WINDOWS + 1), &[]).unwrap_err();
    assert!(
        e.ends_with("server.outages: 10001 windows; at most 10000 per list (each pair is checked for overlap): merge adjacent windows"),
        "{e}"
    );
    model(&windows(100), &[]).unwrap();
}
