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
//! Where it sits against the retry loop is [`Placement`] (`breaker.placement`): in front of
//! every attempt, `Retry(CircuitBreaker(call))`, or around a call's retries,
//! `CircuitBreaker(Retry(call))`, asked before the first try and told the call's one outcome when
//! it settles (the engine's `call/attempt.rs` and `call/settle.rs`). The state machine below is
//! the same for both: a "call" is an attempt in the first, a whole call in the second.
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

mod config;
mod window;

use crate::base::time::{Duration, Time};
pub use config::*;
use window::Window;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Open { since: Time },
    HalfOpen { since: Time },
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
mod tests;
