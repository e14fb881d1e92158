//! The `[budget]` section: which budget and the settings of every kind (each kind reads its own;
//! its checks are in its file), and its key table ([`BUDGET_KEYS`]).

use super::{AwsVersion, BudgetKind};
use crate::base::invalid::Invalid;
use crate::base::keys::{KeyTable, key};
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
    /// aws: whether a success gives back to the quota (false: an SDK whose adaptive mode never
    /// refills it).
    pub refill: bool,
    /// aws: whether the retry strategy has its token bucket at all (false: an SDK that never set
    /// it, so retries stop only at `retry.max_attempts`).
    pub bucket_set: bool,
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
    /// envoy: count the requests started over this window instead of those in flight (none or
    /// zero: in flight, Envoy's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_interval: Option<Duration>,
    /// aimd: the floor of the budget's ceiling.
    pub min_budget: u64,
    /// aimd: the ceiling the budget starts at and grows back to.
    pub max_budget: u64,
    /// aimd: tokens a success deposits.
    pub deposit_amount: u64,
    /// aimd: tokens a retry withdraws.
    pub withdraw_amount: u64,
    /// aimd: what a refused retry multiplies the ceiling by.
    pub decrease_factor: f64,
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
            refill: true,
            bucket_set: true,
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
            budget_interval: None,
            // tower-resilience `RetryBudgetBuilder::aimd()`.
            min_budget: 10,
            max_budget: 1000,
            deposit_amount: 1,
            withdraw_amount: 1,
            decrease_factor: 0.5,
        }
    }
}

impl BudgetConfig {
    /// The checks of the chosen kind (each budget's own, in its file).
    pub fn validate(&self) -> Result<(), Invalid> {
        self.kind.validate(self)
    }
}

/// `[budget]`'s keys (also a `[[tier]]`'s `budget`), in the struct's order: each kind reads its
/// own, named first in its doc line.
pub const BUDGET_KEYS: KeyTable = KeyTable {
    section: "budget",
    schema: "BudgetConfig",
    docs: &[("docs/policies.md", "## Retry budgets: `[budget]`")],
    runs: &[&[
        key(
            "kind",
            "`\"none\"`",
            "`none`, `grpc`, `aws`, `finagle`, `adaptive`, `token-bucket`, `failure-ratio`, \
            `envoy`, `tower`, `linkerd`, `ratio` or `aimd`: the algorithm (below); the keys of \
            the other kinds are ignored",
        ),
        key(
            "scope",
            "`\"client\"`",
            "`\"client\"`: one budget per client process; `\"shared\"`: one for every client \
            (\"Scope\", above)",
        ),
        key(
            "max_tokens",
            "`10`",
            "grpc: `maxTokens`, in (0, 1000]; the gRFC's example",
        ),
        key(
            "token_ratio",
            "`0.1`",
            "grpc: `tokenRatio`, > 0, kept in thousandths; the gRFC's example",
        ),
        key("quota", "`500`", "aws: the initial and largest quota, >= 1"),
        key(
            "retry_cost",
            "`5`",
            "aws: what a retry costs (`classic`: after anything but a timeout; `js`: after a \
            throttle), >= 1",
        ),
        key(
            "timeout_cost",
            "`10`",
            "aws: what a retry after a timeout costs (`js`: after any transient error), >= 1",
        ),
        key(
            "no_retry_increment",
            "`1`",
            "aws: what a success that needed no retry gives back",
        ),
        key(
            "version",
            "`\"classic\"`",
            "aws: whose cost rule, `\"classic\"`, `\"js\"` or `\"2026\"` (below)",
        ),
        key(
            "throttling_cost",
            "`5`",
            "aws, version `\"2026\"`: what a retry after a throttle (429) costs, >= 1",
        ),
        key(
            "retry_cost_v2",
            "`14`",
            "aws, version `\"2026\"`: what any other retry costs, timeouts included, >= 1",
        ),
        key(
            "refill",
            "`true`",
            "aws: `false`: a success gives nothing back, so the quota once spent stays spent \
            (the SDK bug below)",
        ),
        key(
            "bucket_set",
            "`true`",
            "aws: `false`: the retry strategy has no token bucket, so it never refuses a retry \
            and retries stop only at `retry.max_attempts` (the SDK bug below)",
        ),
        key(
            "ttl",
            "`\"10s\"`",
            "finagle, tower, linkerd: how long a deposit counts, 1 s to 60 s",
        ),
        key(
            "min_retries_per_sec",
            "`10`",
            "finagle, tower, linkerd: retries per second allowed whatever the load, a whole \
            number (tower, linkerd: `< i32::MAX`)",
        ),
        key(
            "percent_can_retry",
            "`0.2`",
            "finagle, tower, linkerd: retries a request earns, 0 to 1000; ratio: retries a call \
            earns, >= 0",
        ),
        key(
            "k",
            "`2.0`",
            "adaptive: the multiplier K, >= 1; the book's value",
        ),
        key(
            "window",
            "`\"2m\"`",
            "adaptive: the history the counts cover (10 slices), > 0; the book's \"two minutes \
            of history\"",
        ),
        key(
            "min_retries",
            "`0`",
            "ratio: the starting balance of retries",
        ),
        key(
            "bucket_size",
            "`5`",
            "token-bucket: the most tokens the bucket holds (it starts full), > 0 (Brooker's \
            `bucket_size`)",
        ),
        key(
            "fill_per_call",
            "`0.1`",
            "token-bucket: tokens each call (first try) adds, >= 0 (Brooker's \
            `bucket_fill_rate`)",
        ),
        key(
            "max_failure_rate",
            "`0.1`",
            "failure-ratio: failed attempts per call above which no retry is sent, >= 0 \
            (Brooker's `max_rate`)",
        ),
        key(
            "budget_percent",
            "none",
            "envoy: retries in progress allowed, in percent of the active requests, in [0, 100] \
            (20 when only `min_retry_concurrency` is set)",
        ),
        key(
            "min_retry_concurrency",
            "none",
            "envoy: retries in progress always allowed (3 when only `budget_percent` is set)",
        ),
        key(
            "max_retries",
            "`3`",
            "envoy: the `max_retries` circuit breaker, used when neither budget key is set",
        ),
        key(
            "budget_interval",
            "none",
            "envoy: a duration, at least 10 ms: the budget's percentage is of the requests \
            started over the last `budget_interval` (ten slots), not of those in flight; none \
            or `\"0s\"`: in flight, as Envoy; needs `budget_percent` or `min_retry_concurrency`",
        ),
        key(
            "min_budget",
            "`10`",
            "aimd: the lowest the ceiling falls to",
        ),
        key(
            "max_budget",
            "`1000`",
            "aimd: the ceiling and the tokens the budget starts with, >= `min_budget`",
        ),
        key(
            "deposit_amount",
            "`1`",
            "aimd: tokens a success deposits, >= 1",
        ),
        key(
            "withdraw_amount",
            "`1`",
            "aimd: tokens a retry withdraws, >= 1",
        ),
        key(
            "decrease_factor",
            "`0.5`",
            "aimd: a refused retry multiplies the ceiling by it, in [0, 1)",
        ),
    ]],
    expanded: &[],
};
