//! The fan-out experiment of `validate` (`server.fanout`): a tier that calls 100 (or 10) leaves
//! of exponential time and waits for all of them takes their maximum, a quorum of 2 of 3 their
//! second order statistic ("The Tail at Scale", Dean and Barroso, CACM 2013), and leaf failures
//! cost what retries at the root or at the leaves make of them. Beside `suite`, which lists it.

use super::experiment::{Case, Experiment, Reference, Value, case};

use Reference::Exact;
use Value::{Metric, Ratio};

const MAX_OF_K: &str = "the largest of k exponentials of mean m: E = m H_k, quantile q at \
    -m ln(1 - q^(1/k))";

/// `H_k`, the mean of the largest of `k` unit exponentials.
fn harmonic(k: u32) -> f64 {
    (1..=k).map(|i| 1.0 / f64::from(i)).sum()
}

/// The quantile `q` of the largest of `k` exponentials of mean `mean`.
fn max_quantile(k: u32, mean: f64, q: f64) -> f64 {
    -mean * (1.0 - q.powf(1.0 / f64::from(k))).ln()
}

/// The mean, median and 99th percentile of a request that waits for all of its `k` leaves.
fn all_of(variant: &'static str, k: u32) -> Vec<Case> {
    let m = 10.0;
    vec![
        case(
            variant,
            "mean completion (ms)",
            Metric("completion_ms.mean"),
            Exact(m * harmonic(k)),
        )
        .from(MAX_OF_K),
        case(
            variant,
            "median completion (ms)",
            Metric("completion_ms.p50"),
            Exact(max_quantile(k, m, 0.5)),
        )
        .from(MAX_OF_K),
        case(
            variant,
            "p99 completion (ms)",
            Metric("completion_ms.p99"),
            Exact(max_quantile(k, m, 0.99)),
        )
        .from(MAX_OF_K),
    ]
}

/// The experiment `fanout` (docs/validation.md): 4 seeds of 50,000 intents, every capacity
/// unlimited, leaves of `exp(10ms)` (or, for the failures, 1 ms failing with p = 0.01).
pub(super) fn fanout() -> Experiment {
    // An attempt at the root succeeds when all 100 leaves do; 3 attempts.
    let q = 0.99f64.powi(100);
    let root_attempts = 1.0 + (1.0 - q) + (1.0 - q).powi(2);
    let mut cases = all_of("all-of-100", 100);
    cases.extend(all_of("all-of-10", 10));
    cases.extend([
        case(
            "quorum-2-of-3",
            "mean completion (ms)",
            Metric("completion_ms.mean"),
            Exact(10.0 * (1.0 / 3.0 + 1.0 / 2.0)),
        )
        .from("the second smallest of 3 exponentials of mean m: m (1/3 + 1/2)"),
        case(
            "retry-at-root",
            "root attempts per intent",
            Ratio("layered.layers.0.sent", "intents"),
            Exact(root_attempts),
        )
        .from("closed form: 1 + (1 - q) + (1 - q)^2, q = 0.99^100"),
        case(
            "retry-at-root",
            "leaf calls per intent",
            Metric("fanout.0.leaf_calls_per_intent"),
            Exact(100.0 * root_attempts),
        )
        .from("closed form: 100 leaves per root attempt"),
        case(
            "retry-at-root",
            "success rate",
            Ratio("succeeded", "intents"),
            Exact(1.0 - (1.0 - q).powi(3)),
        )
        .from("closed form: 1 - (1 - q)^3, q = 0.99^100"),
        case(
            "retry-at-leaves",
            "leaf calls per intent",
            Metric("fanout.0.leaf_calls_per_intent"),
            Exact(100.0 * (1.0 + 0.01 + 0.0001)),
        )
        .from("closed form: 100 (1 + p + p^2), p = 0.01"),
        case(
            "retry-at-leaves",
            "success rate",
            Ratio("succeeded", "intents"),
            Exact((1.0 - 1e-6f64).powi(100)),
        )
        .from("closed form: (1 - p^3)^100, p = 0.01"),
    ]);
    Experiment {
        id: "fanout",
        title: "Fan-out to exponential leaves of 10 ms: all of 100 or 10, 2 of 3; leaf failures p = 0.01 retried at the root or the leaves",
        model: || {
            "name = \"fanout\"\nhorizon = \"1h\"\nbucket = \"1s\"\n\
             [workload]\nkind = \"closed\"\nworkers = 50\nintents = 50000\n\
             [retry]\nmax_attempts = 1\n\
             [[tier]]\nname = \"root\"\nserver = { fanout = { k = 100 } }\n\
             retry = { max_attempts = 1 }\n\
             [server]\nservice = \"exp(10ms)\"\n\
             [[variant]]\nname = \"all-of-100\"\n\
             [[variant]]\nname = \"all-of-10\"\n\
             tier = [{ name = \"root\", server = { fanout = { k = 10 } }, retry = { max_attempts = 1 } }]\n\
             [[variant]]\nname = \"quorum-2-of-3\"\n\
             tier = [{ name = \"root\", server = { fanout = { k = 3, wait = { quorum = 2 } } }, retry = { max_attempts = 1 } }]\n\
             [[variant]]\nname = \"retry-at-root\"\n\
             retry = { max_attempts = 3, backoff = \"immediate\" }\n\
             server = { service = \"1ms\", fail = 0.01 }\n\
             [[variant]]\nname = \"retry-at-leaves\"\n\
             tier = [{ name = \"root\", server = { fanout = { k = 100 } }, retry = { max_attempts = 3, backoff = \"immediate\" } }]\n\
             server = { service = \"1ms\", fail = 0.01 }\n"
                .into()
        },
        file: "(built in)",
        sets: &[],
        seeds: 4,
        quick: false,
        cases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closed_forms_are_the_published_numbers() {
        let near = |a: f64, b: f64| (a - b).abs() < 0.005;
        assert!(near(10.0 * harmonic(100), 51.87));
        assert!(near(max_quantile(100, 10.0, 0.5), 49.75));
        assert!(near(max_quantile(100, 10.0, 0.99), 92.05));
        assert!(near(10.0 * harmonic(10), 29.29));
        assert!(near(max_quantile(10, 10.0, 0.5), 27.04));
        assert!(near(max_quantile(10, 10.0, 0.99), 69.03));
    }
}
