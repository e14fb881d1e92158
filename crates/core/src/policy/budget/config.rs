//! The `[budget]` section: which budget, its settings and their checks.

use crate::base::invalid::Invalid;
use crate::base::time::Duration;
use crate::policy::Scope;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetKind {
    /// No budget: every retry the retry policy allows is sent.
    None,
    /// gRPC retry throttling (gRFC A6).
    Grpc,
    /// AWS SDK standard-mode retry quota.
    Aws,
    /// Finagle's `RetryBudget`.
    Finagle,
    /// The SRE book's client-side adaptive throttling.
    Adaptive,
    /// Brooker's token bucket (`retry_sim`'s `AdaptiveRetryStrategy`): every call adds
    /// `fill_per_call` tokens (up to `bucket_size`, where it starts); a retry needs more than one
    /// token and takes one.
    TokenBucket,
    /// Brooker's retry breaker (`retry_sim`'s `CircuitBreakerRetryStrategy`): no retry while the
    /// failed attempts so far exceed `max_failure_rate` times the calls so far (no window, no
    /// open or half-open state).
    FailureRatio,
    /// Envoy's cluster retry budget (`circuit_breakers.thresholds.retry_budget`) or, without
    /// `budget_percent` and `min_retry_concurrency`, its `max_retries` circuit breaker.
    Envoy,
    /// tower's retry budget (`tower::retry::budget::Budget` in 0.4, `TpsBudget` in 0.5) with
    /// the deposit where tower's module example puts it: on a success. `ttl`,
    /// `min_retries_per_sec` (tower's `min_per_sec`), `percent_can_retry` (`retry_percent`).
    Tower,
    /// Linkerd's ServiceProfile `retryBudget` (linkerd2-proxy builds a tower `TpsBudget` from
    /// `ttl`, `minRetriesPerSecond`, `retryRatio`): every response the proxy will not retry
    /// deposits, every retry withdraws.
    Linkerd,
    /// Finagle's arithmetic without its time window (the `[[layer]]` tables' `kind = "ratio"`):
    /// each call deposits `percent_can_retry` retries, each retry withdraws one, and the balance
    /// starts at `min_retries`. So retries <= `min_retries + percent_can_retry * calls`.
    Ratio,
}

/// Which published AWS quota rule decides a retry's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AwsVersion {
    /// botocore `RetryQuotaChecker` before 2026: `timeout_cost` after a timeout (botocore's
    /// `ConnectTimeoutError`, `ReadTimeoutError`), `retry_cost` otherwise.
    Classic,
    /// smithy-typescript (aws-sdk-js-v3) `StandardRetryStrategy.getCapacityCost`: `timeout_cost`
    /// for every "TRANSIENT" error (timeouts, connection errors, 500/502/503/504), `retry_cost`
    /// otherwise (throttling).
    Js,
    /// botocore behind `AWS_NEW_RETRIES_2026` (and smithy's `SMITHY_NEW_RETRIES_2026`):
    /// `throttling_cost` after a throttling error, `retry_cost_v2` otherwise (timeouts included).
    #[serde(rename = "2026")]
    V2026,
}

/// The `[budget]` section. Only the fields of the chosen `kind` are used.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    pub kind: BudgetKind,
    /// One budget per client process, or one shared by all clients.
    pub scope: Scope,
    /// grpc: `maxTokens`, in (0, 1000].
    pub max_tokens: f64,
    /// grpc: `tokenRatio`, > 0, at most 3 decimals.
    pub token_ratio: f64,
    /// aws: the initial (and largest) quota.
    pub quota: u32,
    /// aws: what a retry costs.
    pub retry_cost: u32,
    /// aws: what a retry after a timeout costs.
    pub timeout_cost: u32,
    /// aws: what a success without retries gives back.
    pub no_retry_increment: u32,
    /// aws: which published cost rule applies.
    pub version: AwsVersion,
    /// aws, version "2026": what a retry after a throttling error (429) costs.
    pub throttling_cost: u32,
    /// aws, version "2026": what any other retry costs (botocore `_RETRY_COST_V2`).
    pub retry_cost_v2: u32,
    /// finagle: how long deposits and withdrawals count, 1 s to 60 s.
    pub ttl: Duration,
    /// finagle: retries per second allowed whatever the request rate.
    pub min_retries_per_sec: u32,
    /// finagle: retries allowed as a fraction of requests (0.2 = 20 %).
    pub percent_can_retry: f64,
    /// adaptive: the multiplier K.
    pub k: f64,
    /// adaptive: how much history the counts cover.
    pub window: Duration,
    /// ratio: the starting balance of retries.
    pub min_retries: u64,
    /// token-bucket: the most tokens the bucket holds (it starts full).
    pub bucket_size: f64,
    /// token-bucket: tokens each call (first try) adds.
    pub fill_per_call: f64,
    /// failure-ratio: the failed attempts per call above which no retry is sent.
    pub max_failure_rate: f64,
    /// envoy: retries in progress allowed, in percent of the active requests (Envoy's default
    /// 20 when only `min_retry_concurrency` is given).
    pub budget_percent: Option<f64>,
    /// envoy: retries in progress always allowed (Envoy's default 3 when only `budget_percent`
    /// is given).
    pub min_retry_concurrency: Option<u32>,
    /// envoy: the `max_retries` circuit breaker, used when neither of the above is set.
    pub max_retries: u32,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            kind: BudgetKind::None,
            scope: Scope::Client,
            // gRFC A6's example service config.
            max_tokens: 10.0,
            token_ratio: 0.1,
            quota: 500,
            retry_cost: 5,
            timeout_cost: 10,
            no_retry_increment: 1,
            version: AwsVersion::Classic,
            throttling_cost: 5,
            retry_cost_v2: 14,
            ttl: Duration::from_secs(10),
            min_retries_per_sec: 10,
            percent_can_retry: 0.2,
            k: 2.0,
            window: Duration::from_secs(120),
            min_retries: 0,
            // Brooker's retry_sim: AdaptiveRetryFactory(0.1, 5), CircuitBreakerRetryFactory(.., 0.1).
            bucket_size: 5.0,
            fill_per_call: 0.1,
            max_failure_rate: 0.1,
            budget_percent: None,
            min_retry_concurrency: None,
            // Envoy `circuit_breaker.proto`: max_retries defaults to 3.
            max_retries: 3,
        }
    }
}

fn invalid(path: &str, message: String) -> Invalid {
    Invalid {
        path: path.to_string(),
        message,
    }
}

impl BudgetConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        match self.kind {
            BudgetKind::None => {}
            BudgetKind::Grpc => {
                if !(self.max_tokens > 0.0 && self.max_tokens <= 1000.0) {
                    return Err(invalid(
                        "budget.max_tokens",
                        format!(
                            "gRPC's maxTokens must be in (0, 1000], got {}",
                            self.max_tokens
                        ),
                    ));
                }
                if !(self.token_ratio.is_finite() && self.token_ratio > 0.0) {
                    return Err(invalid(
                        "budget.token_ratio",
                        format!("gRPC's tokenRatio must be > 0, got {}", self.token_ratio),
                    ));
                }
            }
            BudgetKind::Aws => self.validate_aws()?,
            BudgetKind::Finagle => {
                if self.ttl < Duration::from_secs(1) || self.ttl > Duration::from_secs(60) {
                    return Err(invalid(
                        "budget.ttl",
                        format!("Finagle requires 1s <= ttl <= 60s, got {}", self.ttl),
                    ));
                }
                if !(self.percent_can_retry.is_finite()
                    && (0.0..=1000.0).contains(&self.percent_can_retry))
                {
                    return Err(invalid(
                        "budget.percent_can_retry",
                        format!(
                            "Finagle requires 0 <= percentCanRetry <= 1000, got {}",
                            self.percent_can_retry
                        ),
                    ));
                }
            }
            BudgetKind::Tower | BudgetKind::Linkerd => self.validate_tower()?,
            BudgetKind::TokenBucket => {
                if !(self.bucket_size.is_finite() && self.bucket_size > 0.0) {
                    return Err(invalid(
                        "budget.bucket_size",
                        format!("must be a finite number > 0, got {}", self.bucket_size),
                    ));
                }
                if !(self.fill_per_call.is_finite() && self.fill_per_call >= 0.0) {
                    return Err(invalid(
                        "budget.fill_per_call",
                        format!("must be a finite number >= 0, got {}", self.fill_per_call),
                    ));
                }
            }
            BudgetKind::FailureRatio => {
                if !(self.max_failure_rate.is_finite() && self.max_failure_rate >= 0.0) {
                    return Err(invalid(
                        "budget.max_failure_rate",
                        format!(
                            "must be a finite number >= 0, got {}",
                            self.max_failure_rate
                        ),
                    ));
                }
            }
            BudgetKind::Ratio => {
                if !(self.percent_can_retry.is_finite() && self.percent_can_retry >= 0.0) {
                    return Err(invalid(
                        "budget.percent_can_retry",
                        format!(
                            "must be a finite number >= 0, got {}",
                            self.percent_can_retry
                        ),
                    ));
                }
            }
            BudgetKind::Envoy => {
                if let Some(p) = self.budget_percent
                    && !(p.is_finite() && (0.0..=100.0).contains(&p))
                {
                    return Err(invalid(
                        "budget.budget_percent",
                        format!("Envoy's budget_percent is a percentage in [0, 100], got {p}"),
                    ));
                }
            }
            BudgetKind::Adaptive => self.validate_adaptive()?,
        }
        Ok(())
    }

    /// tower's `TpsBudget` and Linkerd's `retryBudget`: the ranges their constructors accept.
    fn validate_tower(&self) -> Result<(), Invalid> {
        let (who, ignored) = if self.kind == BudgetKind::Tower {
            ("tower's TpsBudget::new asserts", "")
        } else {
            (
                "linkerd2-proxy requires",
                " (the proxy ignores such a retryBudget and does not retry)",
            )
        };
        if self.ttl < Duration::from_secs(1) || self.ttl > Duration::from_secs(60) {
            return Err(invalid(
                "budget.ttl",
                format!("{who} 1s <= ttl <= 60s, got {}{ignored}", self.ttl),
            ));
        }
        if !(self.percent_can_retry.is_finite() && (0.0..=1000.0).contains(&self.percent_can_retry))
        {
            return Err(invalid(
                "budget.percent_can_retry",
                format!(
                    "{who} 0 <= retry percent (ratio) <= 1000, got {}{ignored}",
                    self.percent_can_retry
                ),
            ));
        }
        if self.min_retries_per_sec >= i32::MAX as u32 {
            return Err(invalid(
                "budget.min_retries_per_sec",
                format!(
                    "{who} min retries per second < {}, got {}{ignored}",
                    i32::MAX,
                    self.min_retries_per_sec
                ),
            ));
        }
        Ok(())
    }

    /// The AWS SDKs' retry quota: a positive quota and positive costs.
    fn validate_aws(&self) -> Result<(), Invalid> {
        if self.quota == 0 {
            return Err(invalid("budget.quota", "must be at least 1".into()));
        }
        let costs = [
            ("budget.retry_cost", self.retry_cost),
            ("budget.timeout_cost", self.timeout_cost),
            ("budget.throttling_cost", self.throttling_cost),
            ("budget.retry_cost_v2", self.retry_cost_v2),
        ];
        if let Some((path, _)) = costs.iter().find(|(_, c)| *c == 0) {
            return Err(invalid(
                path,
                "must be at least 1 (a free retry is no budget)".into(),
            ));
        }
        Ok(())
    }

    /// The SRE book's adaptive throttling: `k` >= 1 over a positive window.
    fn validate_adaptive(&self) -> Result<(), Invalid> {
        if !(self.k.is_finite() && self.k >= 1.0) {
            return Err(invalid(
                "budget.k",
                format!(
                    "must be a number >= 1 (the SRE book uses 2), got {}",
                    self.k
                ),
            ));
        }
        if self.window.0 == 0 {
            return Err(invalid(
                "budget.window",
                "must be a positive duration".into(),
            ));
        }
        Ok(())
    }
}
