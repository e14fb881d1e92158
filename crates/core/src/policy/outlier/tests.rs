use super::envoy::{Answer, EnvoyConfig, EnvoyDetector};
use super::grpc::{FailurePercentageEjection, GrpcConfig, GrpcDetector, SuccessRateEjection};
use super::*;
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::balancer::tests::Script;

fn s(secs: u64) -> Time {
    Time(secs * 1_000_000_000)
}

/// No draw expected: the default percentages are 0 or 100.
fn none() -> Script {
    Script(vec![])
}

fn errors(d: &mut EnvoyDetector, replica: u32, n: u32, class: Class, at: Time) {
    for _ in 0..n {
        d.record(replica, class, at, &mut none());
    }
}

/// Ticks every interval from the detector's next tick up to and including `until`.
fn tick_until(d: &mut EnvoyDetector, until: Time) {
    while d.next_tick() <= until {
        d.tick(d.next_tick(), &mut none());
    }
}

/// `successes` and `failures` interleaved (F S F S ... then the rest), so that no run of
/// failures is long enough to trip a consecutive-error ejection.
fn calls(successes: u64, failures: u64) -> Vec<Class> {
    let mut out = Vec::new();
    let (mut s, mut f) = (successes, failures);
    while s + f > 0 {
        if f > 0 {
            out.push(Class::ServerError);
            f -= 1;
        }
        if s > 0 {
            out.push(Class::Success);
            s -= 1;
        }
    }
    out
}

#[test]
fn five_consecutive_5xx_eject_for_30_then_60_then_90_seconds() {
    // Envoy's documented example with its defaults (interval 10 s, base 30 s), on ten replicas
    // so that the default 10 % allows one ejection.
    let mut d = EnvoyDetector::new(EnvoyConfig::default(), 10, Time(0));
    errors(&mut d, 3, 4, Class::ServerError, s(1));
    assert!(!d.is_ejected(3), "four are not enough");
    errors(&mut d, 3, 1, Class::ServerError, s(1));
    assert!(d.is_ejected(3) && d.multiplier(3) == 1);
    // Ejected at 1 s for 30 s: still out at the 30 s tick, back at the first tick after 31 s.
    tick_until(&mut d, s(30));
    assert!(d.is_ejected(3));
    tick_until(&mut d, s(40));
    assert!(!d.is_ejected(3));
    // Failing again at once: 60 s (ejected at 41 s, back at the 110 s tick, not the 100 s one).
    errors(&mut d, 3, 5, Class::ServerError, s(41));
    assert_eq!(d.multiplier(3), 2);
    tick_until(&mut d, s(100));
    assert!(d.is_ejected(3));
    tick_until(&mut d, s(110));
    assert!(!d.is_ejected(3));
    // And 90 s.
    errors(&mut d, 3, 5, Class::ServerError, s(111));
    tick_until(&mut d, s(200));
    assert!(d.is_ejected(3));
    tick_until(&mut d, s(210));
    assert!(!d.is_ejected(3) && d.ejections(3) == 3 && d.multiplier(3) == 3);
    // Healthy intervals bring the multiplier down, one per interval since the unejection.
    tick_until(&mut d, s(220));
    assert_eq!(d.multiplier(3), 2);
    tick_until(&mut d, s(250));
    assert_eq!(d.multiplier(3), 0);
    errors(&mut d, 3, 5, Class::ServerError, s(251));
    tick_until(&mut d, s(280));
    assert!(d.is_ejected(3), "30 s again: out until 281 s");
    tick_until(&mut d, s(290));
    assert!(!d.is_ejected(3));
    assert_eq!(d.counts().enforced, 4);
    assert_eq!(d.counts().unejected, 4);
}

#[test]
fn the_multiplier_stops_one_step_past_the_cap() {
    let cfg = EnvoyConfig {
        base_ejection_time: Duration::from_secs(10),
        max_ejection_time: Some(Duration::from_secs(20)),
        max_ejection_percent: 100,
        ..EnvoyConfig::default()
    };
    let mut d = EnvoyDetector::new(cfg, 1, Time(0));
    let mut at = 1;
    let mut multipliers = Vec::new();
    for _ in 0..4 {
        errors(&mut d, 0, 5, Class::ServerError, s(at));
        multipliers.push(d.multiplier(0));
        // Ejected for min(10 × multiplier, 20) s: back at the first tick after that.
        let back = (at + 10 * u64::from(d.multiplier(0)).min(2)).div_ceil(10) * 10;
        tick_until(&mut d, s(back - 10));
        assert!(d.is_ejected(0), "still out before {back} s");
        tick_until(&mut d, s(back));
        assert!(!d.is_ejected(0), "back at {back} s");
        at = back + 1;
    }
    // 0·10 < 30, 1·10 < 30, 2·10 < 30 grow it; 3·10 < 30 does not.
    assert_eq!(multipliers, [1, 2, 3, 3]);
}

#[test]
fn max_ejection_percent_as_the_source_rounds_it() {
    // The proto says 10 % "will eject at least one host regardless"; the source ejects while
    // 100 × (ejected + 1) / hosts ≤ 10, so five replicas eject nothing by default.
    let mut five = EnvoyDetector::new(EnvoyConfig::default(), 5, Time(0));
    errors(&mut five, 0, 5, Class::ServerError, s(1));
    assert!(!five.is_ejected(0));
    assert_eq!((five.counts().detected, five.counts().overflow), (1, 1));
    let one = EnvoyConfig {
        always_eject_one_host: true,
        ..EnvoyConfig::default()
    };
    let mut five = EnvoyDetector::new(one, 5, Time(0));
    errors(&mut five, 0, 5, Class::ServerError, s(1));
    errors(&mut five, 1, 5, Class::ServerError, s(1));
    assert!(
        five.is_ejected(0) && !five.is_ejected(1),
        "always one, never two"
    );
    // Twenty replicas: 5 % and 10 % pass, 15 % does not.
    let mut twenty = EnvoyDetector::new(EnvoyConfig::default(), 20, Time(0));
    for r in 0..3 {
        errors(&mut twenty, r, 5, Class::ServerError, s(1));
    }
    let ejected: Vec<bool> = (0..3).map(|r| twenty.is_ejected(r)).collect();
    assert_eq!(ejected, [true, true, false]);
}

#[test]
fn gateway_failures_count_apart_and_are_not_enforced_by_default() {
    assert_eq!(Answer::of(Class::Timeout), Answer::GatewayError);
    assert_eq!(Answer::of(Class::Throttled), Answer::Success);
    assert_eq!(Answer::of(Class::ServerError), Answer::ServerError);
    // Five 503s trip both counters; only consecutive 5xx is enforced by default.
    let mut d = EnvoyDetector::new(EnvoyConfig::default(), 10, Time(0));
    errors(&mut d, 0, 5, Class::Unavailable, s(1));
    assert!(d.is_ejected(0));
    assert_eq!((d.counts().detected, d.counts().enforced), (2, 1));
    // Gateway failures only: a 500 resets their count, a 429 resets both.
    let gateway = EnvoyConfig {
        consecutive_5xx: u32::MAX,
        enforcing_consecutive_gateway_failure: 100,
        ..EnvoyConfig::default()
    };
    let mut d = EnvoyDetector::new(gateway, 10, Time(0));
    errors(&mut d, 0, 4, Class::Timeout, s(1));
    errors(&mut d, 0, 1, Class::ServerError, s(1));
    errors(&mut d, 0, 4, Class::Connection, s(1));
    errors(&mut d, 0, 1, Class::Throttled, s(1));
    errors(&mut d, 0, 4, Class::Unavailable, s(1));
    assert!(!d.is_ejected(0));
    errors(&mut d, 0, 1, Class::Overloaded, s(1));
    assert!(d.is_ejected(0));
}

#[test]
fn enforcing_rolls_a_percentage_and_jitter_delays_the_return() {
    let cfg = EnvoyConfig {
        enforcing_consecutive_5xx: 30,
        max_ejection_time_jitter: Duration::from_secs(5),
        max_ejection_percent: 100,
        ..EnvoyConfig::default()
    };
    let mut d = EnvoyDetector::new(cfg, 2, Time(0));
    let roll = |d: &mut EnvoyDetector, r, draws| {
        let mut script = Script(draws);
        for _ in 0..5 {
            d.record(r, Class::ServerError, s(9), &mut script);
        }
        assert!(script.0.is_empty());
    };
    // 130 % 100 = 30 is not below 30: detected, not ejected; the count resets all the same.
    roll(&mut d, 0, vec![130]);
    assert!(!d.is_ejected(0));
    // 29 < 30: ejected, then the jitter draw: 4000 % 5001 = 4000 ms.
    roll(&mut d, 1, vec![29, 4000]);
    assert!(d.is_ejected(1));
    // Ejected at 9 s for 30 s + 4 s: not back at the 40 s tick (it would be without jitter).
    tick_until(&mut d, s(40));
    assert!(d.is_ejected(1));
    tick_until(&mut d, s(50));
    assert!(!d.is_ejected(1));
}

#[test]
fn success_rate_threshold_by_hand() {
    // Envoy's own comment: {50, 100, 100, 100, 100}: mean 90, stdev 20, threshold 52.
    let (mean, t) = success_rate_threshold([50.0, 100.0, 100.0, 100.0, 100.0].into_iter(), 1900);
    assert!(
        (mean - 90.0).abs() < 1e-12 && (t - 52.0).abs() < 1e-9,
        "{mean} {t}"
    );
    // {80, 90, 100, 100, 100}, factor 1.0: mean 94, variance 320 / 5 = 64, threshold 86.
    let (mean, t) = success_rate_threshold([80.0, 90.0, 100.0, 100.0, 100.0].into_iter(), 1000);
    assert!(
        (mean - 94.0).abs() < 1e-12 && (t - 86.0).abs() < 1e-9,
        "{mean} {t}"
    );
}

/// Five replicas answering 80 %, 90 %, 100 %, 100 %, 100 % of 100 calls in the first interval.
const HAND: [(u64, u64); 5] = [(80, 100), (90, 100), (100, 100), (100, 100), (100, 100)];

/// `(successes, calls)` per replica, interleaved as [`calls`] does.
fn feed(table: [(u64, u64); 5], mut record: impl FnMut(u32, Class)) {
    for (r, (ok, total)) in table.into_iter().enumerate() {
        for c in calls(ok, total - ok) {
            record(r as u32, c);
        }
    }
}

#[test]
fn envoy_success_rate_ejects_below_mean_minus_stdev_times_factor() {
    let cfg = EnvoyConfig {
        success_rate_stdev_factor: 1000,
        max_ejection_percent: 20,
        ..EnvoyConfig::default()
    };
    let mut d = EnvoyDetector::new(cfg.clone(), 5, Time(0));
    feed(HAND, |r, c| d.record(r, c, s(1), &mut none()));
    tick_until(&mut d, s(10));
    let (mean, threshold) = d.success_rate().unwrap();
    assert!((mean - 94.0).abs() < 1e-9 && (threshold - 86.0).abs() < 1e-9);
    assert!(d.is_ejected(0) && !d.is_ejected(1), "80 < 86 ≤ 90");
    // The next interval had no calls: no valid host, no statistics.
    tick_until(&mut d, s(20));
    assert_eq!(d.success_rate(), None);
    // One host short of the request volume leaves four valid hosts: fewer than five, nothing.
    let mut d = EnvoyDetector::new(cfg, 5, Time(0));
    let mut short = HAND;
    short[4] = (99, 99);
    feed(short, |r, c| d.record(r, c, s(1), &mut none()));
    tick_until(&mut d, s(10));
    assert_eq!(d.success_rate(), None);
    assert!(!d.is_ejected(0));
}

#[test]
fn envoy_failure_percentage_ejects_at_the_threshold() {
    let cfg = EnvoyConfig {
        consecutive_5xx: u32::MAX,
        enforcing_success_rate: 0,
        enforcing_failure_percentage: 100,
        max_ejection_percent: 100,
        ..EnvoyConfig::default()
    };
    let mut d = EnvoyDetector::new(cfg, 5, Time(0));
    let table = [(15, 100), (16, 100), (100, 100), (100, 100), (100, 100)];
    feed(table, |r, c| d.record(r, c, s(1), &mut none()));
    tick_until(&mut d, s(10));
    assert!(d.is_ejected(0), "85 % failures ≥ 85");
    assert!(!d.is_ejected(1), "84 % < 85");
}

#[test]
fn envoy_config_is_checked() {
    let bad = EnvoyConfig {
        max_ejection_percent: 101,
        ..EnvoyConfig::default()
    };
    assert_eq!(
        bad.validate("od").unwrap_err().path,
        "od.max_ejection_percent"
    );
    let short = EnvoyConfig {
        base_ejection_time: Duration::from_secs(60),
        max_ejection_time: Some(Duration::from_secs(30)),
        ..EnvoyConfig::default()
    };
    assert_eq!(
        short.validate("od").unwrap_err().path,
        "od.max_ejection_time"
    );
    let zero = EnvoyConfig {
        interval: Duration::ZERO,
        ..EnvoyConfig::default()
    };
    assert_eq!(zero.validate("od").unwrap_err().path, "od.interval");
    let long_base = EnvoyConfig {
        base_ejection_time: Duration::from_secs(600),
        ..EnvoyConfig::default()
    };
    assert!(long_base.validate("od").is_ok());
    assert_eq!(long_base.max_ejection_time(), Duration::from_secs(600));
    assert_eq!(
        EnvoyConfig::default().max_ejection_time(),
        Duration::from_secs(300)
    );
}

fn grpc_tick_until(d: &mut GrpcDetector, until: Time) {
    while d.next_tick() <= until {
        d.tick(d.next_tick(), &mut none());
    }
}

/// A gRPC detector with success rate at `stdev_factor` over [`HAND`], after its first tick.
fn grpc_after_hand(stdev_factor: u32) -> GrpcDetector {
    let cfg = GrpcConfig {
        success_rate: Some(SuccessRateEjection {
            stdev_factor,
            ..SuccessRateEjection::default()
        }),
        ..GrpcConfig::default()
    };
    let mut d = GrpcDetector::new(cfg, 5, Time(0));
    feed(HAND, |r, c| d.record(r, c));
    grpc_tick_until(&mut d, s(10));
    d
}

#[test]
fn grpc_success_rate_uses_fractions_and_always_allows_the_first_ejection() {
    // Threshold 0.94 − 0.08 = 0.86: replica 0 (0.8) is an outlier, replica 1 (0.9) is not.
    // Five addresses at 10 %: 0 % ejected is below 10 %, so one goes (Envoy's source: none).
    let mut d = grpc_after_hand(1000);
    assert!(d.is_ejected(0) && !d.is_ejected(1));
    assert_eq!(d.multiplier(0), 1);
    // Ejected at the 10 s tick for 30 s: back only when now > 40 s, i.e. at the 50 s tick.
    grpc_tick_until(&mut d, s(40));
    assert!(d.is_ejected(0));
    grpc_tick_until(&mut d, s(50));
    assert!(!d.is_ejected(0));
    assert_eq!(d.multiplier(0), 1, "no decrement in the tick that unejects");
    grpc_tick_until(&mut d, s(60));
    assert_eq!(d.multiplier(0), 0);
}

#[test]
fn grpc_stops_ejecting_at_max_ejection_percent() {
    // Factor 0.1: threshold 0.94 − 0.008 = 0.932, both 0.8 and 0.9 are outliers; after the first
    // ejection 20 % ≥ 10 %.
    let d = grpc_after_hand(100);
    assert!(d.is_ejected(0) && !d.is_ejected(1));
    assert_eq!((d.counts().detected, d.counts().overflow), (2, 1));
}

#[test]
fn grpc_failure_percentage_is_strictly_above_the_threshold_and_rolls_enforcement() {
    let fp = FailurePercentageEjection {
        enforcement_percentage: 50,
        ..FailurePercentageEjection::default()
    };
    let cfg = GrpcConfig {
        max_ejection_percent: 100,
        success_rate: None,
        failure_percentage: Some(fp),
        ..GrpcConfig::default()
    };
    let mut d = GrpcDetector::new(cfg, 5, Time(0));
    feed(
        [(15, 100), (14, 100), (14, 100), (100, 100), (100, 100)],
        |r, c| d.record(r, c),
    );
    // 85 % is not above 85; 86 % is: replica 1 rolls 49 < 50 (ejected), replica 2 rolls 50.
    let mut rolls = Script(vec![49, 150]);
    d.tick(d.next_tick(), &mut rolls);
    assert!(rolls.0.is_empty());
    let ejected: Vec<bool> = (0..5).map(|r| d.is_ejected(r)).collect();
    assert_eq!(ejected, [false, true, false, false, false]);
}

#[test]
fn grpc_config_is_checked() {
    let bad = GrpcConfig {
        failure_percentage: Some(FailurePercentageEjection {
            threshold: 101,
            ..FailurePercentageEjection::default()
        }),
        ..GrpcConfig::default()
    };
    let e = bad.validate("od").unwrap_err();
    assert_eq!(e.path, "od.failure_percentage_ejection.threshold");
    assert!(GrpcConfig::default().validate("od").is_ok());
}

#[test]
fn one_failing_replica_of_five_under_each_detectors_defaults() {
    // Replica 0 answers every call with a 500, the others succeed, 100 calls each in the first
    // interval. Envoy's source finds the outlier 22 times (20 runs of five 5xx, success rate,
    // failure percentage) and ejects it none of them: 20 % of five hosts is above 10 %. gRPC's
    // success rate (threshold 0.8 − 0.4 × 1.9 = 0.04) ejects it at the first tick.
    let mut envoy = Detector::Envoy(EnvoyDetector::new(EnvoyConfig::default(), 5, Time(0)));
    let mut grpc = Detector::Grpc(GrpcDetector::new(GrpcConfig::default(), 5, Time(0)));
    for d in [&mut envoy, &mut grpc] {
        for _ in 0..100 {
            for r in 0..5 {
                let class = if r == 0 {
                    Class::ServerError
                } else {
                    Class::Success
                };
                d.record(r, class, s(1), &mut none());
            }
        }
        assert_eq!(d.next_tick(), s(10));
        d.tick(s(10), &mut none());
        assert_eq!(d.next_tick(), s(20));
    }
    assert!(!envoy.is_ejected(0));
    let c = envoy.counts();
    assert_eq!((c.detected, c.overflow, c.enforced), (22, 22, 0));
    assert!(grpc.is_ejected(0) && !grpc.is_ejected(1));
    let c = grpc.counts();
    assert_eq!((c.detected, c.overflow, c.enforced), (1, 0, 1));
}
