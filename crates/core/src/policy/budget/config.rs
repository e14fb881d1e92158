//! The `[budget]` section: which budget and the settings of every kind (each kind reads its own;
//! its checks are in its file).

use super::{AwsVersion, BudgetKind};
use crate::base::invalid::Invalid;
use crate::base::time::Duration;
use crate::policy::Scope;
use serde::{Deserialize, Serialize};

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

impl BudgetConfig {
    /// The checks of the chosen kind (each budget's own, in its file).
    pub fn validate(&self) -> Result<(), Invalid> {
        self.kind.validate(self)
    }
}
