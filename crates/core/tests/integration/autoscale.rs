//! `[server.autoscale]`: Kubernetes' HPA on a tier's replicas, against tables worked by hand from
//! HPA's formula (`desired = ceil(current × metric / target)`, the tolerance band, the scale-up
//! policies, the stabilisation windows), on deterministic loads replayed from a trace.

use retrystorm_core::load::load_resolved;
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::VariantResult;

/// Arrivals evenly spaced at each `(from s, to s, per second)` phase's rate, as trace rows.
fn ramp(phases: &[(u32, u32, u32)]) -> String {
    let mut out = String::from("timestamp\n");
    for &(from, to, rate) in phases {
        for k in 0..(to - from) * rate {
            let t = f64::from(from) + f64::from(k) / f64::from(rate);
            out.push_str(&format!("{t:.9}\n"));
        }
    }
    out
}

fn model(base: &str, trace: String) -> Model {
    let resolve = move |r: &str| match r {
        "trace:t.csv" => Ok(trace.clone()),
        _ => Err(format!("no file {r}")),
    };
    load_resolved("dir/m.toml", base, &[], &resolve)
        .unwrap()
        .base
}

/// Every request is in flight for exactly 100 ms: the in-flight level over the tier is the
/// arrival rate × 0.1 s, whatever the replicas, so the metric per ready replica is
/// `rate × 0.1 / ready`.
const BASE: &str = r#"
horizon = "600s"
bucket = "15s"
[workload]
kind = "trace"
trace = "t.csv"
[server]
replicas = 2
service = "100ms"
[server.autoscale]
metric = "in-flight"
target = 2
max_replicas = 15
"#;

/// The ready replicas per bucket: the whole buckets, and the last one's replicas had they served
/// all of it (the run ends 100 ms after the last arrival, at 94/95 s + 0.1 s past a bucket edge).
fn ready(r: &VariantResult, bucket_s: f64) -> (Vec<f32>, f64) {
    let s = &r.series.ready_replicas;
    let (whole, tail) = s.split_at(s.len() - 1);
    let end_past_edge = 94.0 / 95.0 + 0.1 - 1.0;
    (
        whole.to_vec(),
        f64::from(tail[0]) * bucket_s / end_past_edge,
    )
}

#[test]
fn the_replica_count_follows_the_hpa_formula_step_by_step() {
    // In flight: 9.5 (0-60 s), 19.5 (60-120 s), 37.5 (120-180 s), 9.5 (180-540 s).
    let trace = ramp(&[(0, 60, 95), (60, 120, 195), (120, 180, 375), (180, 540, 95)]);
    let r = run_model(&model(BASE, trace), 1, &mut |_| {});
    // By hand, a sync every 15 s reading the 15 s just ended (target 2, tolerance 0.1):
    //  15 s: 9.5 / 2 = 4.75 per replica, ratio 2.375: ceil(2.375 × 2) = 5 (the limit, max(2 + 4,
    //        2 × 2) = 6, allows it).
    //  30-60 s: 9.5 / 5 = 1.9, ratio 0.95: inside the band, 5 stay.
    //  75 s: 19.5 / 5 = 3.9, ratio 1.95: ceil(9.75) = 10 (limit max(5 + 4, 10) = 10).
    //  90-120 s: ratio 0.975: 10 stay.
    //  135 s: 37.5 / 10 = 3.75, ratio 1.875: ceil(18.75) = 19, limit 20, max_replicas 15: 15.
    //  150-180 s: ratio 1.25: 19 recommended, 15 held by the maximum.
    //  195-465 s: ratio 0.317: ceil(4.75) = 5 recommended, but the scale-down window (300 s)
    //        still holds the 19 recommended at 180 s: 15 stay.
    //  480 s: the 19 at 180 s is at the window's edge, no longer inside it: every
    //        recommendation of (180 s, 480 s] is 5: down to 5 (100 % per 15 s allows it).
    //  495-525 s: 9.5 / 5 = 1.9: 5 stay.
    let mut want = vec![2.0];
    want.extend([5.0; 4]);
    want.extend([10.0; 4]);
    want.extend([15.0; 23]);
    want.extend([5.0; 4]);
    let (whole, last) = ready(&r, 15.0);
    assert_eq!(whole, want);
    assert!((last - 5.0).abs() < 1e-4, "{last}");
    assert_eq!(r.summary.failed, 0);
}

/// 95 requests/s for 400 s on `base` in 5 s buckets, replicas ready `start` after the sync that
/// adds them, metrics 5 s late, and the autoscaler's `extra` keys.
fn late(base: &str, start: &str, extra: &str) -> VariantResult {
    let base = base.replace("bucket = \"15s\"", "bucket = \"5s\"")
        + &format!("start_time = \"{start}\"\nmetric_delay = \"5s\"\n{extra}");
    run_model(&model(&base, ramp(&[(0, 400, 95)])), 1, &mut |_| {})
}

#[test]
fn a_metric_delay_and_a_start_time_overshoot_as_the_formula_says() {
    let r = late(BASE, "10s", "");
    // Windows end 5 s before each sync: [0, 10) for the sync at 15 s, [10, 25) at 30 s, ...
    //  15 s: 9.5 / 2 = 4.75 per replica: 5, three starting, ready at 25 s.
    //  30 s: the window [10, 25) still had 2 ready: ratio 2.375 over the 5 ready now:
    //        ceil(11.875) = 12, limited to max(5 + 4, 10) = 10; five starting, ready at 40 s.
    //  45 s: [25, 40) had 5 ready: 1.9, ratio 0.95: 10 stay.
    //  60 s on: [40, 55) had 10 ready: 0.95, ratio 0.475: 5 recommended, held at 10 by the 12
    //        recommended at 30 s until it leaves the window: at 330 s (30 s is the edge, no
    //        longer inside), the highest is the 10 recommended at 45 s; at 345 s, 5.
    let mut want = vec![2.0; 5];
    want.extend([5.0; 3]);
    want.extend([10.0; (345 - 40) / 5]);
    want.extend([5.0; (400 - 345) / 5]);
    let (whole, last) = ready(&r, 5.0);
    assert_eq!(whole, want);
    assert!((last - 5.0).abs() < 1e-4, "{last}");
}

#[test]
fn without_the_autoscaler_the_series_has_no_ready_replicas() {
    let base = BASE.replace("[server.autoscale]", "[x]");
    let base = &base[..base.find("[x]").unwrap()];
    let r = run_model(&model(base, ramp(&[(0, 10, 95)])), 1, &mut |_| {});
    assert!(r.series.ready_replicas.is_empty());
    let json = serde_json::to_string(&r.series).unwrap();
    assert!(!json.contains("ready_replicas"), "{json}");
}

#[test]
fn a_metric_delay_of_a_whole_period_skips_the_first_sync() {
    let base = BASE.to_string() + "metric_delay = \"15s\"\n";
    let trace = ramp(&[(0, 405, 95)]);
    let r = run_model(&model(&base, trace), 1, &mut |_| {});
    //  15 s: its window [0 s, 0 s) has not begun: no metric, no change.
    //  30 s: [0, 15): 4.75 per replica: 5.
    //  45 s: [15, 30) still had 2 ready: ratio 2.375 over 5: ceil(11.875) = 12, limited to 10
    //        (the change at 30 s is at the 15 s period's edge, outside it).
    //  60 s: [30, 45), 5 ready: ratio 0.95: 10 stay (recorded as 10).
    //  75 s on: ratio 0.475, 5 recommended; the 12 of 45 s holds until 345 s, the 10 of 60 s
    //        until 360 s: then 5.
    let mut want = vec![2.0; 2];
    want.push(5.0);
    want.extend([10.0; (360 - 45) / 15]);
    want.extend([5.0; (405 - 360) / 15]);
    let (whole, last) = ready(&r, 15.0);
    assert_eq!(whole, want);
    assert!((last - 5.0).abs() < 1e-4, "{last}");
}

#[test]
fn replicas_ready_after_the_window_damp_the_next_scale_up() {
    // As `a_metric_delay_and_a_start_time_overshoot_as_the_formula_says`, with HPA's rule for
    // replicas that have no sample.
    let r = late(BASE, "10s", "missing_metrics = \"dampen\"\n");
    //  15 s: [0, 10): 4.75 per replica, ratio 2.375: 5, three starting, ready at 25 s.
    //  30 s: [10, 25) ended as the three became ready: no sample of theirs. The 2 with one
    //        show ratio 2.375; the three at 0: 9.5 / (2 × 5) = 0.95, inside the band: 5 stay
    //        (where counting them at the others' average overshot to 10).
    //  45 s on: [25, 40) had the 5 ready throughout: 1.9, ratio 0.95: 5 stay.
    two_then_five_from(&r, 25);
}

/// A `late` run's series: 2 replicas until `ready_at` seconds, then 5 to the end.
fn two_then_five_from(r: &VariantResult, ready_at: usize) {
    let mut want = vec![2.0; ready_at / 5];
    want.extend(vec![5.0; (400 - ready_at) / 5]);
    let (whole, last) = ready(r, 5.0);
    assert_eq!(whole, want);
    assert!((last - 5.0).abs() < 1e-4, "{last}");
    assert_eq!(r.summary.peak_ready_replicas, Some(5));
}

/// `BASE` on utilisation: ten workers a replica, nothing queues, so the busy workers are the
/// requests in flight and a target of 0.2 is 2 in flight a replica.
fn on_utilisation() -> String {
    BASE.replace("service = \"100ms\"", "service = \"100ms\"\ncapacity = 10")
        .replace(
            "metric = \"in-flight\"\ntarget = 2",
            "metric = \"utilisation\"\ntarget = 0.2",
        )
}

#[test]
fn within_the_cpu_initialization_period_a_replica_ready_in_the_window_is_not_ready() {
    // Without it:
    //  15 s: [0, 10): 4.75 busy of 10 per replica, 0.475, ratio 2.375: 5; ready at 20 s.
    //  30 s: [10, 25): 142.5 busy-seconds over 2 × 15 + 3 × 5 = 45 replica-seconds, 0.3167,
    //        ratio 1.583: ceil(7.92) = 8 (the limit is max(5 + 4, 10)); ready at 35 s.
    //  45 s: [25, 40): 142.5 over 5 × 15 + 3 × 5 = 90, ratio 0.792: 7, held at 8 by the
    //        scale-down window; 60 s on: 5, held until the 8 of 30 s leaves it at 330 s (7,
    //        the 45 s one) and then 345 s (5).
    let r = late(&on_utilisation(), "5s", "");
    let mut want = vec![2.0; 4];
    want.extend([5.0; 3]);
    want.extend([8.0; (330 - 35) / 5]);
    want.extend([7.0; 3]);
    want.extend([5.0; (400 - 345) / 5]);
    let (whole, _) = ready(&r, 5.0);
    assert_eq!(whole, want);
    assert_eq!(r.summary.peak_ready_replicas, Some(8));
    // With a 60 s initialisation period:
    //  30 s: the three ready at 20 s, added at 15 s, are within it and [10, 25) began before
    //        they were ready: their samples are dropped. The 2 others show at most 0.475
    //        (ratio above 1), and with the three at 0 at most 0.95 × 2 / 5 / 0.2 = 0.95: no
    //        change.
    //  45 s on: [25, 40) began after they were ready: 5 at 0.19, ratio 0.95: 5 stay.
    let r = late(
        &on_utilisation(),
        "5s",
        "cpu_initialization_period = \"60s\"\n",
    );
    two_then_five_from(&r, 20);
    let mean = r.summary.mean_ready_replicas.unwrap();
    let end = r.summary.end_ms / 1e3;
    assert!(
        (mean - (2.0 * 20.0 + 5.0 * (end - 20.0)) / end).abs() < 1e-9,
        "{mean}"
    );
}
