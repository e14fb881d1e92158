//! SRE client-side adaptive throttling (Beyer et al., *Site Reliability Engineering*, O'Reilly
//! 2016, ch. 21 "Handling Overload"): the client counts `requests` (attempts its application
//! made) and `accepts` (attempts the backend accepted) over a window (the book uses two minutes)
//! and rejects a new attempt locally with probability `max(0, (requests - K * accepts) /
//! (requests + 1))`, K = 2 by default. It applies to first tries and retries alike; a request
//! rejected locally is never sent.

use super::{Budget, BudgetConfig, Flow};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::window::WindowedAdder;

/// The SRE book's client-side adaptive throttling.
#[derive(Clone, Debug)]
pub struct AdaptiveThrottle {
    k: f64,
    requests: WindowedAdder,
    accepts: WindowedAdder,
}

impl AdaptiveThrottle {
    pub fn new(k: f64, window: Duration) -> Self {
        AdaptiveThrottle {
            k,
            requests: WindowedAdder::new(window),
            accepts: WindowedAdder::new(window),
        }
    }
    /// `max(0, (requests - K * accepts) / (requests + 1))` over the window, before this request.
    pub fn reject_probability(&mut self, now: Time) -> f64 {
        let r = self.requests.sum(now) as f64;
        let a = self.accepts.sum(now) as f64;
        ((r - self.k * a) / (r + 1.0)).max(0.0)
    }
    /// The application makes a request: counted whether or not it is then rejected locally.
    /// `u` is a uniform draw in [0, 1). Returns whether the request may be sent.
    pub fn admit(&mut self, now: Time, u: f64) -> bool {
        let p = self.reject_probability(now);
        self.requests.add(now, 1);
        u >= p
    }
    pub fn accepted(&mut self, now: Time) {
        self.accepts.add(now, 1);
    }
}

impl Budget for AdaptiveThrottle {
    fn new(c: &BudgetConfig) -> Self {
        AdaptiveThrottle::new(c.k, c.window)
    }

    /// `k` >= 1 over a positive window.
    fn validate(c: &BudgetConfig) -> Result<(), Invalid> {
        if !(c.k.is_finite() && c.k >= 1.0) {
            return Err(invalid(
                "budget.k",
                format!("must be a number >= 1 (the SRE book uses 2), got {}", c.k),
            ));
        }
        if c.window.0 == 0 {
            return Err(invalid("budget.window", "must be a positive duration"));
        }
        Ok(())
    }

    fn limits(_c: &BudgetConfig) -> &'static [&'static str] {
        &["k", "window"]
    }

    /// Throttling rejects first tries too: sends stay under k x accepts, so retries can be no
    /// more than what the accepts leave over the calls.
    fn retry_limit(c: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        Some((
            (c.k * f.successes - f.calls).max(0.0),
            format!(
                "attempts sent stay under k = {} x accepted ones (first tries included)",
                c.k
            ),
        ))
    }

    const DRAWS_ON_SEND: bool = true;

    /// Every attempt, first try or retry, may be rejected locally.
    #[inline]
    fn on_send(&mut self, now: Time, _first: bool, u: f64) -> bool {
        self.admit(now, u)
    }

    #[inline]
    fn on_outcome(&mut self, now: Time, class: Class, _retryable: bool, _cost: u32) {
        if class.is_accepted() {
            self.accepted(now);
        }
    }

    /// The throttling applies on send: a retry is never refused here.
    #[inline]
    fn try_retry(&mut self, _now: Time, _class: Class) -> Option<u32> {
        Some(0)
    }
}
