//! Brooker's token bucket (mbrooker/simulator_example, `retry_sim/retry_strategy.py`,
//! `AdaptiveRetryStrategy`): every call adds `fill_per_call` tokens, up to `bucket_size` (where
//! it starts); `should_retry()` needs `bucket > 1.0` and takes one token.

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, non_negative, positive};
use crate::base::time::Time;
use crate::policy::Class;

/// Brooker's token bucket: `start()` adds the fill, `should_retry()` needs `bucket > 1.0`.
#[derive(Clone, Debug)]
pub struct BrookerBucket {
    tokens: f64,
    size: f64,
    fill: f64,
}

impl BrookerBucket {
    pub fn new(size: f64, fill: f64) -> Self {
        BrookerBucket {
            tokens: size,
            size,
            fill,
        }
    }
    pub fn try_withdraw(&mut self) -> bool {
        let ok = self.tokens > 1.0;
        if ok {
            self.tokens -= 1.0;
        }
        ok
    }
}

impl Budget for BrookerBucket {
    fn new(c: &BudgetConfig) -> Self {
        BrookerBucket::new(c.bucket_size, c.fill_per_call)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        positive("budget.bucket_size", c.bucket_size)?;
        non_negative("budget.fill_per_call", c.fill_per_call)
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &["bucket_size", "fill_per_call"]
    }

    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        Some((
            c.fill_per_call * f.calls,
            format!(
                "fill_per_call = {} tokens a call, one a retry",
                c.fill_per_call
            ),
        ))
    }

    /// A call (its first try) fills the bucket.
    #[inline]
    fn on_call(&mut self, _now: Time) {
        self.tokens = (self.tokens + self.fill).min(self.size);
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        self.try_withdraw().then_some(0)
    }
}
