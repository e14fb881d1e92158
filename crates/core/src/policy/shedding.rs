//! Server-side adaptive shedding: CoDel as Facebook runs it in front of RPC handlers.
//!
//! "Fail at Scale" (Ben Maurer, ACM Queue 13(8), 2015) describes it: "if the queue has not been
//! empty for the last N ms, then the amount of time spent in the queue should be limited to M
//! ms". The implementation is `folly::Codel` (facebook/folly `folly/executors/Codel.cpp`,
//! `Codel::overloaded_explicit_now`; flags `codel_interval = 100` ms and `codel_target_delay =
//! 5` ms; `getSloughTimeout` = 2 x target), which this module follows step by step:
//!
//! - each dequeued request reports its queueing delay; the smallest delay of the current
//!   `interval` is kept;
//! - when an interval has ended, the first request after it closes it: the tier is *overloaded*
//!   for the next interval iff that minimum exceeded `target` (the queue never drained below
//!   the target: a standing queue), and the request after that one opens the new minimum (and
//!   is never dropped: "more than one request must come in during an interval");
//! - while overloaded, a request that waited more than `2 x target` is dropped.
//!
//! Unlike CoDel proper (Nichols and Jacobson, "Controlling Queue Delay", ACM Queue 2012; RFC
//! 8289), there is no `interval / sqrt(count)` control law: folly's comment says sloughing off
//! everything above the short timeout "empirically works better for our services than the codel
//! approach of increasingly often dropping packets". Time is integer nanoseconds.

use crate::base::time::{Duration, Time};
use serde::{Deserialize, Serialize};

/// Which shedding a tier runs at dequeue.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SheddingKind {
    /// Every queued request is served, however long it waited.
    #[default]
    None,
    /// `folly::Codel` (Fail at Scale): while the queue delay stayed above `target` for a whole
    /// `interval`, drop requests that waited more than `2 x target`.
    Codel,
}

/// `[server.shedding]`: adaptive shedding at dequeue. `target` and `interval` also set when
/// `discipline = "adaptive-lifo"` switches to newest first.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SheddingConfig {
    pub kind: SheddingKind,
    /// The queueing delay a standing queue must stay under (folly `codel_target_delay`, 5 ms).
    pub target: Duration,
    /// The window over which the smallest delay is taken (folly `codel_interval`, 100 ms).
    pub interval: Duration,
}

impl Default for SheddingConfig {
    fn default() -> Self {
        SheddingConfig {
            kind: SheddingKind::None,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
        }
    }
}

impl SheddingConfig {
    /// The defaults: nothing to write in a serialised model.
    pub fn is_default(&self) -> bool {
        *self == SheddingConfig::default()
    }

    /// folly's `setOptions` refuses `interval <= target` and non-positive values.
    pub fn validate(&self, p: &str) -> Result<(), crate::base::invalid::Invalid> {
        use crate::base::invalid::invalid;
        if self.target.0 == 0 {
            return Err(invalid(
                &format!("{p}.target"),
                "must be a positive duration (folly's default is 5ms)",
            ));
        }
        if self.interval <= self.target {
            return Err(invalid(
                &format!("{p}.interval"),
                format!(
                    "must be longer than {p}.target ({}), as folly's Codel::setOptions requires; got {}",
                    self.target, self.interval
                ),
            ));
        }
        Ok(())
    }
}

/// The state of `folly::Codel` for one tier.
#[derive(Clone, Copy, Debug)]
pub struct Codel {
    target: Duration,
    interval: Duration,
    /// The smallest queueing delay seen in the current interval (`codelMinDelayNs_`).
    min_delay: Duration,
    /// When the current interval ends (`codelIntervalTimeNs_`).
    interval_end: Time,
    /// The next request starts a new minimum (`codelResetDelay_`).
    reset: bool,
    overloaded: bool,
}

impl Codel {
    /// A fresh state at time zero, as `Codel::Codel` constructs it at `now`.
    pub fn new(c: &SheddingConfig) -> Self {
        Codel {
            target: c.target,
            interval: c.interval,
            min_delay: Duration::ZERO,
            interval_end: Time::ZERO,
            reset: true,
            overloaded: false,
        }
    }

    /// A request leaves the queue at `now` after waiting `delay`: whether to drop it.
    pub fn should_drop(&mut self, delay: Duration, now: Time) -> bool {
        if now > self.interval_end && !self.reset {
            self.reset = true;
            self.interval_end = now + self.interval;
            self.overloaded = self.min_delay > self.target;
        }
        if self.reset {
            self.reset = false;
            self.min_delay = delay;
            return false;
        }
        self.min_delay = self.min_delay.min(delay);
        self.overloaded && delay > self.slough_timeout()
    }

    /// Whether the last closed interval saw a standing queue.
    pub fn overloaded(&self) -> bool {
        self.overloaded
    }

    /// `getSloughTimeout`: twice the target.
    fn slough_timeout(&self) -> Duration {
        Duration(self.target.0.saturating_mul(2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn at(n: u64) -> Time {
        Time::ZERO + ms(n)
    }

    fn codel() -> Codel {
        Codel::new(&SheddingConfig {
            kind: SheddingKind::Codel,
            ..SheddingConfig::default()
        })
    }

    #[test]
    fn short_delays_are_never_dropped() {
        let mut c = codel();
        for i in 0..1000 {
            assert!(!c.should_drop(ms(4), at(i)), "at {i} ms");
        }
        assert!(!c.overloaded());
    }

    #[test]
    fn a_standing_queue_for_one_interval_sheds_beyond_twice_the_target() {
        let mut c = codel();
        // t = 0: an idle server; the first request opens the first minimum (never dropped).
        assert!(!c.should_drop(ms(0), at(0)));
        // t = 1 ms closes the first interval (it ended at construction, t = 0) with a minimum of
        // 0: not overloaded. This request opens the next minimum; the interval ends at 101 ms.
        assert!(!c.should_drop(ms(50), at(1)));
        // Every delay of that interval exceeds the 5 ms target, but nothing is dropped yet.
        for i in 2..=101 {
            assert!(!c.should_drop(ms(50), at(i)), "at {i} ms");
        }
        assert!(!c.overloaded());
        // t = 102 ms closes it with a minimum of 50 ms > 5 ms. The closing request itself
        // restarts the minimum and passes.
        assert!(!c.should_drop(ms(50), at(102)));
        assert!(c.overloaded());
        // Overloaded: 11 ms > 2 x 5 ms is dropped, 10 ms is not.
        assert!(c.should_drop(ms(11), at(103)));
        assert!(!c.should_drop(ms(10), at(104)));
        assert!(c.should_drop(ms(50), at(105)));
    }

    #[test]
    fn one_short_delay_in_an_interval_ends_the_overload() {
        let mut c = codel();
        c.should_drop(ms(0), at(0));
        c.should_drop(ms(50), at(1));
        c.should_drop(ms(50), at(50));
        c.should_drop(ms(50), at(102));
        assert!(c.overloaded());
        // The next interval (102..202 ms) sees one delay of 3 ms: its minimum is under target.
        assert!(c.should_drop(ms(50), at(150)));
        assert!(!c.should_drop(ms(3), at(160)));
        assert!(c.should_drop(ms(50), at(170)));
        // t = 203 ms closes it: not overloaded any more.
        assert!(!c.should_drop(ms(50), at(203)));
        assert!(!c.overloaded());
        assert!(!c.should_drop(ms(50), at(204)));
    }

    #[test]
    fn a_lone_request_per_interval_is_never_dropped() {
        // "More than one request must come in during an interval before codel starts dropping."
        let mut c = codel();
        for i in 0..20 {
            assert!(!c.should_drop(ms(500), at(i * 250)), "interval {i}");
        }
    }

    #[test]
    fn validation_follows_folly_set_options() {
        let ok = SheddingConfig::default();
        assert!(ok.validate("server.shedding").is_ok());
        let zero = SheddingConfig {
            target: Duration::ZERO,
            ..ok
        };
        assert_eq!(
            zero.validate("server.shedding").unwrap_err().path,
            "server.shedding.target"
        );
        let short = SheddingConfig {
            interval: ms(5),
            ..ok
        };
        assert_eq!(
            short.validate("server.shedding").unwrap_err().path,
            "server.shedding.interval"
        );
    }
}
