//! Each budget against its definition, transcribed from its source's tests where it has them.

use super::*;
use crate::base::time::{Duration, Time};
use crate::policy::Class;

#[test]
fn brookers_bucket_and_breaker_follow_retry_sim() {
    // AdaptiveRetryStrategy(0.1, 5): starts full; a retry needs more than one token.
    let mut b = BrookerBucket::new(5.0, 0.1);
    b.on_call(Time::ZERO);
    assert!(b.try_withdraw() && b.try_withdraw() && b.try_withdraw() && b.try_withdraw());
    assert!(
        !b.try_withdraw(),
        "exactly 1.0 left: `bucket > 1.0` is false"
    );
    for _ in 0..10 {
        b.on_call(Time::ZERO);
    }
    assert!(b.try_withdraw());
    // Under 100% failure a call earns 0.1 retries: the load tends to 1.1 attempts per call.
    let mut b = BrookerBucket::new(5.0, 0.1);
    let (mut attempts, calls) = (0u64, 100_000u64);
    for _ in 0..calls {
        b.on_call(Time::ZERO);
        attempts += 1;
        while b.try_withdraw() {
            attempts += 1;
        }
    }
    assert!((attempts as f64 / calls as f64 - 1.1).abs() < 0.001);
    // CircuitBreakerRetryStrategy(.., 0.1): cumulative failures over calls.
    let mut f = BudgetState::new(&BudgetConfig {
        kind: BudgetKind::FailureRatio,
        ..BudgetConfig::default()
    });
    for _ in 0..10 {
        f.on_send(Time::ZERO, true, 0.0);
    }
    f.on_outcome(Time::ZERO, Class::ServerError, true, 0);
    assert_eq!(
        f.try_retry(Time::ZERO, Class::ServerError),
        Some(0),
        "1 / 10 is not above 10%"
    );
    f.on_outcome(Time::ZERO, Class::ServerError, true, 0);
    assert_eq!(
        f.try_retry(Time::ZERO, Class::ServerError),
        None,
        "2 / 10 is"
    );
}

#[test]
fn grpc_stops_retries_at_half_the_tokens() {
    // gRFC A6 example: maxTokens 10, tokenRatio 0.1.
    let mut g = GrpcThrottle::new(10.0, 0.1);
    assert!(g.allows());
    for _ in 0..4 {
        g.on_failure();
    }
    assert_eq!(g.tokens(), 6.0);
    assert!(g.allows());
    g.on_failure();
    // 5 tokens: not > 10 / 2.
    assert_eq!(g.tokens(), 5.0);
    assert!(!g.allows());
    // One success brings 5.1: retries resume.
    g.on_success();
    assert!(g.allows());
    for _ in 0..100 {
        g.on_failure();
    }
    assert_eq!(g.tokens(), 0.0);
    for _ in 0..1000 {
        g.on_success();
    }
    assert_eq!(g.tokens(), 10.0);
}

#[test]
fn aws_quota_costs_and_refunds() {
    let mut q = AwsQuota::new(&BudgetConfig::default());
    assert_eq!(q.acquire(Class::Unavailable), Some(5));
    assert_eq!(q.acquire(Class::Timeout), Some(10));
    assert_eq!(q.available(), 485);
    q.release(10);
    assert_eq!(q.available(), 495);
    q.release(0);
    q.release(0);
    // Never above the initial 500.
    q.release(0);
    q.release(0);
    q.release(0);
    q.release(0);
    assert_eq!(q.available(), 500);
    // 100 retries drain it; the 101st is refused.
    for _ in 0..100 {
        assert!(q.acquire(Class::Unavailable).is_some());
    }
    assert_eq!(q.acquire(Class::Unavailable), None);
    q.release(0);
    q.release(0);
    q.release(0);
    q.release(0);
    assert_eq!(
        q.acquire(Class::Timeout),
        None,
        "4 tokens cannot pay a timeout retry"
    );
    q.release(0);
    assert_eq!(q.acquire(Class::Unavailable), Some(5));
}

#[test]
fn finagle_budget_matches_its_definition() {
    let s = |x: u64| Time(x * 1_000_000_000);
    // No deposits: the reserve alone, minRetriesPerSec * ttl = 10 * 10 = 100 retries.
    let mut f = FinagleBudget::new(Duration::from_secs(10), 10, 0.2);
    let mut n = 0;
    while f.try_withdraw(s(1)) {
        n += 1;
    }
    assert_eq!(n, 100);
    // 1000 requests over the next second allow 20 % more retries.
    for _ in 0..1000 {
        f.deposit(s(2));
    }
    let mut m = 0;
    while f.try_withdraw(s(2)) {
        m += 1;
    }
    assert_eq!(m, 200);
    // After ttl the withdrawals and deposits have expired: the reserve is back.
    assert_eq!(f.balance(s(30)), 100);
    // Reserve only (percentCanRetry 0): requests earn nothing.
    let mut z = FinagleBudget::new(Duration::from_secs(1), 3, 0.0);
    z.deposit(s(0));
    assert_eq!(z.balance(s(0)), 3);
}

#[test]
fn adaptive_throttling_formula() {
    let t = Time(1);
    let mut a = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
    assert_eq!(a.reject_probability(t), 0.0);
    // 100 requests, 10 accepted: p = (100 - 20) / 101.
    for i in 0..100 {
        assert!(a.admit(t, 0.999_999));
        if i < 10 {
            a.accepted(t);
        }
    }
    let p = a.reject_probability(t);
    assert!((p - 80.0 / 101.0).abs() < 1e-12, "{p}");
    assert!(!a.admit(t, 0.5));
    assert!(a.admit(t, 0.9));
    // All accepted: never rejects.
    let mut b = AdaptiveThrottle::new(2.0, Duration::from_secs(120));
    for _ in 0..100 {
        assert!(b.admit(t, 0.0));
        b.accepted(t);
    }
}

/// tower's own tests (`tower/src/retry/budget/tps_budget.rs`: `tps_empty`, `tps_leaky`,
/// `tps_slots`, `tps_reserve`; the same four in 0.4's `budget.rs`), with tokio's paused clock
/// replaced by simulated time.
#[test]
fn tower_budget_passes_towers_own_tests() {
    let ms = |x: u64| Time(x * 1_000_000);
    let secs = Duration::from_secs;
    // empty
    let mut b = TowerBudget::new(secs(1), 0, 1.0);
    assert!(!b.withdraw(Time::ZERO));
    // leaky
    let mut b = TowerBudget::new(secs(1), 0, 1.0);
    b.deposit(Time::ZERO);
    assert!(!b.withdraw(ms(3000)));
    // slots
    let mut b = TowerBudget::new(secs(1), 0, 0.5);
    b.deposit(Time::ZERO);
    b.deposit(Time::ZERO);
    assert!(
        b.withdraw(ms(901)),
        "900ms later, the deposit should still be valid"
    );
    b.deposit(ms(2902));
    b.deposit(ms(3203));
    b.deposit(ms(4004));
    assert!(
        b.withdraw(ms(4004)),
        "the first deposit is expired, but the 2nd should still be valid"
    );
    // reserve
    let mut b = TowerBudget::new(secs(1), 5, 1.0);
    for _ in 0..5 {
        assert!(b.withdraw(Time::ZERO));
    }
    assert!(!b.withdraw(Time::ZERO));
}

#[test]
fn tower_budget_amounts_truncate_in_f32() {
    let secs = Duration::from_secs;
    assert_eq!(TowerBudget::new(secs(10), 10, 0.2).amounts(), (1, 5));
    assert_eq!(TowerBudget::new(secs(10), 10, 0.3).amounts(), (1, 3));
    assert_eq!(TowerBudget::new(secs(10), 10, 0.7).amounts(), (1, 1));
    assert_eq!(TowerBudget::new(secs(10), 10, 1.5).amounts(), (1000, 666));
    assert_eq!(TowerBudget::new(secs(10), 10, 0.0).amounts(), (0, 1));
    // Default (10 s, 10, 0.2): reserve 10 * 10 * 5 = 500, i.e. 100 retries.
    let b = TowerBudget::new(secs(10), 10, 0.2);
    assert_eq!(b.sum(), 500);
    // ttl.as_secs() truncates: 1.9 s holds 1 s of reserve.
    assert_eq!(TowerBudget::new(Duration(1_900_000_000), 4, 1.0).sum(), 4);
}

#[test]
fn tower_window_drifts_with_the_generation() {
    // ttl 1 s: slots of 100 ms; the sum holds the writer and ten slots.
    let ms = |x: u64| Time(x * 1_000_000);
    let mut b = TowerBudget::new(Duration::from_secs(1), 0, 1.0);
    b.deposit(ms(50));
    // 100 ms after the generation (0): the writer goes to slot 0, no slot zeroed.
    b.deposit(ms(100));
    // Slot 0 is overwritten only when the index comes back to it: ten expiries later.
    for k in 1..10 {
        b.deposit(ms(100 + 100 * k));
        b.withdraw(ms(100 + 100 * k));
    }
    assert!(b.sum() >= 1, "the 50 ms deposit still counts at 1 s");
    // A long gap zeroes every slot (the loop wraps the ring), then the writer is empty too.
    b.deposit(ms(1000));
    b.expire(ms(60_000));
    assert_eq!(b.sum(), 0);
}

#[test]
fn linkerd_deposits_on_responses_it_does_not_retry() {
    let c = |kind| BudgetConfig {
        kind,
        ttl: Duration::from_secs(1),
        min_retries_per_sec: 0,
        percent_can_retry: 1.0,
        ..Default::default()
    };
    let t = Time(1);
    // A non-retryable failure deposits for Linkerd, not for tower's example policy.
    let mut l = BudgetState::new(&c(BudgetKind::Linkerd));
    let mut w = BudgetState::new(&c(BudgetKind::Tower));
    for b in [&mut l, &mut w] {
        b.on_send(t, true, 0.0);
        b.on_outcome(t, Class::ClientError, false, 0);
    }
    assert_eq!(l.try_retry(t, Class::ServerError), Some(0));
    assert_eq!(w.try_retry(t, Class::ServerError), None);
    // Both deposit on a success; a retryable failure deposits nothing.
    for b in [&mut l, &mut w] {
        b.on_outcome(t, Class::ServerError, true, 0);
        assert_eq!(b.try_retry(t, Class::ServerError), None);
        b.on_outcome(t, Class::Success, false, 0);
        assert_eq!(b.try_retry(t, Class::ServerError), Some(0));
    }
}

#[test]
fn validation_names_the_field() {
    let c = BudgetConfig {
        kind: BudgetKind::Finagle,
        ttl: Duration::from_secs(61),
        ..Default::default()
    };
    assert_eq!(c.validate().unwrap_err().path, "budget.ttl");
    let c = BudgetConfig {
        kind: BudgetKind::Grpc,
        max_tokens: 0.0,
        ..Default::default()
    };
    assert_eq!(c.validate().unwrap_err().path, "budget.max_tokens");
    for kind in [BudgetKind::Tower, BudgetKind::Linkerd] {
        let c = BudgetConfig {
            kind,
            ttl: Duration(999_999_999),
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "budget.ttl");
        let c = BudgetConfig {
            kind,
            percent_can_retry: 1000.5,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "budget.percent_can_retry");
        let c = BudgetConfig {
            kind,
            min_retries_per_sec: i32::MAX as u32,
            ..Default::default()
        };
        assert_eq!(c.validate().unwrap_err().path, "budget.min_retries_per_sec");
        assert!(
            BudgetConfig {
                kind,
                ..Default::default()
            }
            .validate()
            .is_ok()
        );
    }
    let c = BudgetConfig {
        kind: BudgetKind::Linkerd,
        ttl: Duration::from_secs(61),
        ..Default::default()
    };
    assert!(c.validate().unwrap_err().message.contains("does not retry"));
}

/// Envoy's budget over `budget_interval` (`RetryBudgetImpl` with `IntervalState`): 1 s, so a
/// timer every 100 ms from time zero, the tenth firing expiring the first slot.
#[test]
fn envoy_window_counts_the_requests_of_the_last_ten_slots() {
    let ms = |x: u64| Time(x * 1_000_000);
    let windowed = |interval: Option<Duration>| BudgetConfig {
        kind: BudgetKind::Envoy,
        budget_percent: Some(20.0),
        min_retry_concurrency: Some(0),
        budget_interval: interval,
        ..Default::default()
    };
    let mut e = EnvoyBudget::new(&windowed(Some(Duration::from_secs(1))));
    // 100 requests start at 50 ms: 20 % of them may be retries in progress.
    for _ in 0..100 {
        e.on_send(ms(50), true, 0.0);
    }
    assert_eq!(e.max(ms(50)), 20);
    let granted = (0..30).filter(|_| e.try_retry(ms(50), Class::Unavailable).is_some());
    assert_eq!(granted.count(), 20);
    // Every request and retry ends: none in flight, yet the window still holds the 100.
    for i in 0..100 {
        e.on_outcome(ms(60), Class::Unavailable, true, u32::from(i < 20));
    }
    assert_eq!(e.retries_in_progress(), 0);
    assert_eq!(e.max(ms(999)), 20, "nine firings: nothing expired yet");
    // The tenth firing, at 1000 ms, expires the slot [0, 100 ms) before a request at 1000 ms.
    e.on_send(ms(1000), true, 0.0);
    assert_eq!(e.max(ms(1000)), 0, "20 % of the one request since");
    assert_eq!(e.try_retry(ms(1000), Class::Unavailable), None);
    // Retries start requests too: ten requests, then two retries sent, make twelve.
    for _ in 0..9 {
        e.on_send(ms(1010), true, 0.0);
    }
    assert_eq!(e.max(ms(1010)), 2);
    for _ in 0..2 {
        assert_eq!(e.try_retry(ms(1010), Class::Unavailable), Some(1));
        e.on_send(ms(1010), false, 0.0);
    }
    assert_eq!(e.max(ms(1010)), 2, "12 requests: 2.4 truncates to 2");
    // An attempt counted but never sent (a breaker refused it) leaves the window.
    for _ in 0..3 {
        e.on_send(ms(1020), true, 0.0);
    }
    assert_eq!(e.max(ms(1020)), 3);
    e.on_unsent(true, false);
    assert_eq!(e.max(ms(1020)), 2, "14 requests: 2.8 truncates to 2");
    // A long gap: after ten empty firings nothing is left, and the next slot counts afresh.
    assert_eq!(e.max(ms(60_000)), 0);
    for _ in 0..50 {
        e.on_send(ms(60_050), true, 0.0);
    }
    assert_eq!(e.max(ms(60_050)), 10);
    assert_eq!(e.max(ms(60_950)), 10);
    assert_eq!(
        e.max(ms(61_000)),
        0,
        "the slot of 60 000 ms expires at 61 000 ms"
    );
    // Without the interval (or with 0s, Envoy's default) the same budget counts those in flight.
    for interval in [None, Some(Duration::ZERO)] {
        let mut f = EnvoyBudget::new(&windowed(interval));
        for _ in 0..100 {
            f.on_send(ms(50), true, 0.0);
        }
        for _ in 0..50 {
            f.on_outcome(ms(60), Class::Unavailable, true, 0);
        }
        assert_eq!(f.max(ms(60)), 10, "20 % of the 50 still in flight");
    }
}

#[test]
fn envoy_window_needs_a_budget_and_whole_millisecond_slots() {
    let c = |interval: Duration, percent: Option<f64>| BudgetConfig {
        kind: BudgetKind::Envoy,
        budget_percent: percent,
        budget_interval: Some(interval),
        ..Default::default()
    };
    let e = c(Duration::from_millis(9), Some(20.0))
        .validate()
        .unwrap_err();
    assert_eq!(e.path, "budget.budget_interval");
    assert!(e.message.contains("at least 10ms"), "{}", e.message);
    let e = c(Duration::from_secs(10), None).validate().unwrap_err();
    assert!(e.message.contains("has no effect"), "{}", e.message);
    assert!(
        c(Duration::ZERO, None).validate().is_ok(),
        "0s is Envoy's default"
    );
    assert!(c(Duration::from_millis(10), Some(20.0)).validate().is_ok());
    // A window of 1.5 s counts in slots of 150 ms; 1.0005 s in slots of 100 ms (whole ms).
    let ms = |x: u64| Time(x * 1_000_000);
    let mut w = envoy::RequestWindow::new(1500);
    w.write_request(ms(1));
    assert_eq!(w.requests(ms(1499)), 1);
    assert_eq!(w.requests(ms(1500)), 0);
    let mut e = EnvoyBudget::new(&BudgetConfig {
        budget_interval: Some(Duration(1_000_500_000)),
        min_retry_concurrency: Some(0),
        ..c(Duration::ZERO, Some(100.0))
    });
    e.on_send(ms(1), true, 0.0);
    assert_eq!(e.max(ms(999)), 1);
    assert_eq!(e.max(ms(1000)), 0);
}

/// tower-resilience's own tests of `AimdBudget` (`test_aimd_basic`,
/// `test_aimd_min_budget_floor`, `test_builder_aimd`), with the exact balances they imply.
#[test]
fn aimd_budget_passes_tower_resiliences_own_tests() {
    let aimd = |min, max, deposit, withdraw, factor| {
        AimdBudget::new(&BudgetConfig {
            kind: BudgetKind::Aimd,
            min_budget: min,
            max_budget: max,
            deposit_amount: deposit,
            withdraw_amount: withdraw,
            decrease_factor: factor,
            ..Default::default()
        })
    };
    // test_aimd_basic: AimdBudget::new(5, 10, 1, 1, 0.5).
    let mut b = aimd(5, 10, 1, 1, 0.5);
    for _ in 0..10 {
        assert!(b.try_withdraw());
    }
    assert!(!b.try_withdraw(), "the 11th fails");
    assert_eq!(b.ceiling(), 5, "and halves the ceiling");
    for _ in 0..5 {
        b.deposit();
    }
    // Each deposit adds 1 under the ceiling, which grows by 1: 5 tokens, the ceiling back at 10.
    assert_eq!((b.balance(), b.ceiling()), (5, 10));
    assert!(b.try_withdraw());
    // test_aimd_min_budget_floor: AimdBudget::new(5, 10, 1, 1, 0.1).
    let mut f = aimd(5, 10, 1, 1, 0.1);
    for _ in 0..10 {
        f.try_withdraw();
    }
    for _ in 0..10 {
        assert!(!f.try_withdraw());
        assert_eq!(f.ceiling(), 5, "10 x 0.1 = 1 is floored at min_budget");
    }
    for _ in 0..5 {
        f.deposit();
    }
    let mut count = 0;
    while f.try_withdraw() {
        count += 1;
    }
    assert_eq!(count, 5);
    // test_builder_aimd: min 5, max 100, deposit 2: the budget starts full.
    assert_eq!(aimd(5, 100, 2, 1, 0.5).balance(), 100);
    // Defaults (min 10, max 1000, 1, 1, 0.5): under total failure 1000 retries, then none until
    // successes deposit; a success after many refusals earns one token under a ceiling of 11.
    let mut d = BudgetState::new(&BudgetConfig {
        kind: BudgetKind::Aimd,
        ..Default::default()
    });
    let t = Time::ZERO;
    let granted = (0..2000)
        .filter(|_| d.try_retry(t, Class::Unavailable).is_some())
        .count();
    assert_eq!(granted, 1000);
    d.on_outcome(t, Class::Success, false, 0);
    assert_eq!(d.try_retry(t, Class::Unavailable), Some(0));
    assert_eq!(d.try_retry(t, Class::Unavailable), None);
    // A failure deposits nothing.
    d.on_outcome(t, Class::ServerError, true, 0);
    assert_eq!(d.try_retry(t, Class::Unavailable), None);
}

#[test]
fn aimd_validation_names_the_field() {
    let c = |f: fn(&mut BudgetConfig)| {
        let mut c = BudgetConfig {
            kind: BudgetKind::Aimd,
            ..Default::default()
        };
        f(&mut c);
        c.validate().map_err(|e| e.path)
    };
    assert_eq!(c(|c| c.min_budget = 1001), Err("budget.min_budget".into()));
    assert_eq!(
        c(|c| c.deposit_amount = 0),
        Err("budget.deposit_amount".into())
    );
    assert_eq!(
        c(|c| c.withdraw_amount = 0),
        Err("budget.withdraw_amount".into())
    );
    assert_eq!(
        c(|c| c.decrease_factor = 1.0),
        Err("budget.decrease_factor".into())
    );
    assert_eq!(
        c(|c| c.decrease_factor = -0.1),
        Err("budget.decrease_factor".into())
    );
    assert_eq!(c(|_| ()), Ok(()));
}

/// The SDK bugs beside the fix: a quota that a success never refills (aws-sdk-go-v2's adaptive
/// mode) and a strategy without its token bucket (aws-sdk-rust before the default bucket).
#[test]
fn aws_quota_without_refill_or_without_a_bucket() {
    let t = Time::ZERO;
    let quota = |refill, bucket_set| {
        BudgetState::new(&BudgetConfig {
            kind: BudgetKind::Aws,
            refill,
            bucket_set,
            ..Default::default()
        })
    };
    // The fix: 100 retries drain 500; 5 successes after the 100th pay for the 101st.
    let mut fixed = quota(true, true);
    let mut broken = quota(false, true);
    for q in [&mut fixed, &mut broken] {
        for _ in 0..100 {
            assert_eq!(q.try_retry(t, Class::Unavailable), Some(5));
        }
        assert_eq!(q.try_retry(t, Class::Unavailable), None);
        for _ in 0..5 {
            q.on_outcome(t, Class::Success, false, 0);
        }
    }
    assert_eq!(fixed.try_retry(t, Class::Unavailable), Some(5));
    // Without refill neither a first try's success nor a retried one's gives anything back.
    broken.on_outcome(t, Class::Success, false, 5);
    assert_eq!(
        broken.try_retry(t, Class::Unavailable),
        None,
        "drained for good"
    );
    // No bucket: every retry goes, free, however many.
    let mut unset = quota(true, false);
    for _ in 0..10_000 {
        assert_eq!(unset.try_retry(t, Class::Timeout), Some(0));
    }
    // What explain prints: the bug switches when on, the bucket alone when unset.
    let limits = |refill, bucket_set| {
        BudgetKind::Aws.limits(&BudgetConfig {
            kind: BudgetKind::Aws,
            refill,
            bucket_set,
            ..Default::default()
        })
    };
    assert!(limits(false, true).contains(&"refill"));
    assert!(!limits(true, true).contains(&"refill"));
    assert_eq!(limits(true, false), &["bucket_set"]);
}
