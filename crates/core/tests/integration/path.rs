//! The one request path: every pair of features composes, the counts add up, and every section
//! of the model reference either acts on every shipped model or is refused.

use retrystorm_core::load::{LoadError, Override, Scenario, load_resolved};
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::{Ended, Summary};

fn model(base: &str, sets: &[&str]) -> Result<Model, String> {
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    load("m.toml", base, &sets)
        .map(|s| s.base)
        .map_err(|e| e.to_string())
}

/// Loads a shipped model; a `workload.trace` is read from `models/` as the command line does.
fn load(name: &str, text: &str, sets: &[Override]) -> Result<Scenario, LoadError> {
    let resolve = |r: &str| match r.strip_prefix("trace:") {
        Some(f) => std::fs::read_to_string(
            std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models")).join(f),
        )
        .map_err(|e| e.to_string()),
        None => Err(format!("{r}: not a trace")),
    };
    load_resolved(&format!("{name}.toml"), text, sets, &resolve)
}

fn run(m: &Model, seed: u64) -> Summary {
    run_model(m, seed, &mut |_| {}).summary
}

const TWO_TIERS: &str = r#"tier=[{name="gateway", server={service="exp(1ms)"}, retry={max_attempts=3, timeout="200ms", base="5ms", cap="50ms"}, network={latency="exp(1ms)", response_loss=0.02}}, {name="service", server={capacity=8, queue=50, service="exp(2ms)"}, retry={max_attempts=2, timeout="80ms", base="5ms", cap="20ms"}, network={latency="1ms"}}]"#;

/// The features of the path, each as `--set` overrides of a small base model.
fn features() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("tiers", vec![TWO_TIERS]),
        (
            "finite-server",
            vec![
                "server.capacity=4",
                "server.queue=20",
                "server.service=exp(5ms)",
            ],
        ),
        (
            "outage",
            vec![r#"server.outages=[{from="200ms", to="600ms"}]"#],
        ),
        (
            "hang",
            vec![r#"server.outages=[{from="200ms", to="600ms", answer="hang"}]"#],
        ),
        (
            "loss",
            vec!["network.request_loss=0.1", "network.response_loss=0.1"],
        ),
        (
            "store",
            vec![
                "idempotency.key=per-intent",
                "idempotency.store=record-before",
            ],
        ),
        ("budget", vec!["budget.kind=grpc", "budget.scope=shared"]),
        (
            "breaker",
            vec![
                "breaker.enabled=true",
                "breaker.scope=shared",
                "breaker.minimum_calls=5",
                "breaker.window_size=10",
                "breaker.wait_in_open=100ms",
            ],
        ),
        ("hedge", vec!["hedge.delay=15ms"]),
        ("occ", vec!["server.contention=true"]),
        (
            "cancel",
            vec!["retry.cancel=true", "server.drop_expired=true"],
        ),
    ]
}

fn workloads() -> Vec<(&'static str, String)> {
    let common = "[retry]\nmax_attempts = 4\ntimeout = \"50ms\"\nbase = \"10ms\"\ncap = \"100ms\"\n[server]\nfail = 0.3\nservice = \"exp(3ms)\"\n[network]\nlatency = \"exp(2ms)\"\n";
    vec![
        (
            "burst",
            format!("[workload]\nkind = \"burst\"\nclients = 150\nspread = \"500ms\"\n{common}"),
        ),
        (
            "open",
            format!(
                "[workload]\nkind = \"open\"\nrate = \"300/s\"\nintents = 150\nprocesses = 4\n{common}"
            ),
        ),
        (
            "closed",
            format!("[workload]\nkind = \"closed\"\nworkers = 6\nintents = 150\n{common}"),
        ),
    ]
}

/// What must hold whatever the features: intents and attempts are conserved, and no effect is
/// applied without an attempt reaching the last tier.
fn check_invariants(what: &str, s: &Summary) {
    assert_eq!(s.ended, Ended::Settled, "{what}: {s:?}");
    assert_eq!(s.intents, 150, "{what}");
    assert_eq!(s.succeeded + s.failed, s.intents, "{what}");
    assert_eq!(s.lost + s.applied_once + s.duplicated, s.intents, "{what}");
    assert!(s.effects >= s.applied_once + 2 * s.duplicated, "{what}");
    let bottom = s.tiers.last().unwrap();
    assert!(
        s.effects <= bottom.served,
        "{what}: effects without service"
    );
    assert!(
        s.phantom <= s.succeeded && s.false_failures <= s.failed,
        "{what}"
    );
    for t in &s.tiers {
        // Every arrival is refused, dropped, served, or answered by the store (last tier).
        assert!(
            t.served + t.rejected + t.dropped_expired + t.shed <= t.arrivals,
            "{what}: {t:?}"
        );
        assert!(
            t.retries <= t.arrivals && t.orphaned <= t.arrivals,
            "{what}: {t:?}"
        );
        assert!(t.wasted_work_ms <= t.work_ms + 1e-9, "{what}: {t:?}");
    }
    if let Some(l) = &s.layered {
        assert_eq!(l.layers.len(), s.tiers.len(), "{what}");
        for (k, (hop, tier)) in l.layers.iter().zip(&s.tiers).enumerate() {
            // Each hop's attempts arrive at its tier unless the network lost them.
            assert!(tier.arrivals <= hop.sent, "{what}: hop {k}");
            assert!(hop.retries < hop.sent.max(1), "{what}: hop {k}");
        }
        assert_eq!(l.layers[0].received, s.intents, "{what}");
    }
    assert_eq!(s.attempts, l_sent_bottom(s), "{what}");
}

fn l_sent_bottom(s: &Summary) -> u64 {
    s.layered
        .as_ref()
        .map_or(s.attempts, |l| l.layers.last().unwrap().sent)
}

#[test]
fn every_pair_of_features_composes() {
    let features = features();
    let mut ran = 0;
    for (wname, base) in workloads() {
        for i in 0..features.len() {
            for j in i..features.len() {
                let (a, fa) = &features[i];
                let (b, fb) = &features[j];
                let sets: Vec<&str> = fa
                    .iter()
                    .chain(if i == j { [].iter() } else { fb.iter() })
                    .copied()
                    .collect();
                let what = format!("{wname} + {a} + {b}");
                let m = model(&base, &sets).unwrap_or_else(|e| panic!("{what}: {e}"));
                let s = run(&m, 7);
                check_invariants(&what, &s);
                // Same seed, same result.
                assert_eq!(s, run(&m, 7), "{what}");
                ran += 1;
            }
        }
    }
    assert_eq!(ran, 3 * 66);
}

#[test]
fn tiers_add_up_and_retries_multiply_down_the_path() {
    let base = &workloads()[0].1;
    let s = run(&model(base, &[TWO_TIERS]).unwrap(), 3);
    assert_eq!(s.tiers.len(), 3);
    assert_eq!(
        s.tiers.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["gateway", "service", "server"]
    );
    let l = s.layered.as_ref().unwrap();
    // The gateway's client calls the service once per request the gateway served successfully.
    assert_eq!(l.layers[1].received, s.tiers[0].served);
    assert_eq!(l.layers[2].received, s.tiers[1].served);
    // No hop loses requests here: each tier sees exactly what the hop above it sent, and the
    // retries inside the tiers make the last tier see more than the clients sent.
    for k in 0..3 {
        assert_eq!(s.tiers[k].arrivals, l.layers[k].sent, "hop {k}");
    }
    assert!(s.tiers[2].arrivals > l.layers[0].sent, "{s:?}");
    assert_eq!(s.attempts, l.layers[2].sent);
    // The per-tier series are there, one per tier, as long as the main series.
    let r = run_model(&model(base, &[TWO_TIERS]).unwrap(), 3, &mut |_| {});
    assert_eq!(r.series.tiers.len(), 3);
    assert!(
        r.series
            .tiers
            .iter()
            .all(|t| t.first.len() == r.series.first.len())
    );
}

#[test]
fn cancellation_drops_work_nobody_waits_for() {
    // A slow, small server behind a client that times out: without cancellation the server
    // serves abandoned requests (wasted work); with it, it drops them from its queue.
    let base = "[workload]\nkind = \"open\"\nrate = \"400/s\"\nintents = 2000\n[retry]\nmax_attempts = 3\ntimeout = \"30ms\"\nbase = \"5ms\"\ncap = \"50ms\"\n[server]\ncapacity = 2\nservice = \"exp(6ms)\"\n";
    let off = run(&model(base, &[]).unwrap(), 1);
    let on = run(&model(base, &["retry.cancel=true"]).unwrap(), 1);
    assert!(
        off.wasted_work_ms > 0.0 && on.wasted_work_ms < off.wasted_work_ms / 2.0,
        "{} {}",
        off.wasted_work_ms,
        on.wasted_work_ms
    );
    assert!(on.dropped_expired > 0 && off.dropped_expired == 0);
    // Down a path: the service stops retrying the database for a gateway that gave up.
    let tiers = r#"tier=[{name="service", server={service="1ms"}, retry={max_attempts=4, timeout="20ms", base="5ms", cap="20ms", cancel=true}}]"#;
    let keep = tiers.replace("cancel=true", "cancel=false");
    let on = run(&model(base, &[tiers, "retry.cancel=true"]).unwrap(), 1);
    let off = run(&model(base, &[keep.as_str()]).unwrap(), 1);
    assert!(
        on.tiers[1].arrivals < off.tiers[1].arrivals,
        "{:?} {:?}",
        on.tiers[1],
        off.tiers[1]
    );
}

#[test]
fn bad_paths_are_refused_with_the_field() {
    let base = "[workload]\nclients = 10\n";
    let e = model(base, &[r#"tier=[{name="a", server={contention=true}}]"#]).unwrap_err();
    assert!(
        e.contains("tier[0].server.contention") && e.contains("last tier"),
        "{e}"
    );
    let e = model(base, &[r#"tier=[{name="a", retry={max_attempts=0}}]"#]).unwrap_err();
    assert!(e.contains("tier[0].retry.max_attempts"), "{e}");
    let e = model(base, &[r#"tier=[{name="a", server={capacity=0}}]"#]).unwrap_err();
    assert!(e.contains("tier[0].server.capacity"), "{e}");
    let e = model(base, &[r#"tier=[{name="a", sevrer={}}]"#]).unwrap_err();
    assert!(e.contains("did you mean `server`"), "{e}");
    let e = load(
        "m.toml",
        "[[tier]]\nname = \"a\"\n[tier.retry]\nbase = \"1s\"\ncap = \"1ms\"\n",
        &[],
    )
    .unwrap_err();
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.to_string().contains("tier[0].retry.cap"), "{e}");
    // Keys that could not act are refused, not ignored.
    let e = model(base, &["server.fail=always", "server.capacity=4"]).unwrap_err();
    assert!(e.contains("server.capacity: has no effect"), "{e}");
    let e = model(base, &["idempotency.store=record-before"]).unwrap_err();
    assert!(
        e.contains("idempotency.store: has no effect without keys"),
        "{e}"
    );
    let e = model(base, &["idempotency.key=per-intent"]).unwrap_err();
    assert!(
        e.contains("idempotency.key: has no effect without a dedupe store"),
        "{e}"
    );
}

/// One probe per section of the model reference: overrides that turn the section on (or change
/// it) in a way that must show in the output.
fn probes(m: &Model) -> Vec<(&'static str, Vec<String>)> {
    let attempts = if m.retry.max_attempts == 2 { 4 } else { 2 };
    let (key, store) = if m.idempotency.store == retrystorm_core::model::StoreMode::None {
        ("per-intent", "record-before")
    } else {
        ("per-attempt", "record-after")
    };
    let breaker: Vec<String> = vec![
        "breaker.enabled=true".into(),
        "breaker.scope=shared".into(),
        "breaker.minimum_calls=2".into(),
        "breaker.window_size=2".into(),
        "breaker.failure_rate_threshold=1".into(),
    ];
    vec![
        ("retry", vec![format!("retry.max_attempts={attempts}")]),
        ("network", vec!["network.request_loss=0.05".into()]),
        ("server", vec!["server.service=exp(3ms)".into()]),
        (
            "idempotency",
            vec![
                format!("idempotency.key={key}"),
                format!("idempotency.store={store}"),
                "retry.timeout=5ms".into(),
            ],
        ),
        // A budget of one token and a breaker that opens on any failure: they must bite
        // wherever two attempts fail, so "no change" can only mean "ignored".
        (
            "budget",
            vec![
                "budget.kind=grpc".into(),
                "budget.scope=shared".into(),
                "budget.max_tokens=1".into(),
                "budget.token_ratio=0.001".into(),
            ],
        ),
        ("breaker", breaker.clone()),
        (
            "breaker-timers",
            [
                breaker,
                vec![
                    "breaker.wait_in_open=50ms".into(),
                    "breaker.automatic_transition=true".into(),
                    "breaker.max_wait_in_half_open=20ms".into(),
                ],
            ]
            .concat(),
        ),
        ("hedge", vec!["hedge.delay=5ms".into()]),
        (
            "outage-hang",
            vec![r#"server.outages=[{from="0s", to="500ms", answer="hang"}]"#.into()],
        ),
        (
            "outage-retry-after",
            vec![r#"server.outages=[{from="0s", to="500ms", retry_after="1s"}]"#.into()],
        ),
        (
            "tier",
            vec![r#"tier=[{name="proxy", retry={max_attempts=2}}]"#.into()],
        ),
    ]
}

/// Where a section is accepted and cannot change the numbers for a reason of the model's own
/// physics (not because the engine ignores it).
const INERT: [(&str, &str, &str); 2] = [
    (
        "occ-contention",
        "breaker",
        "a write conflict (409) is not a server failure (resilience4j records it as a success), and the record fails nothing else",
    ),
    (
        "occ-contention",
        "breaker-timers",
        "as for breaker: a breaker that never opens has no timers to run",
    ),
];

/// The big models, made small: the sums and the sections' effects do not depend on the size.
fn made_small(name: &str) -> Vec<Override> {
    let sets: &[&str] = match name {
        "overload-bench" => &["horizon=2s"],
        "stack" => &["workload.intents=20000"],
        // A tenth of the load on a tenth of the capacity: the same utilisation and trigger.
        "osdi-retry" => &["workload.rate=1333/s", "server.service=exp(11250us)"],
        _ => &[],
    };
    sets.iter().map(|s| Override::parse(s).unwrap()).collect()
}

#[test]
fn every_section_acts_on_every_shipped_model_or_is_refused() {
    let files = crate::util::shipped_files();
    assert!(files.len() >= 10);
    let mut acted = 0;
    for path in files {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if name == "overload-bench" || name == "stack" {
            continue; // benchmarks and the large stack: covered by the pair test's features
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let small = made_small(&name);
        let base = load(&name, &text, &small).unwrap().base;
        let before = run(&base, 1);
        for (section, sets) in probes(&base) {
            let mut sets: Vec<Override> =
                sets.iter().map(|s| Override::parse(s).unwrap()).collect();
            sets.splice(0..0, small.iter().cloned());
            let Ok(scenario) = load(&name, &text, &sets) else {
                continue; // refused with exit 2: fine
            };
            let after = run(&scenario.base, 1);
            let inert = INERT.iter().any(|(m, s, _)| *m == name && *s == section);
            if inert {
                assert_eq!(
                    after, before,
                    "{name} {section} is listed as inert but acts"
                );
            } else {
                assert_ne!(
                    after, before,
                    "{name}: [{section}] was accepted and ignored"
                );
                acted += 1;
            }
        }
    }
    assert!(acted > 40, "{acted}");
}

#[test]
fn every_intent_of_every_shipped_model_has_exactly_one_outcome() {
    let files = crate::util::shipped_files();
    let (mut pending_seen, mut refused_seen) = (false, false);
    for path in files {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let sets = made_small(&name);
        for m in load(&name, &text, &sets).unwrap().variants {
            let s = run(&m, 1);
            let what = format!("{name} / {}", m.name);
            // A trace's key column makes rows sharing a key one intent: the classes count keys.
            let judged = if s.keys > 0 { s.keys } else { s.intents };
            assert_eq!(
                s.lost + s.applied_once + s.duplicated + s.outcome_pending,
                judged,
                "{what}"
            );
            assert_eq!(s.succeeded + s.failed + s.unsettled, s.intents, "{what}");
            if s.keys == 0 {
                assert!(s.outcome_pending >= s.unsettled, "{what}");
            } else {
                assert!(s.keys <= s.intents, "{what}");
            }
            if s.ended == Ended::Settled {
                assert_eq!(s.outcome_pending, 0, "{what}");
            }
            pending_seen |= s.outcome_pending > 0;
            // Every send is counted: sent, or refused in the caller.
            if s.tiers.len() == 1 {
                assert_eq!(
                    s.attempts + s.first_tries_refused + s.first_tries_waiting,
                    s.intents + s.retries,
                    "{what}: attempts {} + first tries refused {} + waiting {} against intents {} + retries {}",
                    s.attempts,
                    s.first_tries_refused,
                    s.first_tries_waiting,
                    s.intents,
                    s.retries
                );
                assert!(
                    s.first_tries_refused
                        <= s.breaker_rejected + s.throttled_locally + s.limiter_rejected,
                    "{what}"
                );
            }
            refused_seen |= s.first_tries_refused > 0;
        }
    }
    // Some shipped model stops with work in flight (the open workloads at their horizon), and
    // some refuses first tries in the caller (the breaker and adaptive variants).
    assert!(pending_seen);
    assert!(refused_seen);
}
