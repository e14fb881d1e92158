//! The scenario a run simulates: workload, retry policy, network, server and idempotency.
//!
//! Every field has a default, so a model file states only what it changes. Field names are a
//! contract (users' model files and `--set` flags spell them): add, never rename. The reference
//! with units, defaults and sources is `docs/model.md`. Loading from TOML (with file/line errors)
//! lives in [`crate::load`]; this module is the typed form and its semantic checks.

use crate::backoff::{Backoff, BackoffKind, CapApplies, Jitter, Spread};
use crate::dist::Dist;
pub use crate::invalid::Invalid;
use crate::policy::breaker::BreakerConfig;
use crate::policy::budget::BudgetConfig;
use crate::policy::hedge::HedgeConfig;
use crate::policy::limiter::LimiterConfig;
use crate::policy::ratelimit::{RateLimitConfig, RetryAfter};
use crate::policy::recovery::RecoveryConfig;
use crate::policy::{Class, Scope};
use crate::shedding::SheddingConfig;
use crate::time::{Duration, Time};
pub use crate::time::{Rate, Window};

pub mod limits;
pub mod load;
pub mod preset;
pub mod replay;
pub mod schema;
pub mod table;
mod validate;
pub use limits::{BYTES_PER_INTENT, MAX_INTENTS, MAX_LAYERS, MAX_POLICY_INSTANCES};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One scenario, fully resolved (a variant is a `Model` too).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Model {
    /// Shown in tables and charts.
    pub name: String,
    pub description: String,
    /// The run's seed when the command line gives none.
    pub seed: u64,
    /// Simulated time after which the run stops, settled or not.
    pub horizon: Duration,
    /// Width of a time-series bucket (arrivals per bucket, the "peak per 10 ms").
    pub bucket: Duration,
    /// Width of the sliding window of `peak_arrivals_window`, `peak_retries_window` and each
    /// `attempt_peaks[].peak_window`: the most arrivals in any half-open `[t, t + w)`, exact over
    /// event times. None = the bucket width.
    pub peak_window: Option<Duration>,
    /// Stop after this many events (a guard against runs that cannot end).
    pub max_events: u64,
    pub workload: Workload,
    pub retry: Retry,
    pub network: Network,
    pub server: Server,
    pub idempotency: Idempotency,
    /// A layered request path (`[[layer]]` tables, top first): when non-empty the run uses the
    /// layered engine ([`crate::layered`]), whose bottom is `server.fail` and `server.service`.
    #[serde(rename = "layer", skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<Layer>,
    /// The tiers between the clients and `[server]` (`[[tier]]` tables, top first): each is a
    /// server with a retrying client of the next tier in it (`docs/model.md`, "The request path").
    #[serde(rename = "tier", skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<TierConfig>,
    /// A retry budget (`docs/policies.md`): gRPC, AWS, Finagle or SRE adaptive throttling.
    pub budget: BudgetConfig,
    /// A resilience4j circuit breaker in front of every attempt.
    pub breaker: BreakerConfig,
    /// gRPC hedging instead of retrying.
    pub hedge: HedgeConfig,
    /// A client-side limiter on the clients' own sends (`docs/policies.md`, "Client-side
    /// limiters").
    pub limiter: LimiterConfig,
    /// How recovery after a trigger (spike, outage) is measured.
    pub recovery: RecoveryConfig,
    /// `[engine]`: which engine runs the model (`docs/model.md`, "Engine").
    #[serde(skip_serializing_if = "EngineConfig::is_auto")]
    pub engine: EngineConfig,
}

/// The `[engine]` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// `auto`: the direct path when the model's clients are independent, else the event loop;
    /// `event-loop`: always the event loop (same results, slower).
    pub path: EnginePathChoice,
}

impl EngineConfig {
    pub fn is_auto(&self) -> bool {
        self.path == EnginePathChoice::Auto
    }
}

/// `engine.path`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EnginePathChoice {
    #[default]
    Auto,
    EventLoop,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            name: "model".into(),
            description: String::new(),
            seed: 1,
            horizon: Duration::from_secs(3600),
            bucket: Duration::from_millis(10),
            peak_window: None,
            max_events: 2_000_000_000,
            workload: Workload::default(),
            retry: Retry::default(),
            network: Network::default(),
            server: Server::default(),
            idempotency: Idempotency::default(),
            layers: Vec::new(),
            tiers: Vec::new(),
            budget: BudgetConfig::default(),
            breaker: BreakerConfig::default(),
            hedge: HedgeConfig::default(),
            limiter: LimiterConfig::default(),
            recovery: RecoveryConfig::default(),
            engine: EngineConfig::default(),
        }
    }
}

/// Where intents come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// `clients` intents, all at `start` or spread uniformly over `[start, start + spread)`.
    Burst,
    /// Poisson arrivals at `rate`, changed over time by `schedule`.
    Open,
    /// `workers` loops that each run intents back to back (with `think` between) until
    /// `intents` have been started in all.
    Closed,
    /// `clients` clients each update one shared record once with optimistic concurrency (read
    /// the version, write if unchanged), retrying conflicts: the AWS Architecture Blog's
    /// "Exponential Backoff And Jitter" model, run by the one engine (`sim/path/store.rs` keeps the
    /// versioned record).
    Contention,
    /// Production traffic replay: one intent per row of the `trace` file (CSV or JSON Lines of
    /// timestamps, [`crate::replay`]), `speed` times as fast.
    Trace,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// burst: number of clients (one intent each).
    pub clients: u64,
    /// burst: when the burst starts.
    pub start: Duration,
    /// burst: width of the window the starts are spread over (0 = all at `start`).
    pub spread: Duration,
    /// open: arrival rate before the first schedule point.
    pub rate: Rate,
    /// open: rate changes over time (steps, ramps, spikes).
    pub schedule: Vec<RatePoint>,
    /// closed: concurrent workers.
    pub workers: u64,
    /// closed: total intents over all workers; open: optional cap on arrivals (0 = none).
    pub intents: u64,
    /// closed: pause between one intent's end and the next one's start.
    pub think: Dist,
    /// open: client processes the arrivals come from (round-robin by arrival number); the unit
    /// of `scope = "client"` budgets, breakers and rate limits. Burst: each client is one process;
    /// closed: each worker; trace: each `class`, or `processes` round-robin without classes.
    pub processes: u64,
    /// trace: the file of arrivals, relative to the model file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// trace: replay speed; 2.0 replays the trace in half the time (twice the load).
    #[serde(skip_serializing_if = "is_one")]
    pub speed: f64,
    /// trace: the parsed arrivals, filled in by the loader from `trace` (the core reads no file).
    #[serde(skip)]
    #[schemars(skip)]
    pub replay: std::sync::Arc<crate::replay::Trace>,
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

impl Workload {
    /// The open workload's arrival rate at `t` (requests per second): `rate` before the first
    /// schedule point, then each point's rate (moving linearly to it when it has `ramp`).
    pub fn rate_at(&self, t: Time) -> f64 {
        let mut rate = self.rate.0;
        let mut prev = (Time::ZERO, self.rate.0);
        for p in &self.schedule {
            let at = Time::ZERO + p.at;
            if t < at {
                if p.ramp && at > prev.0 {
                    let f = (t.0 - prev.0.0) as f64 / (at.0 - prev.0.0) as f64;
                    return prev.1 + (p.rate.0 - prev.1) * f;
                }
                return rate;
            }
            rate = p.rate.0;
            prev = (at, p.rate.0);
        }
        rate
    }
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            kind: WorkloadKind::Burst,
            clients: 1000,
            start: Duration::ZERO,
            spread: Duration::ZERO,
            rate: Rate(100.0),
            schedule: Vec::new(),
            workers: 10,
            intents: 0,
            think: Dist::default(),
            processes: 1,
            trace: None,
            speed: 1.0,
            replay: Default::default(),
        }
    }
}

/// A point of the open workload's rate schedule: from `at` on the rate is `rate`; with
/// `ramp = true` the rate moves linearly from the previous point's rate to this one.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RatePoint {
    pub at: Duration,
    pub rate: Rate,
    #[serde(default)]
    pub ramp: bool,
}

/// Which failures a client retries (issue: retryable classes).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Retry {
    /// Attempts per intent, the first try included (1 = never retry).
    pub max_attempts: u32,
    /// Per-attempt timeout; none = wait for the reply however long it takes.
    pub timeout: Option<Duration>,
    /// Total time an intent may take across attempts; no retry starts after it.
    pub deadline: Option<Duration>,
    pub backoff: BackoffKind,
    pub jitter: Jitter,
    pub base: Duration,
    /// The base after a throttling error (429) instead of `base`; none = `base`. The AWS SDKs
    /// back off from a larger base when throttled (smithy `THROTTLING_RETRY_DELAY_BASE`).
    pub throttling_base: Option<Duration>,
    pub cap: Duration,
    pub multiplier: f64,
    /// Exponent of the first retry's window: 0 as in the article, 1 as in the AWS blog's simulator.
    pub first_exponent: u32,
    /// `jitter = "proportional"`: the delay is `d × U[1 − r, 1 + r]`, `r` in 0..=1
    /// (cenkalti/backoff's `RandomizationFactor`, gRPC's `jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub randomization_factor: Option<f64>,
    /// `jitter = "additive"`: the delay is `d + U[0, f × d)`, `f` >= 0 (Kubernetes
    /// `wait.Backoff.Jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_factor: Option<f64>,
    /// `jitter = "absolute"`: the delay is `d + U[0, J)` (tenacity's `jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_max: Option<Duration>,
    /// For `proportional`, `additive` and `absolute`: whether `cap` bounds the window
    /// (`before-jitter`, the default) or the jittered delay (`after-jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap_applies: Option<CapApplies>,
    /// Probability that the client process restarts before a retry (see `idempotency.persist_key`).
    pub restart_probability: f64,
    /// Answer classes the client retries (`docs/policies.md`); "4xx" and "overloaded" never.
    pub retry_on: Vec<Class>,
    /// Whether a server's `Retry-After` replaces the backoff delay.
    pub retry_after: RetryAfterPolicy,
    /// The longest `Retry-After` honoured (longer ones are cut to it); none = `retry.cap`.
    pub retry_after_cap: Option<Duration>,
    /// Cancellation propagation (Google SRE book, "Addressing Cascading Failures"): when this
    /// caller stops waiting for an attempt, the tier below drops it if it is still queued and
    /// stops the retries it makes below for it. Off: the work goes on, orphaned.
    pub cancel: bool,
    /// The `retry.mode` this policy was filled in from (the loader expands it and keeps the
    /// name, so that `explain` can say what it set); none = no mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub mode: Option<String>,
}

/// What a client does with `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RetryAfterPolicy {
    /// Wait what the server asked (up to `retry.retry_after_cap`) instead of the backoff.
    #[serde(alias = "honor")]
    Honour,
    /// Back off as if the header were absent.
    Ignore,
    /// The AWS SDKs' `x-amz-retry-after` rule: wait the hint, but at least the backoff delay `t`
    /// and at most `t + 5 s` (botocore `ExponentialBackoff`, 2026; smithy `StandardRetryStrategy`).
    Aws,
    /// Envoy's `rate_limited_retry_back_off` with a `Retry-After` (`SECONDS`) reset header
    /// (envoy `source/common/router/retry_state_impl.cc`, `parseResetInterval` and
    /// `shouldRetryHeaders`; `source/common/common/backoff_strategy.cc`,
    /// `JitteredLowerBoundBackOffStrategy`): a hint `i` of more than 1 ms and at most
    /// `retry.retry_after_cap` (`max_interval`) waits `i + random() % (i / 2)` whole
    /// milliseconds; a longer hint is discarded (not cut) and the exponential backoff applies.
    Envoy,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            max_attempts: 3,
            timeout: None,
            deadline: None,
            backoff: BackoffKind::Exponential,
            jitter: Jitter::Full,
            base: Duration::from_millis(100),
            throttling_base: None,
            cap: Duration::from_secs(20),
            multiplier: 2.0,
            first_exponent: 0,
            randomization_factor: None,
            jitter_factor: None,
            jitter_max: None,
            cap_applies: None,
            restart_probability: 0.0,
            retry_on: Class::DEFAULT_RETRYABLE.to_vec(),
            retry_after: RetryAfterPolicy::Honour,
            retry_after_cap: None,
            cancel: false,
            mode: None,
        }
    }
}

impl Retry {
    pub fn backoff(&self) -> Backoff {
        Backoff {
            kind: self.backoff,
            jitter: self.jitter,
            base: self.base,
            cap: self.cap,
            multiplier: self.multiplier,
            first_exponent: self.first_exponent,
            spread: Spread {
                randomization_factor: self.randomization_factor.unwrap_or(0.0),
                jitter_factor: self.jitter_factor.unwrap_or(0.0),
                jitter_max: self.jitter_max.unwrap_or(Duration::ZERO),
                cap_applies: self.cap_applies.unwrap_or_default(),
            },
        }
    }
}

/// How a client learns that its request was lost before reaching the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LossNotice {
    /// At once, as a connection error (the article's `throw` before `fetch`).
    Error,
    /// Only when its per-attempt timeout fires.
    Timeout,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Network {
    /// One-way latency, both directions, unless a direction is given on its own.
    pub latency: Dist,
    pub request_latency: Option<Dist>,
    pub response_latency: Option<Dist>,
    /// Probability a request never reaches the server.
    pub request_loss: f64,
    pub loss_notice: LossNotice,
    /// Probability a reply never reaches the client (the effect ran).
    pub response_loss: f64,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            latency: Dist::default(),
            request_latency: None,
            response_latency: None,
            request_loss: 0.0,
            loss_notice: LossNotice::Timeout,
            response_loss: 0.0,
        }
    }
}

impl Network {
    pub fn request_latency(&self) -> Dist {
        self.request_latency.unwrap_or(self.latency)
    }
    pub fn response_latency(&self) -> Dist {
        self.response_latency.unwrap_or(self.latency)
    }
}

/// When the server fails an attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FailMode {
    Never,
    /// Every attempt fails at once, without service (the article's pure-scheduling model).
    Always,
    /// Each served attempt fails with this probability (after its service time).
    Probability(f64),
}

impl Serialize for FailMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FailMode::Never => s.serialize_str("never"),
            FailMode::Always => s.serialize_str("always"),
            FailMode::Probability(p) => s.serialize_f64(*p),
        }
    }
}

impl<'de> Deserialize<'de> for FailMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = FailMode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"never\", \"always\" or a probability in [0, 1]")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<FailMode, E> {
                match s {
                    "never" => Ok(FailMode::Never),
                    "always" => Ok(FailMode::Always),
                    _ => Err(E::custom(format!(
                        "expected \"never\", \"always\" or a probability in [0, 1], got {s:?}"
                    ))),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, p: f64) -> Result<FailMode, E> {
                if (0.0..=1.0).contains(&p) {
                    Ok(FailMode::Probability(p))
                } else {
                    Err(E::custom(format!(
                        "a failure probability must be in [0, 1], got {p}"
                    )))
                }
            }
            fn visit_i64<E: serde::de::Error>(self, p: i64) -> Result<FailMode, E> {
                self.visit_f64(p as f64)
            }
            fn visit_u64<E: serde::de::Error>(self, p: u64) -> Result<FailMode, E> {
                self.visit_f64(p as f64)
            }
        }
        d.deserialize_any(V)
    }
}

/// Order of the server's wait queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Discipline {
    Fifo,
    Lifo,
    /// Fail at Scale's adaptive LIFO: first in, first out, but newest first while the queue
    /// has not been empty for the last `shedding.interval` (a queue is building).
    AdaptiveLifo,
}

/// Where a crash fault strikes inside the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CrashPoint {
    /// After the effect, before the key record.
    AfterEffect,
    /// After the key record, before the effect.
    AfterKey,
}

/// A size that may be unlimited: a number or `"unlimited"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit(pub Option<u64>);

impl Serialize for Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(n) => s.serialize_u64(n),
            None => s.serialize_str("unlimited"),
        }
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Limit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-negative integer or \"unlimited\"")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Limit, E> {
                match s {
                    "unlimited" | "unbounded" => Ok(Limit(None)),
                    _ => Err(E::custom(format!(
                        "expected a non-negative integer or \"unlimited\", got {s:?}"
                    ))),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Limit, E> {
                u64::try_from(n).map(|n| Limit(Some(n))).map_err(|_| {
                    E::custom(format!(
                        "expected a non-negative integer or \"unlimited\", got {n}"
                    ))
                })
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Limit, E> {
                Ok(Limit(Some(n)))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Server {
    /// Concurrent workers.
    pub capacity: Limit,
    /// Requests that may wait for a worker; a full queue rejects at once (503).
    pub queue: Limit,
    pub discipline: Discipline,
    pub service: Dist,
    pub fail: FailMode,
    /// Windows in which every arriving request fails at once (503) or hangs (no answer).
    pub outages: Vec<Outage>,
    /// Deadline propagation: drop a queued request whose client has already timed out.
    pub drop_expired: bool,
    /// Probability that the handler crashes part-way (see `crash_point`, `idempotency.commit`).
    pub crash_probability: f64,
    pub crash_point: CrashPoint,
    /// Requests the server holds at once (in service and queued); beyond it, shed at arrival.
    pub concurrency_limit: Limit,
    /// What a shed request (full queue or concurrency limit) is told.
    pub shed_answer: ShedAnswer,
    /// `Retry-After` on a shed 503: "none", a duration, or "derived" (time to drain the queue).
    pub retry_after: RetryAfter,
    /// Service time grows by this fraction per other request in service (0 = flat).
    pub slowdown: f64,
    /// Probability that a served request is answered with a non-retryable 4xx (no effect).
    pub client_error: f64,
    /// Windows in which the server has fewer workers.
    pub capacity_drops: Vec<CapacityDrop>,
    /// Latency brown-outs (a GC pause, a degraded disk, a noisy neighbour): the service time of
    /// work started inside a window is `factor` times its draw.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub slow_windows: Vec<SlowWindow>,
    /// A token-bucket rate limiter answering 429.
    pub rate_limit: RateLimitConfig,
    /// The server holds one record that every intent updates with optimistic concurrency (the
    /// AWS blog's contention model, `docs/layered.md`): an attempt reads the version, then writes
    /// if it is unchanged, else gets a 409. Last tier only.
    pub contention: bool,
    /// Adaptive shedding at dequeue (`[server.shedding]`, [`crate::shedding`]): CoDel drops
    /// requests that queued too long, answered as `shed_answer` says.
    #[serde(skip_serializing_if = "SheddingConfig::is_default")]
    pub shedding: SheddingConfig,
}

/// A window `[from, to)` in which the server answers no arrival with service: `{ from, to }`
/// answers 503 at once (as before), `answer = "hang"` never answers (issue 18). Only arrivals in
/// the window are affected: requests already queued or in service when it starts are served.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub from: Duration,
    pub to: Duration,
    /// What an arrival in the window gets.
    #[serde(default, skip_serializing_if = "OutageAnswer::is_default")]
    pub answer: OutageAnswer,
    /// `Retry-After` on the window's 503s (issue 15: outages sent none); absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<Duration>,
}

impl Outage {
    /// A fail-fast 503 window with no Retry-After (the `{ from, to }` form).
    pub fn window(from: Duration, to: Duration) -> Self {
        Outage {
            from,
            to,
            answer: OutageAnswer::Unavailable,
            retry_after: None,
        }
    }
}

/// What an arrival inside an outage window gets.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum OutageAnswer {
    /// 503 Service Unavailable at once, no work done (fail fast).
    #[default]
    #[serde(rename = "503")]
    Unavailable,
    /// No answer at all and no work done: the caller sees only its own timeout (a black-holed
    /// connection, a process stopped in GC or on a dead disk).
    #[serde(rename = "hang")]
    Hang,
}

impl OutageAnswer {
    fn is_default(&self) -> bool {
        *self == OutageAnswer::Unavailable
    }
}

/// What a shedding server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ShedAnswer {
    /// 503 Service Unavailable (retryable, with `server.retry_after`).
    Unavailable,
    /// The SRE book's "overloaded; don't retry" (never retried).
    Overloaded,
}

/// A window `[from, to)` in which the server has `capacity` workers.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapacityDrop {
    pub from: Duration,
    pub to: Duration,
    pub capacity: u64,
}

/// A window `[from, to)` of a latency brown-out: every request that *starts service* inside it
/// (a worker takes it at `from <= t < to`) is served for `factor` times the service time it drew
/// (the draw itself is unchanged, so a window changes nothing outside it except through
/// queueing). Requests already in service at `from` keep their time; `factor >= 1`, finite.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowWindow {
    pub from: Duration,
    pub to: Duration,
    /// The service-time multiplier inside the window (>= 1; 10 = ten times slower).
    pub factor: f64,
}

impl Default for Server {
    fn default() -> Self {
        Server {
            capacity: Limit(None),
            queue: Limit(None),
            discipline: Discipline::Fifo,
            service: Dist::default(),
            fail: FailMode::Never,
            outages: Vec::new(),
            drop_expired: false,
            crash_probability: 0.0,
            crash_point: CrashPoint::AfterEffect,
            concurrency_limit: Limit(None),
            shed_answer: ShedAnswer::Unavailable,
            retry_after: RetryAfter::None,
            slowdown: 0.0,
            client_error: 0.0,
            capacity_drops: Vec::new(),
            slow_windows: Vec::new(),
            rate_limit: RateLimitConfig::default(),
            contention: false,
            shedding: SheddingConfig::default(),
        }
    }
}

/// How the client chooses idempotency keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum KeyMode {
    None,
    /// Chosen once before the first send and reused on every retry (correct).
    PerIntent,
    /// A new key inside the retry loop: the bug the article warns about.
    PerAttempt,
}

/// The server's dedupe store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StoreMode {
    None,
    /// Key recorded before the effect; a concurrent duplicate waits and shares the result.
    RecordBefore,
    /// Key recorded before the effect; a concurrent duplicate gets 409 Conflict (IETF draft).
    /// Spelled `record-before-409` as documented; `record-before409` (the name derived from the
    /// variant before this was noticed) is still read.
    #[serde(rename = "record-before-409", alias = "record-before409")]
    RecordBefore409,
    /// Key recorded only after the effect: concurrent duplicates both run it (the article's bug).
    RecordAfter,
}

/// How the effect and the key record are committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommitMode {
    /// One transaction: a crash rolls back both.
    Atomic,
    EffectThenKey,
    KeyThenEffect,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Idempotency {
    pub key: KeyMode,
    pub store: StoreMode,
    /// How long a key is remembered; none = forever.
    pub ttl: Option<Duration>,
    pub commit: CommitMode,
    /// On a client restart, keep the key (true, the article's rule 2) or make a new one.
    pub persist_key: bool,
}

impl Default for Idempotency {
    fn default() -> Self {
        Idempotency {
            key: KeyMode::None,
            store: StoreMode::None,
            ttl: None,
            commit: CommitMode::Atomic,
            persist_key: true,
        }
    }
}

/// One layer of a layered request path (`[[layer]]`): a caller with its own retry policy that
/// sends each attempt to the layer below it (the last layer sends to the bottom, `[server]`).
/// Semantics and the closed form are in `docs/layered.md`.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Layer {
    /// Shown in the per-layer report (`layer{i}` when empty).
    pub name: String,
    /// Attempts per call this layer receives, the first try included (1 = never retry).
    pub max_attempts: u32,
    /// Per-attempt timeout; none = wait for the layer below however long it takes. A timed-out
    /// attempt is not cancelled below: its work goes on, orphaned.
    pub timeout: Option<Duration>,
    /// One-way latency to the layer below, each direction.
    pub latency: Dist,
    pub backoff: BackoffKind,
    pub jitter: Jitter,
    pub base: Duration,
    pub cap: Duration,
    pub multiplier: f64,
    /// As `retry.first_exponent`.
    pub first_exponent: u32,
    /// As `retry`'s: `jitter = "proportional"`: the delay is `d × U[1 − r, 1 + r]`, `r` in 0..=1
    /// (cenkalti/backoff's `RandomizationFactor`, gRPC's `jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub randomization_factor: Option<f64>,
    /// As `retry`'s: `jitter = "additive"`: the delay is `d + U[0, f × d)`, `f` >= 0 (Kubernetes
    /// `wait.Backoff.Jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_factor: Option<f64>,
    /// As `retry`'s: `jitter = "absolute"`: the delay is `d + U[0, J)` (tenacity's `jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_max: Option<Duration>,
    /// As `retry.cap_applies`: for `proportional`, `additive` and `absolute`: whether `cap` bounds the window
    /// (`before-jitter`, the default) or the jittered delay (`after-jitter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap_applies: Option<CapApplies>,
    /// A retry budget shared by every call through this layer; none = only `max_attempts` limits.
    pub budget: Option<Budget>,
}

impl Default for Layer {
    fn default() -> Self {
        let r = Retry::default();
        Layer {
            name: String::new(),
            max_attempts: r.max_attempts,
            timeout: None,
            latency: Dist::default(),
            backoff: r.backoff,
            jitter: r.jitter,
            base: r.base,
            cap: r.cap,
            multiplier: r.multiplier,
            first_exponent: r.first_exponent,
            randomization_factor: None,
            jitter_factor: None,
            jitter_max: None,
            cap_applies: None,
            budget: None,
        }
    }
}

impl Layer {
    pub fn backoff(&self) -> Backoff {
        Backoff {
            kind: self.backoff,
            jitter: self.jitter,
            base: self.base,
            cap: self.cap,
            multiplier: self.multiplier,
            first_exponent: self.first_exponent,
            spread: Spread {
                randomization_factor: self.randomization_factor.unwrap_or(0.0),
                jitter_factor: self.jitter_factor.unwrap_or(0.0),
                jitter_max: self.jitter_max.unwrap_or(Duration::ZERO),
                cap_applies: self.cap_applies.unwrap_or_default(),
            },
        }
    }
}

/// One `[[tier]]` of the request path: a server (`server`, every key of `[server]`) and the
/// client inside it that calls the next tier down (`retry`, `network`, `budget`, `breaker`,
/// `hedge`, every key of the top-level sections of the same names). The last tier is `[server]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TierConfig {
    /// Shown in the per-tier report (`tier{i}` when empty).
    pub name: String,
    pub server: Server,
    pub retry: Retry,
    pub network: Network,
    pub budget: BudgetConfig,
    pub breaker: BreakerConfig,
    pub hedge: HedgeConfig,
}

/// A retry budget: a limit on retries shared by all calls through one layer, written
/// `budget = { kind = "tokens", max_tokens = 10, token_ratio = 0.1 }` or
/// `budget = { kind = "ratio", ratio = 0.1, min_retries = 10 }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Budget {
    /// gRPC retry throttling (gRFC A6, "Client-side retry throttling"): a token count starts at
    /// `max_tokens`; each failed attempt takes 1, each success gives back `token_ratio` (up to
    /// `max_tokens`); a retry is allowed only while the count is above `max_tokens / 2`.
    Tokens { max_tokens: f64, token_ratio: f64 },
    /// Finagle's `RetryBudget` (percentCanRetry, minRetriesPerSec; also the Google SRE book's
    /// per-client retry budget, chapter "Handling Overload"), without Finagle's time window: each
    /// call received deposits `ratio` retries, each retry withdraws one, and `min_retries` is the
    /// starting balance. So retries <= `min_retries + ratio * calls`.
    Ratio {
        ratio: f64,
        #[serde(default)]
        min_retries: u64,
    },
}

/// `12 GB`, `800 MB`: a size for an error message.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1000.0 && u < UNITS.len() - 1 {
        x /= 1000.0;
        u += 1;
    }
    format!("{x:.0} {}", UNITS[u])
}

impl Model {
    /// The width of the sliding peak window: `peak_window`, or the bucket width without it.
    pub fn peak_window(&self) -> Duration {
        self.peak_window.unwrap_or(self.bucket)
    }

    /// The trigger window (a spike, an outage, a capacity drop, a slow window), if the model has
    /// one: see
    /// [`crate::policy::recovery`].
    pub fn trigger(&self) -> Option<(Time, Time)> {
        let model = self;
        if let Some(t) = model.recovery.trigger {
            return Some((Time::ZERO + t.from, Time::ZERO + t.to));
        }
        let s = &model.server;
        let faults = s
            .outages
            .iter()
            .map(|o| Window {
                from: o.from,
                to: o.to,
            })
            .chain(s.capacity_drops.iter().map(|d| Window {
                from: d.from,
                to: d.to,
            }))
            .chain(s.slow_windows.iter().map(|w| Window {
                from: w.from,
                to: w.to,
            }));
        let span = faults.fold(None, |acc: Option<(Duration, Duration)>, w| match acc {
            None => Some((w.from, w.to)),
            Some((a, b)) => Some((a.min(w.from), b.max(w.to))),
        });
        if let Some((a, b)) = span {
            return Some((Time::ZERO + a, Time::ZERO + b));
        }
        let w = &model.workload;
        if w.kind != WorkloadKind::Open {
            return None;
        }
        let base = w.rate.0;
        let from = w.schedule.iter().find(|p| p.rate.0 > base)?.at;
        let to = w
            .schedule
            .iter()
            .find(|p| p.at > from && p.rate.0 <= base)?
            .at;
        Some((Time::ZERO + from, Time::ZERO + to))
    }

    /// The number of intents a run will start, when it is known in advance.
    pub fn planned_intents(&self) -> Option<u64> {
        match self.workload.kind {
            WorkloadKind::Burst | WorkloadKind::Contention => Some(self.workload.clients),
            WorkloadKind::Closed => Some(self.workload.intents),
            WorkloadKind::Open => (self.workload.intents > 0).then_some(self.workload.intents),
            WorkloadKind::Trace => Some(self.workload.replay.arrivals.len() as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!(Rate::parse("80/s"), Ok(Rate(80.0)));
        assert_eq!(Rate::parse("5/ms"), Ok(Rate(5000.0)));
        assert_eq!(Rate::parse("120/m"), Ok(Rate(2.0)));
        assert!(Rate::parse("80").is_err());
        assert!(Rate::parse("-1/s").is_err());
        assert!(Rate::parse("nan/s").is_err());
    }

    #[test]
    fn defaults_validate() {
        Model::default().validate().unwrap();
    }

    #[test]
    fn cap_below_base_is_refused() {
        let mut m = Model::default();
        m.retry.cap = Duration::from_millis(1);
        assert_eq!(m.validate().unwrap_err().path, "retry.cap");
    }
}
