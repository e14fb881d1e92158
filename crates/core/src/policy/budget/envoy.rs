//! Envoy's retry budget and `max_retries`: a limit on the retries in progress, as a share of
//! the requests in flight or, with `budget_interval`, of the requests started over a window.

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, invalid};
use crate::base::prose::short;
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use std::collections::VecDeque;

/// Envoy's retry limit (`source/common/upstream/resource_manager_impl.h`, `RetryBudgetImpl`;
/// `source/common/router/retry_state_impl.cc`): a retry may start while the retries in
/// progress are fewer than `max(min_retry_concurrency, budget_percent / 100 * active)` (the
/// product truncated to an integer, as the C++ cast does), where `active` counts requests in
/// flight to the cluster. Without a budget it is the `max_retries` circuit breaker. A retry is in
/// progress from the decision (`retries().inc()`) until its attempt's outcome is judged
/// (`resetRetry()` at the next `shouldRetry`) or the request ends. With `budget_interval` the
/// percentage is of the requests started over the window ([`RequestWindow`]) instead.
#[derive(Clone, Debug)]
pub struct EnvoyBudget {
    /// Percent, and the floor; `None` = the `max_retries` breaker.
    budget: Option<(f64, u64)>,
    max_retries: u64,
    in_flight: u64,
    retries: u64,
    /// The requests started over `budget_interval`, when it is set (and a budget is).
    window: Option<RequestWindow>,
}

/// Envoy's `RetryBudgetImpl::IntervalState` (`source/common/upstream/resource_manager_impl.h`,
/// since `budget_interval` was added to `RetryBudget`): every request the cluster starts
/// (`requests_.inc()`, retries included) adds one to `req_in_interval` and to `req_to_expire`.
/// A timer fires every `budget_interval / 10` whole milliseconds from the budget's creation
/// (time zero here); each firing (`expireRequests`) pushes `req_to_expire` onto a deque of slot
/// counts and zeroes it, and once the deque holds ten slots pops the oldest and takes it off
/// `req_in_interval`. So the count covers the current partial slot and the nine before it:
/// between 0.9 and 1.0 of the interval. A firing at the same nanosecond as a request comes first.
#[derive(Clone, Debug)]
pub struct RequestWindow {
    /// `expiration_interval`, in nanoseconds.
    slot: u64,
    /// When the timer fires next.
    next_fire: Time,
    req_in_interval: u64,
    req_to_expire: u64,
    /// `expire_amounts`: at most nine slots between firings.
    expire_amounts: VecDeque<u64>,
}

/// Envoy's `NumSlots`.
const NUM_SLOTS: usize = 10;

impl RequestWindow {
    /// The window of an interval of `ms` whole milliseconds (at least 10).
    pub fn new(ms: u64) -> Self {
        let slot = ms / NUM_SLOTS as u64 * 1_000_000;
        RequestWindow {
            slot,
            next_fire: Time(slot),
            req_in_interval: 0,
            req_to_expire: 0,
            expire_amounts: VecDeque::with_capacity(NUM_SLOTS),
        }
    }
    /// Runs the timer's firings up to `now`. After ten firings every older count has expired
    /// and further empty firings change nothing, so a long gap costs at most ten.
    fn advance(&mut self, now: Time) {
        if now < self.next_fire {
            return;
        }
        let due = (now.0 - self.next_fire.0) / self.slot + 1;
        for _ in 0..due.min(NUM_SLOTS as u64) {
            self.expire_requests();
        }
        self.next_fire = Time(
            self.next_fire
                .0
                .saturating_add(due.saturating_mul(self.slot)),
        );
    }
    /// `expireRequests()`.
    fn expire_requests(&mut self) {
        self.expire_amounts
            .push_back(std::mem::take(&mut self.req_to_expire));
        if self.expire_amounts.len() >= NUM_SLOTS {
            let expired = self.expire_amounts.pop_front().unwrap_or(0);
            self.req_in_interval -= expired;
        }
    }
    /// `writeRequest()`: a request started at `now`.
    pub fn write_request(&mut self, now: Time) {
        self.advance(now);
        self.req_in_interval += 1;
        self.req_to_expire += 1;
    }
    /// A request counted at its start was not sent after all: Envoy would not have counted it.
    fn unwrite(&mut self) {
        if self.req_to_expire > 0 {
            self.req_to_expire -= 1;
        } else if let Some(last) = self.expire_amounts.back_mut().filter(|n| **n > 0) {
            *last -= 1;
        } else {
            return;
        }
        self.req_in_interval -= 1;
    }
    /// `req_in_interval` at `now`.
    pub fn requests(&mut self, now: Time) -> u64 {
        self.advance(now);
        self.req_in_interval
    }
}

impl EnvoyBudget {
    /// A retry counted by `try_retry` ended without being sent.
    pub fn retry_dropped(&mut self) {
        self.retries = self.retries.saturating_sub(1);
    }

    pub fn new(c: &BudgetConfig) -> Self {
        let budget = (c.budget_percent.is_some() || c.min_retry_concurrency.is_some()).then(|| {
            (
                c.budget_percent.unwrap_or(20.0),
                u64::from(c.min_retry_concurrency.unwrap_or(3)),
            )
        });
        // Envoy counts requests in the window only with a budget (`on_inc_cb_`).
        let window = interval_ms(c)
            .filter(|&ms| ms > 0 && budget.is_some())
            .map(RequestWindow::new);
        EnvoyBudget {
            budget,
            max_retries: u64::from(c.max_retries),
            in_flight: 0,
            retries: 0,
            window,
        }
    }
    /// `RetryBudgetImpl::max()` at `now`.
    pub fn max(&mut self, now: Time) -> u64 {
        let requests = match &mut self.window {
            Some(w) => w.requests(now),
            None => self.in_flight,
        };
        match self.budget {
            Some((pct, min)) => ((pct / 100.0 * requests as f64) as u64).max(min),
            None => self.max_retries,
        }
    }
    /// `canCreate()` then `inc()`.
    pub fn try_start(&mut self, now: Time) -> bool {
        let ok = self.retries < self.max(now);
        self.retries += u64::from(ok);
        ok
    }
    /// An attempt is sent at `now`: active until its outcome, and counted in the window.
    pub fn sent(&mut self, now: Time) {
        self.in_flight += 1;
        if let Some(w) = &mut self.window {
            w.write_request(now);
        }
    }
    /// An attempt's outcome is known; `was_retry` releases the retry it held.
    pub fn ended(&mut self, was_retry: bool) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if was_retry {
            self.retries = self.retries.saturating_sub(1);
        }
    }
    pub fn retries_in_progress(&self) -> u64 {
        self.retries
    }
}

impl Budget for EnvoyBudget {
    fn new(c: &BudgetConfig) -> Self {
        EnvoyBudget::new(c)
    }

    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        if let Some(p) = c.budget_percent
            && !(p.is_finite() && (0.0..=100.0).contains(&p))
        {
            return Err(invalid(
                "budget.budget_percent",
                format!("Envoy's budget_percent is a percentage in [0, 100], got {p}"),
            ));
        }
        validate_interval(c)
    }

    fn limits(c: &BudgetConfig) -> &'static [&'static str] {
        if c.budget_interval.is_some() {
            &[
                "budget_percent",
                "min_retry_concurrency",
                "max_retries",
                "budget_interval",
            ]
        } else {
            &["budget_percent", "min_retry_concurrency", "max_retries"]
        }
    }

    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        Some(steady_limit(c, f))
    }

    /// Every attempt sent is active until its outcome, and starts a request in the window.
    #[inline]
    fn on_send(&mut self, now: Time, _first: bool, _u: f64) -> bool {
        self.sent(now);
        true
    }

    /// Envoy's counts give back what an unsent attempt held.
    #[inline]
    fn on_unsent(&mut self, counted: bool, retry: bool) {
        if counted {
            self.ended(retry);
            if let Some(w) = &mut self.window {
                w.unwrite();
            }
        } else if retry {
            self.retry_dropped();
        }
    }

    /// `cost` is 1 when a retry made this attempt (what `try_retry` returned).
    #[inline]
    fn on_outcome(&mut self, _now: Time, _class: Class, _retryable: bool, cost: u32) {
        self.ended(cost > 0);
    }

    #[inline]
    fn try_retry(&mut self, now: Time, _class: Class) -> Option<u32> {
        self.try_start(now).then_some(1)
    }
}

/// `budget_interval` in whole milliseconds, as Envoy keeps it; `None` when unset.
fn interval_ms(c: &BudgetConfig) -> Option<u64> {
    c.budget_interval.map(|d| d.0 / 1_000_000)
}

/// `budget_interval`: zero (Envoy's default: in flight) or at least ten milliseconds (a slot of
/// a whole millisecond), and only beside a budget, which alone counts requests.
fn validate_interval(c: &BudgetConfig) -> Result<(), Invalid> {
    let Some(d) = c.budget_interval else {
        return Ok(());
    };
    if d.0 > 0 && d < Duration::from_millis(10) {
        return Err(invalid(
            "budget.budget_interval",
            format!(
                "must be 0s (count the requests in flight) or at least 10ms: Envoy expires the \
                 window in ten slots of whole milliseconds, got {d}"
            ),
        ));
    }
    if d.0 > 0 && c.budget_percent.is_none() && c.min_retry_concurrency.is_none() {
        return Err(invalid(
            "budget.budget_interval",
            "has no effect without budget_percent or min_retry_concurrency: Envoy counts \
             requests over the interval only for its retry budget, not for max_retries",
        ));
    }
    Ok(())
}

/// Envoy's retry concurrency: retries in progress under `max(min, percent x active)` (or
/// `max_retries`); one lasts `attempt_s`, so the rate is that over the attempt time.
fn steady_limit(b: &BudgetConfig, f: &Flow) -> (f64, String) {
    let instances = f.instances(b.scope);
    let t = f.attempt_s.max(1e-9);
    match (b.budget_percent, b.min_retry_concurrency) {
        (None, None) => (
            instances * f64::from(b.max_retries) / t,
            format!(
                "max_retries = {} retries in progress, each {} s",
                b.max_retries,
                short(t)
            ),
        ),
        (p, m) if b.budget_interval.is_some_and(|d| d.0 > 0) => {
            windowed_limit(p, m, b, f, instances)
        }
        (p, m) => {
            let p = p.unwrap_or(20.0) / 100.0;
            let floor = instances * f64::from(m.unwrap_or(3)) / t;
            // Retries in progress r * t <= p * (calls + r) * t, so r <= p / (1 - p) * calls.
            let share = if p < 1.0 {
                p / (1.0 - p) * f.calls
            } else {
                f64::INFINITY
            };
            (
                floor.max(share),
                format!(
                    "retries in progress under budget_percent = {} % of the active requests (at least {})",
                    p * 100.0,
                    m.unwrap_or(3)
                ),
            )
        }
    }
}

/// Envoy's budget over `budget_interval` W: retries in progress r x t stay under
/// `max(min, p x requests started over W)`, and every attempt starts a request, so r x t <=
/// p x (calls + r) x W at most (the window counts 0.9 to 1.0 of W): r <= p W calls / (t - p W)
/// while p W < t, else no bound from the share.
fn windowed_limit(
    p: Option<f64>,
    m: Option<u32>,
    b: &BudgetConfig,
    f: &Flow,
    instances: f64,
) -> (f64, String) {
    let t = f.attempt_s.max(1e-9);
    let w = b.budget_interval.map_or(0.0, |d| d.0 as f64 / 1e9);
    let p = p.unwrap_or(20.0) / 100.0;
    let floor = instances * f64::from(m.unwrap_or(3)) / t;
    let share = if p * w < t {
        p * w * f.calls / (t - p * w)
    } else {
        f64::INFINITY
    };
    (
        floor.max(share),
        format!(
            "retries in progress under budget_percent = {} % of the requests started over budget_interval = {} s (at least {}), each retry lasting {} s",
            p * 100.0,
            short(w),
            m.unwrap_or(3),
            short(t)
        ),
    )
}
