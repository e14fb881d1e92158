//! Brooker's retry breaker (mbrooker/simulator_example, `retry_sim/retry_strategy.py`,
//! `CircuitBreakerRetryStrategy`): cumulative counts of calls and failed attempts; a retry only
//! while `failures / calls <= max_failure_rate` (no window, no open or half-open state).

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, non_negative};
use crate::base::time::Time;
use crate::policy::Class;

/// Brooker's retry breaker: cumulative counts of calls and failed attempts.
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
    /// An attempt failed.
    pub fn on_failure(&mut self) {
        self.failures += 1.0;
    }
    pub fn allows(&self) -> bool {
        self.calls > 0.0 && self.failures / self.calls <= self.max_rate
    }
}

impl Budget for FailureRatio {
    fn new(c: &BudgetConfig) -> Self {
        FailureRatio::new(c.max_failure_rate)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        non_negative("budget.max_failure_rate", c.max_failure_rate)
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &["max_failure_rate"]
    }

    /// Every first try fails: the failed attempts beyond one a call are the retries.
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        Some((
            (c.max_failure_rate - 1.0).max(0.0) * f.calls,
            format!(
                "no retry while failed attempts exceed max_failure_rate = {} per call (every first try fails)",
                c.max_failure_rate
            ),
        ))
    }

    /// A call (its first try) counts.
    #[inline]
    fn on_call(&mut self, _now: Time) {
        self.calls += 1.0;
    }

    /// Every attempt that did not succeed counts as a failure.
    #[inline]
    fn on_outcome(&mut self, _now: Time, class: Class, _retryable: bool, _cost: u32) {
        if class != Class::Success {
            self.on_failure();
        }
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        self.allows().then_some(0)
    }
}
