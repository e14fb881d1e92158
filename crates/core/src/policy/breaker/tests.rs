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
