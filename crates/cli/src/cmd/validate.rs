//! `retrystorm validate`: every published comparison in one command (issue 14, "How it is kept
//! true"). Each experiment is a shipped model (or a textbook queue) run over its seeds; each case
//! compares one metric of one variant with a cited reference and prints reference, ours, the
//! reference's noise and a verdict.
//!
//! A case passes when the reference lies in our 95% interval widened by the reference's own
//! noise (its 95% interval when it is a mean over runs or a share, a run's 95% spread when it is
//! one run, nothing when it is exact). A case that differs is a finding: it is reported (exit 1),
//! never tuned away; `known` marks the findings docs/validation.md already explains.

use crate::CliError;
use crate::args::ValidateArgs;
use crate::emit::is_stdout;
use crate::output;
use crate::run::run_all;
use crate::text::plural;
use retrystorm_core::load;
use retrystorm_core::model::Model;
use retrystorm_core::stats::{self, Estimate};
use retrystorm_core::summary::{self, Summary};
use serde::Serialize;

/// What a case is compared with.
#[derive(Clone, Copy, Debug)]
enum Reference {
    /// A closed form or a deterministic count: no noise of its own.
    Exact(f64),
    /// The mean over `n` runs of a reference implementation whose runs have sample sd `sd`.
    Mean { value: f64, sd: f64, n: u32 },
    /// One run of a reference implementation: its noise is one run's spread, which we estimate
    /// from our own runs' sd (same model, same size).
    OneRun(f64),
    /// `count` of `n` runs of a reference implementation had the property (Wilson interval).
    Share { count: u32, n: u32 },
    /// A published ranking: our metric is below (`true`) or above (`false`) the same metric of
    /// `other`, with the 95% intervals of the paired differences excluding zero.
    Order { other: &'static str, below: bool },
}

/// Which number of a run is compared.
#[derive(Clone, Copy, Debug)]
enum Value {
    /// A summary metric by its dotted name (`peak_retries`, `layered.amplification_bottom`).
    Metric(&'static str),
    /// One metric over another (`succeeded` / `intents`).
    Ratio(&'static str, &'static str),
}

struct Case {
    variant: &'static str,
    what: &'static str,
    value: Value,
    reference: Reference,
    source: &'static str,
    /// Why a known difference differs (docs/validation.md explains it), if it does.
    known: Option<&'static str>,
}

struct Experiment {
    id: &'static str,
    title: &'static str,
    /// The model file's text and the name shown for it.
    model: fn() -> String,
    file: &'static str,
    sets: &'static [&'static str],
    seeds: u32,
    /// Cheap enough for `--quick` (the part `cargo test` runs).
    quick: bool,
    cases: Vec<Case>,
}

const ARTICLE: &str = "the article \"Retries Duplicate Your Writes\", its published run";
const ARTICLE_JS: &str = "the article's jitter.mjs over seeds 1..200 (docs/validation.md)";
const BROOKER_RETRY: &str =
    "mbrooker/simulator_example retry_sim/retry_sim.py, one run at random.seed(1), max_t = 20";
const BROOKER_COLLAPSE: &str =
    "mbrooker/simulator_example simple_collapse_sim/sim.py, Python seeds 0..99 (ramp: 0..29)";
const OSDI: &str = "Huang et al., \"Metastable Failures in the Wild\" (OSDI 2022), the retry \
    experiment's runs a-d; artifact lexiangh/Metastability Retry_Metastability/, one run each";
const AWS_BLOG: &str = "AWS Architecture Blog, \"Exponential Backoff And Jitter\" (Brooker, 2015)";

fn shipped(name: &'static str) -> fn() -> String {
    match name {
        "thundering-herd" => || include_str!("../../../../models/thundering-herd.toml").into(),
        "three-clients" => || include_str!("../../../../models/three-clients.toml").into(),
        "atomic-dedupe" => || include_str!("../../../../models/atomic-dedupe.toml").into(),
        "brooker-retries" => || include_str!("../../../../models/brooker-retries.toml").into(),
        "brooker-collapse" => || include_str!("../../../../models/brooker-collapse.toml").into(),
        "occ-contention" => || include_str!("../../../../models/occ-contention.toml").into(),
        "osdi-retry" => || include_str!("../../../../models/osdi-retry.toml").into(),
        _ => unreachable!("not a shipped model: {name}"),
    }
}

/// An open Poisson queue with no retries: `c` workers, `service` per request.
fn queue(rate: &str, c: u32, service: &str, horizon: &str) -> String {
    format!(
        "name = \"queue\"\nhorizon = \"{horizon}\"\nbucket = \"1s\"\n\
         [workload]\nkind = \"open\"\nrate = \"{rate}\"\n\
         [retry]\nmax_attempts = 1\n\
         [server]\ncapacity = {c}\nservice = \"{service}\"\n"
    )
}

/// Erlang C: the chance an arrival waits in M/M/c with offered load `a` (in workers).
fn erlang_c(c: u32, a: f64) -> f64 {
    let rho = a / f64::from(c);
    let (mut term, mut sum) = (1.0, 0.0);
    for k in 0..c {
        sum += term;
        term *= a / f64::from(k + 1);
    }
    let last = term / (1.0 - rho);
    last / (sum + last)
}

fn case(variant: &'static str, what: &'static str, value: Value, reference: Reference) -> Case {
    Case {
        variant,
        what,
        value,
        reference,
        source: "",
        known: None,
    }
}

impl Case {
    fn from(mut self, source: &'static str) -> Case {
        self.source = source;
        self
    }
}

fn suite() -> Vec<Experiment> {
    use Reference::*;
    use Value::*;
    let peak = Metric("peak_retries");
    let dup = Metric("duplicated");
    let success = Ratio("succeeded", "intents");
    let load = Metric("amplification");
    // M/M/4 at rho = 0.75: lambda 3000/s, mu 1000/s.
    let mm4_wq = erlang_c(4, 3.0) / (4000.0 - 3000.0) * 1000.0;
    vec![
        Experiment {
            id: "herd",
            title: "Thundering herd (the article's jitter experiment)",
            model: shipped("thundering-herd"),
            file: "models/thundering-herd.toml",
            sets: &[],
            seeds: 200,
            quick: true,
            cases: vec![
                case("no-jitter", "peak retries per 10 ms", peak, Exact(1000.0)).from(ARTICLE),
                case(
                    "full",
                    "peak retries per 10 ms",
                    peak,
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
                    peak,
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
                    peak,
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
        },
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
                case("retry-no-key", "duplicated of 200", dup, OneRun(105.0)).from(ARTICLE),
                case("retry-no-key", "duplicated of 200", dup, Exact(100.0))
                    .from("closed form: 200 x (1 - 0.425 / 0.85)"),
                case("retry-same-key", "duplicated of 200", dup, Exact(0.0)).from(ARTICLE),
                case(
                    "record-after",
                    "duplicated of 200",
                    dup,
                    Mean {
                        value: 87.5,
                        sd: 8.888,
                        n: 4,
                    },
                )
                .from("the article's four record-after runs: 89, 75, 96, 90"),
            ],
        },
        Experiment {
            id: "atomic-dedupe",
            title: "The dedupe store that commits with the effect (atomic_dedupe.py)",
            model: shipped("atomic-dedupe"),
            file: "models/atomic-dedupe.toml",
            sets: &[],
            seeds: 100,
            quick: true,
            cases: vec![
                case("atomic", "duplicated of 200", dup, Exact(0.0)).from(ARTICLE),
                case("atomic", "phantom of 200", Metric("phantom"), Exact(0.0)).from(ARTICLE),
                case("effect-then-key", "duplicated of 200", dup, Exact(40.0))
                    .from("closed form: 200 x 0.2 first attempts crash after the effect"),
                case(
                    "key-then-effect",
                    "phantom of 200",
                    Metric("phantom"),
                    Exact(40.0),
                )
                .from("closed form: 200 x 0.2 first attempts crash after the key"),
            ],
        },
        Experiment {
            id: "mm1",
            title: "M/M/1, rho = 0.5 (lambda 500/s, exp(1ms) service)",
            model: || queue("500/s", 1, "exp(1ms)", "600s"),
            file: "(built in)",
            sets: &[],
            seeds: 8,
            quick: false,
            cases: vec![
                case(
                    "queue",
                    "mean wait in queue (ms)",
                    Metric("mean_wait_ms"),
                    Exact(1.0),
                )
                .from("M/M/1: Wq = rho / (mu - lambda)"),
                case(
                    "queue",
                    "mean queue length",
                    Metric("mean_queue_len"),
                    Exact(0.5),
                )
                .from("M/M/1: Lq = rho^2 / (1 - rho)"),
            ],
        },
        Experiment {
            id: "mm4",
            title: "M/M/4, rho = 0.75 (lambda 3000/s, exp(1ms) service)",
            model: || queue("3000/s", 4, "exp(1ms)", "400s"),
            file: "(built in)",
            sets: &[],
            seeds: 16,
            quick: false,
            cases: vec![
                case(
                    "queue",
                    "mean wait in queue (ms)",
                    Metric("mean_wait_ms"),
                    Exact(mm4_wq),
                )
                .from("M/M/c: Wq = C(c, a) / (c mu - lambda), Erlang C"),
            ],
        },
        Experiment {
            id: "md1",
            title: "M/D/1, rho = 0.6 (lambda 600/s, 1 ms service)",
            model: || queue("600/s", 1, "1ms", "600s"),
            file: "(built in)",
            sets: &[],
            seeds: 8,
            quick: false,
            cases: vec![
                case(
                    "queue",
                    "mean wait in queue (ms)",
                    Metric("mean_wait_ms"),
                    Exact(0.75),
                )
                .from("Pollaczek-Khinchine: Wq = rho / (2 mu (1 - rho))"),
            ],
        },
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
        },
        Experiment {
            id: "brooker-retries-0.2",
            title: "Brooker's retry_sim at 20% failures",
            model: shipped("brooker-retries"),
            file: "models/brooker-retries.toml",
            sets: &["server.fail=0.2"],
            seeds: 10,
            quick: true,
            cases: vec![
                case(
                    "three_retries",
                    "load (attempts per call)",
                    load,
                    OneRun(1.2497),
                )
                .from(BROOKER_RETRY),
                case(
                    "three_retries",
                    "load (attempts per call)",
                    load,
                    Exact(1.0 + 0.2 + 0.04 + 0.008),
                )
                .from("closed form: 1 + p + p^2 + p^3"),
                case(
                    "adaptive_10pct",
                    "load (attempts per call)",
                    load,
                    OneRun(1.1182),
                )
                .from(BROOKER_RETRY),
                case("adaptive_10pct", "success rate", success, OneRun(0.8923)).from(BROOKER_RETRY),
                case(
                    "breaker_10pct",
                    "load (attempts per call)",
                    load,
                    OneRun(1.0013),
                )
                .from(BROOKER_RETRY),
                case("breaker_10pct", "success rate", success, OneRun(0.7987)).from(BROOKER_RETRY),
            ],
        },
        Experiment {
            id: "brooker-retries-0.5",
            title: "Brooker's retry_sim at 50% failures",
            model: shipped("brooker-retries"),
            file: "models/brooker-retries.toml",
            sets: &["server.fail=0.5"],
            seeds: 10,
            quick: true,
            cases: vec![
                case(
                    "three_retries",
                    "load (attempts per call)",
                    load,
                    OneRun(1.8632),
                )
                .from(BROOKER_RETRY),
                case(
                    "three_retries",
                    "success rate",
                    success,
                    Exact(1.0 - 0.5f64.powi(4)),
                )
                .from("closed form: 1 - p^4"),
                Case {
                    known: Some(
                        "his token bucket's load barely varies between runs (our spread is +-0.00013), \
                         so his 1.1210 is 8 spreads above our 1.1199: 22 more retries per 20,000 \
                         calls, not yet explained (docs/validation.md, Brooker's retry_sim)",
                    ),
                    ..case(
                        "adaptive_10pct",
                        "load (attempts per call)",
                        load,
                        OneRun(1.1210),
                    )
                    .from(BROOKER_RETRY)
                },
                case("adaptive_10pct", "success rate", success, OneRun(0.5629)).from(BROOKER_RETRY),
                case(
                    "breaker_10pct",
                    "load (attempts per call)",
                    load,
                    OneRun(1.0000),
                )
                .from(BROOKER_RETRY),
                case("breaker_10pct", "success rate", success, OneRun(0.5007)).from(BROOKER_RETRY),
            ],
        },
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
        },
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
        },
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
        },
    ]
}

/// One case's numbers and verdict, as printed and as JSON.
#[derive(Serialize)]
struct Row {
    experiment: &'static str,
    variant: &'static str,
    what: &'static str,
    reference: String,
    source: &'static str,
    ours: String,
    /// The reference's own 95% noise as `[below, above]` its value.
    noise: String,
    seeds: u32,
    pass: bool,
    known: Option<&'static str>,
}

fn value_of(v: Value, s: &Summary) -> Result<f64, String> {
    let m = summary::metrics(s);
    let get = |k: &str| {
        m.get(k)
            .copied()
            .ok_or_else(|| format!("the run has no metric `{k}`"))
    };
    match v {
        Value::Metric(k) => get(k),
        Value::Ratio(a, b) => Ok(get(a)? / get(b)?),
    }
}

/// A number with 4 significant digits, no exponent for ordinary sizes.
fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.digits$}")
}

fn judge(c: &Case, ours: &[f64], paired: Option<&[f64]>) -> (String, String, String, bool) {
    let est = Estimate::of(ours);
    let half = if est.half_width.is_finite() {
        est.half_width
    } else {
        0.0
    };
    let (lo, hi) = (est.mean - half, est.mean + half);
    let ours_txt = format!("{} ± {}", num(est.mean), num(half));
    // Absolute slack for values that are exact up to floating-point rounding.
    let eps = 1e-9 * est.mean.abs().max(1.0);
    match c.reference {
        Reference::Exact(r) => (
            num(r),
            ours_txt,
            "exact".into(),
            lo - eps <= r && r <= hi + eps,
        ),
        Reference::Mean { value, sd, n } => {
            let rh = stats::t975(n as usize - 1) * sd / f64::from(n).sqrt();
            (
                format!("{} (mean of {n}, sd {})", num(value), num(sd)),
                ours_txt,
                format!("± {}", num(rh)),
                lo - rh - eps <= value && value <= hi + rh + eps,
            )
        }
        Reference::OneRun(r) => {
            let rh = 1.96 * stats::sample_sd(ours);
            (
                format!("{} (one run)", num(r)),
                ours_txt,
                format!("± {} (one run's spread)", num(rh)),
                lo - rh - eps <= r && r <= hi + rh + eps,
            )
        }
        Reference::Share { count, n } => {
            let p = f64::from(count) / f64::from(n);
            let (rlo, rhi) = stats::wilson(count, n);
            let k = ours.iter().filter(|x| **x > 0.5).count() as u32;
            let m = ours.len() as u32;
            let (olo, ohi) = stats::wilson(k, m);
            (
                format!("{count}/{n}"),
                format!("{k}/{m} ({:.0}-{:.0}%)", olo * 100.0, ohi * 100.0),
                format!("{:.0}-{:.0}%", rlo * 100.0, rhi * 100.0),
                olo - (p - rlo) - eps <= p && p <= ohi + (rhi - p) + eps,
            )
        }
        Reference::Order { other, below } => {
            let theirs = paired.expect("an Order case has its other variant's values");
            let diff: Vec<f64> = ours.iter().zip(theirs).map(|(a, b)| a - b).collect();
            let d = Estimate::of(&diff);
            let ok = if below {
                d.mean + d.half_width < 0.0
            } else {
                d.mean - d.half_width > 0.0
            };
            let word = if below { "below" } else { "above" };
            (
                format!("{word} {other}"),
                format!(
                    "{} vs {} (diff {} ± {})",
                    num(est.mean),
                    num(stats::mean(theirs)),
                    num(d.mean),
                    num(d.half_width)
                ),
                "a ranking".into(),
                ok,
            )
        }
    }
}

/// Runs the experiments (`quick`: only the cheap ones) and returns one row per case.
fn run_suite(a: &ValidateArgs) -> Result<Vec<Row>, CliError> {
    let mut rows = Vec::new();
    let experiments: Vec<Experiment> = suite()
        .into_iter()
        .filter(|e| !a.quick || e.quick)
        .filter(|e| a.only.as_deref().is_none_or(|o| e.id == o))
        .collect();
    if experiments.is_empty() {
        let ids: Vec<&str> = suite().iter().map(|e| e.id).collect();
        return Err(CliError::Input(format!(
            "--only: no experiment {:?}; the experiments are: {}",
            a.only.as_deref().unwrap_or(""),
            ids.join(", ")
        )));
    }
    for e in experiments {
        let sets = e
            .sets
            .iter()
            .map(|s| load::Override::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| CliError::Input(format!("{}: {err}", e.id)))?;
        let sc = load::load(e.file, &(e.model)(), &sets)
            .map_err(|err| CliError::Input(format!("{}: {err}", e.id)))?;
        let models: Vec<&Model> = sc.variants.iter().collect();
        let seeds = stats::replication_seeds(1, e.seeds);
        let runs: Vec<(&Model, u64)> = models
            .iter()
            .flat_map(|m| seeds.iter().map(move |s| (*m, *s)))
            .collect();
        let results = run_all(&runs, a.jobs)?;
        let values = |variant: &str, v: Value| -> Result<Vec<f64>, CliError> {
            let i = models
                .iter()
                .position(|m| m.name == variant)
                .or_else(|| (models.len() == 1).then_some(0))
                .ok_or_else(|| CliError::Input(format!("{}: no variant {variant}", e.id)))?;
            results[i * seeds.len()..(i + 1) * seeds.len()]
                .iter()
                .map(|r| value_of(v, &r.summary))
                .collect::<Result<_, _>>()
                .map_err(|err| CliError::Input(format!("{}: {err}", e.id)))
        };
        for c in &e.cases {
            let ours = values(c.variant, c.value)?;
            let other = match c.reference {
                Reference::Order { other, .. } => Some(values(other, c.value)?),
                _ => None,
            };
            let (reference, ours, noise, pass) = judge(c, &ours, other.as_deref());
            rows.push(Row {
                experiment: e.title,
                variant: c.variant,
                what: c.what,
                reference,
                source: c.source,
                ours,
                noise,
                seeds: e.seeds,
                pass,
                known: c.known,
            });
        }
    }
    Ok(rows)
}

fn verdict(r: &Row) -> &'static str {
    match (r.pass, r.known.is_some()) {
        (true, false) => "matches",
        (true, true) => "matches (was a known finding)",
        (false, true) => "differs (known finding)",
        (false, false) => "DIFFERS",
    }
}

/// The rows as a GitHub-flavoured markdown table (docs/validation.md's summary).
fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| experiment | variant | metric | reference | ours (mean ± 95% CI) | reference noise | seeds | verdict | source |\n\
         |---|---|---|---:|---:|---:|---:|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.experiment,
            r.variant,
            r.what,
            r.reference,
            r.ours,
            r.noise,
            r.seeds,
            verdict(r),
            r.source
        ));
    }
    out
}

fn text(rows: &[Row]) -> String {
    let mut out = String::new();
    let mut last = "";
    for r in rows {
        if r.experiment != last {
            out.push_str(&format!("\n{}\n", r.experiment));
            last = r.experiment;
        }
        out.push_str(&format!(
            "  {:<9} {:<18} {:<34} ref {:<28} ours {:<34} noise {:<26} [{}]\n",
            verdict(r).split(' ').next().unwrap_or(""),
            r.variant,
            r.what,
            r.reference,
            r.ours,
            r.noise,
            r.source
        ));
    }
    out
}

/// The block of docs/validation.md the suite owns.
const BEGIN: &str = "<!-- validate:begin (retrystorm validate --docs docs/validation.md) -->";
const END: &str = "<!-- validate:end -->";

pub fn validate(a: ValidateArgs) -> Result<(), CliError> {
    let mut outs = Vec::new();
    if let Some(p) = &a.json {
        outs.push(output::Out::new("--json", p));
    }
    if let Some(p) = &a.md {
        outs.push(output::Out::new("--md", p));
    }
    if let Some(p) = &a.docs {
        outs.push(output::Out::new("--docs", p));
    }
    output::check(&outs, &[])?;
    // The docs file must already hold the block, so a typo'd path fails before the runs.
    let docs = match &a.docs {
        Some(p) => {
            let t = std::fs::read_to_string(p)
                .map_err(|e| CliError::Input(format!("--docs {}: {e}", p.display())))?;
            let (Some(b), Some(e)) = (t.find(BEGIN), t.find(END)) else {
                return Err(CliError::Input(format!(
                    "--docs {}: no block to replace: it needs the lines {BEGIN} and {END}",
                    p.display()
                )));
            };
            Some((p, t, b, e))
        }
        None => None,
    };
    let rows = run_suite(&a)?;
    let table = markdown(&rows);
    if let Some(p) = &a.json {
        let mut j = serde_json::to_string_pretty(&rows).expect("JSON");
        j.push('\n');
        output::write(output::Out::new("--json", p), &j)?;
    }
    if let Some(p) = &a.md {
        output::write(output::Out::new("--md", p), &table)?;
    }
    if let Some((p, t, b, e)) = docs {
        let new = format!("{}{BEGIN}\n{table}{}", &t[..b], &t[e..]);
        output::write(output::Out::new("--docs", p), &new)?;
    }
    if a.json.as_deref().is_none_or(|p| !is_stdout(p)) {
        output::print(&text(&rows))?;
    }
    let differ: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.pass && r.known.is_none())
        .collect();
    let n = rows.len() as u64;
    if differ.is_empty() {
        if !crate::progress::quiet() {
            eprintln!(
                "{} agree with their reference",
                plural(
                    n - rows.iter().filter(|r| !r.pass).count() as u64,
                    "comparison"
                )
            );
        }
        Ok(())
    } else {
        Err(CliError::Failed(format!(
            "{} of {} differ from their reference: {}",
            differ.len(),
            plural(n, "comparison"),
            differ
                .iter()
                .map(|r| format!("{} / {} / {}", r.experiment, r.variant, r.what))
                .collect::<Vec<_>>()
                .join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_c_matches_the_textbook() {
        // M/M/2 with a = 1: C = 1/3 (Kleinrock vol. 1, or by hand: (a^2/2!)/(1-rho) over the sum).
        assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
        assert!((erlang_c(1, 0.5) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_reference_inside_the_widened_interval_passes_and_one_outside_does_not() {
        let c = |r| case("v", "m", Value::Metric("x"), r);
        let ours = [9.0, 10.0, 11.0, 10.0];
        assert!(judge(&c(Reference::Exact(10.0)), &ours, None).3);
        assert!(!judge(&c(Reference::Exact(12.0)), &ours, None).3);
        // One run at 12: the spread of a run (1.96 x 0.816) widens the interval enough.
        assert!(judge(&c(Reference::OneRun(12.0)), &ours, None).3);
        assert!(!judge(&c(Reference::OneRun(14.0)), &ours, None).3);
        let shares = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert!(judge(&c(Reference::Share { count: 27, n: 100 }), &shares, None).3);
        assert!(!judge(&c(Reference::Share { count: 100, n: 100 }), &shares, None).3);
        let other = [20.0, 21.0, 19.0, 20.0];
        let below = c(Reference::Order {
            other: "o",
            below: true,
        });
        assert!(judge(&below, &ours, Some(&other)).3);
        assert!(!judge(&below, &other, Some(&ours)).3);
    }

    #[test]
    fn every_case_names_a_variant_its_model_has() {
        for e in suite() {
            let sc = load::load(e.file, &(e.model)(), &[]).unwrap();
            for c in &e.cases {
                let names: Vec<&str> = sc.variants.iter().map(|m| m.name.as_str()).collect();
                assert!(
                    names.contains(&c.variant) || names.len() == 1,
                    "{}: {} not in {names:?}",
                    e.id,
                    c.variant
                );
                assert!(!c.source.is_empty(), "{}: {} cites nothing", e.id, c.what);
            }
        }
    }
}
