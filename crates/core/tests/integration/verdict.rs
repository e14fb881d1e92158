//! The stability verdict (`study::verdict`) against the shipped models' own claims: the four
//! outcomes of the OSDI'22 retry experiment and its fixes (`models/osdi-retry.toml`'s
//! `[[expect]]` tables), the metastable spike's numbers, what cannot be judged, and levers
//! that hold when the changed model is judged again.

use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::study::verdict::{Verdict, judge};

fn variant(file: &str, name: &str) -> Model {
    let path = format!("{}/../../models/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    load(&path, &text, &[])
        .unwrap()
        .variants
        .into_iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("{file} has no variant {name}"))
}

/// The paper's four runs share one steady state (13,333/s, 5 attempts, 3 s timeouts against
/// 35,556/s): all vulnerable; the trigger's size decides, and the fluid model of the trigger
/// tips exactly the run the paper saw stay down (b). The fixes: backoff does not help an open
/// loop, dropping expired work and gRPC throttling do.
#[test]
fn osdi_retry_four_outcomes_and_fixes() {
    for (name, stays_down) in [
        ("a-0.45cpu-10s", false),
        ("b-0.40cpu-10s", true),
        ("c-0.40cpu-9s", false),
        ("d-0.40cpu-10s-less-load", false),
        ("b-with-backoff", true),
    ] {
        let j = judge(&variant("osdi-retry.toml", name));
        assert_eq!(j.verdict, Verdict::Vulnerable, "{name}: {}", j.why);
        let t = j.trigger.as_ref().expect("a capacity drop is a trigger");
        assert_eq!(t.tips, Some(stays_down), "{name}: {}", t.why);
    }
    for name in ["b-drop-expired", "b-grpc-throttling"] {
        let j = judge(&variant("osdi-retry.toml", name));
        assert_eq!(j.verdict, Verdict::Stable, "{name}: {}", j.why);
    }
}

/// 750 intents/s, up to 4 attempts, against at most 917/s: 3000 attempts/s once every call
/// fails.
#[test]
fn metastable_spike_without_backoff_is_vulnerable_by_its_numbers() {
    let j = judge(&variant("metastable-spike.toml", "no-backoff"));
    assert_eq!(j.verdict, Verdict::Vulnerable, "{}", j.why);
    let t = j.deciding().unwrap();
    assert!(
        (t.all_fail_per_s - 3000.0).abs() < 1e-6,
        "{}",
        t.all_fail_per_s
    );
    let c = t.capacity_per_s.unwrap();
    assert!((900.0..917.5).contains(&c), "{c}");
    assert!((t.ratio - 3000.0 / c).abs() < 1e-9);
    // The budget and the breaker variants cannot sustain an all-fail state.
    for name in ["grpc-budget", "breaker"] {
        let j = judge(&variant("metastable-spike.toml", name));
        assert_eq!(j.verdict, Verdict::Stable, "{name}: {}", j.why);
    }
}

/// Every lever is what the verdict says of the model with that setting: applying it with
/// `--set`'s syntax and judging again gives the lever's verdict.
#[test]
fn levers_hold_when_applied() {
    use retrystorm_core::load::{Override, load};
    let path = format!(
        "{}/../../models/metastable-spike.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let m = variant("metastable-spike.toml", "no-backoff");
    let j = judge(&m);
    assert!(!j.levers.is_empty());
    assert!(
        j.levers.iter().any(|l| l.set == "budget.kind=grpc"),
        "{:?}",
        j.levers
    );
    for l in &j.levers {
        let set = Override::parse(&l.set).unwrap();
        let changed = load(&path, &text, &[set])
            .unwrap()
            .variants
            .into_iter()
            .find(|v| v.name == "no-backoff")
            .unwrap();
        assert_eq!(judge(&changed).verdict, l.verdict, "{}", l.set);
        assert!(l.verdict < j.verdict);
    }
}

/// The threshold is where the all-fail load meets capacity: 917/s over 4 attempts.
#[test]
fn the_edge_is_capacity_over_attempts() {
    let mut m = variant("metastable-spike.toml", "no-backoff");
    m.workload.rate = retrystorm_core::model::Rate(220.0);
    assert_eq!(judge(&m).verdict, Verdict::Stable);
    m.workload.rate = retrystorm_core::model::Rate(235.0);
    assert_eq!(judge(&m).verdict, Verdict::Vulnerable);
}

/// A burst and a trace have no steady load: unknown, with the reason.
#[test]
fn what_cannot_be_judged_says_why() {
    let j = judge(&variant("thundering-herd.toml", "full"));
    assert_eq!(j.verdict, Verdict::Unknown);
    assert!(j.why.contains("burst"), "{}", j.why);
    assert!(j.ratio.is_none() && j.levers.is_empty());
}

/// Every variant of every shipped model is judged, in well under `explain`'s budget of 100 ms,
/// and only a model without a steady load, or with `server.connections` (which the verdict
/// declines), is unknown.
#[test]
fn every_shipped_model_is_judged_quickly() {
    use retrystorm_core::model::WorkloadKind;
    let dir = format!("{}/../../models", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let files = |name: &str| {
            let rel = name.split_once(':').map_or(name, |(_, f)| f);
            std::fs::read_to_string(p.parent().unwrap().join(rel)).map_err(|e| e.to_string())
        };
        let Ok(s) =
            retrystorm_core::load::load_resolved(&p.display().to_string(), &text, &[], &files)
        else {
            continue;
        };
        for m in &s.variants {
            let start = std::time::Instant::now();
            let j = judge(m);
            let took = start.elapsed();
            assert!(
                took.as_millis() < 100,
                "{}: {} took {took:?}",
                p.display(),
                m.name
            );
            let steady = matches!(m.workload.kind, WorkloadKind::Open | WorkloadKind::Closed);
            let connections = m.server.connections.is_some()
                || m.tiers.iter().any(|t| t.server.connections.is_some());
            assert_eq!(
                j.verdict == Verdict::Unknown,
                !steady || connections,
                "{}: {}: {}",
                p.display(),
                m.name,
                j.why
            );
            n += 1;
        }
    }
    assert!(n >= 80, "only {n} variants judged");
}

/// Retries stacked over tiers multiply at the bottom: retrying at every layer of
/// `models/stack.toml` brings 3 x 3 x 3 attempts per intent to the database, 9 times what
/// retrying at the client only brings; a budget per layer or cancellation makes it stable.
#[test]
fn stacked_retries_multiply() {
    let every = judge(&variant("stack.toml", "retry at every layer"));
    let client = judge(&variant("stack.toml", "retry at the client only"));
    assert_eq!(every.verdict, Verdict::Vulnerable);
    assert_eq!(every.deciding_tier, Some(2));
    let (a, b) = (every.deciding().unwrap(), client.deciding().unwrap());
    assert!(
        (a.all_fail_per_s / b.all_fail_per_s - 9.0).abs() < 1e-9,
        "{} {}",
        a.all_fail_per_s,
        b.all_fail_per_s
    );
    for name in ["a budget per layer", "every layer, cancellation on"] {
        assert_eq!(
            judge(&variant("stack.toml", name)).verdict,
            Verdict::Stable,
            "{name}"
        );
    }
}
