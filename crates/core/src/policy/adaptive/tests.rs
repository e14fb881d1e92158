//! The learned duration's keys and its estimator: the window's expiry, the clamp, the doubling.

use super::estimator::Estimator;
use super::*;
use crate::base::time::Time;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn spec() -> Learned {
    Learned {
        percentile: 50.0,
        window: Duration::from_secs(10),
        factor: 2.0,
        min: ms(5),
        max: ms(1000),
        attempt_doubling: false,
    }
}

fn at(e: &mut Estimator, t: Time) {
    e.advance(t, |_, _| {});
}

fn close(a: Duration, b: Duration) -> bool {
    (a.0 as f64 - b.0 as f64).abs() <= b.0 as f64 * 1e-3
}

#[test]
fn max_until_a_slice_edge_has_data_then_factor_times_the_percentile() {
    let mut e = Estimator::new(spec());
    at(&mut e, Time::ZERO);
    assert_eq!(e.value(0), ms(1000), "no latency yet: max");
    for x in [10, 20, 30] {
        e.record(ms(x));
    }
    assert_eq!(
        e.value(0),
        ms(1000),
        "the value moves at the next slice's start"
    );
    at(&mut e, Time(1_000_000_000));
    assert!(
        close(e.value(0), ms(40)),
        "2 x the median 20 ms: {}",
        e.value(0)
    );
}

#[test]
fn latencies_leave_after_the_window() {
    let mut e = Estimator::new(spec());
    let mut edges = Vec::new();
    at(&mut e, Time::ZERO);
    e.record(ms(100));
    e.advance(Time(3_000_000_000), |t, v| edges.push((t, v)));
    e.record(ms(300));
    // At 4 s the window holds both; the median is the lower (HdrHistogram's quantile 0.5 of two).
    e.advance(Time(4_000_000_000), |t, v| edges.push((t, v)));
    assert!(close(e.value(0), ms(200)), "{}", e.value(0));
    // At 10 s slice 0 leaves (the window is slices 1 to 10): only 300 ms is left.
    e.advance(Time(10_500_000_000), |t, v| edges.push((t, v)));
    assert!(close(e.value(0), ms(600)), "{}", e.value(0));
    // At 13 s the 300 ms of slice 3 leaves too: no latency, so max again.
    e.advance(Time(13_000_000_000), |t, v| edges.push((t, v)));
    assert_eq!(e.value(0), ms(1000));
    let times: Vec<u64> = edges.iter().map(|(t, _)| t.0 / 1_000_000_000).collect();
    assert_eq!(
        times,
        vec![1, 10, 13],
        "each change at the edge it happened at"
    );
}

#[test]
fn a_long_silence_empties_the_window() {
    let mut e = Estimator::new(spec());
    at(&mut e, Time::ZERO);
    e.record(ms(100));
    at(&mut e, Time(1_000_000_000));
    assert!(close(e.value(0), ms(200)));
    at(&mut e, Time(3_600_000_000_000));
    assert_eq!(e.value(0), ms(1000));
}

#[test]
fn clamped_to_min_and_max() {
    let mut e = Estimator::new(spec());
    at(&mut e, Time::ZERO);
    e.record(Duration(1_000));
    at(&mut e, Time(1_000_000_000));
    assert_eq!(e.value(0), ms(5), "2 us is below min");
    let mut e = Estimator::new(spec());
    at(&mut e, Time::ZERO);
    e.record(Duration::from_secs(30));
    at(&mut e, Time(1_000_000_000));
    assert_eq!(e.value(0), ms(1000), "60 s is above max");
}

#[test]
fn attempt_doubling_doubles_each_retry_within_max() {
    let mut e = Estimator::new(Learned {
        attempt_doubling: true,
        ..spec()
    });
    at(&mut e, Time::ZERO);
    e.record(ms(50));
    at(&mut e, Time(1_000_000_000));
    let v: Vec<Duration> = (0..5).map(|a| e.value(a)).collect();
    assert!(close(v[0], ms(100)) && close(v[1], ms(200)) && close(v[2], ms(400)));
    assert!(close(v[3], ms(800)));
    assert_eq!(v[4], ms(1000), "1.6 s is above max");
    assert_eq!(e.value(u16::MAX), ms(1000), "no overflow");
    let plain = Estimator::new(spec());
    assert_eq!(plain.value(3), ms(1000));
}

#[test]
fn a_string_is_fixed_and_a_table_is_learned() {
    let t: toml::Table = toml::from_str(
        "a = \"250ms\"\nb = { percentile = 99, window = \"60s\", factor = 2, max = \"1s\" }",
    )
    .unwrap();
    let a: Adaptive = t["a"].clone().try_into().unwrap();
    assert_eq!(a, Adaptive::Fixed(ms(250)));
    let b: Adaptive = t["b"].clone().try_into().unwrap();
    let l = b.learned().unwrap();
    assert_eq!(
        (l.percentile, l.factor, l.min, l.max),
        (99.0, 2.0, ms(0), ms(1000))
    );
    assert_eq!(b.ceiling(), ms(1000));
    let bad: toml::Table = toml::from_str("c = { percentil = 99, max = \"1s\" }").unwrap();
    let e = bad["c"]
        .clone()
        .try_into::<Adaptive>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `percentil`"), "{e}");
}

#[test]
fn bad_keys_are_named() {
    let check = |l: Learned| {
        Adaptive::Learned(l)
            .validate("retry.timeout", "zero")
            .unwrap_err()
    };
    let e = check(Learned {
        percentile: 0.0,
        ..spec()
    });
    assert_eq!(e.path, "retry.timeout.percentile");
    assert_eq!(
        check(Learned {
            percentile: f64::NAN,
            ..spec()
        })
        .path,
        "retry.timeout.percentile"
    );
    let e = check(Learned {
        min: ms(2000),
        ..spec()
    });
    assert_eq!(e.path, "retry.timeout.min");
    assert_eq!(
        check(Learned {
            factor: -1.0,
            ..spec()
        })
        .path,
        "retry.timeout.factor"
    );
    assert!(
        Adaptive::Learned(spec())
            .validate("retry.timeout", "zero")
            .is_ok()
    );
    assert_eq!(
        Adaptive::Fixed(Duration::ZERO)
            .validate("hedge.delay", "zero")
            .unwrap_err()
            .message,
        "zero"
    );
}
