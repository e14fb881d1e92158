//! gRPC retry throttling (gRFC A6 "gRPC Retry Design", section "Throttling Retry Attempts and
//! Hedged RPCs"; grpc-core `retry_throttle.cc`): a token count starts at `maxTokens`; every
//! failed attempt takes 1 token, every success adds `tokenRatio` (capped at `maxTokens`); while
//! the count is `<= maxTokens / 2` no retry (and no hedge) is sent. Tokens are kept in
//! thousandths, as grpc-core does (`tokenRatio` has at most 3 decimals).

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Time;
use crate::policy::Class;

/// gRPC retry throttling state: tokens in thousandths, as grpc-core keeps them.
#[derive(Clone, Debug)]
pub struct GrpcThrottle {
    max_milli: i64,
    ratio_milli: i64,
    milli: i64,
}

impl GrpcThrottle {
    pub fn new(max_tokens: f64, token_ratio: f64) -> Self {
        let max_milli = (max_tokens * 1000.0).round() as i64;
        GrpcThrottle {
            max_milli,
            ratio_milli: (token_ratio * 1000.0).round() as i64,
            milli: max_milli,
        }
    }
    /// A failed attempt takes one token (never below zero).
    pub fn on_failure(&mut self) {
        self.milli = (self.milli - 1000).max(0);
    }
    /// A success adds `tokenRatio`, up to `maxTokens`.
    pub fn on_success(&mut self) {
        self.milli = (self.milli + self.ratio_milli).min(self.max_milli);
    }
    /// Retries (and hedges) are allowed only while `tokens > maxTokens / 2`.
    pub fn allows(&self) -> bool {
        self.milli * 2 > self.max_milli
    }
    pub fn tokens(&self) -> f64 {
        self.milli as f64 / 1000.0
    }
}

impl Budget for GrpcThrottle {
    fn new(c: &BudgetConfig) -> Self {
        GrpcThrottle::new(c.max_tokens, c.token_ratio)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        if !(c.max_tokens > 0.0 && c.max_tokens <= 1000.0) {
            return Err(invalid(
                "budget.max_tokens",
                format!(
                    "gRPC's maxTokens must be in (0, 1000], got {}",
                    c.max_tokens
                ),
            ));
        }
        if !(c.token_ratio.is_finite() && c.token_ratio > 0.0) {
            return Err(invalid(
                "budget.token_ratio",
                format!("gRPC's tokenRatio must be > 0, got {}", c.token_ratio),
            ));
        }
        Ok(())
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &["max_tokens", "token_ratio"]
    }

    /// A failure takes a token and a success gives back `token_ratio`.
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        Some((
            c.token_ratio * f.successes,
            format!(
                "a failure takes a token and a success gives back token_ratio = {}, so failures stay under {} x successes",
                c.token_ratio, c.token_ratio
            ),
        ))
    }

    /// A success adds tokens; a failure the client would retry (or an overload) takes one.
    #[inline]
    fn on_outcome(&mut self, _now: Time, class: Class, retryable: bool, _cost: u32) {
        if class == Class::Success {
            self.on_success();
        } else if retryable || class == Class::Overloaded {
            self.on_failure();
        }
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        self.allows().then_some(0)
    }
}
