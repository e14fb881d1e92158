//! A circuit breaker with resilience4j's semantics (resilience4j `CircuitBreaker`, docs
//! "CircuitBreaker" at resilience4j.readme.io; `CircuitBreakerStateMachine`).
//!
//! - **Closed**: every call is permitted and its outcome recorded in a sliding window, either
//!   count based (the last `window_size` calls) or time based (the calls of the last
//!   `window_size` seconds, kept as one partial aggregate per second). Once the window holds at
//!   least `minimum_calls` calls (for a count-based window, at most `window_size`), the failure
//!   rate `failures * 100 / calls` is checked after every call; at or above
//!   `failure_rate_threshold` the breaker opens.
//! - **Open**: every call is rejected (`CallNotPermittedException`) until `wait_in_open` has
//!   passed; the next call then moves it to half-open (resilience4j's default,
//!   `automaticTransitionFromOpenToHalfOpenEnabled = false`). With `automatic_transition` it is
//!   half-open as soon as the wait has passed, call or not, so an outcome arriving then counts for
//!   half-open instead of being ignored.
//! - **Half-open**: `permitted_in_half_open` calls are permitted, the rest rejected. When that many
//!   outcomes have been recorded the failure rate over them decides: at or above the threshold,
//!   open again; below, close (with an empty window). With `max_wait_in_half_open`
//!   (`maxWaitDurationInHalfOpenState`, default 0 = no limit) a half-open state that has not
//!   decided by then opens again (`transitionToStateAfterWaitDuration`'s default, OPEN).
//!
//! As in resilience4j, an outcome is recorded in whatever state the breaker is in when it arrives
//! (a call permitted while closed that ends while half-open counts for half-open; one that ends
//! while open is ignored).
//!
//! **Slow calls** (`CircuitBreakerMetrics.onSuccess`/`onError`): a call whose duration (from the
//! attempt going out to its outcome) is above `slow_call_duration_threshold` counts as slow,
//! success or failure; the breaker opens (from closed, and from half-open when its permitted
//! calls are in) when the failure rate *or* the slow-call rate `slow * 100 / calls` is at or
//! above its threshold (`checkIfThresholdsExceeded`). Defaults `DEFAULT_SLOW_CALL_RATE_THRESHOLD
//! = 100` and `DEFAULT_SLOW_CALL_DURATION_THRESHOLD = 60` s: only a window of nothing but
//! minute-long calls opens it. **Forced states** (`transitionToForcedOpenState`,
//! `transitionToDisabledState`): `forced = "open"` rejects every call, `"disabled"` permits every
//! call and records nothing; neither ever changes state.
//!
//! Defaults are resilience4j's: threshold 50 %, count-based window of 100, minimum 100 calls,
//! 60 s open, 10 calls in half-open, no half-open limit, no automatic transition
//! (resilience4j-circuitbreaker `CircuitBreakerConfig.java`: `DEFAULT_FAILURE_RATE_THRESHOLD = 50`,
//! `DEFAULT_SLIDING_WINDOW_SIZE = 100`, `DEFAULT_MINIMUM_NUMBER_OF_CALLS = 100`,
//! `DEFAULT_WAIT_DURATION_IN_OPEN_STATE = 60`, `DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN_STATE = 10`,
//! `DEFAULT_WAIT_DURATION_IN_HALF_OPEN_STATE = 0`, the builder's
//! `automaticTransitionFromOpenToHalfOpenEnabled = false`). States change lazily, at the next
//! call or outcome, at the time they would have changed.

use super::Scope;
use crate::invalid::Invalid;
use crate::time::{Duration, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WindowType {
    CountBased,
    TimeBased,
}

/// The `[breaker]` section.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    pub enabled: bool,
    pub scope: Scope,
    /// Break only retries: first tries always go out (and their outcomes are recorded), as in
    /// the variant Marc Brooker simulates in "Fixing retries with token buckets and circuit
    /// breakers" (2022). False = resilience4j's usual place, in front of every attempt.
    pub retries_only: bool,
    /// Percent of failed calls at or above which the breaker opens, in (0, 100].
    pub failure_rate_threshold: f64,
    pub window_type: WindowType,
    /// Calls (count based) or seconds (time based).
    pub window_size: u32,
    pub minimum_calls: u32,
    pub wait_in_open: Duration,
    pub permitted_in_half_open: u32,
    /// Half-open that long without a decision opens again; absent = no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_wait_in_half_open: Option<Duration>,
    /// Open becomes half-open when `wait_in_open` has passed, without waiting for a call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub automatic_transition: bool,
    /// Percent of slow calls at or above which the breaker opens, in (0, 100].
    pub slow_call_rate_threshold: f64,
    /// A call that takes longer than this is slow.
    pub slow_call_duration_threshold: Duration,
    /// A forced state: `"open"` (reject every call) or `"disabled"` (permit every call, record
    /// nothing); absent = the state machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forced: Option<Forced>,
}

/// resilience4j's `FORCED_OPEN` and `DISABLED` states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Forced {
    Open,
    Disabled,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            enabled: false,
            scope: Scope::Client,
            retries_only: false,
            failure_rate_threshold: 50.0,
            window_type: WindowType::CountBased,
            window_size: 100,
            minimum_calls: 100,
            wait_in_open: Duration::from_secs(60),
            permitted_in_half_open: 10,
            max_wait_in_half_open: None,
            automatic_transition: false,
            // `DEFAULT_SLOW_CALL_RATE_THRESHOLD`, `DEFAULT_SLOW_CALL_DURATION_THRESHOLD`.
            slow_call_rate_threshold: 100.0,
            slow_call_duration_threshold: Duration::from_secs(60),
            forced: None,
        }
    }
}

impl BreakerConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        let bad = |path: &str, message: String| {
            Err(Invalid {
                path: path.to_string(),
                message,
            })
        };
        if !(self.failure_rate_threshold > 0.0 && self.failure_rate_threshold <= 100.0) {
            return bad(
                "breaker.failure_rate_threshold",
                format!(
                    "must be a percentage in (0, 100], got {}",
                    self.failure_rate_threshold
                ),
            );
        }
        if !(self.slow_call_rate_threshold > 0.0 && self.slow_call_rate_threshold <= 100.0) {
            return bad(
                "breaker.slow_call_rate_threshold",
                format!(
                    "must be a percentage in (0, 100], got {}",
                    self.slow_call_rate_threshold
                ),
            );
        }
        if self.slow_call_duration_threshold.0 == 0 {
            return bad(
                "breaker.slow_call_duration_threshold",
                "must be a positive duration (resilience4j requires at least 1 ns)".into(),
            );
        }
        if self.window_size == 0 || self.window_size > 1_000_000 {
            return bad(
                "breaker.window_size",
                format!("must be in 1..=1000000, got {}", self.window_size),
            );
        }
        if self.minimum_calls == 0 {
            return bad("breaker.minimum_calls", "must be at least 1".into());
        }
        if self.permitted_in_half_open == 0 {
            return bad(
                "breaker.permitted_in_half_open",
                "must be at least 1".into(),
            );
        }
        if self.wait_in_open.0 == 0 {
            return bad("breaker.wait_in_open", "must be a positive duration".into());
        }
        if self.max_wait_in_half_open == Some(Duration::ZERO) {
            return bad(
                "breaker.max_wait_in_half_open",
                "must be a positive duration (omit it for no limit)".into(),
            );
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Open { since: Time },
    HalfOpen { since: Time },
}

/// An outcome's flags in a count window.
const FAILED: u8 = 1;
const SLOW: u8 = 2;

/// Calls, failures and slow calls over a sliding window.
#[derive(Clone, Debug)]
enum Window {
    /// A ring of the last `ring.len()` outcomes ([`FAILED`] | [`SLOW`]).
    Count {
        ring: Vec<u8>,
        next: usize,
        len: usize,
        failures: u32,
        slow: u32,
    },
    /// One `(epoch second, calls, failures, slow)` aggregate per second.
    Time { buckets: Vec<(u64, u32, u32, u32)> },
}

impl Window {
    fn new(kind: WindowType, size: u32) -> Self {
        match kind {
            WindowType::CountBased => Window::Count {
                ring: vec![0; size as usize],
                next: 0,
                len: 0,
                failures: 0,
                slow: 0,
            },
            WindowType::TimeBased => Window::Time {
                buckets: vec![(u64::MAX, 0, 0, 0); size as usize],
            },
        }
    }

    fn reset(&mut self) {
        match self {
            Window::Count {
                next,
                len,
                failures,
                slow,
                ..
            } => {
                *next = 0;
                *len = 0;
                *failures = 0;
                *slow = 0;
            }
            Window::Time { buckets } => buckets.fill((u64::MAX, 0, 0, 0)),
        }
    }

    fn record(&mut self, now: Time, failure: bool, slow: bool) {
        match self {
            Window::Count {
                ring,
                next,
                len,
                failures,
                slow: slows,
            } => {
                if *len == ring.len() {
                    let old = ring[*next];
                    *failures -= u32::from(old & FAILED != 0);
                    *slows -= u32::from(old & SLOW != 0);
                } else {
                    *len += 1;
                }
                ring[*next] = (u8::from(failure) * FAILED) | (u8::from(slow) * SLOW);
                *failures += u32::from(failure);
                *slows += u32::from(slow);
                *next = (*next + 1) % ring.len();
            }
            Window::Time { buckets } => {
                let sec = now.0 / 1_000_000_000;
                let n = buckets.len();
                let b = &mut buckets[(sec % n as u64) as usize];
                if b.0 != sec {
                    *b = (sec, 0, 0, 0);
                }
                b.1 += 1;
                b.2 += u32::from(failure);
                b.3 += u32::from(slow);
            }
        }
    }

    /// `(calls, failures, slow calls)` in the window ending at `now`.
    fn totals(&self, now: Time) -> (u32, u32, u32) {
        match self {
            Window::Count {
                len,
                failures,
                slow,
                ..
            } => (*len as u32, *failures, *slow),
            Window::Time { buckets } => {
                let sec = now.0 / 1_000_000_000;
                let n = buckets.len() as u64;
                buckets
                    .iter()
                    .filter(|b| b.0 != u64::MAX && b.0 + n > sec && b.0 <= sec)
                    .fold((0, 0, 0), |(c, f, s), b| (c + b.1, f + b.2, s + b.3))
            }
        }
    }
}

/// One circuit breaker.
#[derive(Clone, Debug)]
pub struct Breaker {
    threshold: f64,
    slow_threshold: f64,
    slow_duration: Duration,
    forced: Option<Forced>,
    minimum_calls: u32,
    wait: Duration,
    permitted: u32,
    max_half_open: Option<Duration>,
    automatic: bool,
    state: State,
    window: Window,
    /// Half-open: permits left, and outcomes recorded.
    permits_left: u32,
    half_calls: u32,
    half_failures: u32,
    half_slow: u32,
    /// Times the breaker opened.
    pub opened: u64,
}

impl Breaker {
    pub fn new(c: &BreakerConfig) -> Self {
        let minimum_calls = match c.window_type {
            WindowType::CountBased => c.minimum_calls.min(c.window_size),
            WindowType::TimeBased => c.minimum_calls,
        };
        Breaker {
            threshold: c.failure_rate_threshold,
            slow_threshold: c.slow_call_rate_threshold,
            slow_duration: c.slow_call_duration_threshold,
            forced: c.forced,
            minimum_calls,
            wait: c.wait_in_open,
            permitted: c.permitted_in_half_open,
            max_half_open: c.max_wait_in_half_open,
            automatic: c.automatic_transition,
            state: State::Closed,
            window: Window::new(c.window_type, c.window_size),
            permits_left: 0,
            half_calls: 0,
            half_failures: 0,
            half_slow: 0,
            opened: 0,
        }
    }

    pub fn state(&self) -> State {
        self.state
    }

    fn half_open(&mut self, since: Time) {
        self.state = State::HalfOpen { since };
        self.permits_left = self.permitted;
        self.half_calls = 0;
        self.half_failures = 0;
        self.half_slow = 0;
    }

    /// The changes that happen on a timer in resilience4j, applied when they are due: open to
    /// half-open (automatic transition) and half-open back to open (the half-open limit).
    #[inline]
    fn catch_up(&mut self, now: Time) {
        loop {
            match self.state {
                State::Open { since } if self.automatic && now >= since + self.wait => {
                    self.half_open(since + self.wait)
                }
                State::HalfOpen { since }
                    if self.max_half_open.is_some_and(|m| now >= since + m) =>
                {
                    let at = since + self.max_half_open.unwrap_or(Duration::ZERO);
                    self.open(at);
                }
                _ => return,
            }
        }
    }

    /// `tryAcquirePermission`: may a call go out now?
    #[inline]
    pub fn try_acquire(&mut self, now: Time) -> bool {
        if let Some(f) = self.forced {
            return f == Forced::Disabled;
        }
        if self.automatic || self.max_half_open.is_some() {
            self.catch_up(now);
        }
        match self.state {
            State::Closed => true,
            State::Open { since } => {
                if now >= since + self.wait {
                    self.half_open(now);
                    self.permits_left -= 1;
                    true
                } else {
                    false
                }
            }
            State::HalfOpen { .. } => {
                if self.permits_left > 0 {
                    self.permits_left -= 1;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// `releasePermission`: a permitted call was cancelled before it ended (a hedged copy that
    /// lost the race); in half-open its permit is given back.
    pub fn release(&mut self) {
        if matches!(self.state, State::HalfOpen { .. }) {
            self.permits_left = (self.permits_left + 1).min(self.permitted);
        }
    }

    fn open(&mut self, now: Time) {
        self.state = State::Open { since: now };
        self.opened += 1;
    }

    /// `checkIfThresholdsExceeded`: the failure rate or the slow-call rate.
    fn rate_exceeded(&self, calls: u32, failures: u32, slow: u32) -> bool {
        let pct = |n: u32| f64::from(n) * 100.0 / f64::from(calls);
        pct(failures) >= self.threshold || pct(slow) >= self.slow_threshold
    }

    /// Records the outcome of a call that was not slow (`failure` = it counts as a failure).
    #[inline]
    pub fn on_result(&mut self, now: Time, failure: bool) {
        self.on_call(now, failure, Duration::ZERO)
    }

    /// Records a call's outcome and how long it took (slow: longer than the threshold).
    #[inline]
    pub fn on_call(&mut self, now: Time, failure: bool, took: Duration) {
        if self.forced.is_some() {
            return;
        }
        let slow = took > self.slow_duration;
        if self.automatic || self.max_half_open.is_some() {
            self.catch_up(now);
        }
        match self.state {
            State::Closed => {
                self.window.record(now, failure, slow);
                let (calls, failures, slows) = self.window.totals(now);
                if calls >= self.minimum_calls && self.rate_exceeded(calls, failures, slows) {
                    self.open(now);
                }
            }
            State::Open { .. } => {}
            State::HalfOpen { .. } => {
                self.half_calls += 1;
                self.half_failures += u32::from(failure);
                self.half_slow += u32::from(slow);
                if self.half_calls >= self.permitted {
                    if self.rate_exceeded(self.half_calls, self.half_failures, self.half_slow) {
                        self.open(now);
                    } else {
                        self.state = State::Closed;
                        self.window.reset();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn small() -> BreakerConfig {
        BreakerConfig {
            enabled: true,
            window_size: 10,
            minimum_calls: 5,
            wait_in_open: Duration::from_secs(1),
            permitted_in_half_open: 2,
            ..Default::default()
        }
    }

    #[test]
    fn opens_at_threshold_after_minimum_calls() {
        let mut b = Breaker::new(&small());
        // 4 failures: below the minimum of 5 calls, stays closed.
        for i in 0..4 {
            assert!(b.try_acquire(ms(i)));
            b.on_result(ms(i), true);
        }
        assert_eq!(b.state(), State::Closed);
        b.on_result(ms(5), false);
        // 4 of 5 failed = 80 % >= 50 %: open.
        assert_eq!(b.state(), State::Open { since: ms(5) });
        assert!(!b.try_acquire(ms(900)));
        // After the wait: half-open with 2 permits.
        assert!(b.try_acquire(ms(1005)));
        assert_eq!(b.state(), State::HalfOpen { since: ms(1005) });
        assert!(b.try_acquire(ms(1006)));
        assert!(!b.try_acquire(ms(1007)));
        b.on_result(ms(1010), false);
        b.on_result(ms(1011), true);
        // 1 of 2 = 50 % >= 50 %: open again.
        assert_eq!(b.state(), State::Open { since: ms(1011) });
        assert_eq!(b.opened, 2);
        assert!(b.try_acquire(ms(2011)));
        assert!(b.try_acquire(ms(2012)));
        b.on_result(ms(2020), false);
        b.on_result(ms(2021), false);
        assert_eq!(b.state(), State::Closed);
        // The window was reset: one failure does not reopen it.
        b.on_result(ms(2022), true);
        assert_eq!(b.state(), State::Closed);
    }

    #[test]
    fn count_window_forgets_old_calls() {
        let mut b = Breaker::new(&BreakerConfig {
            minimum_calls: 10,
            failure_rate_threshold: 60.0,
            ..small()
        });
        for i in 0..5 {
            b.on_result(ms(i), true);
        }
        for i in 5..10 {
            b.on_result(ms(i), false);
        }
        // 50 % < 60 %.
        assert_eq!(b.state(), State::Closed);
        // 5 more successes push the failures out of the ring of 10.
        for i in 10..15 {
            b.on_result(ms(i), false);
        }
        for i in 15..20 {
            b.on_result(ms(i), true);
        }
        assert_eq!(b.state(), State::Closed);
        b.on_result(ms(20), true);
        // Ring: 4 successes then 6 failures = 60 %.
        assert!(matches!(b.state(), State::Open { .. }));
    }

    #[test]
    fn time_window_uses_seconds() {
        let mut b = Breaker::new(&BreakerConfig {
            window_type: WindowType::TimeBased,
            window_size: 2,
            minimum_calls: 3,
            ..small()
        });
        b.on_result(ms(0), true);
        b.on_result(ms(100), true);
        // Two seconds later the first second's calls have left the window.
        b.on_result(ms(2500), false);
        assert_eq!(b.state(), State::Closed);
        b.on_result(ms(2600), true);
        b.on_result(ms(2700), true);
        assert!(matches!(b.state(), State::Open { .. }));
    }

    /// Slow calls (resilience4j `CircuitBreakerMetrics.onSuccess`: slow when the duration is
    /// *above* the threshold) open the breaker from closed and from half-open, successes or not.
    #[test]
    fn slow_calls_open_it() {
        let mut b = Breaker::new(&BreakerConfig {
            slow_call_rate_threshold: 60.0,
            slow_call_duration_threshold: Duration::from_secs(2),
            ..small()
        });
        let s = Duration::from_secs;
        // 5 successes, 2 of them slow: 40 % < 60 %, 0 % failed.
        for (i, took) in [s(3), s(1), s(2), s(5), s(0)].into_iter().enumerate() {
            b.on_call(ms(i as u64), false, took);
        }
        assert_eq!(b.state(), State::Closed, "exactly 2 s is not slow");
        b.on_call(ms(5), false, s(3));
        // 3 of 6 = 50 %: closed; the 4th slow call makes 4 of 7 = 57 %, the 5th 5 of 8 = 62.5 %.
        b.on_call(ms(6), false, s(3));
        assert_eq!(b.state(), State::Closed);
        b.on_call(ms(7), false, s(3));
        assert_eq!(b.state(), State::Open { since: ms(7) });
        // Half-open: 2 permitted calls, one slow success: 50 % < 60 %, closed again.
        assert!(b.try_acquire(ms(1007)) && b.try_acquire(ms(1008)));
        b.on_call(ms(1010), false, s(3));
        b.on_call(ms(1011), false, s(1));
        assert_eq!(b.state(), State::Closed);
        // The default thresholds (100 %, 60 s): only a window of nothing but slow calls opens.
        let mut d = Breaker::new(&small());
        for i in 0..4 {
            d.on_call(ms(i), false, s(61));
        }
        d.on_call(ms(4), false, s(60));
        assert_eq!(
            d.state(),
            State::Closed,
            "4 of 5 slow, and 60 s is not above 60 s"
        );
        for i in 5..14 {
            d.on_call(ms(i), false, s(61));
        }
        assert_eq!(d.state(), State::Closed, "9 of the last 10 slow");
        d.on_call(ms(14), false, s(61));
        assert_eq!(d.state(), State::Open { since: ms(14) }, "10 of 10 slow");
    }

    #[test]
    fn forced_states_never_change() {
        let mut open = Breaker::new(&BreakerConfig {
            forced: Some(Forced::Open),
            ..small()
        });
        let mut off = Breaker::new(&BreakerConfig {
            forced: Some(Forced::Disabled),
            ..small()
        });
        for i in 0..50 {
            assert!(!open.try_acquire(ms(i * 1000)));
            assert!(off.try_acquire(ms(i * 1000)));
            open.on_result(ms(i * 1000), false);
            off.on_result(ms(i * 1000), true);
        }
        assert_eq!((open.opened, off.opened), (0, 0));
        assert_eq!(off.state(), State::Closed);
    }

    /// A scripted sequence through every transition the two timers add.
    #[test]
    fn automatic_transition_and_half_open_limit() {
        let mut b = Breaker::new(&BreakerConfig {
            automatic_transition: true,
            max_wait_in_half_open: Some(Duration::from_millis(500)),
            ..small()
        });
        for i in 0..5 {
            b.on_result(ms(i), true);
        }
        assert_eq!(b.state(), State::Open { since: ms(4) });
        // A call permitted before the breaker opened ends after the wait: with the automatic
        // transition the breaker is half-open since 1004 ms, and the outcome counts there.
        b.on_result(ms(1100), false);
        assert_eq!(b.state(), State::HalfOpen { since: ms(1004) });
        assert_eq!((b.half_calls, b.permits_left), (1, 2));
        // No second outcome within 500 ms: open again at 1504 ms, half-open at 2504 ms.
        assert!(!b.try_acquire(ms(1600)));
        assert_eq!(b.state(), State::Open { since: ms(1504) });
        assert_eq!(b.opened, 2);
        // Both timers run in one catch-up: by 3100 ms it was half-open (2504), then open (3004).
        assert!(!b.try_acquire(ms(3100)));
        assert_eq!(b.state(), State::Open { since: ms(3004) });
        assert!(b.try_acquire(ms(4004)));
        assert!(b.try_acquire(ms(4005)));
        b.on_result(ms(4010), false);
        b.on_result(ms(4011), false);
        assert_eq!(b.state(), State::Closed);
        assert_eq!(b.opened, 3);
        // Without the options the same outcome at 1100 ms is ignored (open, no call yet).
        let mut plain = Breaker::new(&small());
        for i in 0..5 {
            plain.on_result(ms(i), true);
        }
        plain.on_result(ms(1100), false);
        assert_eq!(plain.state(), State::Open { since: ms(4) });
    }
}
