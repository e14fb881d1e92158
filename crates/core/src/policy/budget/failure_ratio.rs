//! Brooker's retry breaker (mbrooker/simulator_example, `retry_sim/retry_strategy.py`,
//! `CircuitBreakerRetryStrategy`): cumulative counts of calls and failed attempts; a retry only
//! while `failures / calls <= max_failure_rate` (no window, no open or half-open state).

use super::{Budget, BudgetConfig};
use crate::base::invalid::{Invalid, invalid};
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
    /// A first try was made.
    pub fn on_call(&mut self) {
        self.calls += 1.0;
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
        if !(c.max_failure_rate.is_finite() && c.max_failure_rate >= 0.0) {
            return Err(invalid(
                "budget.max_failure_rate",
                format!("must be a finite number >= 0, got {}", c.max_failure_rate),
            ));
        }
        Ok(())
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &["max_failure_rate"]
    }

    /// A call (its first try) counts.
    #[inline]
    fn on_send(&mut self, _now: Time, first: bool, _u: f64) -> bool {
        if first {
            self.on_call();
        }
        true
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
