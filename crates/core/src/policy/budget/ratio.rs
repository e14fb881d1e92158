//! A ratio of retries to calls without a window: Finagle's arithmetic without its time window
//! (the `[[layer]]` tables' `kind = "ratio"`).

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, non_negative};
use crate::base::time::Time;
use crate::policy::Class;

/// A balance of retries fed by calls, without a time window ([`super::BudgetKind::Ratio`]).
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

impl Budget for RatioBudget {
    fn new(c: &BudgetConfig) -> Self {
        RatioBudget::new(c.percent_can_retry, c.min_retries)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        non_negative("budget.percent_can_retry", c.percent_can_retry)
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &["min_retries"]
    }

    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        Some((
            c.percent_can_retry * f.calls,
            format!("percent_can_retry = {} of the calls", c.percent_can_retry),
        ))
    }

    /// A call (its first try) deposits.
    #[inline]
    fn on_call(&mut self, _now: Time) {
        self.deposit();
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        self.try_withdraw().then_some(0)
    }
}
