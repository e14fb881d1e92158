//! No budget: every retry the retry policy allows is sent.

use super::{Budget, BudgetConfig, Flow};
use crate::base::time::Time;
use crate::policy::Class;

/// The budget of `kind = "none"`: it allows every retry and counts nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unlimited;

impl Budget for Unlimited {
    fn new(_c: &BudgetConfig) -> Self {
        Unlimited
    }
    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &[]
    }

    fn retry_limit(_c: &BudgetConfig, _f: &Flow) -> Option<(f64, String)> {
        None
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        Some(0)
    }
}
