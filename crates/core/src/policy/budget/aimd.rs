//! tower-resilience's AIMD retry budget (joshrotenberg/tower-resilience,
//! `crates/tower-resilience-retry/src/budget.rs`, `AimdBudget`, as the retry budget first shipped
//! in `tower-resilience-retry`): a token balance that a retry draws on and a success refills,
//! under a ceiling that halves (`decrease_factor`) each time a retry is refused and creeps back
//! up by one token per success (additive increase), never below `min_budget` nor above
//! `max_budget`.

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Time;
use crate::policy::Class;

/// `AimdBudget`: `tokens` and `current_max` start at `max_budget`.
///
/// - `try_withdraw`: with `tokens < withdraw_amount` the retry is refused and `current_max`
///   becomes `max((current_max as f64 * decrease_factor) as u64, min_budget)` (the balance is
///   left as it is); otherwise `tokens -= withdraw_amount`.
/// - `deposit` (a success): `tokens = min(tokens + deposit_amount, current_max)`, then
///   `current_max + 1` while below `max_budget`.
///
/// Nothing refills with time: only successes deposit.
#[derive(Clone, Debug)]
pub struct AimdBudget {
    tokens: u64,
    min_budget: u64,
    current_max: u64,
    absolute_max: u64,
    deposit_amount: u64,
    withdraw_amount: u64,
    decrease_factor: f64,
}

impl AimdBudget {
    pub fn new(c: &BudgetConfig) -> Self {
        AimdBudget {
            tokens: c.max_budget,
            min_budget: c.min_budget,
            current_max: c.max_budget,
            absolute_max: c.max_budget,
            deposit_amount: c.deposit_amount,
            withdraw_amount: c.withdraw_amount,
            decrease_factor: c.decrease_factor,
        }
    }
    /// `try_withdraw`: a retry, or a refusal that shrinks the ceiling.
    pub fn try_withdraw(&mut self) -> bool {
        if self.tokens < self.withdraw_amount {
            self.current_max =
                ((self.current_max as f64 * self.decrease_factor) as u64).max(self.min_budget);
            return false;
        }
        self.tokens -= self.withdraw_amount;
        true
    }
    /// `deposit`: a success adds tokens up to the ceiling, and the ceiling grows by one.
    pub fn deposit(&mut self) {
        self.tokens = self
            .tokens
            .saturating_add(self.deposit_amount)
            .min(self.current_max);
        if self.current_max < self.absolute_max {
            self.current_max += 1;
        }
    }
    /// `balance()`.
    pub fn balance(&self) -> u64 {
        self.tokens
    }
    /// The ceiling now.
    pub fn ceiling(&self) -> u64 {
        self.current_max
    }
}

impl Budget for AimdBudget {
    fn new(c: &BudgetConfig) -> Self {
        AimdBudget::new(c)
    }

    /// The ranges tower-resilience's budget builder checks since it became fallible
    /// (`RetryBudgetConfigError`, `AimdConfigError`): `min <= max`, amounts >= 1, a decrease
    /// factor in [0, 1).
    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        if c.min_budget > c.max_budget {
            return Err(invalid(
                "budget.min_budget",
                format!(
                    "must be at most max_budget ({}), got {}",
                    c.max_budget, c.min_budget
                ),
            ));
        }
        for (path, amount) in [
            ("budget.deposit_amount", c.deposit_amount),
            ("budget.withdraw_amount", c.withdraw_amount),
        ] {
            if amount == 0 {
                return Err(invalid(path, "must be at least 1"));
            }
        }
        if !(c.decrease_factor.is_finite() && (0.0..1.0).contains(&c.decrease_factor)) {
            return Err(invalid(
                "budget.decrease_factor",
                format!(
                    "must be in [0, 1) (a ceiling that never shrinks is no AIMD), got {}",
                    c.decrease_factor
                ),
            ));
        }
        Ok(())
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &[
            "min_budget",
            "max_budget",
            "deposit_amount",
            "withdraw_amount",
            "decrease_factor",
        ]
    }

    /// Only successes deposit; nothing refills with time.
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        Some((
            f.successes * c.deposit_amount as f64 / c.withdraw_amount.max(1) as f64,
            format!(
                "a success deposits {} tokens and a retry withdraws {}; nothing refills with time",
                c.deposit_amount, c.withdraw_amount
            ),
        ))
    }

    /// A success deposits.
    #[inline]
    fn on_outcome(&mut self, _now: Time, class: Class, _retryable: bool, _cost: u32) {
        if class == Class::Success {
            self.deposit();
        }
    }

    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        self.try_withdraw().then_some(0)
    }
}
