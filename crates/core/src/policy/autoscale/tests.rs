//! HPA against sequences worked by hand from `replica_calculator.go` and `horizontal.go`.

use super::*;

fn hpa(min: u32, max: u32, target: f64) -> Hpa {
    Hpa::new(&AutoscaleConfig {
        min_replicas: min,
        max_replicas: Some(max),
        target: Some(target),
        ..AutoscaleConfig::default()
    })
}

fn at(s: u64) -> Time {
    Time(s * 1_000_000_000)
}

fn ready(per_replica: f64, ready: u32) -> Option<Observed> {
    Some(Observed {
        per_replica,
        ready,
        unready: 0,
        missing: 0,
    })
}

#[test]
fn the_tolerance_band_keeps_the_count_and_outside_it_the_ratio_is_rounded_up() {
    let o = |m| Observed {
        per_replica: m,
        ready: 4,
        unready: 0,
        missing: 0,
    };
    // 0.5 target: 0.54 is 8 % over, inside 10 %.
    assert_eq!(recommend(o(0.54), 0.5, 0.1, 0.5, 4), 4);
    assert_eq!(recommend(o(0.46), 0.5, 0.1, 0.5, 4), 4);
    // 0.56 is 12 % over: ceil(1.12 × 4) = 5.
    assert_eq!(recommend(o(0.56), 0.5, 0.1, 0.5, 4), 5);
    // 0.3: ceil(0.6 × 4) = 3.
    assert_eq!(recommend(o(0.3), 0.5, 0.1, 0.5, 4), 3);
}

#[test]
fn replicas_not_ready_count_as_idle_on_a_scale_up() {
    let o = |per_replica, unready| Observed {
        per_replica,
        ready: 2,
        unready,
        missing: 0,
    };
    // 2 ready at 1.5 × target, 2 starting: with them at 0 the ratio is 0.75, under 1: no change.
    assert_eq!(recommend(o(0.75, 2), 0.5, 0.1, 0.5, 4), 4);
    // 2 ready at 3 × target, 1 starting: ratio 2 × 3 / 3 = 2, so ceil(2 × 3) = 6.
    assert_eq!(recommend(o(1.5, 1), 0.5, 0.1, 0.5, 3), 6);
    // A scale-down ignores the starting replicas: ceil(0.5 × 2) = 1.
    assert_eq!(recommend(o(0.25, 1), 0.5, 0.1, 0.5, 3), 1);
}

#[test]
fn a_scale_up_is_limited_to_four_pods_or_double_per_15_seconds() {
    let mut h = hpa(1, 100, 1.0);
    // 2 replicas at 10× target want 20: max(2 + 4, 2 × 2) = 6.
    assert_eq!(h.sync(at(15), 2, ready(10.0, 2)), 6);
    // 15 s later the first change is at the cutoff, not after it: from 6, max(10, 12) = 12.
    assert_eq!(h.sync(at(30), 6, ready(10.0, 6)), 12);
    // 10 s after that (a sync period of 10 s), the change at 30 s is inside the period: the
    // period started at 6, so at most 12: no more.
    assert_eq!(h.sync(at(40), 12, ready(10.0, 12)), 12);
}

#[test]
fn a_scale_down_waits_for_the_highest_recommendation_of_300_seconds() {
    let mut h = hpa(1, 100, 1.0);
    assert_eq!(h.sync(at(15), 10, ready(1.0, 10)), 10);
    // Load halves at 30 s: the 10 recommended at 15 s holds the count until it leaves the window.
    for s in (30..=300).step_by(15) {
        assert_eq!(h.sync(at(s), 10, ready(0.5, 10)), 10, "at {s} s");
    }
    // At 315 s the window (15 s, 315 s] holds only 5s (a sample exactly at the cutoff is out):
    // down to 5 at once (100 % per 15 s).
    assert_eq!(h.sync(at(315), 10, ready(0.5, 10)), 5);
}

#[test]
fn policies_select_and_bounds() {
    let mut c = AutoscaleConfig {
        min_replicas: 3,
        max_replicas: Some(8),
        target: Some(1.0),
        scale_down_stabilization: Duration::ZERO,
        scale_down_policies: Some(vec![
            ScalingPolicy {
                kind: PolicyKind::Pods,
                value: 1,
                period: Duration::from_secs(60),
            },
            ScalingPolicy {
                kind: PolicyKind::Percent,
                value: 50,
                period: Duration::from_secs(60),
            },
        ]),
        ..AutoscaleConfig::default()
    };
    // Max: the larger change, 50 % of 8 = 4 fewer; 0.1 × 8 wants 1, the minimum holds at 3.
    let mut h = Hpa::new(&c);
    assert_eq!(h.sync(at(15), 8, ready(0.1, 8)), 4);
    // 15 s later the 60 s period began at 8: 8 × 0.5 = 4 already reached.
    assert_eq!(h.sync(at(30), 4, ready(0.1, 4)), 4);
    // Min: the smaller change, one pod per 60 s.
    c.scale_down_select = SelectPolicy::Min;
    let mut h = Hpa::new(&c);
    assert_eq!(h.sync(at(15), 8, ready(0.1, 8)), 7);
    c.scale_down_select = SelectPolicy::Disabled;
    let mut h = Hpa::new(&c);
    assert_eq!(h.sync(at(15), 8, ready(0.1, 8)), 8);
    // Over the maximum: straight to it, whatever the metric.
    assert_eq!(h.sync(at(30), 12, ready(5.0, 12)), 8);
    // No metric: nothing changes and nothing is recorded.
    assert_eq!(h.sync(at(45), 5, None), 5);
}

#[test]
fn replicas_without_a_sample_damp_a_scale_down_and_a_scale_up() {
    let o = |per_replica, ready, missing| Observed {
        per_replica,
        ready,
        unready: 0,
        missing,
    };
    // 4 ready at 0.3 against 0.5 (ratio 0.6) and 1 missing, at the target: (4 × 0.3 + 0.5) /
    // (5 × 0.5) = 0.68, ceil(0.68 × 5) = 4; counted at the others' 0.3, ceil(0.6 × 5) = 3.
    assert_eq!(recommend(o(0.3, 4, 1), 0.5, 0.1, 0.5, 5), 4);
    assert_eq!(recommend(o(0.3, 5, 0), 0.5, 0.1, 0.5, 5), 3);
    // Utilisation: missing at 100 % of the request, (1.2 + 1) / 2.5 = 0.88, ceil(4.4) = 5.
    assert_eq!(recommend(o(0.3, 4, 1), 0.5, 0.1, 1.0, 5), 5);
    // 2 ready at 0.4 (ratio 0.8), 2 missing at 100 %: (0.8 + 2) / 2 = 1.4 turns the
    // scale-down into a scale-up: no change.
    assert_eq!(recommend(o(0.4, 2, 2), 0.5, 0.1, 1.0, 4), 4);
    // 2 ready at 0.6 (ratio 1.2), 2 missing at 0: 1.2 / 2 = 0.6 turns it into a scale-down: no
    // change, where the others' average over 4 would give ceil(4.8) = 5.
    assert_eq!(recommend(o(0.6, 2, 2), 0.5, 0.1, 0.5, 4), 4);
    assert_eq!(recommend(o(0.6, 4, 0), 0.5, 0.1, 0.5, 4), 5);
    // 2 ready at 1.5 (ratio 3), 1 missing at 0: 3 / 1.5 = 2, ceil(2 × 3) = 6.
    assert_eq!(recommend(o(1.5, 2, 1), 0.5, 0.1, 0.5, 3), 6);
}

#[test]
fn a_missing_sample_on_a_scale_down_is_the_target_or_for_utilisation_at_least_all_of_it() {
    let with = |metric, target| {
        Hpa::new(&AutoscaleConfig {
            metric,
            target: Some(target),
            max_replicas: Some(10),
            ..AutoscaleConfig::default()
        })
        .missing_at
    };
    assert_eq!(with(Metric::Utilisation, 0.7), 1.0);
    assert_eq!(with(Metric::Utilisation, 1.5), 1.5);
    assert_eq!(with(Metric::InFlight, 0.7), 0.7);
    assert_eq!(with(Metric::Queue, 3.0), 3.0);
}
