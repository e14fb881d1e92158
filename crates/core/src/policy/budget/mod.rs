//! Retry budgets: published ways for a client to stop retries from multiplying load.
//!
//! Every budget answers one contract, [`Budget`], in the shape of tower's retry budget (a deposit
//! as requests go out and come back, a withdrawal per retry): what happens when an attempt is
//! sent, when it was not sent after all, when its outcome is known, and whether a retry may go.
//! Each algorithm is one file implementing it, its source cited there:
//!
//! - [`grpc`]: gRPC retry throttling (gRFC A6).
//! - [`aws`]: the AWS SDKs' standard retry quota.
//! - [`finagle`]: Finagle's `RetryBudget`.
//! - [`adaptive`]: the SRE book's client-side adaptive throttling.
//! - [`token_bucket`] and [`failure_ratio`]: Brooker's token bucket and retry breaker.
//! - [`envoy`]: Envoy's retry budget and `max_retries`.
//! - [`tower`] and [`linkerd`]: tower's `TpsBudget`, with tower's and Linkerd's deposit rules.
//! - [`ratio`]: Finagle's arithmetic without its window.
//! - [`aimd`]: tower-resilience's AIMD budget.
//!
//! Hedges draw on the same instance as retries: each copy beyond the first asks
//! [`Budget::try_retry`], so one `[budget]` is shared by a hop's retries and hedges.
//!
//! The list of kinds is written once, in [`budgets!`] below: it makes the `kind` names
//! ([`BudgetKind`]), the running state ([`BudgetState`], an enum so that the engine's calls are
//! static) and its one-line dispatch.

pub mod adaptive;
pub mod aimd;
pub mod aws;
mod config;
pub mod envoy;
pub mod failure_ratio;
pub mod finagle;
mod flow;
pub mod grpc;
pub mod linkerd;
pub mod none;
pub mod ratio;
#[cfg(test)]
mod tests;
pub mod token_bucket;
pub mod tower;

pub use adaptive::AdaptiveThrottle;
pub use aimd::AimdBudget;
pub use aws::{AwsQuota, AwsVersion};
pub use config::*;
pub use envoy::EnvoyBudget;
pub use failure_ratio::FailureRatio;
pub use finagle::FinagleBudget;
pub use flow::Flow;
pub use grpc::GrpcThrottle;
pub use linkerd::LinkerdBudget;
pub use none::Unlimited;
pub use ratio::RatioBudget;
pub use token_bucket::BrookerBucket;
pub use tower::TowerBudget;

use crate::base::invalid::Invalid;
use crate::base::time::Time;
use crate::policy::Class;
use serde::{Deserialize, Serialize};

/// What every retry budget does, one running instance per scope (a client process, or the whole
/// fleet). The engine calls it around each attempt of the calls it covers, first tries and
/// retries alike; a budget overrides only what it reacts to.
pub trait Budget: Clone + std::fmt::Debug {
    /// The budget a `[budget]` section of this kind describes (it reads its own keys only).
    fn new(c: &BudgetConfig) -> Self;

    /// The ranges this budget's source accepts for its keys (`budget.ttl`, ...).
    fn validate(_c: &BudgetConfig) -> Result<(), Invalid> {
        Ok(())
    }

    /// The `[budget]` keys that set this budget's steady-state limits, which `explain` prints
    /// beside its kind (any order: it prints them in the section's order).
    fn limits(c: &BudgetConfig) -> &'static [&'static str];

    /// The retries per second this budget lets through in steady state under `f`, and why: its
    /// own arithmetic held at equilibrium, the balance neither growing nor shrinking
    /// (`docs/verdict.md` gives the sources). `None`: it sets no limit.
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)>;

    /// Whether [`Budget::on_send`] reads its uniform draw (the engine draws one only then).
    const DRAWS_ON_SEND: bool = false;

    /// Before any attempt goes out (`first`: a first try, else a retry or hedge): `false` rejects
    /// it locally, never sent. `u` is a uniform draw in [0, 1) when [`Budget::DRAWS_ON_SEND`].
    /// Admits every attempt, and counts a call's first try with [`Budget::on_call`].
    #[inline]
    fn on_send(&mut self, now: Time, first: bool, _u: f64) -> bool {
        if first {
            self.on_call(now);
        }
        true
    }

    /// A call's first try goes out (what the default [`Budget::on_send`] hears of a call).
    #[inline]
    fn on_call(&mut self, _now: Time) {}

    /// An attempt `on_send` admitted was not sent after all (a breaker rejected it, or the call
    /// above was cancelled before a retry went out). `counted`: `on_send` saw it; `retry`: it
    /// held a retry [`Budget::try_retry`] granted.
    #[inline]
    fn on_unsent(&mut self, _counted: bool, _retry: bool) {}

    /// The client learnt how an attempt ended. `retryable`: the class is in the client's retry
    /// classes; `cost`: what [`Budget::try_retry`] returned for the retry that made this attempt
    /// (0 for a first try).
    #[inline]
    fn on_outcome(&mut self, _now: Time, _class: Class, _retryable: bool, _cost: u32) {}

    /// The retry policy wants to retry (or hedge) after an attempt that ended in `class`: may it?
    /// `Some(cost)` takes the retry (a cost that [`Budget::on_outcome`] and
    /// [`Budget::on_unsent`] hear back); `None` refuses it.
    fn try_retry(&mut self, now: Time, class: Class) -> Option<u32>;
}

/// Every budget, once: `Variant = "kind name" => its type`, with the doc line the schema shows.
macro_rules! budgets {
    ($($(#[$doc:meta])* $kind:ident = $name:literal => $ty:ty,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum BudgetKind {
            $($(#[$doc])* #[serde(rename = $name)] $kind,)*
        }

        impl BudgetKind {
            /// The name written in a model file.
            pub fn name(self) -> &'static str {
                match self { $(BudgetKind::$kind => $name,)* }
            }

            /// See [`Budget::limits`].
            pub fn limits(self, c: &BudgetConfig) -> &'static [&'static str] {
                match self { $(BudgetKind::$kind => <$ty as Budget>::limits(c),)* }
            }

            /// See [`Budget::retry_limit`]; never below zero.
            pub fn retry_limit(self, c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
                let limit = match self { $(BudgetKind::$kind => <$ty as Budget>::retry_limit(c, f),)* };
                limit.map(|(l, why)| (l.max(0.0), why))
            }

            /// See [`Budget::DRAWS_ON_SEND`].
            pub fn draws_on_send(self) -> bool {
                match self { $(BudgetKind::$kind => <$ty as Budget>::DRAWS_ON_SEND,)* }
            }

            pub(super) fn validate(self, c: &BudgetConfig) -> Result<(), Invalid> {
                match self { $(BudgetKind::$kind => <$ty as Budget>::validate(c),)* }
            }
        }

        /// One running budget, of the configured kind: the state a `[budget]`
        /// ([`BudgetConfig`]) keeps for one scope.
        #[derive(Clone, Debug)]
        pub enum BudgetState {
            $($kind($ty),)*
        }

        impl BudgetState {
            pub fn new(c: &BudgetConfig) -> Self {
                match c.kind { $(BudgetKind::$kind => BudgetState::$kind(<$ty as Budget>::new(c)),)* }
            }

            /// [`Budget::on_send`].
            #[inline]
            pub fn on_send(&mut self, now: Time, first: bool, u: f64) -> bool {
                match self { $(BudgetState::$kind(b) => b.on_send(now, first, u),)* }
            }

            /// [`Budget::on_unsent`].
            #[inline]
            pub fn unsent(&mut self, counted: bool, retry: bool) {
                match self { $(BudgetState::$kind(b) => b.on_unsent(counted, retry),)* }
            }

            /// [`Budget::on_outcome`].
            #[inline]
            pub fn on_outcome(&mut self, now: Time, class: Class, retryable: bool, cost: u32) {
                match self { $(BudgetState::$kind(b) => b.on_outcome(now, class, retryable, cost),)* }
            }

            /// [`Budget::try_retry`].
            #[inline]
            pub fn try_retry(&mut self, now: Time, class: Class) -> Option<u32> {
                match self { $(BudgetState::$kind(b) => b.try_retry(now, class),)* }
            }
        }
    };
}

budgets! {
    /// No budget: every retry the retry policy allows is sent.
    None = "none" => Unlimited,
    /// gRPC retry throttling (gRFC A6).
    Grpc = "grpc" => GrpcThrottle,
    /// AWS SDK standard-mode retry quota.
    Aws = "aws" => AwsQuota,
    /// Finagle's `RetryBudget`.
    Finagle = "finagle" => FinagleBudget,
    /// The SRE book's client-side adaptive throttling.
    Adaptive = "adaptive" => AdaptiveThrottle,
    /// Brooker's token bucket (`retry_sim`'s `AdaptiveRetryStrategy`): every call adds
    /// `fill_per_call` tokens (up to `bucket_size`, where it starts); a retry needs more than one
    /// token and takes one.
    TokenBucket = "token-bucket" => BrookerBucket,
    /// Brooker's retry breaker (`retry_sim`'s `CircuitBreakerRetryStrategy`): no retry while the
    /// failed attempts so far exceed `max_failure_rate` times the calls so far (no window, no
    /// open or half-open state).
    FailureRatio = "failure-ratio" => FailureRatio,
    /// Envoy's cluster retry budget (`circuit_breakers.thresholds.retry_budget`) or, without
    /// `budget_percent` and `min_retry_concurrency`, its `max_retries` circuit breaker.
    Envoy = "envoy" => EnvoyBudget,
    /// tower's retry budget (`tower::retry::budget::Budget` in 0.4, `TpsBudget` in 0.5) with
    /// the deposit where tower's module example puts it: on a success. `ttl`,
    /// `min_retries_per_sec` (tower's `min_per_sec`), `percent_can_retry` (`retry_percent`).
    Tower = "tower" => TowerBudget,
    /// Linkerd's ServiceProfile `retryBudget` (linkerd2-proxy builds a tower `TpsBudget` from
    /// `ttl`, `minRetriesPerSecond`, `retryRatio`): every response the proxy will not retry
    /// deposits, every retry withdraws.
    Linkerd = "linkerd" => LinkerdBudget,
    /// Finagle's arithmetic without its time window (the `[[layer]]` tables' `kind = "ratio"`):
    /// each call deposits `percent_can_retry` retries, each retry withdraws one, and the balance
    /// starts at `min_retries`. So retries <= `min_retries + percent_can_retry * calls`.
    Ratio = "ratio" => RatioBudget,
    /// tower-resilience's AIMD retry budget: a success deposits `deposit_amount` tokens (up to a
    /// ceiling that starts at `max_budget` and grows by one per success), a retry withdraws
    /// `withdraw_amount`, and a refused retry multiplies the ceiling by `decrease_factor`
    /// (never below `min_budget`).
    Aimd = "aimd" => AimdBudget,
}
