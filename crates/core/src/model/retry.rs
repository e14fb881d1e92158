//! `[retry]`: the client's retry policy (attempts, timeouts, backoff, `Retry-After`).

use super::backoff::{BACKOFF_KEYS, BackoffSpec, Found, Next, Section, deserialize_section, set};
use super::replicas::HostPredicate;
use crate::base::keys::{KeyTable, key};
use crate::base::time::Duration;
use crate::policy::Class;
use crate::policy::adaptive::Adaptive;
use crate::policy::backoff::Backoff;
use serde::{Deserialize, Deserializer, Serialize};
use std::ops::{Deref, DerefMut};

/// Which failures a client retries (issue: retryable classes).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(default)]
#[schemars(deny_unknown_fields)]
pub struct Retry {
    /// Attempts per intent, the first try included (1 = never retry).
    pub max_attempts: u32,
    /// Per-attempt timeout, fixed or learned from recent latencies ([`Adaptive`]); none = wait
    /// for the reply however long it takes.
    pub timeout: Option<Adaptive>,
    /// Total time an intent may take across attempts; no retry starts after it.
    pub deadline: Option<Duration>,
    /// `backoff`, `jitter`, `base`, `cap`, `multiplier`, `first_exponent` and the jitter sizes,
    /// written among the keys above and below (`[retry]\nbase = "10ms"`).
    #[serde(flatten)]
    pub backoff_spec: BackoffSpec,
    /// The base after a throttling error (429) instead of `base`; none = `base`. The AWS SDKs
    /// back off from a larger base when throttled (smithy `THROTTLING_RETRY_DELAY_BASE`).
    pub throttling_base: Option<Duration>,
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
    /// Which replica a retry or hedged copy may go to (a tier with `server.replicas > 1`):
    /// "none" (the balancer picks afresh), "previous-hosts" (Envoy's predicate), "same-host".
    #[serde(skip_serializing_if = "HostPredicate::is_default")]
    pub retry_host_predicate: HostPredicate,
    /// Envoy's route `host_selection_retry_max_attempts` (default 1): extra picks while the
    /// predicate rejects the balancer's choice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_selection_retry_max_attempts: Option<u32>,
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
            backoff_spec: BackoffSpec::default(),
            throttling_base: None,
            restart_probability: 0.0,
            retry_on: Class::DEFAULT_RETRYABLE.to_vec(),
            retry_after: RetryAfterPolicy::Honour,
            retry_after_cap: None,
            cancel: false,
            mode: None,
            retry_host_predicate: HostPredicate::None,
            host_selection_retry_max_attempts: None,
        }
    }
}

impl Retry {
    /// The engine's backoff for this policy.
    pub fn backoff(&self) -> Backoff {
        self.backoff_spec.backoff()
    }
}

/// `retry.cap`, `retry.base`, ... read through to [`Retry::backoff_spec`], so that code written
/// before the backoff keys had their own struct (`m.retry.cap`) reads the same keys.
impl Deref for Retry {
    type Target = BackoffSpec;
    fn deref(&self) -> &BackoffSpec {
        &self.backoff_spec
    }
}

impl DerefMut for Retry {
    fn deref_mut(&mut self) -> &mut BackoffSpec {
        &mut self.backoff_spec
    }
}

/// Where `throttling_base` goes among the backoff keys: after `base`, as serde listed it.
const AFTER_BASE: usize = 3;

/// `[retry]`'s keys (also a `[[tier]]`'s `retry`).
pub const RETRY_KEYS: KeyTable = KeyTable {
    section: "retry",
    schema: "Retry",
    docs: &[("docs/model.md", "## `[retry]`")],
    runs: &[
        &[
            key(
                "max_attempts",
                "`3`",
                "attempts per intent, the first included (1 = never retry)",
            ),
            key(
                "timeout",
                "none",
                "per-attempt timeout; none = wait for the reply however long. A duration, or \
                learned from recent latencies: `{ percentile = 99, window = \"60s\", factor = 2, \
                min = \"10ms\", max = \"1s\", attempt_doubling = false }` (`docs/policies.md`, \
                \"Learned timeouts and hedging delays\")",
            ),
            key(
                "deadline",
                "none",
                "total time per intent; no retry starts that would begin after it",
            ),
        ],
        BACKOFF_KEYS.split_at(AFTER_BASE).0,
        &[key(
            "throttling_base",
            "none (= `base`)",
            "the base of the delay after a 429 (the AWS SDKs' larger throttling base); <= `cap`",
        )],
        BACKOFF_KEYS.split_at(AFTER_BASE).1,
        &[
            key(
                "restart_probability",
                "`0`",
                "probability the client restarts before a retry (see `idempotency.persist_key`)",
            ),
            key(
                "retry_on",
                "`[\"timeout\", \"connection\", \"503\", \"429\", \"5xx\", \"409\"]`",
                "the answer classes retried (`docs/policies.md`, \"Answer classes and retries\"); \
                `\"4xx\"` and `\"overloaded\"` are refused",
            ),
            key(
                "retry_after",
                "`\"honour\"`",
                "what a server's `Retry-After` does: `honour` (wait it instead of the backoff, up \
                to `retry_after_cap`), `ignore`, `aws` (the AWS SDKs' rule), `envoy` (Envoy's \
                reset header); `docs/policies.md`",
            ),
            key(
                "retry_after_cap",
                "`cap`",
                "the longest `Retry-After` honoured; longer ones are cut to it",
            ),
            key(
                "cancel",
                "`false`",
                "cancellation propagation: when this caller stops waiting for an attempt, the tier \
                below drops it if it is still queued and stops retrying below for it (\"The \
                request path\", below)",
            ),
            key(
                "mode",
                "none",
                "an SDK's retry mode, filling in its `[retry]` and `[budget]` settings under yours \
                (`aws-legacy`, `aws-standard`, `aws-adaptive` (top level only: it adds \
                `[limiter]`), `aws-standard-2026`, `aws-standard-2026-dynamodb`, \
                `aws-js-standard`, `aws-js-standard-2026`; `docs/policies.md`, \"SDK retry \
                modes\"), or a backoff library's defaults, filling in `[retry]` only \
                (`grpc-connect`, `client-go`, `client-go-retry`, `cenkalti`, \
                `resilience4j-random`, `tenacity`, `spring-random`; \"Backoff as the libraries \
                ship it\"). Any key written beside it wins; a `jitter` written beside a library's \
                mode drops the mode's jitter sizing (`cenkalti` with `jitter = \"full\"` is \
                cenkalti's schedule with full jitter). `retrystorm explain` prints what the mode \
                set. Also in a `[[tier]]`'s `retry`.",
            ),
            key(
                "retry_host_predicate",
                "`\"none\"`",
                "which replica a retry or hedged copy may go to, when the tier this retry loop \
                calls has `replicas >= 2` (\"Replicas\", below; refused otherwise): `none` (the \
                balancer picks every attempt afresh, so a retry may meet the replica that \
                failed), `previous-hosts` (Envoy's `envoy.retry_host_predicates.previous_hosts`: \
                the balancer is asked again while it picks a replica this call already tried; \
                `previous_hosts` also accepted), `same-host` (every attempt of a call goes to its \
                first attempt's replica: a client holding one connection; `same_host` also \
                accepted)",
            ),
            key(
                "host_selection_retry_max_attempts",
                "`1`",
                "Envoy's route `host_selection_retry_max_attempts`: how many more picks a retry \
                may make while `previous-hosts` rejects the balancer's choice; after the last, \
                the last pick is used, tried or not. A whole number in 0..=100; only with \
                `retry_host_predicate = \"previous-hosts\"`",
            ),
        ],
    ],
    expanded: &[key(
        "from",
        "none",
        "a real configuration file, `\"SOURCE:FILE\"`: `\"envoy:route.yaml\"`, \
        `\"grpc:service-config.json[:SERVICE/METHOD]\"`, `\"aws:config[:PROFILE]\"`, read \
        relative to the model file and imported into `[retry]`, `[budget]` and `[hedge]` as \
        `retrystorm import` prints them (`docs/import.md`). Any key written beside it wins. Not \
        with `mode`. Also in a `[[tier]]`'s `retry`.",
    )],
};

impl Section for Retry {
    const NAME: &'static str = "Retry";
    const KEYS: &'static [&'static str] = &RETRY_KEYS.names::<{ RETRY_KEYS.count() }>();

    fn read<'de, N: Next<'de>>(&mut self, key: &str, n: &mut N) -> Result<Found, N::Error> {
        Ok(match key {
            "max_attempts" => set(n, &mut self.max_attempts)?,
            "timeout" => set(n, &mut self.timeout)?,
            "deadline" => set(n, &mut self.deadline)?,
            "throttling_base" => set(n, &mut self.throttling_base)?,
            "restart_probability" => set(n, &mut self.restart_probability)?,
            "retry_on" => set(n, &mut self.retry_on)?,
            "retry_after" => set(n, &mut self.retry_after)?,
            "retry_after_cap" => set(n, &mut self.retry_after_cap)?,
            "cancel" => set(n, &mut self.cancel)?,
            "mode" => set(n, &mut self.mode)?,
            "retry_host_predicate" => set(n, &mut self.retry_host_predicate)?,
            "host_selection_retry_max_attempts" => {
                set(n, &mut self.host_selection_retry_max_attempts)?
            }
            _ => return self.backoff_spec.read(key, n),
        })
    }
}

impl<'de> Deserialize<'de> for Retry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_section(d)
    }
}
