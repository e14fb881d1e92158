//! The article's claims about the request path, as scenario tests.
//!
//! - `models/three-clients.toml` over 100 seeds: never retrying loses about 15% of the intents,
//!   retrying without a key duplicates about half, a per-intent key with a record-before store
//!   duplicates none, recording the key after the effect duplicates 75-96 of 200 (the article's
//!   runs), a key per attempt is no key, and a key regenerated after a client restart
//!   duplicates again while a persisted one does not.
//! - `models/atomic-dedupe.toml`: with crashes between the effect and the key record only the
//!   atomic commit has neither duplicates nor phantoms.
//! - Bad values get errors that name the field.
//!
//! `cargo test -p retrystorm-core --test request_path -- --nocapture` prints the tables quoted
//! in `docs/validation.md`.

use retrystorm_core::load::{Override, load};
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::Summary;

fn variants(file: &str, sets: &[&str]) -> Vec<Model> {
    let path = format!("{}/../../models/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    load(file, &text, &sets).unwrap().variants
}

fn variant<'a>(vs: &'a [Model], name: &str) -> &'a Model {
    vs.iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

fn summaries(m: &Model, seeds: std::ops::RangeInclusive<u64>) -> Vec<Summary> {
    seeds
        .map(|s| run_model(m, s, &mut |_| {}).summary)
        .collect()
}

/// Mean, standard deviation, min and max of one count over runs.
#[derive(Debug, Clone, Copy)]
struct Spread {
    mean: f64,
    sd: f64,
    min: u64,
    max: u64,
}

fn spread(rs: &[Summary], f: impl Fn(&Summary) -> u64) -> Spread {
    let xs: Vec<u64> = rs.iter().map(f).collect();
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<u64>() as f64 / n;
    let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    Spread {
        mean,
        sd: var.sqrt(),
        min: *xs.iter().min().unwrap(),
        max: *xs.iter().max().unwrap(),
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:6.1} ± {:4.1} [{:3}, {:3}]",
            self.mean, self.sd, self.min, self.max
        )
    }
}

/// Every intent settles and is finalised, and the outcome counts add up.
fn settled_and_consistent(r: &Summary) {
    assert_eq!(r.unsettled, 0);
    assert_eq!(r.succeeded + r.failed, r.intents);
    assert_eq!(r.lost + r.applied_once + r.duplicated, r.intents);
    assert!(r.effects >= r.applied_once + 2 * r.duplicated);
}

const SEEDS: std::ops::RangeInclusive<u64> = 1..=100;

fn print_table(title: &str, vs: &[Model]) -> Vec<(String, Vec<Summary>)> {
    println!("{title}");
    println!(
        "{:<22} {:>30} {:>30} {:>30} {:>30} {:>30}",
        "variant", "lost", "applied once", "duplicated", "false failures", "attempts"
    );
    let mut out = Vec::new();
    for m in vs {
        let rs = summaries(m, SEEDS);
        rs.iter().for_each(settled_and_consistent);
        println!(
            "{:<22} {:>30} {:>30} {:>30} {:>30} {:>30}",
            m.name,
            spread(&rs, |r| r.lost).to_string(),
            spread(&rs, |r| r.applied_once).to_string(),
            spread(&rs, |r| r.duplicated).to_string(),
            spread(&rs, |r| r.false_failures).to_string(),
            spread(&rs, |r| r.attempts).to_string(),
        );
        out.push((m.name.clone(), rs));
    }
    out
}

#[test]
fn three_clients_reproduce_the_article() {
    let vs = variants("three-clients.toml", &[]);
    let all = print_table(
        "three-clients.toml, seeds 1..=100 (mean ± sd [min, max])",
        &vs,
    );
    let get = |name: &str| &all.iter().find(|(n, _)| n == name).unwrap().1;

    // Never retry: only the requests lost before arrival are lost (15% of 200 = 30 expected;
    // the article's run lost 32), and nothing is duplicated.
    let never = get("never-retry");
    for r in never {
        assert_eq!(r.lost, r.requests_lost, "lost = dropped before arrival");
        assert_eq!(r.duplicated, 0);
        assert_eq!(r.attempts, 200);
    }
    let lost = spread(never, |r| r.lost);
    assert!((25.0..=35.0).contains(&lost.mean), "{lost}");
    // The client also timed out on many that were applied anyway (about half the arrivals).
    assert!(spread(never, |r| r.false_failures).mean > 70.0);

    // Retry without a key: about half duplicated (the article's run: 105), nothing lost.
    let nokey = spread(get("retry-no-key"), |r| r.duplicated);
    assert!((90.0..=110.0).contains(&nokey.mean), "{nokey}");
    assert!(
        get("retry-no-key")
            .iter()
            .all(|r| r.lost == 0 || r.failed > 0)
    );

    // Retry with the same key, recorded before the effect: none duplicated, none lost, ever.
    for r in get("retry-same-key") {
        assert_eq!((r.duplicated, r.phantom), (0, 0));
        assert_eq!(r.applied_once + r.lost, 200);
        // A keyed client fails only if every attempt after the first arrival was dropped before
        // arriving (about 6 * 0.5 * 0.15^5 per intent): then it gives up on an applied effect.
        assert_eq!(r.failed, r.lost + r.false_failures);
        assert!(r.false_failures <= 2);
    }
    let ff: u64 = get("retry-same-key").iter().map(|r| r.false_failures).sum();
    println!("retry-same-key: {ff} false failures in 100 runs of 200 intents");

    // Record after the effect: the article saw 75, 89, 90 and 96 of 200.
    let after = spread(get("record-after"), |r| r.duplicated);
    assert!((75.0..=96.0).contains(&after.mean), "{after}");

    // A key per attempt is no key: with common random numbers it is the no-key run, seed by seed.
    for (a, b) in get("key-per-attempt").iter().zip(get("retry-no-key")) {
        assert_eq!(
            (a.lost, a.applied_once, a.duplicated, a.effects),
            (b.lost, b.applied_once, b.duplicated, b.effects)
        );
    }

    // A restart that regenerates the key duplicates again; a persisted key does not.
    let regen = spread(get("restart-new-key"), |r| r.duplicated);
    assert!(regen.mean > 20.0, "{regen}");
    assert!(
        get("restart-persisted-key")
            .iter()
            .all(|r| r.duplicated == 0)
    );
}

#[test]
fn a_long_timeout_removes_the_lost_response_world() {
    // The article's last suggestion: a 200 ms timeout outlasts every handler (at most 60 ms),
    // and losses are reported at once, so no attempt that arrived is ever retried.
    let vs = variants("three-clients.toml", &["retry.timeout=200ms"]);
    for name in ["retry-no-key", "record-after", "key-per-attempt"] {
        for r in summaries(variant(&vs, name), 1..=20) {
            assert_eq!((r.duplicated, r.timeouts), (0, 0), "{name}");
        }
    }
}

#[test]
fn loss_reported_by_timeout_only() {
    // With loss_notice = "timeout" the client cannot tell a lost request from a slow one; the
    // keyed variant still never duplicates.
    let vs = variants("three-clients.toml", &["network.loss_notice=timeout"]);
    for r in summaries(variant(&vs, "retry-same-key"), 1..=20) {
        settled_and_consistent(&r);
        assert_eq!((r.duplicated, r.phantom), (0, 0));
    }
    let before = spread(&summaries(variant(&vs, "retry-no-key"), 1..=20), |r| {
        r.duplicated
    });
    assert!(before.mean > 80.0, "{before}");
}

#[test]
fn atomic_dedupe_only_atomic_is_safe() {
    let vs = variants("atomic-dedupe.toml", &[]);
    let all = print_table(
        "atomic-dedupe.toml, seeds 1..=100 (mean ± sd [min, max])",
        &vs,
    );
    for (name, rs) in &all {
        let dup = spread(rs, |r| r.duplicated);
        let ph = spread(rs, |r| r.phantom);
        let crashes = spread(rs, |r| r.crashes);
        println!("{name:<22} crashes {crashes} phantom {ph}");
        assert!(crashes.min > 0, "{name}: the model must crash");
        if name.starts_with("atomic") {
            assert_eq!((dup.max, ph.max), (0, 0), "{name}");
            // Every intent whose client heard success was applied exactly once.
            for r in rs {
                assert_eq!(r.applied_once, r.succeeded, "{name}");
                assert_eq!(r.lost, r.failed, "{name}");
            }
        }
    }
    let get = |n: &str| &all.iter().find(|(x, _)| x == n).unwrap().1;
    assert!(spread(get("effect-then-key"), |r| r.duplicated).min > 0);
    assert!(spread(get("effect-then-key"), |r| r.phantom).max == 0);
    assert!(spread(get("key-then-effect"), |r| r.phantom).min > 0);
    assert!(spread(get("key-then-effect"), |r| r.duplicated).max == 0);
}

#[test]
fn bad_values_name_the_field() {
    let base = variants("three-clients.toml", &[]);
    assert!(!base.is_empty());
    let text = std::fs::read_to_string(format!(
        "{}/../../models/three-clients.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let cases = [
        ("network.request_loss=1.5", "network.request_loss", "[0, 1]"),
        (
            "network.response_loss=-0.1",
            "network.response_loss",
            "[0, 1]",
        ),
        (
            "server.crash_probability=2",
            "server.crash_probability",
            "[0, 1]",
        ),
        (
            "retry.restart_probability=-1",
            "retry.restart_probability",
            "[0, 1]",
        ),
        ("server.fail=1.5", "server.fail", "[0, 1]"),
        ("idempotency.ttl=0ms", "idempotency.ttl", "positive"),
        ("retry.timeout=0ms", "retry.timeout", "positive"),
        ("retry.deadline=0ms", "retry.deadline", "positive"),
        ("workload.rate=-5/s", "workload.rate", ">= 0"),
        ("retry.base=-5ms", "retry.base", "negative"),
    ];
    for (set, field, words) in cases {
        let err = load(
            "three-clients.toml",
            &text,
            &[Override::parse(set).unwrap()],
        )
        .expect_err(set);
        let msg = err.to_string();
        assert!(
            msg.contains(field) && msg.contains(words),
            "--set {set}: {msg}"
        );
    }
}
