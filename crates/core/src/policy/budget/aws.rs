//! The AWS SDKs' standard retry quota (botocore `retries/standard.py`, smithy `StandardRetryStrategy`).

use super::*;
use crate::policy::Class;

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
    /// Takes the cost of a retry after `class`, or refuses it when the quota cannot pay.
    pub fn acquire(&mut self, class: Class) -> Option<u32> {
        let cost = self.cost(class);
        (self.available >= cost).then(|| {
            self.available -= cost;
            cost
        })
    }
    /// A success refunds what its retry cost (`cost > 0`), or `NO_RETRY_INCREMENT`.
    pub fn release(&mut self, cost: u32) {
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
