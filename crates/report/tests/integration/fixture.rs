//! A hand-built report shaped like a retry storm, for tests and the sample-charts example.

#![allow(dead_code)]

use retrystorm_core::summary::{
    Ended, Percentiles, RunReport, SCHEMA_VERSION, Series, Summary, VariantResult,
};

/// A summary with every field set; counts that the series determine are filled in by [`variant`].
pub fn summary() -> Summary {
    Summary {
        intents: 10_000,
        attempts: 24_100,
        retries: 14_100,
        amplification: 2.41,
        succeeded: 9_800,
        failed: 200,
        unsettled: 0,
        peak_arrivals: 0,
        peak_retries: 0,
        bucket_ms: 10.0,
        completion_ms: Percentiles {
            p50: 12.3,
            p90: 140.0,
            p99: 851.5,
            p999: 2_400.0,
            max: 5_120.0,
            mean: 61.0,
        },
        last_arrival_ms: 29_990.0,
        lost: 0,
        applied_once: 10_000,
        duplicated: 0,
        phantom: 0,
        false_failures: 0,
        effects: 10_000,
        arrivals: 24_000,
        timeouts: 300,
        late_responses: 250,
        requests_lost: 10,
        responses_lost: 12,
        rejected: 100,
        dropped_expired: 0,
        conflicts: 0,
        replayed: 0,
        crashes: 0,
        work_ms: 12_345.0,
        wasted_work_ms: 2_345.0,
        wasted_share: 0.19,
        mean_wait_ms: 3.2,
        mean_queue_len: 4.1,
        mean_busy: 7.9,
        end_ms: 30_000.0,
        ended: Ended::Settled,
        events: 1_234_567,
        layered: None,
        ..Default::default()
    }
}

/// Small deterministic noise.
fn noise(state: &mut u64) -> u32 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*state >> 33) % 7) as u32
}

/// A variant whose load is a steady stream with a storm of retries after an outage at 5 s whose
/// size grows with `storm` (0 = no retries).
pub fn variant(name: &str, buckets: usize, storm: u32) -> VariantResult {
    let mut rng = 0x5eed ^ u64::from(storm);
    let mut first = Vec::with_capacity(buckets);
    let mut retries = Vec::with_capacity(buckets);
    let mut succeeded = Vec::with_capacity(buckets);
    for i in 0..buckets {
        let f = 20 + noise(&mut rng);
        let since = i as i64 - 500;
        let r = if (0..1500).contains(&since) && storm > 0 {
            let wave = (since % 300) as u32;
            storm * 30 * (300 - wave) / 300 + noise(&mut rng)
        } else {
            0
        };
        let outage = (500..700).contains(&i);
        first.push(f);
        retries.push(r);
        succeeded.push(if outage { 0 } else { (f + r).min(40) });
    }
    let mut s = summary();
    s.peak_arrivals = first
        .iter()
        .zip(&retries)
        .map(|(a, b)| a + b)
        .max()
        .unwrap_or(0)
        .into();
    s.peak_retries = retries.iter().copied().max().unwrap_or(0).into();
    s.last_arrival_ms = buckets as f64 * 10.0;
    let cdf: Vec<(f64, f64)> = (1..=50)
        .map(|k| {
            (
                0.5 * 1.2f64.powi(k) * (1.0 + f64::from(storm)),
                f64::from(k) / 50.0,
            )
        })
        .collect();
    VariantResult {
        name: name.to_string(),
        summary: s,
        series: Series {
            bucket_ms: 10.0,
            queue_len: first.iter().map(|&f| f as f32 / 4.0).collect(),
            busy: retries
                .iter()
                .map(|&r| (r as f32 / 10.0).min(8.0))
                .collect(),
            first,
            retries,
            succeeded,
            ready_replicas: Vec::new(),
            learned_timeout_ms: Vec::new(),
            learned_hedge_delay_ms: Vec::new(),
            tiers: Vec::new(),
            replicas: Vec::new(),
            attempts: Vec::new(),
        },
        // As a report read back from JSON: no per-outcome CDFs (`split` adds them).
        success_cdf: Vec::new(),
        failure_cdf: Vec::new(),
        completion_cdf: cdf,
    }
}

/// Three variants over 30 s of 10 ms buckets (3,000 buckets: the load chart merges them).
pub fn report() -> RunReport {
    let mut naive = variant("naive retries", 3000, 4);
    naive.summary.duplicated = 420;
    naive.summary.applied_once = 9_480;
    naive.summary.lost = 100;
    naive.summary.phantom = 30;
    naive.summary.false_failures = 7;
    RunReport {
        schema_version: SCHEMA_VERSION,
        model: "outage-storm".to_string(),
        seed: 42,
        variants: vec![
            variant("no retries", 3000, 0),
            naive,
            variant("backoff + jitter", 3000, 1),
        ],
    }
}

/// One variant, 200 buckets: no merging.
pub fn small() -> RunReport {
    RunReport {
        schema_version: SCHEMA_VERSION,
        model: "small".to_string(),
        seed: 7,
        variants: vec![variant("only", 200, 0)],
    }
}

/// `r` as a fresh run has it: per-outcome CDFs (successes faster, failures slower) beside
/// the joint one, as `cdf(i)` points at quantiles i/200.
pub fn split(mut r: RunReport) -> RunReport {
    for v in &mut r.variants {
        let q = |scale: f64| -> Vec<(f64, f64)> {
            (1..=200)
                .map(|i| (scale * f64::from(i), f64::from(i) / 200.0))
                .collect()
        };
        v.success_cdf = q(1.0);
        v.failure_cdf = q(4.0);
    }
    r
}

/// [`report`] with a replicated server: three replicas each, replica `k` getting `k + 1` sixths
/// of the arrivals, replica 2 ejected at bucket 1,000 and rejecting from then on in the second
/// variant; the summary rows to match.
pub fn replicated() -> RunReport {
    use retrystorm_core::summary::{ReplicaSeries, ReplicaSummary, TierSummary};
    let mut r = report();
    for (i, v) in r.variants.iter_mut().enumerate() {
        let arrivals: Vec<u32> = v
            .series
            .first
            .iter()
            .zip(&v.series.retries)
            .map(|(a, b)| a + b)
            .collect();
        let n = arrivals.len();
        let series: Vec<ReplicaSeries> = (0..3u32)
            .map(|k| {
                let mine: Vec<u32> = arrivals.iter().map(|a| a * (k + 1) / 6).collect();
                let mut ejections = vec![0; n];
                let mut rejected = vec![0; n];
                if i == 1 && k == 2 {
                    ejections[1000] = 1;
                    rejected[1000..].iter_mut().for_each(|x| *x = 1);
                }
                ReplicaSeries {
                    replica: k,
                    served: mine.clone(),
                    arrivals: mine,
                    rejected,
                    ejections,
                }
            })
            .collect();
        let rows = series
            .iter()
            .map(|s| ReplicaSummary {
                replica: s.replica,
                arrivals: s.arrivals.iter().map(|&x| u64::from(x)).sum(),
                served: s.served.iter().map(|&x| u64::from(x)).sum(),
                rejected: s.rejected.iter().map(|&x| u64::from(x)).sum(),
                errors: 0,
                ejections: s.ejections.iter().map(|&x| u64::from(x)).sum(),
            })
            .collect();
        v.summary.tiers = vec![TierSummary {
            name: "server".into(),
            replicas: rows,
            ..TierSummary::default()
        }];
        v.series.replicas = series;
    }
    r
}
