//! Retry budgets: published ways for a client to stop retries from multiplying load.
//!
//! - **gRPC retry throttling** (gRFC A6 "gRPC Retry Design", section "Throttling Retry Attempts
//!   and Hedged RPCs"; grpc-core `retry_throttle.cc`): a token count starts at `maxTokens`; every
//!   failed attempt takes 1 token, every success adds `tokenRatio` (capped at `maxTokens`); while
//!   the count is `<= maxTokens / 2` no retry (and no hedge) is sent. Tokens are kept in
//!   thousandths, as grpc-core does (`tokenRatio` has at most 3 decimals).
//! - **AWS SDK standard retry quota** (AWS SDKs and Tools Reference Guide, "Retry behavior",
//!   standard mode; botocore `retries/standard.py` `RetryQuotaChecker`, aws-sdk-js-v3
//!   `defaultRetryQuota.ts`): a quota of `INITIAL_RETRY_TOKENS = 500`; a retry costs
//!   `RETRY_COST = 5`, or `TIMEOUT_RETRY_COST = 10` after a timeout; no retry when the quota
//!   cannot pay; a success refunds what its retry cost, or `NO_RETRY_INCREMENT = 1` when it needed
//!   no retry, never above the initial quota. `version` picks who pays what ([`AwsVersion`]):
//!   botocore's long-standing rule, the JS SDK's (smithy-typescript `StandardRetryStrategy`,
//!   10 for every transient error), or the 2026 rule (botocore `RetryQuotaChecker._RETRY_COST_V2
//!   = 14`, `_THROTTLING_RETRY_COST = 5`, behind `AWS_NEW_RETRIES_2026`).
//! - **Finagle `RetryBudget`** (`com.twitter.finagle.service.RetryBudget`): every request deposits
//!   1000 into a leaky bucket (a [`WindowedAdder`] over `ttl`), a retry withdraws
//!   `1000 / percentCanRetry` and is allowed only when the balance covers it; the balance has a
//!   reserve of `minRetriesPerSec * ttl(s) * withdrawal` so that a quiet client may still retry.
//!   Deposits and withdrawals both expire after `ttl`. Defaults: ttl 10 s, 10 retries/s, 20 %.
//! - **SRE client-side adaptive throttling** (Beyer et al., *Site Reliability Engineering*,
//!   O'Reilly 2016, ch. 21 "Handling Overload"): the client counts `requests` (attempts its
//!   application made) and `accepts` (attempts the backend accepted) over a window (the book uses
//!   two minutes) and rejects a new attempt locally with probability
//!   `max(0, (requests - K * accepts) / (requests + 1))`, K = 2 by default. It applies to first
//!   tries and retries alike; a request rejected locally is never sent.
//! - **tower's retry budget and Linkerd's `retryBudget`** ([`TowerBudget`]): tower's
//!   `TpsBudget` (0.5; `Budget` in 0.4), ten slots over `ttl`, deposits of 1 (or 1000), a
//!   withdrawal of `1 / retry_percent` truncated in `f32`, a reserve of `min_per_sec * ttl`
//!   withdrawals. `tower` deposits on a success (tower's module example), `linkerd` on every
//!   response linkerd2-proxy will not retry.

use super::window::WindowedAdder;
use super::{Class, Scope};
use crate::invalid::Invalid;
use crate::time::{Duration, Time};
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
            BudgetKind::Aws => {
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
            }
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
            BudgetKind::Tower | BudgetKind::Linkerd => {
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
                if !(self.percent_can_retry.is_finite()
                    && (0.0..=1000.0).contains(&self.percent_can_retry))
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
            }
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
            BudgetKind::Adaptive => {
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
            }
        }
        Ok(())
    }
}

/// gRPC retry throttling state: tokens in thousandths, as grpc-core keeps them.
#[derive(Clone, Debug)]
pub struct GrpcThrottle {
    max_milli: i64,
    ratio_milli: i64,
    milli: i64,
}

impl GrpcThrottle {
    pub fn new(max_tokens: f64, token_ratio: f64) -> Self {
        let max_milli = (max_tokens * 1000.0).round() as i64;
        GrpcThrottle {
            max_milli,
            ratio_milli: (token_ratio * 1000.0).round() as i64,
            milli: max_milli,
        }
    }
    /// A failed attempt takes one token (never below zero).
    pub fn on_failure(&mut self) {
        self.milli = (self.milli - 1000).max(0);
    }
    /// A success adds `tokenRatio`, up to `maxTokens`.
    pub fn on_success(&mut self) {
        self.milli = (self.milli + self.ratio_milli).min(self.max_milli);
    }
    /// Retries (and hedges) are allowed only while `tokens > maxTokens / 2`.
    pub fn allows(&self) -> bool {
        self.milli * 2 > self.max_milli
    }
    pub fn tokens(&self) -> f64 {
        self.milli as f64 / 1000.0
    }
}

/// The AWS SDK standard-mode retry quota.
#[derive(Clone, Debug)]
pub struct AwsQuota {
    max: u32,
    available: u32,
    retry_cost: u32,
    timeout_cost: u32,
    no_retry_increment: u32,
    version: AwsVersion,
    throttling_cost: u32,
    retry_cost_v2: u32,
}

impl AwsQuota {
    pub fn new(c: &BudgetConfig) -> Self {
        AwsQuota {
            max: c.quota,
            available: c.quota,
            retry_cost: c.retry_cost,
            timeout_cost: c.timeout_cost,
            no_retry_increment: c.no_retry_increment,
            version: c.version,
            throttling_cost: c.throttling_cost,
            retry_cost_v2: c.retry_cost_v2,
        }
    }
    /// What a retry after an attempt that ended in `class` costs under this version's rule.
    pub fn cost(&self, class: Class) -> u32 {
        match self.version {
            AwsVersion::Classic if class == Class::Timeout => self.timeout_cost,
            AwsVersion::Classic => self.retry_cost,
            AwsVersion::Js => match class {
                Class::Timeout | Class::Connection | Class::Unavailable | Class::ServerError => {
                    self.timeout_cost
                }
                _ => self.retry_cost,
            },
            AwsVersion::V2026 if class == Class::Throttled => self.throttling_cost,
            AwsVersion::V2026 => self.retry_cost_v2,
        }
    }
    /// Takes the cost of a retry after `class`, or refuses it when the quota cannot pay.
    pub fn acquire(&mut self, class: Class) -> Option<u32> {
        let cost = self.cost(class);
        (self.available >= cost).then(|| {
            self.available -= cost;
            cost
        })
    }
    /// A success refunds what its retry cost (`cost > 0`), or `NO_RETRY_INCREMENT`.
    pub fn release(&mut self, cost: u32) {
        let back = if cost > 0 {
            cost
        } else {
            self.no_retry_increment
        };
        self.available = (self.available + back).min(self.max);
    }
    pub fn available(&self) -> u32 {
        self.available
    }
}

/// Finagle's `TokenRetryBudget` over a leaky bucket.
#[derive(Clone, Debug)]
pub struct FinagleBudget {
    bucket: WindowedAdder,
    reserve: i64,
    deposit: i64,
    withdrawal: i64,
}

/// Finagle's `RetryBudget.ScaleFactor`.
const SCALE: f64 = 1000.0;

impl FinagleBudget {
    pub fn new(ttl: Duration, min_retries_per_sec: u32, percent_can_retry: f64) -> Self {
        let (deposit, withdrawal) = if percent_can_retry == 0.0 {
            // Only the reserve: every retry costs 1, requests earn nothing.
            (0, 1)
        } else {
            (SCALE as i64, (SCALE / percent_can_retry) as i64)
        };
        // `ttl.inSeconds` truncates to whole seconds.
        let reserve = i64::from(min_retries_per_sec) * (ttl.0 / 1_000_000_000) as i64 * withdrawal;
        FinagleBudget {
            bucket: WindowedAdder::new(ttl),
            reserve,
            deposit,
            withdrawal,
        }
    }
    /// Every request (not its retries) deposits.
    pub fn deposit(&mut self, now: Time) {
        if self.deposit != 0 {
            self.bucket.add(now, self.deposit);
        }
    }
    /// `tryWithdraw`: allowed when `windowed sum + reserve >= withdrawal`.
    pub fn try_withdraw(&mut self, now: Time) -> bool {
        let ok = self.bucket.sum(now) + self.reserve >= self.withdrawal;
        if ok {
            self.bucket.add(now, -self.withdrawal);
        }
        ok
    }
    /// Retries the budget would allow now.
    pub fn balance(&mut self, now: Time) -> i64 {
        (self.bucket.sum(now) + self.reserve) / self.withdrawal
    }
}

/// tower's retry budget: `tower/src/retry/budget.rs` (`Budget`, `Bucket`; tower 0.4.13) and
/// `tower/src/retry/budget/tps_budget.rs` (`TpsBudget`; tower 0.5.3), whose arithmetic is the
/// same. Linkerd's proxy uses it as is (linkerd2-proxy `linkerd/service-profiles/src/proto.rs`,
/// `convert_retry_budget`).
///
/// - `new(ttl, min_per_sec, retry_percent: f32)`: `(deposit, withdraw)` is `(0, 1)` when
///   `retry_percent == 0`, `(1, (1.0 / retry_percent) as isize)` when `retry_percent <= 1`,
///   else `(1000, (1000.0 / retry_percent) as isize)`, in `f32` and truncated (so 0.3 withdraws
///   3, i.e. one retry per 3 deposits, and 0.7 withdraws 1). `reserve = min_per_sec *
///   ttl.as_secs() * withdraw`.
/// - Ten slots of `ttl / 10` each, plus a `writer` for the current slot. `expire()`: nothing
///   until `window` has passed since the generation's time; then the writer is committed to
///   `slots[index]`, one slot is zeroed per `window` beyond the first (the `while diff > window`
///   loop, at most all ten here), `index` moves past them, and the generation's time becomes
///   *now* (not a slot boundary).
/// - `sum() = writer + slots + reserve`; `try_get(amt)` takes `amt` when `sum >= amt`.
///
/// The generation starts at time zero, as tower's starts at `Instant::now()` on construction.
#[derive(Clone, Debug)]
pub struct TowerBudget {
    slots: [i64; 10],
    writer: i64,
    index: usize,
    generation: Time,
    /// `ttl / 10` in ns (`Duration / u32`, exact for whole nanoseconds).
    window: u64,
    reserve: i64,
    deposit: i64,
    withdraw: i64,
}

impl TowerBudget {
    pub fn new(ttl: Duration, min_per_sec: u32, retry_percent: f64) -> Self {
        // tower takes `retry_percent: f32` (Linkerd's proto `retry_ratio` is a `float`).
        let p = retry_percent as f32;
        let (deposit, withdraw) = if p == 0.0 {
            (0, 1)
        } else if p <= 1.0 {
            (1, (1.0f32 / p) as i64)
        } else {
            (1000, (1000.0f32 / p) as i64)
        };
        let reserve = i64::from(min_per_sec)
            .saturating_mul((ttl.0 / 1_000_000_000) as i64)
            .saturating_mul(withdraw);
        TowerBudget {
            slots: [0; 10],
            writer: 0,
            index: 0,
            generation: Time::ZERO,
            window: ttl.0 / 10,
            reserve,
            deposit,
            withdraw,
        }
    }
    /// `Bucket::expire`.
    fn expire(&mut self, now: Time) {
        let diff = now.0.saturating_sub(self.generation.0);
        if diff < self.window || self.window == 0 {
            return;
        }
        self.slots[self.index] = std::mem::take(&mut self.writer);
        // The `while diff > window` loop runs ceil(diff / window) - 1 times.
        let zeroed = (diff - 1) / self.window;
        let n = self.slots.len() as u64;
        for k in 0..zeroed.min(n) {
            self.slots[((self.index as u64 + 1 + k) % n) as usize] = 0;
        }
        self.index = ((self.index as u64 + 1 + zeroed % n) % n) as usize;
        self.generation = now;
    }
    /// `Bucket::sum`: the writer, the slots and the reserve.
    pub fn sum(&self) -> i64 {
        self.slots
            .iter()
            .fold(self.writer, |a, &s| a.saturating_add(s))
            .saturating_add(self.reserve)
    }
    /// `Budget::deposit`.
    pub fn deposit(&mut self, now: Time) {
        self.expire(now);
        self.writer += self.deposit;
    }
    /// `Budget::withdraw`: true when the balance covers a withdrawal, which it then takes.
    pub fn withdraw(&mut self, now: Time) -> bool {
        self.expire(now);
        let ok = self.sum() >= self.withdraw;
        if ok {
            self.writer -= self.withdraw;
        }
        ok
    }
    /// `(deposit, withdraw)` per call, as tower computes them.
    pub fn amounts(&self) -> (i64, i64) {
        (self.deposit, self.withdraw)
    }
}

/// The SRE book's client-side adaptive throttling.
#[derive(Clone, Debug)]
pub struct AdaptiveThrottle {
    k: f64,
    requests: WindowedAdder,
    accepts: WindowedAdder,
}

impl AdaptiveThrottle {
    pub fn new(k: f64, window: Duration) -> Self {
        AdaptiveThrottle {
            k,
            requests: WindowedAdder::new(window),
            accepts: WindowedAdder::new(window),
        }
    }
    /// `max(0, (requests - K * accepts) / (requests + 1))` over the window, before this request.
    pub fn reject_probability(&mut self, now: Time) -> f64 {
        let r = self.requests.sum(now) as f64;
        let a = self.accepts.sum(now) as f64;
        ((r - self.k * a) / (r + 1.0)).max(0.0)
    }
    /// The application makes a request: counted whether or not it is then rejected locally.
    /// `u` is a uniform draw in [0, 1). Returns whether the request may be sent.
    pub fn admit(&mut self, now: Time, u: f64) -> bool {
        let p = self.reject_probability(now);
        self.requests.add(now, 1);
        u >= p
    }
    pub fn accepted(&mut self, now: Time) {
        self.accepts.add(now, 1);
    }
}

/// A balance of retries fed by calls, without a time window ([`BudgetKind::Ratio`]).
#[derive(Clone, Debug)]
pub struct RatioBudget {
    balance: f64,
    ratio: f64,
}

impl RatioBudget {
    pub fn new(ratio: f64, min_retries: u64) -> Self {
        RatioBudget {
            balance: min_retries as f64,
            ratio,
        }
    }
    pub fn deposit(&mut self) {
        self.balance += self.ratio;
    }
    pub fn try_withdraw(&mut self) -> bool {
        let ok = self.balance >= 1.0;
        if ok {
            self.balance -= 1.0;
        }
        ok
    }
}

/// Brooker's token bucket (mbrooker/simulator_example, `retry_sim/retry_strategy.py`,
/// `AdaptiveRetryStrategy`): `start()` adds the fill, `should_retry()` needs `bucket > 1.0`.
#[derive(Clone, Debug)]
pub struct BrookerBucket {
    tokens: f64,
    size: f64,
    fill: f64,
}

impl BrookerBucket {
    pub fn new(size: f64, fill: f64) -> Self {
        BrookerBucket {
            tokens: size,
            size,
            fill,
        }
    }
    pub fn on_call(&mut self) {
        self.tokens = (self.tokens + self.fill).min(self.size);
    }
    pub fn try_withdraw(&mut self) -> bool {
        let ok = self.tokens > 1.0;
        if ok {
            self.tokens -= 1.0;
        }
        ok
    }
}

/// Brooker's retry breaker (the same file, `CircuitBreakerRetryStrategy`): cumulative counts of
/// calls and failed attempts; a retry only while `failures / calls <= max_rate`.
#[derive(Clone, Debug)]
pub struct FailureRatio {
    calls: f64,
    failures: f64,
    max_rate: f64,
}

impl FailureRatio {
    pub fn new(max_rate: f64) -> Self {
        FailureRatio {
            calls: 0.0,
            failures: 0.0,
            max_rate,
        }
    }
    pub fn allows(&self) -> bool {
        self.calls > 0.0 && self.failures / self.calls <= self.max_rate
    }
}

/// Envoy's retry limit (`source/common/upstream/resource_manager_impl.h`, `RetryBudgetImpl`;
/// `source/common/router/retry_state_impl.cc`): a retry may start while the retries in
/// progress are fewer than `max(min_retry_concurrency, budget_percent / 100 * active)` (the
/// product truncated to an integer, as the C++ cast does), where `active` counts requests in
/// flight to the cluster. Without a budget it is the `max_retries` circuit breaker. A retry is in
/// progress from the decision (`retries().inc()`) until its attempt's outcome is judged
/// (`resetRetry()` at the next `shouldRetry`) or the request ends.
#[derive(Clone, Debug)]
pub struct EnvoyBudget {
    /// Percent, and the floor; `None` = the `max_retries` breaker.
    budget: Option<(f64, u64)>,
    max_retries: u64,
    in_flight: u64,
    retries: u64,
}

impl EnvoyBudget {
    pub fn new(c: &BudgetConfig) -> Self {
        let budget = (c.budget_percent.is_some() || c.min_retry_concurrency.is_some()).then(|| {
            (
                c.budget_percent.unwrap_or(20.0),
                u64::from(c.min_retry_concurrency.unwrap_or(3)),
            )
        });
        EnvoyBudget {
            budget,
            max_retries: u64::from(c.max_retries),
            in_flight: 0,
            retries: 0,
        }
    }
    /// `RetryBudgetImpl::max()`.
    pub fn max(&self) -> u64 {
        match self.budget {
            Some((pct, min)) => ((pct / 100.0 * self.in_flight as f64) as u64).max(min),
            None => self.max_retries,
        }
    }
    /// `canCreate()` then `inc()`.
    pub fn try_start(&mut self) -> bool {
        let ok = self.retries < self.max();
        self.retries += u64::from(ok);
        ok
    }
    pub fn sent(&mut self) {
        self.in_flight += 1;
    }
    /// An attempt's outcome is known; `was_retry` releases the retry it held.
    pub fn ended(&mut self, was_retry: bool) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if was_retry {
            self.retries = self.retries.saturating_sub(1);
        }
    }
    pub fn retries_in_progress(&self) -> u64 {
        self.retries
    }
}

/// One budget instance, of the configured kind.
#[derive(Clone, Debug)]
pub enum Budget {
    Unlimited,
    TokenBucket(BrookerBucket),
    FailureRatio(FailureRatio),
    Ratio(RatioBudget),
    Grpc(GrpcThrottle),
    Aws(AwsQuota),
    Finagle(FinagleBudget),
    Adaptive(AdaptiveThrottle),
    Envoy(EnvoyBudget),
    /// tower's budget; `true` = Linkerd's deposit rule (every response not retried).
    Tower(TowerBudget, bool),
}

impl Budget {
    pub fn new(c: &BudgetConfig) -> Self {
        match c.kind {
            BudgetKind::None => Budget::Unlimited,
            BudgetKind::Grpc => Budget::Grpc(GrpcThrottle::new(c.max_tokens, c.token_ratio)),
            BudgetKind::Aws => Budget::Aws(AwsQuota::new(c)),
            BudgetKind::Finagle => Budget::Finagle(FinagleBudget::new(
                c.ttl,
                c.min_retries_per_sec,
                c.percent_can_retry,
            )),
            BudgetKind::Adaptive => Budget::Adaptive(AdaptiveThrottle::new(c.k, c.window)),
            BudgetKind::TokenBucket => {
                Budget::TokenBucket(BrookerBucket::new(c.bucket_size, c.fill_per_call))
            }
            BudgetKind::FailureRatio => Budget::FailureRatio(FailureRatio::new(c.max_failure_rate)),
            BudgetKind::Ratio => {
                Budget::Ratio(RatioBudget::new(c.percent_can_retry, c.min_retries))
            }
            BudgetKind::Envoy => Budget::Envoy(EnvoyBudget::new(c)),
            BudgetKind::Tower | BudgetKind::Linkerd => Budget::Tower(
                TowerBudget::new(c.ttl, c.min_retries_per_sec, c.percent_can_retry),
                c.kind == BudgetKind::Linkerd,
            ),
        }
    }

    /// Before any attempt goes out (first try or retry): adaptive throttling may reject it
    /// locally; Finagle counts a first try as a deposit. `u` is a uniform draw.
    #[inline]
    pub fn on_send(&mut self, now: Time, first: bool, u: f64) -> bool {
        match self {
            Budget::Adaptive(a) => a.admit(now, u),
            Budget::Finagle(f) => {
                if first {
                    f.deposit(now);
                }
                true
            }
            Budget::Ratio(r) => {
                if first {
                    r.deposit();
                }
                true
            }
            Budget::TokenBucket(b) => {
                if first {
                    b.on_call();
                }
                true
            }
            Budget::FailureRatio(f) => {
                if first {
                    f.calls += 1.0;
                }
                true
            }
            Budget::Envoy(e) => {
                e.sent();
                true
            }
            _ => true,
        }
    }

    /// An attempt `on_send` admitted was not sent after all (a breaker rejected it, or the call
    /// above was cancelled before a retry went out): Envoy's counts give it back. `retry` says
    /// whether it held a retry.
    #[inline]
    pub fn unsent(&mut self, counted: bool, retry: bool) {
        if let Budget::Envoy(e) = self {
            if counted {
                e.ended(retry);
            } else if retry {
                e.retries = e.retries.saturating_sub(1);
            }
        }
    }

    /// The client learnt how an attempt ended. `retryable` says whether the class is in the
    /// client's retry classes; `cost` is what the AWS quota charged for the retry that made this
    /// attempt (0 for a first try).
    #[inline]
    pub fn on_outcome(&mut self, now: Time, class: Class, retryable: bool, cost: u32) {
        match self {
            Budget::Grpc(g) => {
                if class == Class::Success {
                    g.on_success();
                } else if retryable || class == Class::Overloaded {
                    g.on_failure();
                }
            }
            Budget::Aws(q) => {
                if class == Class::Success {
                    q.release(cost);
                }
            }
            Budget::Adaptive(a) => {
                if class.is_accepted() {
                    a.accepted(now);
                }
            }
            Budget::FailureRatio(f) => {
                if class != Class::Success {
                    f.failures += 1.0;
                }
            }
            // `cost` is 1 when a retry made this attempt (what `try_retry` returned).
            Budget::Envoy(e) => e.ended(cost > 0),
            // tower's module example deposits on `Ok(_)`; linkerd2-proxy's `RetryPolicy::retry`
            // (`linkerd/app/outbound/src/http/retry.rs`) on every response it will not retry.
            Budget::Tower(t, linkerd) => {
                if (*linkerd && !retryable) || (!*linkerd && class == Class::Success) {
                    t.deposit(now);
                }
            }
            Budget::Unlimited | Budget::Finagle(_) | Budget::Ratio(_) | Budget::TokenBucket(_) => {}
        }
    }

    /// The retry policy wants to retry (or hedge) after an attempt that ended in `class`: may it?
    /// `Some(cost)` takes the retry's cost (non-zero only for the AWS quota); `None` refuses.
    #[inline]
    pub fn try_retry(&mut self, now: Time, class: Class) -> Option<u32> {
        match self {
            Budget::Unlimited | Budget::Adaptive(_) => Some(0),
            Budget::Grpc(g) => g.allows().then_some(0),
            Budget::Aws(q) => q.acquire(class),
            Budget::Finagle(f) => f.try_withdraw(now).then_some(0),
            Budget::Ratio(r) => r.try_withdraw().then_some(0),
            Budget::TokenBucket(b) => b.try_withdraw().then_some(0),
            Budget::FailureRatio(f) => f.allows().then_some(0),
            Budget::Envoy(e) => e.try_start().then_some(1),
            Budget::Tower(t, _) => t.withdraw(now).then_some(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brookers_bucket_and_breaker_follow_retry_sim() {
        // AdaptiveRetryStrategy(0.1, 5): starts full; a retry needs more than one token.
        let mut b = BrookerBucket::new(5.0, 0.1);
        b.on_call();
        assert!(b.try_withdraw() && b.try_withdraw() && b.try_withdraw() && b.try_withdraw());
        assert!(
            !b.try_withdraw(),
            "exactly 1.0 left: `bucket > 1.0` is false"
        );
        for _ in 0..10 {
            b.on_call();
        }
        assert!(b.try_withdraw());
        // Under 100% failure a call earns 0.1 retries: the load tends to 1.1 attempts per call.
        let mut b = BrookerBucket::new(5.0, 0.1);
        let (mut attempts, calls) = (0u64, 100_000u64);
        for _ in 0..calls {
            b.on_call();
            attempts += 1;
            while b.try_withdraw() {
                attempts += 1;
            }
        }
        assert!((attempts as f64 / calls as f64 - 1.1).abs() < 0.001);
        // CircuitBreakerRetryStrategy(.., 0.1): cumulative failures over calls.
        let mut f = Budget::new(&BudgetConfig {
            kind: BudgetKind::FailureRatio,
            ..BudgetConfig::default()
        });
        for _ in 0..10 {
            f.on_send(Time::ZERO, true, 0.0);
        }
        f.on_outcome(Time::ZERO, Class::ServerError, true, 0);
        assert_eq!(
            f.try_retry(Time::ZERO, Class::ServerError),
            Some(0),
            "1 / 10 is not above 10%"
        );
        f.on_outcome(Time::ZERO, Class::ServerError, true, 0);
        assert_eq!(
            f.try_retry(Time::ZERO, Class::ServerError),
            None,
            "2 / 10 is"
        );
    }

    #[test]
    fn grpc_stops_retries_at_half_the_tokens() {
        // gRFC A6 example: maxTokens 10, tokenRatio 0.1.
        let mut g = GrpcThrottle::new(10.0, 0.1);
        assert!(g.allows());
        for _ in 0..4 {
            g.on_failure();
        }
        assert_eq!(g.tokens(), 6.0);
        assert!(g.allows());
        g.on_failure();
        // 5 tokens: not > 10 / 2.
        assert_eq!(g.tokens(), 5.0);
        assert!(!g.allows());
        // One success brings 5.1: retries resume.
        g.on_success();
        assert!(g.allows());
        for _ in 0..100 {
            g.on_failure();
        }
        assert_eq!(g.tokens(), 0.0);
        for _ in 0..1000 {
            g.on_success();
        }
        assert_eq!(g.tokens(), 10.0);
    }

    #[test]
    fn aws_quota_costs_and_refunds() {
        let mut q = AwsQuota::new(&BudgetConfig::default());
        assert_eq!(q.acquire(Class::Unavailable), Some(5));
        assert_eq!(q.acquire(Class::Timeout), Some(10));
        assert_eq!(q.available(), 485);
        q.release(10);
        assert_eq!(q.available(), 495);
        q.release(0);
        q.release(0);
        // Never above the initial 500.
        q.release(0);
        q.release(0);
        q.release(0);
        q.release(0);
        assert_eq!(q.available(), 500);
        // 100 retries drain it; the 101st is refused.
        for _ in 0..100 {
            assert!(q.acquire(Class::Unavailable).is_some());
        }
        assert_eq!(q.acquire(Class::Unavailable), None);
        q.release(0);
        q.release(0);
        q.release(0);
        q.release(0);
        assert_eq!(
            q.acquire(Class::Timeout),
            None,
            "4 tokens cannot pay a timeout retry"
        );
        q.release(0);
        assert_eq!(q.acquire(Class::Unavailable), Some(5));
    }

    #[test]
    fn finagle_budget_matches_its_definition() {
        let s = |x: u64| Time(x * 1_000_000_000);
        // No deposits: the reserve alone, minRetriesPerSec * ttl = 10 * 10 = 100 retries.
        let mut f = FinagleBudget::new(Duration::from_secs(10), 10, 0.2);
        let mut n = 0;
        while f.try_withdraw(s(1)) {
            n += 1;
        }
        assert_eq!(n, 100);
        // 1000 requests over the next second allow 20 % more retries.
        for _ in 0..1000 {
            f.deposit(s(2));
        }
        let mut m = 0;
        while f.try_withdraw(s(2)) {
            m += 1;
        }
        assert_eq!(m, 200);
        // After ttl the withdrawals and deposits have expired: the reserve is back.
        assert_eq!(f.balance(s(30)), 100);
        // Reserve only (percentCanRetry 0): requests earn nothing.
        let mut z = FinagleBudget::new(Duration::from_secs(1), 3, 0.0);
        z.deposit(s(0));
        assert_eq!(z.balance(s(0)), 3);
    }

    #[test]
    fn adaptive_throttling_formula() {
        let t = Time(1);
        let mut a = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
        assert_eq!(a.reject_probability(t), 0.0);
        // 100 requests, 10 accepted: p = (100 - 20) / 101.
        for i in 0..100 {
            assert!(a.admit(t, 0.999_999));
            if i < 10 {
                a.accepted(t);
            }
        }
        let p = a.reject_probability(t);
        assert!((p - 80.0 / 101.0).abs() < 1e-12, "{p}");
        assert!(!a.admit(t, 0.5));
        assert!(a.admit(t, 0.9));
        // All accepted: never rejects.
        let mut b = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
        for _ in 0..100 {
            assert!(b.admit(t, 0.0));
            b.accepted(t);
        }
    }

    /// tower's own tests (`tower/src/retry/budget/tps_budget.rs`: `tps_empty`, `tps_leaky`,
    /// `tps_slots`, `tps_reserve`; the same four in 0.4's `budget.rs`), with tokio's paused clock
    /// replaced by simulated time.
    #[test]
    fn tower_budget_passes_towers_own_tests() {
        let ms = |x: u64| Time(x * 1_000_000);
        let secs = Duration::from_secs;
        // empty
        let mut b = TowerBudget::new(secs(1), 0, 1.0);
        assert!(!b.withdraw(Time::ZERO));
        // leaky
        let mut b = TowerBudget::new(secs(1), 0, 1.0);
        b.deposit(Time::ZERO);
        assert!(!b.withdraw(ms(3000)));
        // slots
        let mut b = TowerBudget::new(secs(1), 0, 0.5);
        b.deposit(Time::ZERO);
        b.deposit(Time::ZERO);
        assert!(
            b.withdraw(ms(901)),
            "900ms later, the deposit should still be valid"
        );
        b.deposit(ms(2902));
        b.deposit(ms(3203));
        b.deposit(ms(4004));
        assert!(
            b.withdraw(ms(4004)),
            "the first deposit is expired, but the 2nd should still be valid"
        );
        // reserve
        let mut b = TowerBudget::new(secs(1), 5, 1.0);
        for _ in 0..5 {
            assert!(b.withdraw(Time::ZERO));
        }
        assert!(!b.withdraw(Time::ZERO));
    }

    #[test]
    fn tower_budget_amounts_truncate_in_f32() {
        let secs = Duration::from_secs;
        assert_eq!(TowerBudget::new(secs(10), 10, 0.2).amounts(), (1, 5));
        assert_eq!(TowerBudget::new(secs(10), 10, 0.3).amounts(), (1, 3));
        assert_eq!(TowerBudget::new(secs(10), 10, 0.7).amounts(), (1, 1));
        assert_eq!(TowerBudget::new(secs(10), 10, 1.5).amounts(), (1000, 666));
        assert_eq!(TowerBudget::new(secs(10), 10, 0.0).amounts(), (0, 1));
        // Default (10 s, 10, 0.2): reserve 10 * 10 * 5 = 500, i.e. 100 retries.
        let b = TowerBudget::new(secs(10), 10, 0.2);
        assert_eq!(b.sum(), 500);
        // ttl.as_secs() truncates: 1.9 s holds 1 s of reserve.
        assert_eq!(TowerBudget::new(Duration(1_900_000_000), 4, 1.0).sum(), 4);
    }

    #[test]
    fn tower_window_drifts_with_the_generation() {
        // ttl 1 s: slots of 100 ms; the sum holds the writer and ten slots.
        let ms = |x: u64| Time(x * 1_000_000);
        let mut b = TowerBudget::new(Duration::from_secs(1), 0, 1.0);
        b.deposit(ms(50));
        // 100 ms after the generation (0): the writer goes to slot 0, no slot zeroed.
        b.deposit(ms(100));
        // Slot 0 is overwritten only when the index comes back to it: ten expiries later.
        for k in 1..10 {
            b.deposit(ms(100 + 100 * k));
            b.withdraw(ms(100 + 100 * k));
        }
        assert!(b.sum() >= 1, "the 50 ms deposit still counts at 1 s");
        // A long gap zeroes every slot (the loop wraps the ring), then the writer is empty too.
        b.deposit(ms(1000));
        b.expire(ms(60_000));
        assert_eq!(b.sum(), 0);
    }

    #[test]
    fn linkerd_deposits_on_responses_it_does_not_retry() {
        let c = |kind| BudgetConfig {
            kind,
            ttl: Duration::from_secs(1),
            min_retries_per_sec: 0,
            percent_can_retry: 1.0,
            ..Default::default()
        };
        let t = Time(1);
        // A non-retryable failure deposits for Linkerd, not for tower's example policy.
        let mut l = Budget::new(&c(BudgetKind::Linkerd));
        let mut w = Budget::new(&c(BudgetKind::Tower));
        for b in [&mut l, &mut w] {
            b.on_send(t, true, 0.0);
            b.on_outcome(t, Class::ClientError, false, 0);
        }
        assert_eq!(l.try_retry(t, Class::ServerError), Some(0));
        assert_eq!(w.try_retry(t, Class::ServerError), None);
        // Both deposit on a success; a retryable failure deposits nothing.
        for b in [&mut l, &mut w] {
            b.on_outcome(t, Class::ServerError, true, 0);
            assert_eq!(b.try_retry(t, Class::ServerError), None);
            b.on_outcome(t, Class::Success, false, 0);
            assert_eq!(b.try_retry(t, Class::ServerError), Some(0));
        }
    }

    #[test]
    fn validation_names_the_field() {
        let c = BudgetConfig {
            kind: BudgetKind::Finagle,
            ttl: Duration::from_secs(61),
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "budget.ttl");
        let c = BudgetConfig {
            kind: BudgetKind::Grpc,
            max_tokens: 0.0,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "budget.max_tokens");
        for kind in [BudgetKind::Tower, BudgetKind::Linkerd] {
            let c = BudgetConfig {
                kind,
                ttl: Duration(999_999_999),
                ..Default::default()
            };
            assert_eq!(c.validate().unwrap_err().path, "budget.ttl");
            let c = BudgetConfig {
                kind,
                percent_can_retry: 1000.5,
                ..Default::default()
            };
            assert_eq!(c.validate().unwrap_err().path, "budget.percent_can_retry");
            let c = BudgetConfig {
                kind,
                min_retries_per_sec: i32::MAX as u32,
                ..Default::default()
            };
            assert_eq!(c.validate().unwrap_err().path, "budget.min_retries_per_sec");
            assert!(
                BudgetConfig {
                    kind,
                    ..Default::default()
                }
                .validate()
                .is_ok()
            );
        }
        let c = BudgetConfig {
            kind: BudgetKind::Linkerd,
            ttl: Duration::from_secs(61),
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().message.contains("does not retry"));
    }
}
