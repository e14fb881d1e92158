//! Linkerd's ServiceProfile `retryBudget`: linkerd2-proxy builds a tower `TpsBudget` from `ttl`,
//! `minRetriesPerSecond` and `retryRatio` (`linkerd/service-profiles/src/proto.rs`,
//! `convert_retry_budget`), and its `RetryPolicy::retry`
//! (`linkerd/app/outbound/src/http/retry.rs`) deposits on every response it will not retry.

use super::finagle::{TTL_RATE_PERCENT, floor_plus_share};
use super::tower::{TowerBudget, validate_tps};
use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::Invalid;
use crate::base::time::Time;
use crate::policy::Class;

/// tower's budget with Linkerd's deposit rule.
#[derive(Clone, Debug)]
pub struct LinkerdBudget(pub TowerBudget);

impl Budget for LinkerdBudget {
    fn new(c: &BudgetConfig) -> Self {
        LinkerdBudget(TowerBudget::new(
            c.ttl,
            c.min_retries_per_sec,
            c.percent_can_retry,
        ))
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        validate_tps(
            c,
            "linkerd2-proxy requires",
            " (the proxy ignores such a retryBudget and does not retry)",
        )
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        TTL_RATE_PERCENT
    }

    /// Its floor per budget plus its share of the final responses (where it deposits).
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        floor_plus_share(c, f, f.calls, "final responses")
    }

    /// Every response the proxy will not retry deposits.
    #[inline]
    fn on_outcome(&mut self, now: Time, _class: Class, retryable: bool, _cost: u32) {
        if !retryable {
            self.0.deposit(now);
        }
    }

    #[inline]
    fn try_retry(&mut self, now: Time, _class: Class) -> Option<u32> {
        self.0.withdraw(now).then_some(0)
    }
}
