//! The suite of `validate`: every experiment, its cases and the cited references they are
//! compared with. A data table: one entry per published comparison (docs/validation.md). The
//! textbook queues live beside it in `queueing`, the replica and balancer experiments in
//! `replicas`, the fan-out experiment in `fanout`.

use super::experiment::{Case, Experiment, Reference, Value, case};
use super::fanout::fanout;
use super::queueing::{md1, mm1, mm4};
use super::replicas::{replicas_random, supermarket};

pub(super) const ARTICLE: &str = "the article \"Retries Duplicate Your Writes\", its published run";
pub(super) const ARTICLE_JS: &str =
    "the article's jitter.mjs over seeds 1..200 (docs/validation.md)";
pub(super) const BROOKER_RETRY: &str =
    "mbrooker/simulator_example retry_sim/retry_sim.py, one run at random.seed(1), max_t = 20";
pub(super) const BROOKER_COLLAPSE: &str =
    "mbrooker/simulator_example simple_collapse_sim/sim.py, Python seeds 0..99 (ramp: 0..29)";
pub(super) const OSDI: &str = "Huang et al., \"Metastable Failures in the Wild\" (OSDI 2022), the retry \
    experiment's runs a-d; artifact lexiangh/Metastability Retry_Metastability/, one run each";
pub(super) const METAFOR_CTMC: &str = "Metafor's CTMC (mpi-sws-rse/metafor at 5355c17, README \"Example 1\", orbit 20), \
    expected time from the empty state to a queue of 90 (benches/peers/metafor_ctmc.py)";
pub(super) const AWS_BLOG: &str =
    "AWS Architecture Blog, \"Exponential Backoff And Jitter\" (Brooker, 2015)";

pub(super) fn shipped(name: &'static str) -> fn() -> String {
    match name {
        "thundering-herd" => || include_str!("../../../../../models/thundering-herd.toml").into(),
        "three-clients" => || include_str!("../../../../../models/three-clients.toml").into(),
        "atomic-dedupe" => || include_str!("../../../../../models/atomic-dedupe.toml").into(),
        "brooker-retries" => || include_str!("../../../../../models/brooker-retries.toml").into(),
        "brooker-collapse" => || include_str!("../../../../../models/brooker-collapse.toml").into(),
        "occ-contention" => || include_str!("../../../../../models/occ-contention.toml").into(),
        "osdi-retry" => || include_str!("../../../../../models/osdi-retry.toml").into(),
        "metafor" => || include_str!("../../../../../models/metafor.toml").into(),
        _ => unreachable!("not a shipped model: {name}"),
    }
}

use Reference::{Exact, Mean, OneRun, Order, Share};
use Value::{Metric, Ratio};

/// The peak of retries in one bucket (the article's jitter figure).
const PEAK: Value = Metric("peak_retries");
/// Writes done twice or more.
const DUPLICATED: Value = Metric("duplicated");
/// The share of intents that succeeded.
const SUCCESS: Value = Ratio("succeeded", "intents");
/// Attempts per call (Brooker's "load").
const LOAD: Value = Metric("amplification");

/// Every experiment, in the order `validate` runs and prints them.
pub(super) fn suite() -> Vec<Experiment> {
    vec![
        herd(),
        three_clients(),
        atomic_dedupe(),
        mm1(),
        mm4(),
        md1(),
        replicas_random(),
        supermarket(),
        layered(),
        fanout(),
        brooker_retries_02(),
        brooker_retries_05(),
        brooker_collapse(),
        osdi_retry(),
        metafor_chain(),
        occ_contention(),
    ]
}

/// The experiment `metafor-chain` (docs/validation.md): our Markov chain of
/// `models/metafor.toml` against Metafor's own, without a run.
fn metafor_chain() -> Experiment {
    Experiment {
        id: "metafor-chain",
        title: "Metafor's canonical metastable server as a Markov chain (no run)",
        model: shipped("metafor"),
        file: "models/metafor.toml",
        sets: &[],
        seeds: 0,
        quick: true,
        cases: vec![
            case(
                "retry-at-once",
                "expected s from an empty queue to 90",
                Value::Chain("time_to_tip_s"),
                Reference::Within {
                    value: 61.2,
                    share: 0.05,
                },
            )
            .from(METAFOR_CTMC),
        ],
    }
}

/// The experiment `herd` (docs/validation.md).
fn herd() -> Experiment {
    Experiment {
        id: "herd",
        title: "Thundering herd (the article's jitter experiment)",
        model: shipped("thundering-herd"),
        file: "models/thundering-herd.toml",
        sets: &[],
        seeds: 200,
        quick: true,
        cases: vec![
            case("no-jitter", "peak retries per 10 ms", PEAK, Exact(1000.0)).from(ARTICLE),
            case(
                "full",
                "peak retries per 10 ms",
                PEAK,
                Mean {
                    value: 158.2,
                    sd: 7.9,
                    n: 200,
                },
            )
            .from(ARTICLE_JS),
            case(
                "equal",
                "peak retries per 10 ms",
                PEAK,
                Mean {
                    value: 216.5,
                    sd: 7.0,
                    n: 200,
                },
            )
            .from(ARTICLE_JS),
            case(
                "decorrelated",
                "peak retries per 10 ms",
                PEAK,
                Mean {
                    value: 73.0,
                    sd: 4.4,
                    n: 200,
                },
            )
            .from(ARTICLE_JS),
            case(
                "full",
                "retries (1000 clients x 5)",
                Metric("retries"),
                Exact(5000.0),
            )
            .from(ARTICLE),
        ],
    }
}

/// The experiment `three-clients` (docs/validation.md).
fn three_clients() -> Experiment {
    Experiment {
        id: "three-clients",
        title: "The article's three clients (once.mjs)",
        model: shipped("three-clients"),
        file: "models/three-clients.toml",
        sets: &[],
        seeds: 100,
        quick: true,
        cases: vec![
            case("never-retry", "lost of 200", Metric("lost"), OneRun(32.0)).from(ARTICLE),
            case("never-retry", "lost of 200", Metric("lost"), Exact(30.0))
                .from("closed form: 200 x 0.15 request loss"),
            case(
                "retry-no-key",
                "duplicated of 200",
                DUPLICATED,
                OneRun(105.0),
            )
            .from(ARTICLE),
            case(
                "retry-no-key",
                "duplicated of 200",
                DUPLICATED,
                Exact(100.0),
            )
            .from("closed form: 200 x (1 - 0.425 / 0.85)"),
            case(
                "retry-same-key",
                "duplicated of 200",
                DUPLICATED,
                Exact(0.0),
            )
            .from(ARTICLE),
            case(
                "record-after",
                "duplicated of 200",
                DUPLICATED,
                Mean {
                    value: 87.5,
                    sd: 8.888,
                    n: 4,
                },
            )
            .from("the article's four record-after runs: 89, 75, 96, 90"),
        ],
    }
}

/// The experiment `atomic-dedupe` (docs/validation.md).
fn atomic_dedupe() -> Experiment {
    Experiment {
        id: "atomic-dedupe",
        title: "The dedupe store that commits with the effect (atomic_dedupe.py)",
        model: shipped("atomic-dedupe"),
        file: "models/atomic-dedupe.toml",
        sets: &[],
        seeds: 100,
        quick: true,
        cases: vec![
            case("atomic", "duplicated of 200", DUPLICATED, Exact(0.0)).from(ARTICLE),
            case("atomic", "phantom of 200", Metric("phantom"), Exact(0.0)).from(ARTICLE),
            case(
                "effect-then-key",
                "duplicated of 200",
                DUPLICATED,
                Exact(40.0),
            )
            .from("closed form: 200 x 0.2 first attempts crash after the effect"),
            case(
                "key-then-effect",
                "phantom of 200",
                Metric("phantom"),
                Exact(40.0),
            )
            .from("closed form: 200 x 0.2 first attempts crash after the key"),
        ],
    }
}

/// The experiment `layered` (docs/validation.md).
fn layered() -> Experiment {
    Experiment {
        id: "layered",
        title: "Three layers of three attempts, p = 0.5 independent failures",
        model: || {
            let mut t = String::from(
                "name = \"layered\"\nbucket = \"1s\"\n[workload]\nkind = \"burst\"\n\
                 clients = 20000\nspread = \"100s\"\n[server]\nfail = 0.5\n\
                 service = \"exp(5ms)\"\n",
            );
            for l in ["a", "b", "c"] {
                t.push_str(&format!(
                    "[[layer]]\nname = \"{l}\"\nmax_attempts = 3\nlatency = \"uniform(0ms, 2ms)\"\n"
                ));
            }
            t
        },
        file: "(built in)",
        sets: &[],
        seeds: 10,
        quick: true,
        cases: vec![
            case(
                "layered",
                "attempts at the bottom per intent",
                Metric("layered.amplification_bottom"),
                Exact((1.0 - 0.5f64.powi(27)) / 0.5),
            )
            .from("closed form (docs/layered.md): (1 - p^N) / (1 - p), N = 27"),
        ],
    }
}

/// Brooker's `retry_sim` at the failure rate `sets` gives, one run against ten of ours.
fn brooker_retries(
    id: &'static str,
    title: &'static str,
    sets: &'static [&'static str],
    cases: Vec<Case>,
) -> Experiment {
    Experiment {
        id,
        title,
        model: shipped("brooker-retries"),
        file: "models/brooker-retries.toml",
        sets,
        seeds: 10,
        quick: true,
        cases,
    }
}

/// `variant`'s load against the one published run of `retry_sim`.
fn brooker_load(variant: &'static str, load: f64) -> Case {
    case(variant, "load (attempts per call)", LOAD, OneRun(load)).from(BROOKER_RETRY)
}

/// `variant`'s success rate against the one published run of `retry_sim`.
fn brooker_success(variant: &'static str, rate: f64) -> Case {
    case(variant, "success rate", SUCCESS, OneRun(rate)).from(BROOKER_RETRY)
}

/// The experiment `brooker-retries-0.2` (docs/validation.md).
fn brooker_retries_02() -> Experiment {
    brooker_retries(
        "brooker-retries-0.2",
        "Brooker's retry_sim at 20% failures",
        &["server.fail=0.2"],
        vec![
            brooker_load("three_retries", 1.2497),
            case(
                "three_retries",
                "load (attempts per call)",
                LOAD,
                Exact(1.0 + 0.2 + 0.04 + 0.008),
            )
            .from("closed form: 1 + p + p^2 + p^3"),
            brooker_load("adaptive_10pct", 1.1182),
            brooker_success("adaptive_10pct", 0.8923),
            brooker_load("breaker_10pct", 1.0013),
            brooker_success("breaker_10pct", 0.7987),
        ],
    )
}

/// The experiment `brooker-retries-0.5` (docs/validation.md).
fn brooker_retries_05() -> Experiment {
    brooker_retries(
        "brooker-retries-0.5",
        "Brooker's retry_sim at 50% failures",
        &["server.fail=0.5"],
        vec![
            brooker_load("three_retries", 1.8632),
            case(
                "three_retries",
                "success rate",
                SUCCESS,
                Exact(1.0 - 0.5f64.powi(4)),
            )
            .from("closed form: 1 - p^4"),
            Case {
                known: Some(
                    "his token bucket's load barely varies between runs (our spread is +-0.00013), \
                     so his 1.1210 is 8 spreads above our 1.1199: 22 more retries per 20,000 \
                     calls, not yet explained (docs/validation.md, Brooker's retry_sim)",
                ),
                ..brooker_load("adaptive_10pct", 1.1210)
            },
            brooker_success("adaptive_10pct", 0.5629),
            brooker_load("breaker_10pct", 1.0000),
            brooker_success("breaker_10pct", 0.5007),
        ],
    )
}

/// The experiment `brooker-collapse` (docs/validation.md).
fn brooker_collapse() -> Experiment {
    Experiment {
        id: "brooker-collapse",
        title: "Brooker's simple_collapse_sim: the share of runs that recover",
        model: shipped("brooker-collapse"),
        file: "models/brooker-collapse.toml",
        sets: &[],
        seeds: 100,
        quick: false,
        cases: vec![
            case(
                "spike-no-backoff",
                "share of runs that recover",
                Metric("recovered"),
                Share { count: 27, n: 100 },
            )
            .from(BROOKER_COLLAPSE),
            case(
                "spike-backoff",
                "share of runs that recover",
                Metric("recovered"),
                Share { count: 100, n: 100 },
            )
            .from(BROOKER_COLLAPSE),
            case(
                "ramp-no-backoff",
                "share of runs that recover",
                Metric("recovered"),
                Share { count: 0, n: 30 },
            )
            .from(BROOKER_COLLAPSE),
            case(
                "ramp-backoff",
                "share of runs that recover",
                Metric("recovered"),
                Share { count: 0, n: 30 },
            )
            .from(BROOKER_COLLAPSE),
        ],
    }
}

/// The experiment `osdi-retry` (docs/validation.md).
fn osdi_retry() -> Experiment {
    Experiment {
        id: "osdi-retry",
        title: "OSDI 2022's retry experiment: which trigger tips the system into a retry storm",
        model: shipped("osdi-retry"),
        file: "models/osdi-retry.toml",
        sets: &[],
        seeds: 10,
        quick: false,
        cases: [
            ("a-0.45cpu-10s", 1),
            ("b-0.40cpu-10s", 0),
            ("c-0.40cpu-9s", 1),
            ("d-0.40cpu-10s-less-load", 1),
        ]
        .into_iter()
        .map(|(variant, count)| {
            case(
                variant,
                "recovers after the trigger",
                Metric("recovered"),
                Share { count, n: 1 },
            )
            .from(OSDI)
        })
        .collect(),
    }
}

/// The experiment `occ-contention` (docs/validation.md).
fn occ_contention() -> Experiment {
    Experiment {
        id: "occ-contention",
        title: "The AWS blog's contention model, N = 100 (rankings; the blog publishes graphs)",
        model: shipped("occ-contention"),
        file: "models/occ-contention.toml",
        sets: &[],
        seeds: 20,
        quick: true,
        cases: vec![
            case(
                "full jitter",
                "calls",
                Metric("attempts"),
                Order {
                    other: "no jitter",
                    below: true,
                },
            )
            .from(AWS_BLOG),
            case(
                "full jitter",
                "time to the last commit (ms)",
                Metric("end_ms"),
                Order {
                    other: "no jitter",
                    below: true,
                },
            )
            .from(AWS_BLOG),
            case(
                "equal jitter",
                "time to the last commit (ms)",
                Metric("end_ms"),
                Order {
                    other: "full jitter",
                    below: false,
                },
            )
            .from(AWS_BLOG),
            case(
                "decorrelated",
                "calls",
                Metric("attempts"),
                Order {
                    other: "full jitter",
                    below: false,
                },
            )
            .from(AWS_BLOG),
        ],
    }
}
