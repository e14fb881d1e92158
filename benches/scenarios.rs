//! Whole-scenario benchmarks, each beside the floor it is compared with.
//!
//! Groups:
//! - `path`: the one request path on its own models: `models/stack.toml` (gateway, service,
//!   database; variant `retry at every layer`) as shipped, and with 10^6 intents.
//! - `herd`: `models/thundering-herd.toml`, variant `full` (the server always fails, 6 attempts
//!   per client, full-jitter exponential backoff), at 10^4, 10^5 and 10^6 clients. Throughput is
//!   counted in attempts (`6 * clients`). Three rows per size:
//!   - `retrystorm`: `retrystorm::run_model`, the engine with everything it does (3 events per
//!     attempt: the send; zero-latency arrival and reply are taken inline; per-bucket series,
//!     completion histogram);
//!   - `floor`: a hand-written hold loop over the same `EventQueue` that computes the same
//!     answer with one event per attempt: pop `(client, attempt)`, count the arrival in its
//!     10 ms bucket, draw the backoff from the same keyed stream with the same `Backoff`, push
//!     the next attempt. It is checked to reproduce the engine's retries, peak and event count
//!     exactly;
//!   - `floor_3ev`: the same with three queue events per attempt (send, arrive, reply), what the
//!     engine paid before it took zero-latency hops inline.
//!
//!   `retrystorm / floor` on the same size, in the same run, is what the model costs above the
//!   limit of an event loop on this queue.
//! - `three_clients`: `models/three-clients.toml`, variant `retry-same-key`, scaled to 10^6
//!   intents (closed workload, 10 workers, request loss, timeouts, dedupe store). Throughput in
//!   events (`summary.events`).
//! - `overload`: `models/overload-bench.toml`, open Poisson arrivals 25% above capacity with
//!   timeouts and retries, about 1.3 * 10^7 events. Throughput in events (`summary.events`).
//!
//! - `replicas`: `models/one-bad-replica.toml` (five replicas, outlier ejection, previous_hosts)
//!   and the same at 64 replicas behind a least-request balancer. Throughput in events.
//! - `tune`: `retrystorm::tune::search` over 50 candidates of the 1000-client herd, with every
//!   run it asks for (one thread).
//!
//! Models are loaded once, outside the timed loop: one iteration is one `run_model` (or one
//! floor loop), from an empty queue to the end of the run. End-to-end CLI timings (process start,
//! parsing, report) are in `benches/peers/run.sh`.
//!
//! Run: `cargo bench --bench scenarios` (about 3 minutes on 2 cores; results, machine and the
//! medians tables in `docs/performance-log.md`; `benches/peers/criterion_table.py` prints the table
//! from `target/criterion`). One group: `cargo bench --bench scenarios -- herd`.

use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group,
    criterion_main, measurement::WallTime,
};
use retrystorm::backoff::Backoff;
use retrystorm::load::{Override, load};
use retrystorm::model::Model;
use retrystorm::queue::EventQueue;
use retrystorm::rng::{Purpose, Stream};
use retrystorm::summary::Ended;
use retrystorm::time::{Duration, Time};
use std::hint::black_box;

/// Loads `path` (relative to the repository), picks `variant` (or the base) and applies `sets`.
fn model(path: &str, variant: Option<&str>, sets: &[String]) -> Model {
    let text = std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let sets: Vec<Override> = sets
        .iter()
        .map(|s| Override::parse(s).expect("a valid override"))
        .collect();
    let scenario = load(path, &text, &sets).unwrap_or_else(|e| panic!("{path}: {e}"));
    match variant {
        Some(v) => scenario
            .variants
            .into_iter()
            .find(|m| m.name == v)
            .unwrap_or_else(|| panic!("{path}: no variant {v:?}")),
        None => scenario.base,
    }
}

/// What the floor computes: enough to check it is the same scenario as the engine's.
#[derive(Debug, PartialEq, Eq)]
struct FloorResult {
    attempts: u64,
    retries: u64,
    peak_retries: u64,
    events: u64,
}

/// A floor event: `client << 16 | attempt << 2 | stage` in one `u64`.
const STAGE_SEND: u64 = 0;
const STAGE_ARRIVE: u64 = 1;
const STAGE_REPLY: u64 = 2;

/// The herd parameters the floor needs, read from the model so both run the same scenario.
struct Herd {
    clients: u64,
    attempts: u32,
    seed: u64,
    bucket: u64,
    backoff: Backoff,
}

impl Herd {
    fn of(m: &Model) -> Herd {
        Herd {
            clients: m.workload.clients,
            attempts: m.retry.max_attempts,
            seed: m.seed,
            bucket: m.bucket.0,
            backoff: m.retry.backoff(),
        }
    }

    /// The minimal event loop for the herd. `three_events`: send, arrive and reply as separate
    /// queue events (as the engine does) instead of one event per attempt. Buffers are allocated
    /// per run, like the engine's.
    fn floor(&self, three_events: bool) -> FloorResult {
        let mut q: EventQueue<u64> = EventQueue::new();
        let mut retries_per_bucket: Vec<u32> = Vec::new();
        let (mut attempts, mut retries, mut events) = (0u64, 0u64, 0u64);
        let first_stage = if three_events {
            STAGE_SEND
        } else {
            STAGE_ARRIVE
        };
        for client in 0..self.clients {
            q.push(Time::ZERO, client << 16 | first_stage);
        }
        while let Some((now, ev)) = q.pop() {
            events += 1;
            let (client, attempt, stage) = (ev >> 16, ((ev >> 2) & 0x3fff) as u32, ev & 3);
            match stage {
                STAGE_SEND => q.push(now, ev | STAGE_ARRIVE),
                STAGE_ARRIVE => {
                    attempts += 1;
                    if attempt > 0 {
                        retries += 1;
                        let i = (now.0 / self.bucket) as usize;
                        if retries_per_bucket.len() <= i {
                            retries_per_bucket.resize(i + 1, 0);
                        }
                        retries_per_bucket[i] += 1;
                    }
                    if three_events {
                        q.push(now, (ev & !3) | STAGE_REPLY);
                    } else {
                        self.retry(&mut q, now, client, attempt, STAGE_ARRIVE);
                    }
                }
                _ => self.retry(&mut q, now, client, attempt, STAGE_SEND),
            }
        }
        FloorResult {
            attempts,
            retries,
            peak_retries: retries_per_bucket.iter().copied().max().unwrap_or(0).into(),
            events,
        }
    }

    /// Attempt `attempt` failed: schedule the next one after the same backoff draw as the engine
    /// (`Stream(seed, client, Backoff, retries made)`), unless the attempts are used up.
    #[inline(always)]
    fn retry(&self, q: &mut EventQueue<u64>, now: Time, client: u64, attempt: u32, stage: u64) {
        if attempt + 1 >= self.attempts {
            return;
        }
        let mut s = Stream::new(self.seed, client, Purpose::Backoff, u64::from(attempt));
        let delay: Duration = self.backoff.delay(attempt, None, &mut s);
        q.push(
            now.after(delay),
            client << 16 | u64::from(attempt + 1) << 2 | stage,
        );
    }
}

fn config_group(group: &mut BenchmarkGroup<'_, WallTime>, long: bool) {
    // One iteration is a whole run (milliseconds to seconds): flat sampling, 10 samples.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_secs(1));
    group.measurement_time(std::time::Duration::from_secs(if long { 20 } else { 3 }));
}

fn herd(c: &mut Criterion) {
    let mut group = c.benchmark_group("herd");
    for clients in [10_000u64, 100_000, 1_000_000] {
        let m = model(
            "models/thundering-herd.toml",
            Some("full"),
            &[format!("workload.clients={clients}")],
        );
        let h = Herd::of(&m);
        assert_eq!(h.attempts, 6, "the herd bench expects 6 attempts");
        config_group(&mut group, clients >= 1_000_000);
        group.throughput(Throughput::Elements(clients * u64::from(h.attempts)));

        // The floor must be the same scenario: same attempts, retries and peak as the engine.
        let r = retrystorm::run_model(&m, m.seed, &mut |_| {});
        for three in [false, true] {
            let f = h.floor(three);
            assert_eq!(
                (f.attempts, f.retries, f.peak_retries),
                (
                    r.summary.attempts,
                    r.summary.retries,
                    r.summary.peak_retries
                ),
                "the floor (three events: {three}) does not reproduce the engine at {clients} \
                 clients"
            );
            if !three {
                // The engine takes zero-latency hops inline: one queue event per attempt, as
                // the floor (`floor_3ev` shows what three would cost).
                assert_eq!(f.events, r.summary.events, "floor: not the engine's events");
            }
        }

        group.bench_with_input(BenchmarkId::new("retrystorm", clients), &m, |b, m| {
            b.iter(|| black_box(retrystorm::run_model(m, m.seed, &mut |_| {}).summary.events));
        });
        group.bench_with_input(BenchmarkId::new("floor", clients), &h, |b, h| {
            b.iter(|| black_box(h.floor(false)));
        });
        group.bench_with_input(BenchmarkId::new("floor_3ev", clients), &h, |b, h| {
            b.iter(|| black_box(h.floor(true)));
        });
    }
    group.finish();
}

/// One whole-model bench counted in events; asserts the run ends as expected.
fn events_bench(c: &mut Criterion, group: &str, name: &str, m: &Model, ended: Ended) {
    let r = retrystorm::run_model(m, m.seed, &mut |_| {});
    assert_eq!(r.summary.ended, ended, "{group}/{name}: {:?}", r.summary);
    let mut g = c.benchmark_group(group);
    config_group(&mut g, true);
    g.throughput(Throughput::Elements(r.summary.events));
    g.bench_with_input(BenchmarkId::new(name, r.summary.events), m, |b, m| {
        b.iter(|| black_box(retrystorm::run_model(m, m.seed, &mut |_| {}).summary.events));
    });
    g.finish();
}

fn three_clients(c: &mut Criterion) {
    // 10^6 intents take about 50 min of simulated time; the default 1 h horizon would be close.
    let m = model(
        "models/three-clients.toml",
        Some("retry-same-key"),
        &["workload.intents=1000000".into(), "horizon=100h".into()],
    );
    events_bench(c, "three_clients", "retry-same-key", &m, Ended::Settled);
}

fn overload(c: &mut Criterion) {
    let m = model("models/overload-bench.toml", None, &[]);
    let r = retrystorm::run_model(&m, m.seed, &mut |_| {});
    assert!(
        r.summary.events >= 10_000_000,
        "the overload bench needs at least 10^7 events, got {}",
        r.summary.events
    );
    assert!(r.summary.timeouts > 0 && r.summary.retries > 0 && r.summary.rejected > 0);
    events_bench(c, "overload", "open-40s", &m, Ended::Horizon);
}

/// The one request path on its own models: the gateway/service/database stack as shipped, and
/// the same three tiers with 10^6 intents.
fn path(c: &mut Criterion) {
    let m = model("models/stack.toml", Some("retry at every layer"), &[]);
    events_bench(c, "path", "stack", &m, Ended::Settled);
    let m = model(
        "models/stack.toml",
        Some("retry at every layer"),
        &["workload.intents=1000000".into(), "horizon=1000s".into()],
    );
    events_bench(c, "path", "three-tiers-1e6", &m, Ended::Settled);
}

/// Replicas: `models/one-bad-replica.toml` as shipped (variant `other-host+ejection`:
/// five replicas, a shared round-robin balancer, Envoy's outlier detection, previous_hosts), and
/// 64 replicas behind a least-request balancer at the same load per replica.
fn replicas(c: &mut Criterion) {
    let m = model(
        "models/one-bad-replica.toml",
        Some("other-host+ejection"),
        &[],
    );
    events_bench(c, "replicas", "one-bad-replica", &m, Ended::Horizon);
    let m = model(
        "models/one-bad-replica.toml",
        Some("any-host"),
        &[
            "server.replicas=64".into(),
            "server.balancer=\"least-request\"".into(),
            "workload.rate=\"5120/s\"".into(),
        ],
    );
    events_bench(c, "replicas", "least-request-64", &m, Ended::Horizon);
}

/// `tune` over 50 candidates of the 1000-client herd (variant `full`: retry.base 10..100 ms x
/// max_attempts 2..6), KN on peak_retries with 5 first-stage seeds, one thread: the search's
/// decisions plus every run it asks for.
fn tune(c: &mut Criterion) {
    use retrystorm::tune::{Indifference, Objective, Settings, search};
    let models: Vec<Model> = (1..=10)
        .flat_map(|b| (2..=6).map(move |a| (b, a)))
        .map(|(b, a)| {
            model(
                "models/thundering-herd.toml",
                Some("full"),
                &[
                    format!("retry.base={}ms", 10 * b),
                    format!("retry.max_attempts={a}"),
                ],
            )
        })
        .collect();
    let objectives = [Objective {
        metric: "peak_retries".into(),
        maximize: false,
    }];
    let settings = Settings {
        n0: 5,
        alpha: 0.05,
        indifference: Indifference::Relative(0.05),
        budget: 1000,
        halving: None,
    };
    let mut g = c.benchmark_group("tune");
    config_group(&mut g, true);
    g.bench_function("herd-1000x50", |b| {
        b.iter(|| {
            let mut batch = |asked: &[(usize, usize)]| -> Vec<Vec<f64>> {
                asked
                    .iter()
                    .map(|(i, r)| {
                        let m = &models[*i];
                        let s = retrystorm::run_model(m, m.seed + *r as u64, &mut |_| {}).summary;
                        vec![s.peak_retries as f64]
                    })
                    .collect()
            };
            black_box(search(models.len(), &objectives, &[], &settings, &mut batch).runs)
        });
    });
    g.finish();
}

criterion_group!(benches, herd, three_clients, overload, path, replicas, tune);
criterion_main!(benches);
