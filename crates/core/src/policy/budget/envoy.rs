//! Envoy's retry budget and `max_retries`: a limit on the retries in progress.

use super::{Budget, BudgetConfig};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Time;
use crate::policy::Class;

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
    /// A retry counted by `try_retry` ended without being sent.
    pub fn retry_dropped(&mut self) {
        self.retries = self.retries.saturating_sub(1);
    }

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

impl Budget for EnvoyBudget {
    fn new(c: &BudgetConfig) -> Self {
        EnvoyBudget::new(c)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        if let Some(p) = c.budget_percent
            && !(p.is_finite() && (0.0..=100.0).contains(&p))
        {
            return Err(invalid(
                "budget.budget_percent",
                format!("Envoy's budget_percent is a percentage in [0, 100], got {p}"),
            ));
        }
        Ok(())
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &["budget_percent", "min_retry_concurrency", "max_retries"]
    }

    /// Every attempt sent is active until its outcome.
    #[inline]
    fn on_send(&mut self, _now: Time, _first: bool, _u: f64) -> bool {
        self.sent();
        true
    }

    /// Envoy's counts give back what an unsent attempt held.
    #[inline]
    fn on_unsent(&mut self, counted: bool, retry: bool) {
        if counted {
            self.ended(retry);
        } else if retry {
            self.retry_dropped();
        }
    }

    /// `cost` is 1 when a retry made this attempt (what `try_retry` returned).
    #[inline]
    fn on_outcome(&mut self, _now: Time, _class: Class, _retryable: bool, cost: u32) {
        self.ended(cost > 0);
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        self.try_start().then_some(1)
    }
}
