//! `[breaker]`: the breaker's configuration (resilience4j's `CircuitBreakerConfig`, its
//! defaults and their checks).

use crate::base::invalid::Invalid;
use crate::base::keys::{KeyTable, Needs, key};
use crate::base::time::Duration;
use crate::policy::Scope;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WindowType {
    CountBased,
    TimeBased,
}

/// The `[breaker]` section.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    pub enabled: bool,
    pub scope: Scope,
    /// Break only retries: first tries always go out (and their outcomes are recorded), as in
    /// the variant Marc Brooker simulates in "Fixing retries with token buckets and circuit
    /// breakers" (2022). False = resilience4j's usual place, in front of every attempt.
    pub retries_only: bool,
    /// Where the breaker sits against the retry loop ([`Placement`]); absent = `per-attempt`.
    #[serde(default, skip_serializing_if = "Placement::is_per_attempt")]
    pub placement: Placement,
    /// Percent of failed calls at or above which the breaker opens, in (0, 100].
    pub failure_rate_threshold: f64,
    pub window_type: WindowType,
    /// Calls (count based) or seconds (time based).
    pub window_size: u32,
    pub minimum_calls: u32,
    pub wait_in_open: Duration,
    pub permitted_in_half_open: u32,
    /// Half-open that long without a decision opens again; absent = no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait_in_half_open: Option<Duration>,
    /// Open becomes half-open when `wait_in_open` has passed, without waiting for a call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub automatic_transition: bool,
    /// Percent of slow calls at or above which the breaker opens, in (0, 100].
    pub slow_call_rate_threshold: f64,
    /// A call that takes longer than this is slow.
    pub slow_call_duration_threshold: Duration,
    /// A forced state: `"open"` (reject every call) or `"disabled"` (permit every call, record
    /// nothing); absent = the state machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forced: Option<Forced>,
}

/// `[breaker]`'s keys (also a `[[tier]]`'s `breaker`): every one but `enabled` needs the
/// breaker on.
pub const BREAKER_KEYS: KeyTable = KeyTable {
    section: "breaker",
    schema: "BreakerConfig",
    docs: &[("docs/policies.md", "## Circuit breaker")],
    runs: &[&[
        key(
            "enabled",
            "`false`",
            "turns the breaker on; every other key needs it (written beside `enabled = false`, a \
            key is refused: it would have no effect)",
        ),
        key(
            "scope",
            "`\"client\"`",
            "`\"client\"`: one breaker per client process; `\"shared\"`: one for every client \
            (\"Scope\", above)",
        )
        .only_with(Needs::Enabled),
        key(
            "retries_only",
            "`false`",
            "first tries always go out (their outcomes are still recorded): the breaker Marc \
            Brooker simulates in \"Fixing retries with token buckets and circuit breakers\" \
            (2022)",
        )
        .only_with(Needs::Enabled),
        key(
            "placement",
            "`\"per-attempt\"`",
            "or `\"around-retries\"`: which of the breaker and the retry loop wraps the other \
            (below); `\"around-retries\"` with `retries_only = true` is refused",
        )
        .only_with(Needs::Enabled),
        key("failure_rate_threshold", "`50`", "percent, (0, 100]").only_with(Needs::Enabled),
        key("window_type", "`\"count-based\"`", "or `\"time-based\"`").only_with(Needs::Enabled),
        key("window_size", "`100`", "calls or seconds").only_with(Needs::Enabled),
        key(
            "minimum_calls",
            "`100`",
            "calls recorded before the failure and slow call rates are judged",
        )
        .only_with(Needs::Enabled),
        key(
            "wait_in_open",
            "`\"60s\"`",
            "how long the breaker stays open before it turns half-open",
        )
        .only_with(Needs::Enabled),
        key(
            "permitted_in_half_open",
            "`10`",
            "calls permitted in half-open; their outcomes decide whether it closes or opens again",
        )
        .only_with(Needs::Enabled),
        key(
            "max_wait_in_half_open",
            "none",
            "a duration: half-open that long without a decision opens again; none = wait for the \
            permitted calls (resilience4j's 0)",
        )
        .only_with(Needs::Enabled),
        key(
            "automatic_transition",
            "`false`",
            "open turns half-open when `wait_in_open` has passed, without waiting for a call",
        )
        .only_with(Needs::Enabled),
        key("slow_call_rate_threshold", "`100`", "percent, (0, 100]").only_with(Needs::Enabled),
        key(
            "slow_call_duration_threshold",
            "`\"60s\"`",
            "> 0; a call is slow when it takes longer",
        )
        .only_with(Needs::Enabled),
        key(
            "forced",
            "none",
            "`\"open\"` or `\"disabled\"`: a forced state",
        )
        .only_with(Needs::Enabled),
    ]],
    expanded: &[],
};

/// `breaker.placement`: the order of the two decorators, breaker and retry.
///
/// - `PerAttempt` is `Retry(CircuitBreaker(call))`: resilience4j's
///   `Decorators.ofSupplier(call).withCircuitBreaker(cb).withRetry(retry)` (each `with*` wraps
///   what is built so far, so the last is outermost: resilience4j-all `Decorators.java`), Polly's
///   `Policy.Wrap(retry, breaker)` (the leftmost policy is outermost: Polly wiki "PolicyWrap",
///   "Operation" and "Ordering the available policy-types in a wrap"; Polly v8 adds strategies
///   outermost first, docs/pipelines/index.md). The breaker is asked before every attempt and
///   records every attempt's outcome, so retries fill its window and an open breaker fails the
///   call at its next attempt. resilience4j's Retry retries every exception by default
///   (`RetryConfig`'s `DEFAULT_RECORD_FAILURE_PREDICATE = throwable -> true`), including the
///   breaker's `CallNotPermittedException`, unless it is listed in `ignoreExceptions` (the
///   maintainers' advice, resilience4j issues #920 and #1065); the model does not retry a local
///   rejection: the call fails at once, as with `ignoreExceptions(CallNotPermittedException)`.
/// - `AroundRetries` is `CircuitBreaker(Retry(call))`: `.withRetry(retry).withCircuitBreaker(cb)`,
///   `Policy.Wrap(breaker, retry)`. The breaker is asked once per call, before its first try,
///   and records one outcome when the call settles, after its retries: it sees one call per
///   intent, so it opens after that many failed calls rather than failed attempts, and a call it
///   permitted sends every retry (in half-open, the call holds its permit for its whole retry
///   loop).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    #[default]
    PerAttempt,
    AroundRetries,
}

impl Placement {
    pub fn is_per_attempt(&self) -> bool {
        *self == Placement::PerAttempt
    }

    /// The placement's name in a model file.
    pub fn name(self) -> &'static str {
        match self {
            Placement::PerAttempt => "per-attempt",
            Placement::AroundRetries => "around-retries",
        }
    }
}

/// resilience4j's `FORCED_OPEN` and `DISABLED` states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Forced {
    Open,
    Disabled,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            enabled: false,
            scope: Scope::Client,
            retries_only: false,
            placement: Placement::PerAttempt,
            failure_rate_threshold: 50.0,
            window_type: WindowType::CountBased,
            window_size: 100,
            minimum_calls: 100,
            wait_in_open: Duration::from_secs(60),
            permitted_in_half_open: 10,
            max_wait_in_half_open: None,
            automatic_transition: false,
            // `DEFAULT_SLOW_CALL_RATE_THRESHOLD`, `DEFAULT_SLOW_CALL_DURATION_THRESHOLD`.
            slow_call_rate_threshold: 100.0,
            slow_call_duration_threshold: Duration::from_secs(60),
            forced: None,
        }
    }
}

impl BreakerConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        let bad = |path: &str, message: String| {
            Err(Invalid {
                path: path.to_string(),
                message,
            })
        };
        if !(self.failure_rate_threshold > 0.0 && self.failure_rate_threshold <= 100.0) {
            return bad(
                "breaker.failure_rate_threshold",
                format!(
                    "must be a percentage in (0, 100], got {}",
                    self.failure_rate_threshold
                ),
            );
        }
        if !(self.slow_call_rate_threshold > 0.0 && self.slow_call_rate_threshold <= 100.0) {
            return bad(
                "breaker.slow_call_rate_threshold",
                format!(
                    "must be a percentage in (0, 100], got {}",
                    self.slow_call_rate_threshold
                ),
            );
        }
        if self.slow_call_duration_threshold.0 == 0 {
            return bad(
                "breaker.slow_call_duration_threshold",
                "must be a positive duration (resilience4j requires at least 1 ns)".into(),
            );
        }
        if self.window_size == 0 || self.window_size > 1_000_000 {
            return bad(
                "breaker.window_size",
                format!("must be in 1..=1000000, got {}", self.window_size),
            );
        }
        if self.minimum_calls == 0 {
            return bad("breaker.minimum_calls", "must be at least 1".into());
        }
        if self.permitted_in_half_open == 0 {
            return bad(
                "breaker.permitted_in_half_open",
                "must be at least 1".into(),
            );
        }
        if self.wait_in_open.0 == 0 {
            return bad("breaker.wait_in_open", "must be a positive duration".into());
        }
        if self.retries_only && self.placement == Placement::AroundRetries {
            return bad(
                "breaker.placement",
                "\"around-retries\" asks the breaker once per call, before its first try, and retries_only = true lets every first try through: drop one (retries_only needs placement = \"per-attempt\")".into(),
            );
        }
        if self.max_wait_in_half_open == Some(Duration::ZERO) {
            return bad(
                "breaker.max_wait_in_half_open",
                "must be a positive duration (omit it for no limit)".into(),
            );
        }
        Ok(())
    }
}
