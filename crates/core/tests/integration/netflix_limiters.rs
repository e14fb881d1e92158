//! Netflix concurrency-limits' Gradient2 and Vegas behind `SimpleLimiter`, end to end: a server
//! that falls behind piles attempts up in flight; the limiter rejects beyond its limit in the
//! client, as AIMD does, and leaves arrivals alone (common random numbers).

use retrystorm_core::load::load;
use retrystorm_core::run_model;
use retrystorm_core::summary::Summary;

/// 100 intents a second for 3 s against a server that serves 40 a second: the queue, and the
/// RTTs, grow.
fn run(kind: &str, seed: u64) -> Summary {
    let text = format!(
        "horizon = \"60s\"\n[workload]\nclients = 300\nspread = \"3s\"\n[retry]\nmax_attempts = 1\n\
         [server]\ncapacity = 2\nservice = \"50ms\"\n[limiter]\nkind = \"{kind}\"\nscope = \"shared\"\n"
    );
    let model = load("m.toml", &text, &[]).unwrap().base;
    run_model(&model, seed, &mut |_| {}).summary
}

#[test]
fn gradient2_and_vegas_reject_in_the_client_when_rtts_grow() {
    let none = run("none", 5);
    assert_eq!(none.limiter_rejected, 0);
    for kind in ["gradient2", "vegas"] {
        let s = run(kind, 5);
        assert!(s.limiter_rejected > 0, "{kind}: nothing rejected");
        // Rejected in the client: those intents fail without an attempt reaching the server.
        assert!(s.attempts + s.limiter_rejected >= s.intents, "{kind}");
        assert!(s.failed >= s.limiter_rejected, "{kind}");
        // The same arrivals as without a limiter.
        assert_eq!(s.intents, none.intents, "{kind}");
        // Deterministic.
        let again = run(kind, 5);
        assert_eq!(
            (again.limiter_rejected, again.succeeded, again.end_ms),
            (s.limiter_rejected, s.succeeded, s.end_ms),
            "{kind}"
        );
        // Fewer in flight: the ones that got through waited less than without a limiter.
        assert!(s.success_ms.p50 < none.success_ms.p50, "{kind}");
    }
}
