//! tower's retry budget (`TpsBudget`) and Linkerd's `retryBudget`.

use crate::base::time::{Duration, Time};

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
