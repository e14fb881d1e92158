//! The replica and balancer experiments of `validate`: `replicas-random` (random against round
//! robin over four M/M/1 replicas) and `supermarket` (least request with two choices over 100),
//! with the closed forms they are compared with. Beside `suite`, which lists them in its order.

use super::experiment::{Case, Experiment, Reference, Value, case};
use super::queueing::{mean_wait_of, open_model};

use Reference::{Exact, Order};
use Value::{Metric, Ratio};

const SUPERMARKET: &str = "supermarket model, N -> infinity (Mitzenmacher 1996; Vvedenskaya et al. \
    1996): W = sum_i lambda^(2^i - 1) / lambda";

/// GI/M/1 with Erlang-`k` interarrival times (every `k`-th arrival of a Poisson stream) at load
/// `rho`: the root `sigma` in (0, 1) of `sigma = A(mu (1 - sigma))`, `A` the interarrival
/// time's Laplace transform, `(k rho / (k rho + 1 - sigma))^k` with `mu = 1`. An arrival waits
/// with probability `sigma` and `Wq = sigma / (mu (1 - sigma))` (Kleinrock, Queueing Systems
/// vol. 1, ch. 6, G/M/1).
fn erlang_k_m1_sigma(k: u32, rho: f64) -> f64 {
    let kr = f64::from(k) * rho;
    // The iteration from 0 rises monotonically to the smallest root, the one below 1.
    let mut sigma = 0.0;
    for _ in 0..10_000 {
        let next = (kr / (kr + 1.0 - sigma)).powi(k as i32);
        if (next - sigma).abs() < 1e-15 {
            return next;
        }
        sigma = next;
    }
    sigma
}

/// The supermarket model's limit (Mitzenmacher 1996; Vvedenskaya, Dobrushin, Karpelevich 1996):
/// as the replicas grow, the fraction of them holding at least `i` requests tends to
/// `lambda^(2^i - 1)`, so the mean number at one replica tends to their sum over `i >= 1`.
fn supermarket_mean_number(lambda: f64) -> f64 {
    let mut sum = 0.0;
    let mut power = 1u32;
    loop {
        // power = 2^i - 1 for i = 1, 2, ...
        let term = lambda.powi(power as i32);
        sum += term;
        if term < 1e-17 || power > 1 << 20 {
            return sum;
        }
        power = 2 * power + 1;
    }
}

/// The experiment `replicas-random` (docs/validation.md): four single-worker replicas behind a
/// random balancer are four M/M/1 queues at a quarter of the rate each (a Poisson stream split at
/// random is Poisson streams); round robin, the contrast, makes each replica's arrivals Erlang-4.
pub(super) fn replicas_random() -> Experiment {
    // rho = 2800 / (4 x 1000) = 0.7 per replica.
    let (rho, mu) = (0.7, 1.0); // mu per ms
    let wq = rho / (mu - rho * mu);
    let sigma = erlang_k_m1_sigma(4, rho);
    Experiment {
        id: "replicas-random",
        title: "4 single-worker replicas, random or round robin, rho = 0.7 (lambda 2800/s, exp(1ms))",
        model: || {
            open_model(
                "replicas",
                "100s",
                "2800/s",
                "replicas = 4\ncapacity = 1\nservice = \"exp(1ms)\"\n\
                 [[variant]]\nname = \"random\"\nserver.balancer = \"random\"\n\
                 [[variant]]\nname = \"round-robin\"\nserver.balancer = \"round-robin\"\n",
            )
        },
        file: "(built in)",
        sets: &[],
        seeds: 8,
        quick: true,
        cases: vec![
            mean_wait_of("random", wq).from("M/M/1 at lambda / c: Wq = rho / (mu - lambda / c)"),
            case(
                "random",
                "mean time in system (ms)",
                Metric("completion_ms.mean"),
                Exact(1.0 / (mu - rho * mu)),
            )
            .from("M/M/1 at lambda / c: W = 1 / (mu - lambda / c)"),
            case(
                "random",
                "mean queue length (4 replicas)",
                Metric("mean_queue_len"),
                Exact(4.0 * rho * rho / (1.0 - rho)),
            )
            .from("c x M/M/1 at lambda / c: c rho^2 / (1 - rho)"),
            share(0),
            share(1),
            share(2),
            share(3),
            mean_wait_of("round-robin", sigma / (mu * (1.0 - sigma))).from(
                "E4/M/1 (GI/M/1): Wq = sigma / (mu (1 - sigma)), sigma = (4 rho / (4 rho + 1 - sigma))^4",
            ),
            case(
                "round-robin",
                "mean wait in queue (ms)",
                Metric("mean_wait_ms"),
                Order {
                    other: "random",
                    below: true,
                },
            )
            .from("GI/M/1: Erlang-4 arrivals, more regular than Poisson, wait less"),
        ],
    }
}

/// Replica `r`'s share of the arrivals under the random balancer, against 1 / 4.
fn share(r: usize) -> Case {
    const WHAT: [&str; 4] = [
        "share of arrivals at replica 0",
        "share of arrivals at replica 1",
        "share of arrivals at replica 2",
        "share of arrivals at replica 3",
    ];
    const ARRIVALS: [&str; 4] = [
        "tiers.0.replicas.0.arrivals",
        "tiers.0.replicas.1.arrivals",
        "tiers.0.replicas.2.arrivals",
        "tiers.0.replicas.3.arrivals",
    ];
    case(
        "random",
        WHAT[r],
        Ratio(ARRIVALS[r], "tiers.0.arrivals"),
        Exact(0.25),
    )
    .from("random choice: each replica gets 1 / c of the arrivals")
}

/// Why the supermarket rows sit above their limit.
const FINITE_N: &str = "a finite-N effect: the limit is for N -> infinity; over N = 10..1000 the \
    simulated mean lies above it by about 1.3 ms / N (lambda 0.7) and 5 ms / N (lambda 0.9), so at \
    N = 100 by about 0.8% and 1.9% (docs/validation.md, the supermarket model)";

/// The experiment `supermarket` (docs/validation.md): Envoy's least request with two choices in
/// front of 100 single-worker replicas is the supermarket model; its mean time in system tends,
/// by Little's law, to `sum_i lambda^(2^i - 1) / lambda` as the replicas grow.
pub(super) fn supermarket() -> Experiment {
    let limit = |lambda: f64| supermarket_mean_number(lambda) / lambda;
    Experiment {
        id: "supermarket",
        title: "Least request, 2 choices, 100 replicas of exp(1ms) (supermarket model; M/M/1 alone: 3.333 / 10 ms)",
        model: || {
            open_model(
                "supermarket",
                "6s",
                "70000/s",
                "replicas = 100\ncapacity = 1\nservice = \"exp(1ms)\"\n\
                 balancer = \"least-request\"\nchoice_count = 2\n\
                 [[variant]]\nname = \"lambda-0.7\"\nworkload.rate = \"70000/s\"\n\
                 [[variant]]\nname = \"lambda-0.9\"\nworkload.rate = \"90000/s\"\n",
            )
        },
        file: "(built in)",
        sets: &[],
        seeds: 8,
        quick: true,
        cases: ["lambda-0.7", "lambda-0.9"]
            .into_iter()
            .zip([0.7, 0.9])
            .map(|(variant, lambda)| Case {
                known: Some(FINITE_N),
                ..case(
                    variant,
                    "mean time in system (ms)",
                    Metric("completion_ms.mean"),
                    Exact(limit(lambda)),
                )
                .from(SUPERMARKET)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_k_m1_and_the_supermarket_limit_match_by_hand() {
        // Erlang-1 arrivals are Poisson: sigma = rho (M/M/1).
        assert!((erlang_k_m1_sigma(1, 0.7) - 0.7).abs() < 1e-12);
        // E2/M/1 at rho = 0.5: sigma = (1 / (2 - sigma))^2, root (3 - sqrt(5)) / 2.
        assert!((erlang_k_m1_sigma(2, 0.5) - (3.0 - 5f64.sqrt()) / 2.0).abs() < 1e-12);
        // 0.5 + 0.5^3 + 0.5^7 + 0.5^15 + 0.5^31 + ...
        let s = 0.5 + 0.125 + 0.0078125 + 0.5f64.powi(15) + 0.5f64.powi(31);
        assert!((supermarket_mean_number(0.5) - s).abs() < 1e-15);
    }
}
