//! Each budget against its definition, transcribed from its source's tests where it has them.

use super::*;
use crate::base::time::{Duration, Time};
use crate::policy::Class;

#[test]
fn brookers_bucket_and_breaker_follow_retry_sim() {
    // AdaptiveRetryStrategy(0.1, 5): starts full; a retry needs more than one token.
    let mut b = BrookerBucket::new(5.0, 0.1);
    b.on_call();
    assert!(b.try_withdraw() && b.try_withdraw() && b.try_withdraw() && b.try_withdraw());
    assert!(
        !b.try_withdraw(),
        "exactly 1.0 left: `bucket > 1.0` is false"
    );
    for _ in 0..10 {
        b.on_call();
    }
    assert!(b.try_withdraw());
    // Under 100% failure a call earns 0.1 retries: the load tends to 1.1 attempts per call.
    let mut b = BrookerBucket::new(5.0, 0.1);
    let (mut attempts, calls) = (0u64, 100_000u64);
    for _ in 0..calls {
        b.on_call();
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
