//! `[retry]`: the client's retry policy (attempts, timeouts, backoff, `Retry-After`).

use crate::backoff::{Backoff, BackoffKind, CapApplies, Jitter, Spread};
use crate::policy::Class;
use crate::time::Duration;
use serde::{Deserialize, Serialize};

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
