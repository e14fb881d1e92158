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
//!   1000 into a leaky bucket (a [`WindowedAdder`](crate::policy::window::WindowedAdder) over `ttl`), a retry withdraws
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

mod adaptive;
mod aws;
mod brooker;
mod config;
mod envoy;
mod finagle;
mod grpc;
mod ratio;
#[cfg(test)]
mod tests;
mod tower;

pub use adaptive::*;
pub use aws::*;
pub use brooker::*;
pub use config::*;
pub use envoy::*;
pub use finagle::*;
pub use grpc::*;
pub use ratio::*;
pub use tower::*;

use crate::base::time::Time;
use crate::policy::Class;

/// One running budget, of the configured kind: the state a `[budget]` ([`BudgetConfig`]) keeps
/// for one scope.
#[derive(Clone, Debug)]
pub enum BudgetState {
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

impl BudgetState {
    pub fn new(c: &BudgetConfig) -> Self {
        match c.kind {
            BudgetKind::None => BudgetState::Unlimited,
            BudgetKind::Grpc => BudgetState::Grpc(GrpcThrottle::new(c.max_tokens, c.token_ratio)),
            BudgetKind::Aws => BudgetState::Aws(AwsQuota::new(c)),
            BudgetKind::Finagle => BudgetState::Finagle(FinagleBudget::new(
                c.ttl,
                c.min_retries_per_sec,
                c.percent_can_retry,
            )),
            BudgetKind::Adaptive => BudgetState::Adaptive(AdaptiveThrottle::new(c.k, c.window)),
            BudgetKind::TokenBucket => {
                BudgetState::TokenBucket(BrookerBucket::new(c.bucket_size, c.fill_per_call))
            }
            BudgetKind::FailureRatio => {
                BudgetState::FailureRatio(FailureRatio::new(c.max_failure_rate))
            }
            BudgetKind::Ratio => {
                BudgetState::Ratio(RatioBudget::new(c.percent_can_retry, c.min_retries))
            }
            BudgetKind::Envoy => BudgetState::Envoy(EnvoyBudget::new(c)),
            BudgetKind::Tower | BudgetKind::Linkerd => BudgetState::Tower(
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
            BudgetState::Adaptive(a) => a.admit(now, u),
            BudgetState::Finagle(f) => {
                if first {
                    f.deposit(now);
                }
                true
            }
            BudgetState::Ratio(r) => {
                if first {
                    r.deposit();
                }
                true
            }
            BudgetState::TokenBucket(b) => {
                if first {
                    b.on_call();
                }
                true
            }
            BudgetState::FailureRatio(f) => {
                if first {
                    f.on_call();
                }
                true
            }
            BudgetState::Envoy(e) => {
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
        if let BudgetState::Envoy(e) = self {
            if counted {
                e.ended(retry);
            } else if retry {
                e.retry_dropped();
            }
        }
    }

    /// The client learnt how an attempt ended. `retryable` says whether the class is in the
    /// client's retry classes; `cost` is what the AWS quota charged for the retry that made this
    /// attempt (0 for a first try).
    #[inline]
    pub fn on_outcome(&mut self, now: Time, class: Class, retryable: bool, cost: u32) {
        match self {
            BudgetState::Grpc(g) => {
                if class == Class::Success {
                    g.on_success();
                } else if retryable || class == Class::Overloaded {
                    g.on_failure();
                }
            }
            BudgetState::Aws(q) => {
                if class == Class::Success {
                    q.release(cost);
                }
            }
            BudgetState::Adaptive(a) => {
                if class.is_accepted() {
                    a.accepted(now);
                }
            }
            BudgetState::FailureRatio(f) => {
                if class != Class::Success {
                    f.on_failure();
                }
            }
            // `cost` is 1 when a retry made this attempt (what `try_retry` returned).
            BudgetState::Envoy(e) => e.ended(cost > 0),
            // tower's module example deposits on `Ok(_)`; linkerd2-proxy's `RetryPolicy::retry`
            // (`linkerd/app/outbound/src/http/retry.rs`) on every response it will not retry.
            BudgetState::Tower(t, linkerd) => {
                if (*linkerd && !retryable) || (!*linkerd && class == Class::Success) {
                    t.deposit(now);
                }
            }
            BudgetState::Unlimited
            | BudgetState::Finagle(_)
            | BudgetState::Ratio(_)
            | BudgetState::TokenBucket(_) => {}
        }
    }

    /// The retry policy wants to retry (or hedge) after an attempt that ended in `class`: may it?
    /// `Some(cost)` takes the retry's cost (non-zero only for the AWS quota); `None` refuses.
    #[inline]
    pub fn try_retry(&mut self, now: Time, class: Class) -> Option<u32> {
        match self {
            BudgetState::Unlimited | BudgetState::Adaptive(_) => Some(0),
            BudgetState::Grpc(g) => g.allows().then_some(0),
            BudgetState::Aws(q) => q.acquire(class),
            BudgetState::Finagle(f) => f.try_withdraw(now).then_some(0),
            BudgetState::Ratio(r) => r.try_withdraw().then_some(0),
            BudgetState::TokenBucket(b) => b.try_withdraw().then_some(0),
            BudgetState::FailureRatio(f) => f.allows().then_some(0),
            BudgetState::Envoy(e) => e.try_start().then_some(1),
            BudgetState::Tower(t, _) => t.withdraw(now).then_some(0),
        }
    }
}
