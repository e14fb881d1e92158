//! Write contention (`workload.kind = "contention"`, run by the one engine) against the AWS
//! Architecture Blog's findings.

use retrystorm_core::load::{Override, load};
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::{Ended, VariantResult};

fn variants(clients: u64) -> Vec<Model> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/occ-contention.toml"
    ))
    .unwrap();
    let set = Override::parse(&format!("workload.clients={clients}")).unwrap();
    load("occ-contention.toml", &text, &[set]).unwrap().variants
}

fn run(m: &Model, seed: u64) -> VariantResult {
    run_model(m, seed, &mut |_| {})
}

/// Mean calls (writes) and mean time to the last commit (ms) of each strategy over `seeds`.
fn means(clients: u64, seeds: u64) -> Vec<(String, f64, f64)> {
    variants(clients)
        .iter()
        .map(|m| {
            let (mut calls, mut time) = (0.0, 0.0);
            for seed in 0..seeds {
                let s = run(m, seed).summary;
                assert_eq!(s.ended, Ended::Settled);
                assert_eq!(s.succeeded, clients, "{}", m.name);
                assert_eq!(s.attempts, s.conflicts + clients, "{}", m.name);
                calls += s.attempts as f64;
                time += s.end_ms;
            }
            (m.name.clone(), calls / seeds as f64, time / seeds as f64)
        })
        .collect()
}

#[test]
fn one_client_never_conflicts() {
    for m in variants(1) {
        let s = run(&m, 3).summary;
        assert_eq!((s.attempts, s.conflicts, s.retries), (1, 0, 0));
        // A read and a write, each a round trip of two |N(10 ms, 2 ms)| delays.
        assert!((25.0..55.0).contains(&s.end_ms), "{}", s.end_ms);
    }
}

#[test]
fn without_backoff_the_work_grows_about_with_the_square() {
    // Every client competes in every round: the blog's "work increases with N^2". Rounds are
    // not in lockstep (the network's jitter lets more than one client commit per round), so
    // the calls stay below N^2 / 2, but doubling N more than triples them.
    let calls = |n| means(n, 10)[0].1;
    let (c50, c100, c200) = (calls(50), calls(100), calls(200));
    println!("immediate: N=50 {c50:.0}, N=100 {c100:.0}, N=200 {c200:.0} calls");
    assert!(c100 / c50 > 3.0 && c200 / c100 > 3.0, "{c50} {c100} {c200}");
    assert!(c200 < 200.0 * 200.0 / 2.0);
}

#[test]
fn the_blog_findings_hold() {
    for n in [50, 200] {
        let r = means(n, 20);
        println!("N = {n}");
        for (name, calls, time) in &r {
            println!("  {name:<14} calls {calls:>9.1}  time {time:>9.1} ms");
        }
        let get = |name: &str| r.iter().find(|x| x.0 == name).unwrap();
        let (immediate, none, full, equal, decorr) = (
            get("immediate"),
            get("no jitter"),
            get("full jitter"),
            get("equal jitter"),
            get("decorrelated"),
        );
        // No-jitter exponential is the clear loser in time among the backoff strategies.
        for other in [full, equal, decorr] {
            assert!(none.2 > 1.5 * other.2, "N={n}: {} vs {}", none.2, other.0);
        }
        // Jitter does far less work than retrying at once.
        assert!(full.1 < immediate.1 / 2.0, "N={n}");
        // Full and equal jitter do about the same work; equal takes longer.
        assert!(
            (equal.1 / full.1 - 1.0).abs() < 0.35,
            "N={n}: {} vs {}",
            equal.1,
            full.1
        );
        assert!(equal.2 > full.2, "N={n}");
        // Decorrelated does more work than full.
        assert!(decorr.1 > full.1, "N={n}");
    }
}

#[test]
fn same_seed_same_bytes() {
    let m = &variants(50)[2];
    let a = serde_json::to_string(&run(m, 9)).unwrap();
    assert_eq!(a, serde_json::to_string(&run(m, 9)).unwrap());
    assert_ne!(a, serde_json::to_string(&run(m, 10)).unwrap());
}

#[test]
fn contention_composes_with_loss_failures_service_and_timeouts() {
    // Once refused, now one engine: the record is the last tier, and every other behaviour of
    // a tier and a hop applies to it.
    let base = "[workload]\nkind = \"contention\"\nclients = 50\n[network]\nlatency = \"normal(10ms, 2ms)\"\n[retry]\nmax_attempts = 50\nbase = \"5ms\"\ncap = \"1s\"\n";
    let plain = run(&load("m.toml", base, &[]).unwrap().base, 3).summary;
    for extra in [
        "request_loss = 0.1\n",
        "[server]\nfail = 0.3\n",
        "[server]\nservice = \"exp(2ms)\"\ncapacity = 2\n",
    ] {
        let text = if extra.starts_with('[') {
            format!("{base}{extra}")
        } else {
            base.replace("[retry]", &format!("{extra}[retry]"))
        };
        let text = text.replace(
            "max_attempts = 50",
            "max_attempts = 50\ntimeout = \"200ms\"",
        );
        let s = run(&load("m.toml", &text, &[]).unwrap().base, 3).summary;
        assert_eq!(s.ended, retrystorm_core::summary::Ended::Settled, "{extra}");
        assert_eq!(s.lost + s.applied_once + s.duplicated, s.intents, "{extra}");
        assert!(s.effects >= s.applied_once + 2 * s.duplicated, "{extra}");
        assert!(
            s.effects <= s.arrivals,
            "{extra}: no effect without an attempt at the record"
        );
        assert_ne!(s, plain, "{extra} acts");
    }
}
