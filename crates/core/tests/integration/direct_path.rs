//! The direct path: a model whose clients are independent runs without the event loop,
//! and its results are byte-identical to the event loop's (`engine.path = "event-loop"`): every
//! eligible shipped model and variant, a few seeds, and `--set` points that reach the parts of
//! the direct path the shipped models do not (open workloads, latency, loss, timeouts, deadlines,
//! service times, failures, crashes, outages with Retry-After, a horizon that cuts the run).

use retrystorm_core::load::{Override, load_resolved};
use retrystorm_core::model::{EnginePathChoice, Model};
use retrystorm_core::path::{EnginePath, engine_path, run_direct};
use retrystorm_core::{run_model, run_summary};

const MODELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");

fn shipped(file: &str, sets: &[&str]) -> Vec<Model> {
    let text = std::fs::read_to_string(format!("{MODELS}/{file}")).unwrap();
    let sets: Vec<_> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    // A `workload.trace` is read from `models/` as the command line does.
    let resolve = |r: &str| match r.strip_prefix("trace:") {
        Some(f) => {
            std::fs::read_to_string(std::path::Path::new(MODELS).join(f)).map_err(|e| e.to_string())
        }
        None => Err(format!("{r}: not a trace")),
    };
    load_resolved(file, &text, &sets, &resolve)
        .unwrap()
        .variants
}

fn forced(m: &Model) -> Model {
    let mut f = m.clone();
    f.engine.path = EnginePathChoice::EventLoop;
    f
}

/// Runs `m` on both paths (the full result and the summary-only run) and asserts that they
/// agree to the last digit of every field, series and CDF.
fn same(m: &Model, seed: u64, what: &str) {
    assert_eq!(
        engine_path(m),
        EnginePath::Direct,
        "{what} should go direct"
    );
    let ran = run_direct(m, seed, &mut |_| {}, true);
    assert!(
        ran.is_some(),
        "{what}, seed {seed}: the direct path fell back"
    );
    let direct = run_model(m, seed, &mut |_| {});
    let event_loop = run_model(&forced(m), seed, &mut |_| {});
    assert_eq!(
        format!("{direct:?}"),
        format!("{event_loop:?}"),
        "{what}, seed {seed}: the direct path differs from the event loop"
    );
    assert_eq!(
        serde_json::to_string(&direct).unwrap(),
        serde_json::to_string(&event_loop).unwrap()
    );
    let direct = run_summary(m, seed);
    let event_loop = run_summary(&forced(m), seed);
    assert_eq!(
        format!("{direct:?}"),
        format!("{event_loop:?}"),
        "{what}, summary only"
    );
}

fn model_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(MODELS)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f.ends_with(".toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_eligible_shipped_variant_matches_the_event_loop() {
    let mut direct = 0;
    for file in model_files() {
        for m in shipped(&file, &[]) {
            if engine_path(&m) == EnginePath::Direct {
                for seed in [1, 42] {
                    same(&m, seed, &format!("{file} {}", m.name));
                }
                direct += 1;
            }
        }
    }
    // thundering-herd's four variants and brooker-retries' two without a budget.
    assert_eq!(direct, 6);
}

/// The herd and Brooker's model moved to the parts of the engine no shipped model uses.
#[test]
fn set_points_match_the_event_loop() {
    let herd: &[&[&str]] = &[
        &["workload.clients=3000", "workload.spread=200ms"],
        // More records than one vector keeps: they move to per-chunk vectors mid-run.
        &["workload.clients=15000"],
        &[
            "workload.kind=open",
            "workload.rate=5000/s",
            "workload.intents=30000",
            "server.fail=0.4",
            "server.service=exp(20ms)",
            "retry.timeout=30ms",
        ],
        &[
            "workload.kind=open",
            "workload.rate=2000/s",
            "workload.intents=3000",
        ],
        &[
            "workload.kind=open",
            "workload.rate=500/s",
            "horizon=5s",
            "workload.schedule=[{at=\"1s\", rate=\"3000/s\"}, {at=\"2s\", rate=\"200/s\"}]",
        ],
        &[
            "network.latency=exp(5ms)",
            "network.request_loss=0.1",
            "network.response_loss=0.05",
        ],
        &[
            "network.latency=exp(5ms)",
            "network.request_loss=0.2",
            "network.loss_notice=timeout",
            "retry.timeout=50ms",
        ],
        &[
            "server.fail=0.4",
            "server.service=exp(20ms)",
            "network.latency=uniform(1ms, 10ms)",
            "retry.timeout=30ms",
        ],
        &[
            "server.fail=0.3",
            "server.service=lognormal(10ms, 1.0)",
            "retry.timeout=25ms",
            "server.drop_expired=true",
            "retry.deadline=2s",
        ],
        &[
            "server.fail=never",
            "server.crash_probability=0.3",
            "server.client_error=0.1",
            "server.service=5ms",
            "idempotency.commit=effect-then-key",
        ],
        &[
            "server.fail=0.5",
            "server.outages=[{from=\"0s\", to=\"1s\", retry_after=\"300ms\"}]",
            "retry.retry_after=honour",
        ],
        &[
            "server.fail=0.5",
            "server.outages=[{from=\"0s\", to=\"1s\", retry_after=\"3s\"}]",
            "retry.retry_after=aws",
        ],
        &[
            "server.fail=0.5",
            "server.outages=[{from=\"0s\", to=\"2s\", retry_after=\"400ms\"}]",
            "retry.backoff=envoy",
            "retry.retry_after=envoy",
        ],
        &[
            "server.fail=never",
            "server.outages=[{from=\"0s\", to=\"500ms\", answer=\"hang\"}]",
            "retry.timeout=100ms",
            "server.service=exp(1ms)",
        ],
        &[
            "server.fail=0.2",
            "server.service=exp(50ms)",
            "server.slow_windows=[{from=\"100ms\", to=\"600ms\", factor=5.0}]",
        ],
        // Every attempt rejected at once (the herd's own loop, `direct/rejected.rs`): a
        // deadline, no retry on the rejection, one attempt, a horizon mid-backoff.
        &["retry.deadline=700ms", "workload.spread=300ms"],
        &["retry.retry_on=[\"timeout\"]"],
        &["retry.max_attempts=1", "workload.spread=50ms"],
        &["horizon=900ms", "workload.clients=2500"],
        // The horizon cuts the run: unsettled intents and starts never made.
        &["horizon=1s", "workload.spread=2s"],
        &["horizon=1s", "network.response_loss=0.3"],
    ];
    for sets in herd {
        for m in shipped("thundering-herd.toml", sets) {
            for seed in [3, 11] {
                same(&m, seed, &format!("thundering-herd {} {sets:?}", m.name));
            }
        }
    }
    for m in shipped(
        "brooker-retries.toml",
        &["server.fail=0.5", "retry.timeout=15ms"],
    ) {
        if engine_path(&m) == EnginePath::Direct {
            same(&m, 5, &format!("brooker-retries {} with timeouts", m.name));
        }
    }
}

/// A run that would stop at `max_events` goes to the event loop (the stop depends on the
/// global order of events) and gives the event loop's result.
#[test]
fn max_events_truncation_is_the_event_loop_s() {
    for m in shipped("thundering-herd.toml", &["max_events=2500"]) {
        assert!(run_direct(&m, 1, &mut |_| {}, true).is_none());
        let a = run_model(&m, 1, &mut |_| {});
        let b = run_model(&forced(&m), 1, &mut |_| {});
        assert!(a.summary.truncated);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}

/// A small `max_events` stops the direct path early: it gives the run to the event loop after
/// about `max_events` events instead of running every intent first. Counted by the progress
/// callback, which hears the direct path every 65,536 events: 10^6 intents of two to six events
/// each would call it dozens of times before the direct path found out that the run stops at
/// 1000 events.
#[test]
fn a_small_max_events_stops_the_direct_path_early() {
    let sets = [
        "workload.kind=open",
        "workload.rate=1000000/s",
        "horizon=1s",
        "max_events=1000",
    ];
    let m = &shipped("thundering-herd.toml", &sets)[1];
    assert_eq!(engine_path(m), EnginePath::Direct);
    let mut heard = 0u64;
    assert!(run_direct(m, 1, &mut |_| heard += 1, true).is_none());
    assert_eq!(heard, 0, "the direct path ran on past max_events");
    let a = run_model(m, 1, &mut |_| {});
    let b = run_model(&forced(m), 1, &mut |_| {});
    assert!(a.summary.truncated);
    assert_eq!(a.summary.events, 1000);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// A long direct run reports progress as the event loop does (every 65,536 events and at the
/// end): the clock it hears never goes back, never passes the end, and ends at the run's end.
#[test]
fn a_long_direct_run_reports_progress_as_it_goes() {
    let m = &shipped("thundering-herd.toml", &["workload.clients=100000"])[1];
    assert_eq!(engine_path(m), EnginePath::Direct);
    let mut heard = Vec::new();
    let r = run_direct(m, 1, &mut |t| heard.push(t), true).expect("direct");
    // 600,000 events: at least 9 reports before the last.
    assert!(heard.len() >= 10, "{} reports", heard.len());
    assert!(heard.windows(2).all(|w| w[0] <= w[1]));
    let end = *heard.last().unwrap();
    assert_eq!(end.as_millis_f64(), r.summary.end_ms);
    assert!(heard[..heard.len() - 1].iter().all(|&t| t <= end));
}

/// Where each shipped model goes, and why (the first reason of the rule that applies).
#[test]
fn the_rule_sends_each_shipped_model_where_expected() {
    let capacity = "server.capacity makes clients share workers and a queue";
    let table: &[(&str, &str)] = &[
        (
            "atomic-dedupe",
            "a closed workload's workers start each intent when the last one ends",
        ),
        ("aws-adaptive", capacity),
        (
            "brooker-collapse",
            "server.slowdown makes service depend on load",
        ),
        ("budgets", capacity),
        (
            "fanout",
            "more than one tier: tiers hold workers between calls",
        ),
        ("gc-pause", capacity),
        (
            "layered",
            "more than one tier: tiers hold workers between calls",
        ),
        ("library-backoffs", capacity),
        ("metafor", capacity),
        ("metastable-spike", capacity),
        ("occ-contention", "contention makes clients share a record"),
        (
            "one-bad-replica",
            "server.replicas: callers share balancers (and the direct path has no replicas)",
        ),
        ("osdi-retry", capacity),
        ("outage-recovery", capacity),
        ("overload-bench", capacity),
        (
            "periodic-resync",
            "periodic clients are run by the event loop only",
        ),
        (
            "proxy-dedupe",
            "a closed workload's workers start each intent when the last one ends",
        ),
        (
            "reconnect-storm",
            "server.connections: a client's connection is shared by its requests",
        ),
        ("retry-after", capacity),
        ("sdk-modes", capacity),
        ("sdk-quota-bug", capacity),
        ("shedding", capacity),
        (
            "stack",
            "more than one tier: tiers hold workers between calls",
        ),
        (
            "three-clients",
            "a closed workload's workers start each intent when the last one ends",
        ),
        ("trace-keys", "a replayed trace's rows may share keys"),
        ("trace-replay", "a replayed trace's rows may share keys"),
    ];
    let mut seen = 0;
    for file in model_files() {
        let stem = file.trim_end_matches(".toml");
        for m in shipped(&file, &[]) {
            let got = engine_path(&m);
            let want = match (stem, m.name.as_str()) {
                ("thundering-herd", _) => EnginePath::Direct,
                ("brooker-retries", "no_retries" | "three_retries") => EnginePath::Direct,
                ("brooker-retries", _) => EnginePath::EventLoop {
                    reason: "a retry budget is shared state",
                },
                ("autoscale-spike", "fixed-5") => EnginePath::EventLoop {
                    reason: "server.replicas: callers share balancers (and the direct path has no replicas)",
                },
                ("autoscale-spike", _) => EnginePath::EventLoop {
                    reason: "server.autoscale: the autoscaler's syncs are events of the loop",
                },
                _ => {
                    let (_, reason) = table
                        .iter()
                        .find(|(f, _)| *f == stem)
                        .unwrap_or_else(|| panic!("{stem} is not in the table"));
                    EnginePath::EventLoop { reason }
                }
            };
            assert_eq!(got, want, "{stem} {}", m.name);
            seen += 1;
        }
    }
    assert!(seen > 80, "{seen} variants");
}

/// Ineligible models are refused with their reason, and `engine.path = "event-loop"` forces
/// the event loop on an eligible one.
#[test]
fn ineligible_models_are_refused_with_the_reason() {
    let herd = |sets: &[&str]| {
        let mut all = vec!["server.fail=0.5"];
        all.extend_from_slice(sets);
        engine_path(&shipped("thundering-herd.toml", &all)[1])
    };
    let ev = |reason| EnginePath::EventLoop { reason };
    assert_eq!(herd(&[]), EnginePath::Direct);
    assert_eq!(
        herd(&["engine.path=event-loop"]),
        ev("engine.path = \"event-loop\"")
    );
    assert_eq!(
        herd(&["server.capacity=50"]),
        ev("server.capacity makes clients share workers and a queue")
    );
    assert_eq!(
        herd(&["budget.kind=grpc"]),
        ev("a retry budget is shared state")
    );
    assert_eq!(
        herd(&["breaker.enabled=true"]),
        ev("a circuit breaker is shared state")
    );
    assert_eq!(
        herd(&["server.rate_limit.rate=100/s"]),
        ev("server.rate_limit makes clients share tokens")
    );
    assert_eq!(
        herd(&["hedge.delay=10ms"]),
        ev("hedging is run by the event loop only")
    );
    assert_eq!(
        herd(&["server.slowdown=0.1"]),
        ev("server.slowdown makes service depend on load")
    );
    assert_eq!(
        herd(&[
            "idempotency.key=per-intent",
            "idempotency.store=record-before"
        ]),
        ev("the idempotency store is shared by clients")
    );
    assert_eq!(
        herd(&["workload.kind=closed", "workload.intents=100"]),
        ev("a closed workload's workers start each intent when the last one ends")
    );
}
