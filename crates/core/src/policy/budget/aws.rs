//! The AWS SDK standard retry quota (AWS SDKs and Tools Reference Guide, "Retry behavior",
//! standard mode; botocore `retries/standard.py` `RetryQuotaChecker`, aws-sdk-js-v3
//! `defaultRetryQuota.ts`): a quota of `INITIAL_RETRY_TOKENS = 500`; a retry costs
//! `RETRY_COST = 5`, or `TIMEOUT_RETRY_COST = 10` after a timeout; no retry when the quota
//! cannot pay; a success refunds what its retry cost, or `NO_RETRY_INCREMENT = 1` when it needed
//! no retry, never above the initial quota. `version` picks who pays what ([`AwsVersion`]):
//! botocore's long-standing rule, the JS SDK's (smithy-typescript `StandardRetryStrategy`,
//! 10 for every transient error), or the 2026 rule (botocore `RetryQuotaChecker._RETRY_COST_V2
//! = 14`, `_THROTTLING_RETRY_COST = 5`, behind `AWS_NEW_RETRIES_2026`).
//!
//! Two published SDK bugs are switches, so that a storm can show them beside the fix:
//! `refill = false` is aws-sdk-go-v2's adaptive mode, whose retryer never gives anything back to
//! the retry quota on success (the quota once drained refuses every retry until the process
//! restarts); `bucket_set = false` is aws-sdk-rust before smithy-rs added a default token bucket
//! in January 2025 (`aws-smithy-runtime` `StandardRetryStrategy` acquires a permit only when a
//! `TokenBucket` is in the config bag, and none was put there, so retries stopped only at max
//! attempts).

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Time;
use crate::policy::Class;
use serde::{Deserialize, Serialize};

/// Which published AWS quota rule decides a retry's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AwsVersion {
    /// botocore `RetryQuotaChecker` before 2026: `timeout_cost` after a timeout (botocore's
    /// `ConnectTimeoutError`, `ReadTimeoutError`), `retry_cost` otherwise.
    Classic,
    /// smithy-typescript (aws-sdk-js-v3) `StandardRetryStrategy.getCapacityCost`: `timeout_cost`
    /// for every "TRANSIENT" error (timeouts, connection errors, 500/502/503/504), `retry_cost`
    /// otherwise (throttling).
    Js,
    /// botocore behind `AWS_NEW_RETRIES_2026` (and smithy's `SMITHY_NEW_RETRIES_2026`):
    /// `throttling_cost` after a throttling error, `retry_cost_v2` otherwise (timeouts included).
    #[serde(rename = "2026")]
    V2026,
}

/// The AWS SDK standard-mode retry quota.
#[derive(Clone, Debug)]
pub struct AwsQuota {
    max: u32,
    available: u32,
    retry_cost: u32,
    timeout_cost: u32,
    no_retry_increment: u32,
    version: AwsVersion,
    throttling_cost: u32,
    retry_cost_v2: u32,
    refill: bool,
    /// `false`: no bucket, so no permit is ever asked for.
    bucket_set: bool,
}

impl AwsQuota {
    pub fn new(c: &BudgetConfig) -> Self {
        AwsQuota {
            max: c.quota,
            available: c.quota,
            retry_cost: c.retry_cost,
            timeout_cost: c.timeout_cost,
            no_retry_increment: c.no_retry_increment,
            version: c.version,
            throttling_cost: c.throttling_cost,
            retry_cost_v2: c.retry_cost_v2,
            refill: c.refill,
            bucket_set: c.bucket_set,
        }
    }
    /// What a retry after an attempt that ended in `class` costs under this version's rule.
    pub fn cost(&self, class: Class) -> u32 {
        match self.version {
            AwsVersion::Classic if class == Class::Timeout => self.timeout_cost,
            AwsVersion::Classic => self.retry_cost,
            AwsVersion::Js => match class {
                Class::Timeout | Class::Connection | Class::Unavailable | Class::ServerError => {
                    self.timeout_cost
                }
                _ => self.retry_cost,
            },
            AwsVersion::V2026 if class == Class::Throttled => self.throttling_cost,
            AwsVersion::V2026 => self.retry_cost_v2,
        }
    }
    /// Takes the cost of a retry after `class`, or refuses it when the quota cannot pay;
    /// without a bucket every retry goes, free.
    pub fn acquire(&mut self, class: Class) -> Option<u32> {
        if !self.bucket_set {
            return Some(0);
        }
        let cost = self.cost(class);
        (self.available >= cost).then(|| {
            self.available -= cost;
            cost
        })
    }
    /// A success refunds what its retry cost (`cost > 0`), or `NO_RETRY_INCREMENT`; nothing
    /// without `refill`.
    pub fn release(&mut self, cost: u32) {
        if !self.refill {
            return;
        }
        let back = if cost > 0 {
            cost
        } else {
            self.no_retry_increment
        };
        self.available = (self.available + back).min(self.max);
    }
    pub fn available(&self) -> u32 {
        self.available
    }
}

impl Budget for AwsQuota {
    fn new(c: &BudgetConfig) -> Self {
        AwsQuota::new(c)
    }

    /// A positive quota and positive costs.
    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        if c.quota == 0 {
            return Err(invalid("budget.quota", "must be at least 1"));
        }
        let costs = [
            ("budget.retry_cost", c.retry_cost),
            ("budget.timeout_cost", c.timeout_cost),
            ("budget.throttling_cost", c.throttling_cost),
            ("budget.retry_cost_v2", c.retry_cost_v2),
        ];
        if let Some((path, _)) = costs.iter().find(|(_, c)| *c == 0) {
            return Err(invalid(
                path,
                "must be at least 1 (a free retry is no budget)",
            ));
        }
        Ok(())
    }

    /// The quota, the version and the costs that version charges, and `refill` when off;
    /// without a bucket, that alone (`explain` prints them in the section's order).
    fn limits(c: &BudgetConfig) -> &'static [&'static str] {
        const ALL: &[&str] = &[
            "refill",
            "quota",
            "retry_cost",
            "timeout_cost",
            "no_retry_increment",
            "version",
            // Charged under the 2026 rule only.
            "throttling_cost",
            "retry_cost_v2",
        ];
        if !c.bucket_set {
            return &["bucket_set"];
        }
        let from = usize::from(c.refill);
        let to = if c.version == AwsVersion::V2026 { 8 } else { 6 };
        &ALL[from..to]
    }

    /// A success gives back `no_retry_increment`, a retry after a timeout costs its price; none
    /// without a bucket, nothing without `refill`.
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        if !c.bucket_set {
            return None;
        }
        if !c.refill {
            return Some((
                0.0,
                "refill = false: a success gives nothing back, so the quota once spent allows no retry"
                    .into(),
            ));
        }
        let cost = AwsQuota::new(c).cost(Class::Timeout);
        Some((
            f.successes * f64::from(c.no_retry_increment) / f64::from(cost.max(1)),
            format!(
                "a retry after a timeout costs {cost} of the quota and a success gives back {}",
                c.no_retry_increment
            ),
        ))
    }

    /// A success refunds.
    #[inline]
    fn on_outcome(&mut self, _now: Time, class: Class, _retryable: bool, cost: u32) {
        if class == Class::Success {
            self.release(cost);
        }
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, class: Class) -> Option<u32> {
        self.acquire(class)
    }
}
