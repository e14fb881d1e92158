//! Finagle's `RetryBudget` (`com.twitter.finagle.service.RetryBudget`).

use crate::base::time::{Duration, Time};
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
