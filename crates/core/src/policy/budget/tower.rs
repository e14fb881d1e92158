//! tower's retry budget (`TpsBudget` in 0.5, `Budget` in 0.4): ten slots over `ttl`, deposits
//! of 1 (or 1000), a withdrawal of `1 / retry_percent` truncated in `f32`, a reserve of
//! `min_per_sec * ttl` withdrawals, with the deposit where tower's module example puts it: on a
//! success. Linkerd's `retryBudget` is the same budget with another deposit rule
//! ([`super::linkerd`]).

use super::finagle::{TTL_RATE_PERCENT, floor_plus_share};
use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::{Duration, Time};
use crate::policy::Class;

/// tower's retry budget: `tower/src/retry/budget.rs` (`Budget`, `Bucket`; tower 0.4.13) and
/// `tower/src/retry/budget/tps_budget.rs` (`TpsBudget`; tower 0.5.3), whose arithmetic is the
/// same. Linkerd's proxy uses it as is (linkerd2-proxy `linkerd/service-profiles/src/proto.rs`,
/// `convert_retry_budget`).
///
/// - `new(ttl, min_per_sec, retry_percent: f32)`: `(deposit, withdraw)` is `(0, 1)` when
///   `retry_percent == 0`, `(1, (1.0 / retry_percent) as isize)` when `retry_percent <= 1`,
///   else `(1000, (1000.0 / retry_percent) as isize)`, in `f32` and truncated (so 0.3 withdraws
///   3, i.e. one retry per 3 deposits, and 0.7 withdraws 1). `reserve = min_per_sec *
///   ttl.as_secs() * withdraw`.
/// - Ten slots of `ttl / 10` each, plus a `writer` for the current slot. `expire()`: nothing
///   until `window` has passed since the generation's time; then the writer is committed to
///   `slots[index]`, one slot is zeroed per `window` beyond the first (the `while diff > window`
///   loop, at most all ten here), `index` moves past them, and the generation's time becomes
///   *now* (not a slot boundary).
/// - `sum() = writer + slots + reserve`; `try_get(amt)` takes `amt` when `sum >= amt`.
///
/// The generation starts at time zero, as tower's starts at `Instant::now()` on construction.
#[derive(Clone, Debug)]
pub struct TowerBudget {
    slots: [i64; 10],
    writer: i64,
    index: usize,
    generation: Time,
    /// `ttl / 10` in ns (`Duration / u32`, exact for whole nanoseconds).
    window: u64,
    reserve: i64,
    deposit: i64,
    withdraw: i64,
}

impl TowerBudget {
    pub fn new(ttl: Duration, min_per_sec: u32, retry_percent: f64) -> Self {
        // tower takes `retry_percent: f32` (Linkerd's proto `retry_ratio` is a `float`).
        let p = retry_percent as f32;
        let (deposit, withdraw) = if p == 0.0 {
            (0, 1)
        } else if p <= 1.0 {
            (1, (1.0f32 / p) as i64)
        } else {
            (1000, (1000.0f32 / p) as i64)
        };
        let reserve = i64::from(min_per_sec)
            .saturating_mul((ttl.0 / 1_000_000_000) as i64)
            .saturating_mul(withdraw);
        TowerBudget {
            slots: [0; 10],
            writer: 0,
            index: 0,
            generation: Time::ZERO,
            window: ttl.0 / 10,
            reserve,
            deposit,
            withdraw,
        }
    }
    /// `Bucket::expire`.
    pub(super) fn expire(&mut self, now: Time) {
        let diff = now.0.saturating_sub(self.generation.0);
        if diff < self.window || self.window == 0 {
            return;
        }
        self.slots[self.index] = std::mem::take(&mut self.writer);
        // The `while diff > window` loop runs ceil(diff / window) - 1 times.
        let zeroed = (diff - 1) / self.window;
        let n = self.slots.len() as u64;
        for k in 0..zeroed.min(n) {
            self.slots[((self.index as u64 + 1 + k) % n) as usize] = 0;
        }
        self.index = ((self.index as u64 + 1 + zeroed % n) % n) as usize;
        self.generation = now;
    }
    /// `Bucket::sum`: the writer, the slots and the reserve.
    pub fn sum(&self) -> i64 {
        self.slots
            .iter()
            .fold(self.writer, |a, &s| a.saturating_add(s))
            .saturating_add(self.reserve)
    }
    /// `Budget::deposit`.
    pub fn deposit(&mut self, now: Time) {
        self.expire(now);
        self.writer += self.deposit;
    }
    /// `Budget::withdraw`: true when the balance covers a withdrawal, which it then takes.
    pub fn withdraw(&mut self, now: Time) -> bool {
        self.expire(now);
        let ok = self.sum() >= self.withdraw;
        if ok {
            self.writer -= self.withdraw;
        }
        ok
    }
    /// `(deposit, withdraw)` per call, as tower computes them.
    pub fn amounts(&self) -> (i64, i64) {
        (self.deposit, self.withdraw)
    }
}

/// The ranges tower's `TpsBudget::new` asserts (`who`, and what happens otherwise: `ignored`),
/// which Linkerd's proxy checks too.
pub(super) fn validate_tps(c: &BudgetConfig, who: &str, ignored: &str) -> Result<(), Invalid> {
    if c.ttl < Duration::from_secs(1) || c.ttl > Duration::from_secs(60) {
        return Err(invalid(
            "budget.ttl",
            format!("{who} 1s <= ttl <= 60s, got {}{ignored}", c.ttl),
        ));
    }
    if !(c.percent_can_retry.is_finite() && (0.0..=1000.0).contains(&c.percent_can_retry)) {
        return Err(invalid(
            "budget.percent_can_retry",
            format!(
                "{who} 0 <= retry percent (ratio) <= 1000, got {}{ignored}",
                c.percent_can_retry
            ),
        ));
    }
    if c.min_retries_per_sec >= i32::MAX as u32 {
        return Err(invalid(
            "budget.min_retries_per_sec",
            format!(
                "{who} min retries per second < {}, got {}{ignored}",
                i32::MAX,
                c.min_retries_per_sec
            ),
        ));
    }
    Ok(())
}

impl Budget for TowerBudget {
    fn new(c: &BudgetConfig) -> Self {
        TowerBudget::new(c.ttl, c.min_retries_per_sec, c.percent_can_retry)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        validate_tps(c, "tower's TpsBudget::new asserts", "")
    }

    /// `TpsBudget::new(ttl, min_per_sec, retry_percent)`: Finagle's three keys.
    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        TTL_RATE_PERCENT
    }

    /// Its floor per budget plus its share of the successes (where it deposits).
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        floor_plus_share(c, f, f.successes, "successes")
    }

    /// tower's module example deposits on `Ok(_)`.
    #[inline]
    fn on_outcome(&mut self, now: Time, class: Class, _retryable: bool, _cost: u32) {
        if class == Class::Success {
            self.deposit(now);
        }
    }

    #[inline]
    fn try_retry(&mut self, now: Time, _class: Class) -> Option<u32> {
        self.withdraw(now).then_some(0)
    }
}
