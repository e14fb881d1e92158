//! Netflix concurrency-limits' Gradient2 and Vegas behind `SimpleLimiter`, end to end: a server
//! that falls behind piles attempts up in flight; the limiter rejects beyond its limit in the
//! client, as AIMD does, and leaves arrivals alone (common random numbers).

use retrystorm_core::load::load;
use retrystorm_core::run_model;
use retrystorm_core::summary::Summary;

/// 100 intents a second for 3 s against a server that serves 40 a second: the queue, and the
/// RTTs, grow.
fn run(kind: &str, seed: u64) -> Summary {
    // Without a limiter, `scope` would have no effect (and be refused).
    let scope = if kind == "none" {
        ""
    } else {
        "scope = \"shared\"\n"
    };
    let text = format!(
        "horizon = \"60s\"\n[workload]\nclients = 300\nspread = \"3s\"\n[retry]\nmax_attempts = 1\n\
         [server]\ncapacity = 2\nservice = \"50ms\"\n[limiter]\nkind = \"{kind}\"\n{scope}"
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

#[test]
fn a_limiter_key_no_kind_reads_is_refused() {
    let load_err = |t: &str| load("m.toml", t, &[]).unwrap_err().to_string();
    // Another kind's key.
    let e = load_err("[limiter]\nkind = \"vegas\"\nbackoff_ratio = 0.8\n");
    assert_eq!(
        e,
        "m.toml:3:1: limiter.backoff_ratio: has no effect: it tunes limiter.kind = \"aimd\" and this limiter is \"vegas\" (remove it, or set the kind that reads it)"
    );
    // No limiter at all, written or by default.
    for t in [
        "[limiter]\nkind = \"none\"\nscope = \"shared\"\n",
        "[limiter]\ncubic_c = 0.5\n",
    ] {
        assert!(
            load_err(t).contains("and there is no limiter (limiter.kind = \"none\")"),
            "{t}"
        );
    }
    // A variant that switches the kind inherits the base's keys: refused with its name.
    let e = load_err(
        "[limiter]\nkind = \"aimd\"\nmin_limit = 5\n[[variant]]\nname = \"v\"\nlimiter.kind = \"vegas\"\n",
    );
    assert!(
        e.starts_with("m.toml:3:1: limiter.min_limit: has no effect")
            && e.ends_with("(with variant \"v\")"),
        "{e}"
    );
    // Every key its own kind reads is accepted.
    for t in [
        "kind = \"aws-adaptive\"\ncubic_c = 0.5\nsmoothing = 0.5\nrate_bucket = \"1s\"\n",
        "kind = \"aimd\"\ninitial_limit = 30\nmin_limit = 5\nmax_limit = 50\ntimeout = \"1s\"\n",
        "kind = \"gradient2\"\nqueue_size = 2\nlong_window = 100\nrtt_tolerance = 2.0\n",
        "kind = \"vegas\"\nprobe_multiplier = 10\nmax_limit = 100\nsmoothing = 0.5\n",
    ] {
        load("m.toml", &format!("[limiter]\n{t}"), &[]).unwrap();
    }
}
