//! Envoy's retry budget and `max_retries` (retries in progress).

use super::*;

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
