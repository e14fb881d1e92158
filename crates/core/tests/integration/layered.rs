//! A `[[layer]]` path (run by the one engine) against its closed form, its invariants, and `models/layered.toml`.

use retrystorm_core::layered::{expected_bottom_attempts, worst_case_bottom_attempts};
use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::{Ended, VariantResult};

fn run(m: &Model, seed: u64) -> VariantResult {
    run_model(m, seed, &mut |_| {})
}

/// A layered model with no timeouts: `attempts` per layer (top first), failure probability `p`.
fn chain(p: &str, attempts: &[u32], clients: u64) -> Model {
    // `fail = "always"` answers before any service (the loader refuses a service time there).
    let service = if p == "\"always\"" {
        ""
    } else {
        "service = \"exp(5ms)\"\n"
    };
    let mut text = format!(
        "[workload]\nclients = {clients}\nspread = \"100s\"\n[server]\nfail = {p}\n{service}"
    );
    for (i, n) in attempts.iter().enumerate() {
        text.push_str(&format!(
            "[[layer]]\nname = \"l{i}\"\nmax_attempts = {n}\nlatency = \"uniform(0ms, 2ms)\"\nbase = \"1ms\"\ncap = \"100ms\"\n"
        ));
    }
    load("chain.toml", &text, &[]).unwrap().base
}

fn model_file() -> Vec<Model> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/layered.toml"
    ))
    .unwrap();
    load("layered.toml", &text, &[]).unwrap().variants
}

/// Mean and variance of the bottom attempts per intent, by a recursion over the layers (bottom
/// up) on `q = P(fail)`, `a_f = E[X; fail]`, `a_s = E[X; success]`, `b_f = E[X^2; fail]`,
/// `b_s = E[X^2; success]`, where X is the bottom attempts one call causes. Independent of the
/// closed form in the crate, so the mean doubles as a check of it.
fn moments(p: f64, attempts: &[u32]) -> (f64, f64) {
    // The bottom itself: one attempt that fails with probability p.
    let (mut q, mut af, mut a_s, mut bf, mut bs) = (p, p, 1.0 - p, p, 1.0 - p);
    for &n in attempts.iter().rev() {
        let n = n as i32;
        let mut next_as = 0.0;
        let mut next_bs = 0.0;
        for k in 1..=n {
            // k - 1 failed sub-calls (sum S), then one success Y.
            let m = f64::from(k - 1);
            let pf = q.powi(k - 1);
            let s1 = if k >= 2 { m * af * q.powi(k - 2) } else { 0.0 };
            let s2 = if k >= 2 { m * bf * q.powi(k - 2) } else { 0.0 }
                + if k >= 3 {
                    m * (m - 1.0) * af * af * q.powi(k - 3)
                } else {
                    0.0
                };
            next_as += s1 * (1.0 - q) + pf * a_s;
            next_bs += s2 * (1.0 - q) + 2.0 * s1 * a_s + pf * bs;
        }
        let nf = f64::from(n);
        let next_bf = nf * bf * q.powi(n - 1)
            + if n >= 2 {
                nf * (nf - 1.0) * af * af * q.powi(n - 2)
            } else {
                0.0
            };
        let next_af = nf * af * q.powi(n - 1);
        (q, af, a_s, bf, bs) = (q.powi(n), next_af, next_as, next_bf, next_bs);
    }
    let mean = af + a_s;
    (mean, bf + bs - mean * mean)
}

#[test]
fn amplification_matches_the_closed_form() {
    // (p, attempts per layer, intents).
    let cases: [(&str, &[u32], u64); 5] = [
        ("0.5", &[3, 3, 3], 200_000),
        ("0.9", &[3, 3, 3], 100_000),
        ("0.3", &[2, 4], 200_000),
        ("0.7", &[5], 200_000),
        ("0.2", &[3, 3, 3, 3, 3], 200_000),
    ];
    for (p, attempts, n) in cases {
        let pf: f64 = p.parse().unwrap();
        let r = run(&chain(p, attempts, n), 11);
        let s = &r.summary;
        let l = s.layered.as_ref().unwrap();
        let expected = expected_bottom_attempts(pf, attempts);
        let (mean, var) = moments(pf, attempts);
        assert!(
            (mean - expected).abs() < 1e-12 * expected,
            "{mean} {expected}"
        );
        let se = (var / n as f64).sqrt();
        let z = (l.amplification_bottom - expected) / se;
        println!(
            "p={p} layers={attempts:?} intents={n}: simulated {:.4}, closed form {expected:.4}, \
             standard error {se:.4}, z = {z:+.2}",
            l.amplification_bottom
        );
        assert_eq!(s.ended, Ended::Settled);
        assert_eq!(l.expected_amplification, Some(expected));
        assert!(z.abs() < 4.0, "p={p} {attempts:?}: z = {z}");
        assert!(se / expected < 0.003, "the check is tight: {se}");
        assert_eq!(l.orphaned, 0, "no timeouts, no orphans");
    }
}

#[test]
fn the_moments_recursion_knows_one_layer() {
    // One layer of n attempts: X = min(Geometric(1 - p), n).
    let (p, n) = (0.6f64, 4);
    let probs: Vec<f64> = (1..=n)
        .map(|k| {
            if k < n {
                p.powi(k - 1) * (1.0 - p)
            } else {
                p.powi(n - 1)
            }
        })
        .collect();
    let mean: f64 = probs
        .iter()
        .enumerate()
        .map(|(i, q)| (i + 1) as f64 * q)
        .sum();
    let second: f64 = probs
        .iter()
        .enumerate()
        .map(|(i, q)| ((i + 1) as f64).powi(2) * q)
        .sum();
    let (m, v) = moments(p, &[n as u32]);
    assert!((m - mean).abs() < 1e-12 && (v - (second - mean * mean)).abs() < 1e-12);
}

#[test]
fn certain_failure_gives_the_worst_case_exactly() {
    let r = run(&chain("\"always\"", &[3, 3, 3], 1000), 1);
    let l = r.summary.layered.as_ref().unwrap();
    assert_eq!(worst_case_bottom_attempts(&[3, 3, 3]), 27.0);
    assert_eq!(l.worst_case_amplification, 27.0);
    assert_eq!(r.summary.attempts, 27_000);
    assert_eq!(r.summary.failed, 1000);
    let sent: Vec<u64> = l.layers.iter().map(|l| l.sent).collect();
    assert_eq!(sent, vec![3000, 9000, 27_000]);
    let r = run(&chain("\"never\"", &[3, 3, 3], 1000), 1);
    assert_eq!(r.summary.attempts, 1000);
    assert_eq!(r.summary.applied_once, 1000);
}

#[test]
fn every_call_is_accounted_for() {
    for m in model_file() {
        let r = run(&m, 3);
        let s = &r.summary;
        let l = s.layered.as_ref().unwrap();
        assert_eq!(s.ended, Ended::Settled, "{}", m.name);
        assert_eq!(l.layers[0].received, s.intents);
        for w in l.layers.windows(2) {
            assert_eq!(w[1].received, w[0].sent, "{}", m.name);
        }
        assert_eq!(l.layers.last().unwrap().sent, s.arrivals);
        assert_eq!(s.succeeded + s.failed, s.intents);
        assert_eq!(s.lost + s.applied_once + s.duplicated, s.intents);
        assert!(l.orphaned <= s.arrivals);
    }
}

#[test]
fn the_model_file_tells_the_story() {
    let v = model_file();
    let names: Vec<&str> = v.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "retry at every layer",
            "retry at the top only",
            "retry at the bottom only",
            "every layer with a budget"
        ]
    );
    let r: Vec<VariantResult> = v.iter().map(|m| run(m, 7)).collect();
    for x in &r {
        let s = &x.summary;
        let l = s.layered.as_ref().unwrap();
        println!(
            "{:<26} bottom/intent {:>6.3} (worst {:>3}) succeeded {:>5} orphaned {:>6} ({:>5.1}%) duplicated {:>5} wasted {:>5.1}%",
            x.name,
            l.amplification_bottom,
            l.worst_case_amplification,
            s.succeeded,
            l.orphaned,
            100.0 * l.orphaned_share,
            s.duplicated,
            100.0 * s.wasted_share,
        );
        for layer in &l.layers {
            println!(
                "    {:<8} received {:>6} sent {:>6} per call {:.3} timeouts {:>5} budget denied {:>5} orphaned {:>5}",
                layer.name,
                layer.received,
                layer.sent,
                layer.per_call,
                layer.timeouts,
                layer.budget_denied,
                layer.orphaned
            );
        }
    }
    let amp = |i: usize| r[i].summary.layered.as_ref().unwrap().amplification_bottom;
    let orphaned = |i: usize| r[i].summary.layered.as_ref().unwrap().orphaned;
    assert_eq!(
        r[0].summary
            .layered
            .as_ref()
            .unwrap()
            .worst_case_amplification,
        81.0
    );
    // Retrying at one layer sends far less to the bottom than retrying at all of them.
    assert!(amp(1) < amp(0) / 2.0 && amp(2) < amp(0) / 2.0, "{}", amp(0));
    // Budgets cut the multiplication.
    assert!(amp(3) < amp(0) / 2.0);
    // Timeouts above retries below leave orphaned work at the bottom.
    assert!(orphaned(0) > 0);
    assert!(orphaned(2) < orphaned(0));
}

#[test]
fn same_seed_same_bytes() {
    let m = &model_file()[0];
    let a = serde_json::to_string(&run(m, 5)).unwrap();
    let b = serde_json::to_string(&run(m, 5)).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run(m, 6)).unwrap();
    assert_ne!(a, c);
}

#[test]
fn bad_layers_are_refused_with_the_field() {
    let e = load("m.toml", "[[layer]]\nname = \"a\"\nmax_attempts = 0\n", &[]).unwrap_err();
    assert!(e.to_string().contains("layer[0].max_attempts"), "{e}");
    // The top layer is the clients' retry loop: `[retry]` beside it would be ignored.
    let e = load(
        "m.toml",
        "[retry]\nmax_attempts = 4\n[[layer]]\nname = \"a\"\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("m.toml:1:2: retry: with [[layer]]"),
        "{e}"
    );
    let e = load(
        "m.toml",
        "[[tier]]\nname = \"t\"\n[[layer]]\nname = \"a\"\n",
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("use one"), "{e}");
    let e = load(
        "m.toml",
        "[[layer]]\nname = \"a\"\nbudget = { kind = \"tokens\", max_tokens = 10 }\n",
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("token_ratio"), "{e}");
    let e = load(
        "m.toml",
        "[[layer]]\nname = \"a\"\nbudget = { kind = \"ratio\", ratio = 0.1, min = 3 }\n",
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("min"), "{e}");
}

/// A `[[layer]]`'s jitter sizing keys (`randomization_factor`, `jitter_factor`, `jitter_max`,
/// `cap_applies`) reach its retry loop, as `[retry]`'s do: each pair of values below gives a
/// different run. They were once dropped on the way to the engine (a key with no effect).
#[test]
fn layer_jitter_sizing_keys_act() {
    let with = |keys: &str| {
        let text = format!(
            "[workload]\nclients = 300\nspread = \"1s\"\n[server]\nfail = 0.5\nservice = \"exp(5ms)\"\n\
             [[layer]]\nname = \"top\"\nmax_attempts = 4\nbase = \"100ms\"\n{keys}\n"
        );
        run(&load("m.toml", &text, &[]).unwrap().base, 1)
    };
    let pairs = [
        (
            "cap = \"1s\"\njitter = \"proportional\"\nrandomization_factor = 0.1",
            "cap = \"1s\"\njitter = \"proportional\"\nrandomization_factor = 0.9",
        ),
        (
            "cap = \"1s\"\njitter = \"additive\"\njitter_factor = 0.1",
            "cap = \"1s\"\njitter = \"additive\"\njitter_factor = 2.0",
        ),
        (
            "jitter = \"absolute\"\njitter_max = \"1ms\"\ncap = \"10s\"",
            "jitter = \"absolute\"\njitter_max = \"5s\"\ncap = \"10s\"",
        ),
        (
            "cap = \"100ms\"\njitter = \"proportional\"\nrandomization_factor = 0.9\ncap_applies = \"before-jitter\"",
            "cap = \"100ms\"\njitter = \"proportional\"\nrandomization_factor = 0.9\ncap_applies = \"after-jitter\"",
        ),
    ];
    for (a, b) in pairs {
        assert!(with(a) != with(b), "{a:?} and {b:?} ran the same");
    }
}
