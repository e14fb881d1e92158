//! The server against queueing theory: open Poisson arrivals, no retries, no loss, so the server
//! is a textbook queue. Mean wait in queue (Wq, served requests) and time-averaged queue length
//! (Lq) must match the closed forms within 2%:
//!
//! - M/M/1: `Wq = rho / (mu - lambda)`, `Lq = rho^2 / (1 - rho)`.
//! - M/M/c: Erlang C, `Wq = C(c, a) / (c mu - lambda)`, `Lq = lambda Wq`, with `a = lambda / mu`.
//! - M/D/1: Pollaczek-Khinchine, `Wq = rho / (2 mu (1 - rho))`, `Lq = rho^2 / (2 (1 - rho))`.
//!
//! Each case averages a few fixed seeds (a run is a long single path; its error is mostly the
//! slow correlation of queue lengths, so several independent paths beat one longer one). The
//! numbers go into `docs/validation.md` ("Queueing theory"); `cargo test --test queueing --
//! --nocapture` prints them.

use retrystorm_core::dist::Dist;
use retrystorm_core::model::{Discipline, Limit, Model, Rate, WorkloadKind};
use retrystorm_core::path::run;
use retrystorm_core::summary::Summary;
use retrystorm_core::time::Duration;

/// Relative tolerance the issue asks for.
const TOL: f64 = 0.02;

fn queue_model(rate_per_s: f64, servers: u64, service: Dist, horizon: Duration) -> Model {
    let mut m = Model {
        name: "queue".into(),
        horizon,
        bucket: Duration::from_secs(1),
        ..Model::default()
    };
    m.workload.kind = WorkloadKind::Open;
    m.workload.rate = Rate(rate_per_s);
    m.retry.max_attempts = 1;
    m.retry.timeout = None;
    m.server.capacity = Limit(Some(servers));
    m.server.service = service;
    m.validate().expect("a valid queue model");
    m
}

/// Mean and standard error (over seeds) of one statistic.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, (var / n).sqrt())
}

/// Runs `seeds`; returns (mean, standard error) over seeds of Wq (ms), Lq and busy servers.
fn measure(m: &Model, seeds: &[u64]) -> [(f64, f64); 3] {
    let (mut w, mut l, mut b) = (Vec::new(), Vec::new(), Vec::new());
    for &s in seeds {
        let r: Summary = run(m, s).summary;
        assert_eq!(r.duplicated + r.phantom + r.requests_lost + r.rejected, 0);
        w.push(r.mean_wait_ms);
        l.push(r.mean_queue_len);
        b.push(r.mean_busy);
    }
    [mean_se(&w), mean_se(&l), mean_se(&b)]
}

fn erlang_c(c: u64, a: f64) -> f64 {
    let rho = a / c as f64;
    let mut term = 1.0; // a^k / k!
    let mut sum = 0.0;
    for k in 0..c {
        sum += term;
        term *= a / (k + 1) as f64;
    }
    let last = term / (1.0 - rho); // a^c / c! / (1 - rho)
    last / (sum + last)
}

fn check(name: &str, m: &Model, seeds: &[u64], wq_ms: f64, lq: f64, busy: f64) {
    let [(w, sw), (l, sl), (b, sb)] = measure(m, seeds);
    let ew = w / wq_ms - 1.0;
    let el = l / lq - 1.0;
    let eb = b / busy - 1.0;
    println!(
        "{name}: Wq {w:.5} ms (theory {wq_ms:.5}, {:+.2}% +- {:.2}%), Lq {l:.5} (theory {lq:.5}, {:+.2}% +- {:.2}%), busy {b:.5} (theory {busy:.5}, {:+.2}% +- {:.2}%)",
        ew * 100.0,
        sw / wq_ms * 100.0,
        el * 100.0,
        sl / lq * 100.0,
        eb * 100.0,
        sb / busy * 100.0,
    );
    assert!(ew.abs() < TOL, "{name}: Wq {w} vs {wq_ms}");
    assert!(el.abs() < TOL, "{name}: Lq {l} vs {lq}");
    assert!(eb.abs() < TOL, "{name}: busy {b} vs {busy}");
}

/// Seeds 1..=n.
fn seeds(n: u64) -> Vec<u64> {
    (1..=n).collect()
}

#[test]
fn erlang_c_reference_values() {
    // C(1, a) = a (M/M/1: the probability of waiting is rho); C(2, 1) = 1/3.
    assert!((erlang_c(1, 0.5) - 0.5).abs() < 1e-12);
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
}

/// M/M/1 at 500 arrivals a second against a mean service of 1 ms (mu = 1000/s): rho = 0.5.
const MM1: (f64, f64) = (500.0, 1000.0);

fn mm1() -> Model {
    let mean = Duration::from_millis(1);
    queue_model(
        MM1.0,
        1,
        Dist::Exponential { mean },
        Duration::from_secs(600),
    )
}

/// Checks `m`, an [`mm1`] in some order of service, against M/M/1's means.
fn check_mm1(name: &str, m: &Model) {
    let (lambda, mu) = MM1;
    let rho = lambda / mu;
    let wq = rho / (mu - lambda) * 1e3;
    check(name, m, &seeds(8), wq, rho * rho / (1.0 - rho), rho);
}

#[test]
fn mm1_matches_theory() {
    check_mm1("M/M/1 rho=0.5", &mm1());
}

#[test]
fn mm1_lifo_has_the_same_means() {
    // Any work-conserving order that ignores service times has the same Lq, hence (Little) Wq.
    let mut m = mm1();
    m.server.discipline = Discipline::Lifo;
    check_mm1("M/M/1 LIFO rho=0.5", &m);
}

#[test]
fn mmc_matches_erlang_c() {
    // c = 4 servers, lambda = 3000/s, mu = 1000/s: a = 3, rho = 0.75.
    let (lambda, mu, c) = (3000.0, 1000.0, 4);
    let a = lambda / mu;
    let m = queue_model(
        lambda,
        c,
        Dist::Exponential {
            mean: Duration::from_millis(1),
        },
        Duration::from_secs(400),
    );
    let wq = erlang_c(c, a) / (c as f64 * mu - lambda);
    check("M/M/4 rho=0.75", &m, &seeds(16), wq * 1e3, lambda * wq, a);
}

#[test]
fn md1_matches_pollaczek_khinchine() {
    // Constant 1 ms service, lambda = 600/s: rho = 0.6.
    let (lambda, mu) = (600.0, 1000.0);
    let rho = lambda / mu;
    let m = queue_model(
        lambda,
        1,
        Dist::Constant(Duration::from_millis(1)),
        Duration::from_secs(600),
    );
    let wq = rho / (2.0 * mu * (1.0 - rho));
    check(
        "M/D/1 rho=0.6",
        &m,
        &seeds(8),
        wq * 1e3,
        rho * rho / (2.0 * (1.0 - rho)),
        rho,
    );
}
