//! `[server]`: capacity, queue, failures, crashes, outages, capacity drops, slow windows and
//! the server-side policies it carries.

use super::connections::Connections;
use super::fanout::Fanout;
use super::replicas::{BalancerKind, FailureWindow, OutlierDetection, is_one};
use crate::base::dist::Dist;
use crate::base::keys::{KeyTable, Needs, key};
use crate::base::time::Duration;
use crate::policy::Scope;
use crate::policy::autoscale::AutoscaleConfig;
use crate::policy::ratelimit::{RateLimitConfig, RetryAfter};
use crate::policy::shedding::SheddingConfig;
use serde::{Deserialize, Serialize};
use std::fmt;

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

/// `[server]`'s keys (also a `[[tier]]`'s `server`): the balancer keys need two replicas or more.
pub const SERVER_KEYS: KeyTable = KeyTable {
    section: "server",
    schema: "Server",
    docs: &[("docs/model.md", "## `[server]`")],
    runs: &[&[
        key("capacity", "`\"unlimited\"`", "concurrent workers"),
        key(
            "queue",
            "`\"unlimited\"`",
            "requests that may wait for a worker; a full queue rejects at once (503)",
        ),
        key(
            "discipline",
            "`\"fifo\"`",
            "`fifo`, `lifo`, or `adaptive-lifo` (Fail at Scale: FIFO, newest first while the queue \
            has not been empty for `shedding.interval`; `docs/policies.md`, \"Server-side \
            shedding\")",
        ),
        key("service", "`\"0\"`", "service time distribution"),
        key(
            "fail",
            "`\"never\"`",
            "`\"never\"`, `\"always\"` (every attempt fails at once, without service: the \
            article's pure-scheduling model) or a probability (a served attempt fails after its \
            service time, without effect)",
        ),
        key(
            "outages",
            "`[]`",
            "`[{ from = \"2s\", to = \"5s\" }]`: every arrival in a window fails at once (503); \
            `answer = \"hang\"`: never answered (the caller's timeout decides); `retry_after = \
            \"5s\"`: the 503s carry Retry-After (`docs/policies.md`, \"Outages\")",
        ),
        key(
            "drop_expired",
            "`false`",
            "deadline propagation: a queued request whose client has stopped waiting is dropped \
            before service",
        ),
        key(
            "crash_probability",
            "`0`",
            "probability a served request's handler crashes part-way",
        ),
        key(
            "crash_point",
            "`\"after-effect\"`",
            "`after-effect` (effect done, key not yet recorded) or `after-key` (key recorded, \
            effect not yet done)",
        ),
        key(
            "concurrency_limit",
            "`\"unlimited\"`",
            "requests held at once (in service plus queued); an arrival beyond it is shed \
            (`docs/policies.md`, \"Server signals\")",
        ),
        key(
            "shed_answer",
            "`\"unavailable\"`",
            "what a shed request is told: `\"unavailable\"` (503, retryable) or `\"overloaded\"` \
            (the SRE book's \"overloaded; don't retry\", never retried)",
        ),
        key(
            "retry_after",
            "`\"none\"`",
            "the `Retry-After` on a shed 503: `\"none\"`, a duration, or `\"derived\"` from the \
            queue and the service time (`docs/policies.md`, \"Server signals\")",
        ),
        key(
            "slowdown",
            "`0`",
            "latency rising with load: a request that starts while `n` others are in service takes \
            `service × (1 + slowdown × n)`",
        ),
        key(
            "client_error",
            "`0`",
            "probability that a served request is answered 4xx: no effect, never retried",
        ),
        key(
            "capacity_drops",
            "`[]`",
            "`[{ from = \"5s\", to = \"8s\", capacity = 2 }]`: windows with fewer workers (a \
            brown-out); needs a limited `capacity`; windows must not overlap",
        ),
        key(
            "slow_windows",
            "`[]`",
            "`[{ from = \"10s\", to = \"11s\", factor = 10 }]`: latency brown-outs (a GC pause, a \
            degraded disk, a noisy neighbour). The service time of work *started* inside a window \
            `[from, to)` (a worker takes the request at `from <= t < to`) is `factor` times the \
            time it drew; see below",
        ),
        key(
            "rate_limit",
            "off",
            "`[server.rate_limit]`: a token bucket that answers 429 (`docs/policies.md`, \"Rate \
            limiting\")",
        ),
        key(
            "contention",
            "`false`",
            "the server holds one record that every intent updates with optimistic concurrency: an \
            attempt reads the version (one round trip), then writes if it is unchanged, else gets \
            409 (the AWS blog's model, `docs/layered.md`); `workload.kind = \"contention\"` is a \
            burst with this on. Last tier only",
        ),
        key(
            "shedding",
            "off",
            "`[server.shedding]`: CoDel sheds requests that queued too long (`docs/policies.md`, \
            \"Server-side shedding\")",
        ),
        key(
            "replicas",
            "`1`",
            "copies of this server behind a load balancer, 1..=1024 (\"Replicas\", below). \
            `capacity`, `queue`, `concurrency_limit` and the service are per replica",
        ),
        key(
            "balancer",
            "`\"round-robin\"`",
            "how a caller chooses the replica of an attempt: `round-robin` (Envoy's `ROUND_ROBIN`, \
            the index starting at a random replica), `random` (Envoy's `RANDOM`), `least-request` \
            (Envoy's `LEAST_REQUEST`: the fewest active requests of `choice_count` random picks), \
            `p2c-ewma` (Finagle's `P2CPeakEwma`: the lower peak-EWMA latency cost of two distinct \
            random replicas). Needs `replicas >= 2`",
        )
        .only_with(Needs::Replicas),
        key(
            "choice_count",
            "`2`",
            "random picks per choice of `least-request` (Envoy's \
            `least_request_lb_config.choice_count`), at least 2; only with `balancer = \
            \"least-request\"`",
        )
        .only_with(Needs::Replicas),
        key(
            "ewma_decay",
            "`\"10s\"`",
            "the decay time of `p2c-ewma`'s latency average (Finagle's `decayTime`), a positive \
            duration; only with `balancer = \"p2c-ewma\"`",
        )
        .only_with(Needs::Replicas),
        key(
            "balancer_scope",
            "`\"shared\"`",
            "`shared`: one balancer for every caller (a proxy in front of the tier, one view of \
            active requests and latency); `client`: one per client process (client-side \
            balancing, each with its own view)",
        )
        .only_with(Needs::Replicas),
        key(
            "panic_threshold",
            "`50`",
            "Envoy's `common_lb_config.healthy_panic_threshold`, percent in 0..=100: while fewer \
            than this share of the replicas is left by outlier detection, the balancer ignores \
            the ejections and picks among all of them; `0` never panics",
        )
        .only_with(Needs::Replicas),
        key(
            "outlier_detection",
            "none",
            "`[server.outlier_detection]`: passive health checking that ejects bad replicas from \
            the balancer's choice, Envoy's or gRPC's (the table below)",
        )
        .only_with(Needs::Replicas),
        key(
            "failure_windows",
            "`[]`",
            "`[{ from = \"10s\", to = \"40s\", probability = 0.5 }]`: served requests fail (500, \
            after their service time) with `probability` instead of `fail`'s inside `[from, to)`: \
            a bad deploy, a poisoned cache. The same draw as `fail` (common random numbers); \
            windows on one replica must not overlap",
        ),
        key(
            "autoscale",
            "off",
            "`[server.autoscale]`: Kubernetes' Horizontal Pod Autoscaler acting on `replicas` \
            (\"Autoscaling\", below; `docs/replicas.md`)",
        ),
        key(
            "fanout",
            "none",
            "`{ k = 100, wait = \"all\" }`: after its own work the tier calls the next tier `k` \
            times and answers when `wait` is met (\"Fan-out\", below). Not on the last tier",
        ),
        key(
            "connections",
            "off",
            "`[server.connections]`: what a client's connection to the tier costs: a connect in \
            server work after a drop, a cap per replica, gRPC's reconnect backoff \
            (\"Connections\", below)",
        ),
    ]],
    expanded: &[],
};

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
    /// Adaptive shedding at dequeue (`[server.shedding]`, [`crate::policy::shedding`]): CoDel drops
    /// requests that queued too long, answered as `shed_answer` says.
    #[serde(skip_serializing_if = "SheddingConfig::is_default")]
    pub shedding: SheddingConfig,
    /// Replicas of this server behind a load balancer (`docs/replicas.md`): `capacity`, `queue`,
    /// `concurrency_limit` and service are per replica; 1 = one server.
    #[serde(skip_serializing_if = "is_one")]
    pub replicas: u32,
    /// How callers choose a replica: "round-robin" (default), "random", "least-request",
    /// "p2c-ewma".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balancer: Option<BalancerKind>,
    /// Least request's random choices per pick (Envoy's `choice_count`, default 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice_count: Option<u32>,
    /// Peak EWMA's decay time (Finagle's `decayTime`, default 10 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ewma_decay: Option<Duration>,
    /// One balancer for every caller ("shared", default: a proxy in front of the tier) or one
    /// per client process ("client": client-side balancing, each with its own view).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balancer_scope: Option<Scope>,
    /// Envoy's `healthy_panic_threshold`, percent (default 50): below it the balancer ignores
    /// ejections and picks among every replica.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub panic_threshold: Option<u32>,
    /// Passive health checking that ejects bad replicas from the balancer's choice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlier_detection: Option<OutlierDetection>,
    /// Windows in which served requests fail with a given probability (on one replica or all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failure_windows: Vec<FailureWindow>,
    /// A Horizontal Pod Autoscaler that changes the replicas over the run (`docs/replicas.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<AutoscaleConfig>,
    /// Fan-out: after its own work the tier calls the next tier `k` times and answers when its
    /// `wait` rule is met. Not on the last tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fanout: Option<Fanout>,
    /// Connection cost: a client's next attempt after a dropped connection pays a connect in
    /// server work (`server.connections`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
}

/// A window `[from, to)` in which the server answers no arrival with service: `{ from, to }`
/// answers 503 at once (as before), `answer = "hang"` never answers. Only arrivals in
/// the window are affected: requests already queued or in service when it starts are served.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub from: Duration,
    pub to: Duration,
    /// What an arrival in the window gets.
    #[serde(default, skip_serializing_if = "OutageAnswer::is_default")]
    pub answer: OutageAnswer,
    /// `Retry-After` on the window's 503s (outages sent none); absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<Duration>,
    /// The replica it strikes (0-based); absent = every replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

impl Outage {
    /// A fail-fast 503 window with no Retry-After (the `{ from, to }` form).
    pub fn window(from: Duration, to: Duration) -> Self {
        Outage {
            from,
            to,
            answer: OutageAnswer::Unavailable,
            retry_after: None,
            replica: None,
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
    /// The replica it strikes (0-based); absent = every replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
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
    /// The replica it strikes (0-based); absent = every replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
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
            replicas: 1,
            balancer: None,
            choice_count: None,
            ewma_decay: None,
            balancer_scope: None,
            panic_threshold: None,
            outlier_detection: None,
            failure_windows: Vec::new(),
            autoscale: None,
            fanout: None,
            connections: None,
        }
    }
}
