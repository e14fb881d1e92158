//! SRE client-side adaptive throttling (*Site Reliability Engineering*, ch. 21).

use crate::base::time::{Duration, Time};
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
