//! Finagle's `RetryBudget` (`com.twitter.finagle.service.RetryBudget`): every request deposits
//! 1000 into a leaky bucket (a [`WindowedAdder`] over `ttl`), a retry withdraws
//! `1000 / percentCanRetry` and is allowed only when the balance covers it; the balance has a
//! reserve of `minRetriesPerSec * ttl(s) * withdrawal` so that a quiet client may still retry.
//! Deposits and withdrawals both expire after `ttl`. Defaults: ttl 10 s, 10 retries/s, 20 %.

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::window::WindowedAdder;

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

/// The keys Finagle's `RetryBudget.apply(ttl, minRetriesPerSec, percentCanRetry)` takes; tower's
/// and Linkerd's budgets take the same three.
pub(super) const TTL_RATE_PERCENT: &[&str] = &["ttl", "min_retries_per_sec", "percent_can_retry"];

/// The steady-state limit of a budget sized by [`TTL_RATE_PERCENT`]: `min_retries_per_sec` per
/// budget plus `percent_can_retry` of what deposits, `deposits` a second (`what` names them).
pub(super) fn floor_plus_share(
    c: &BudgetConfig,
    f: &Flow,
    deposits: f64,
    what: &str,
) -> Option<(f64, String)> {
    Some((
        f.per_budget(c.scope, f64::from(c.min_retries_per_sec)) + c.percent_can_retry * deposits,
        format!(
            "min_retries_per_sec = {} per budget plus percent_can_retry = {} of the {what}",
            c.min_retries_per_sec, c.percent_can_retry
        ),
    ))
}

impl Budget for FinagleBudget {
    fn new(c: &BudgetConfig) -> Self {
        FinagleBudget::new(c.ttl, c.min_retries_per_sec, c.percent_can_retry)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        if c.ttl < Duration::from_secs(1) || c.ttl > Duration::from_secs(60) {
            return Err(invalid(
                "budget.ttl",
                format!("Finagle requires 1s <= ttl <= 60s, got {}", c.ttl),
            ));
        }
        if !(c.percent_can_retry.is_finite() && (0.0..=1000.0).contains(&c.percent_can_retry)) {
            return Err(invalid(
                "budget.percent_can_retry",
                format!(
                    "Finagle requires 0 <= percentCanRetry <= 1000, got {}",
                    c.percent_can_retry
                ),
            ));
        }
        Ok(())
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        TTL_RATE_PERCENT
    }

    /// Its floor per budget plus its share of the calls.
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        floor_plus_share(c, f, f.calls, "calls")
    }

    /// A first try deposits.
    #[inline]
    fn on_call(&mut self, now: Time) {
        self.deposit(now);
    }

    #[inline]
    fn try_retry(&mut self, now: Time, _class: Class) -> Option<u32> {
        self.try_withdraw(now).then_some(0)
    }
}
