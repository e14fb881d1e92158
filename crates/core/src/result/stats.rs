//! Statistics over replications: mean, sample standard deviation and the Student-t 95%
//! confidence interval of the mean, and how replication seeds are derived.
//!
//! Replication `i` (from 0) of a run with base seed `s` uses seed `s + i` (wrapping). The engine
//! mixes every seed through splitmix64 before use ([`crate::rng::Stream::new`]), so consecutive
//! seeds give independent streams, and a failing replication is reproduced by `--seed s+i`.

pub use crate::catalogue::SHARE_METRICS;
use crate::summary::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The seeds of `n` replications starting at `base`: `base, base + 1, ...` (wrapping).
pub fn replication_seeds(base: u64, n: u32) -> Vec<u64> {
    (0..u64::from(n)).map(|i| base.wrapping_add(i)).collect()
}

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    // Kahan-free but order-fixed: the same inputs always give the same bits.
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (divisor `n - 1`); NaN below two values.
pub fn sample_sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

/// The standard normal's 0.975 quantile (the Wilson interval's z), to 6 decimals.
const Z975: f64 = 1.959_964;

/// The two-sided `level` critical value of Student's t with `df` degrees of freedom (the
/// `(1 + level) / 2` quantile: 12.706 for level 0.95 and df 1), from `statrs`'s inverse CDF;
/// it replaced a 4-decimal table with interpolation past df 30. Infinity for `df == 0` or a
/// level outside (0, 1).
pub fn t_quantile(level: f64, df: usize) -> f64 {
    if df == 0 || !(level > 0.0 && level < 1.0) {
        return f64::INFINITY;
    }
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df as f64)
        .map(|t| t.inverse_cdf((1.0 + level) / 2.0))
        .unwrap_or(f64::INFINITY)
}

/// The 0.975 quantile of Student's t (the 95% interval's): [`t_quantile`] at level 0.95.
pub fn t975(df: usize) -> f64 {
    t_quantile(0.95, df)
}

/// A mean with the half-width of its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    /// `t(0.975, n-1) * sd / sqrt(n)`; NaN with fewer than two values.
    pub half_width: f64,
    pub n: usize,
}

impl Estimate {
    pub fn of(xs: &[f64]) -> Estimate {
        let n = xs.len();
        let half_width = if n < 2 {
            f64::NAN
        } else {
            t975(n - 1) * sample_sd(xs) / (n as f64).sqrt()
        };
        Estimate {
            mean: mean(xs),
            half_width,
            n,
        }
    }

    /// `(low, high)` of the 95% interval.
    pub fn interval(&self) -> (f64, f64) {
        (self.mean - self.half_width, self.mean + self.half_width)
    }
}

/// How many of `n` runs had some yes/no property (goodput recovered after the trigger), with the
/// Wilson score 95% interval (Wilson, "Probable inference, the law of succession, and
/// statistical inference", JASA 22, 1927): unlike the normal approximation it stays inside
/// [0, 1] and is not empty at 0 of n or n of n, which is where a collapse study's shares sit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub count: u32,
    pub n: u32,
    /// `count / n`.
    pub share: f64,
    pub low: f64,
    pub high: f64,
}

impl Share {
    pub fn of(count: u32, n: u32) -> Share {
        let (low, high) = wilson(count, n);
        Share {
            count,
            n,
            share: if n == 0 {
                f64::NAN
            } else {
                f64::from(count) / f64::from(n)
            },
            low,
            high,
        }
    }
}

/// The Wilson score 95% interval of `count` successes in `n` trials; NaN for `n = 0`.
pub fn wilson(count: u32, n: u32) -> (f64, f64) {
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let (k, n) = (f64::from(count.min(n)), f64::from(n));
    let p = k / n;
    let z = Z975;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 of n and n of n the bound is exactly 0 or 1 (the formula gives it up to rounding).
    let low = if k == 0.0 { 0.0 } else { centre - half };
    let high = if k == n { 1.0 } else { centre + half };
    (low.max(0.0), high.min(1.0))
}

/// Replications of one variant reduced to means and CI half-widths, per metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    /// A summary holding the means: float fields exactly, integer fields rounded to the
    /// nearest integer, non-numeric fields (`ended`) from the first replication.
    pub summary: Summary,
    /// Every numeric metric by its dotted name ([`crate::summary::metrics`]).
    pub estimates: BTreeMap<String, Estimate>,
    /// The yes/no metrics ([`SHARE_METRICS`]) present in every replication, as shares.
    pub shares: BTreeMap<String, Share>,
}

/// Aggregates the summaries of replications (at least one) of the same variant.
pub fn aggregate(runs: &[&Summary]) -> Aggregate {
    assert!(!runs.is_empty(), "aggregate needs at least one summary");
    let flat: Vec<BTreeMap<String, f64>> =
        runs.iter().map(|s| crate::summary::metrics(s)).collect();
    let mut estimates = BTreeMap::new();
    // Per-attempt metrics of an attempt some replication never reached read 0 there, so the
    // names are those of the replication that reached the furthest attempt.
    let longest = (0..runs.len())
        .max_by_key(|&i| (runs[i].attempt_peaks.len(), usize::MAX - i))
        .unwrap_or(0);
    let names = flat[0].keys().chain(
        flat[longest]
            .keys()
            .filter(|k| crate::summary::attempt_metric(k).is_some()),
    );
    for name in names {
        let zero = crate::summary::absent_attempt_value(name);
        let xs: Vec<f64> = flat
            .iter()
            .filter_map(|m| m.get(name).copied().or(zero))
            .collect();
        if xs.len() == runs.len() {
            estimates.insert(name.clone(), Estimate::of(&xs));
        }
    }
    let mut shares = BTreeMap::new();
    for name in SHARE_METRICS {
        let xs: Vec<f64> = flat.iter().filter_map(|m| m.get(name).copied()).collect();
        if !xs.is_empty() && xs.len() == runs.len() {
            let yes = xs.iter().filter(|x| **x >= 0.5).count() as u32;
            shares.insert(name.to_string(), Share::of(yes, xs.len() as u32));
        }
    }
    let mut first = runs[0].clone();
    first.attempt_peaks = runs[longest].attempt_peaks.clone();
    let mut value = toml::Value::try_from(&first).expect("a summary serializes to TOML");
    replace_means(&mut value, "", &estimates);
    let summary = value.try_into().unwrap_or_else(|_| runs[0].clone());
    Aggregate {
        summary,
        estimates,
        shares,
    }
}

/// The entries of [`aggregate`]`(runs).estimates` for `names` only (those it has), without a
/// map of every metric per run: the metrics [`crate::catalogue::MetricReader`] covers are read
/// from the summaries' fields, the others from [`crate::summary::metrics`]. A sweep's table
/// reads three metrics of every run (`tests::estimates_are_aggregate_s`).
pub fn estimates(runs: &[&Summary], names: &[&str]) -> BTreeMap<String, Estimate> {
    use crate::catalogue::MetricReader;
    assert!(!runs.is_empty(), "estimates need at least one summary");
    let longest = (0..runs.len())
        .max_by_key(|&i| (runs[i].attempt_peaks.len(), usize::MAX - i))
        .unwrap_or(0);
    let mut flat: Option<Vec<BTreeMap<String, f64>>> = None;
    let mut out = BTreeMap::new();
    for &name in names {
        let values: Vec<Option<f64>> = match MetricReader::of(name) {
            Some(r) => runs.iter().map(|s| r.read(s)).collect(),
            None => flat
                .get_or_insert_with(|| runs.iter().map(|s| crate::summary::metrics(s)).collect())
                .iter()
                .map(|m| m.get(name).copied())
                .collect(),
        };
        // `aggregate`'s names: the first run's, and the furthest attempt's per-attempt ones.
        let named = values[0].is_some()
            || (crate::summary::attempt_metric(name).is_some() && values[longest].is_some());
        if !named {
            continue;
        }
        let zero = crate::summary::absent_attempt_value(name);
        let xs: Vec<f64> = values.iter().filter_map(|v| v.or(zero)).collect();
        if xs.len() == runs.len() {
            out.insert(name.to_string(), Estimate::of(&xs));
        }
    }
    out
}

/// The estimate of `name`, where a per-attempt metric (`attempt_peaks.N.FIELD`, `N` >= 1) of an
/// attempt no replication reached reads 0 (with no spread).
pub fn estimate(est: &BTreeMap<String, Estimate>, name: &str) -> Option<Estimate> {
    if let Some(e) = est.get(name) {
        return Some(*e);
    }
    let value = crate::summary::absent_attempt_value(name)?;
    let reps = est.get("intents").map_or(0, |e| e.n);
    crate::expect::check_metric(name)
        .is_ok()
        .then_some(Estimate {
            mean: value,
            half_width: if reps < 2 { f64::NAN } else { 0.0 },
            n: reps,
        })
}

fn replace_means(v: &mut toml::Value, prefix: &str, est: &BTreeMap<String, Estimate>) {
    let children: Vec<(String, &mut toml::Value)> = match v {
        toml::Value::Table(t) => t.iter_mut().map(|(k, x)| (k.clone(), x)).collect(),
        // Named as `crate::summary::metrics` names them: `attempt_peaks` from 1.
        toml::Value::Array(a) => {
            let from = usize::from(prefix == crate::summary::ATTEMPT_PEAKS);
            a.iter_mut()
                .enumerate()
                .map(|(i, x)| ((i + from).to_string(), x))
                .collect()
        }
        _ => return,
    };
    for (k, x) in children {
        let name = if prefix.is_empty() {
            k
        } else {
            format!("{prefix}.{k}")
        };
        match x {
            toml::Value::Table(_) | toml::Value::Array(_) => replace_means(x, &name, est),
            toml::Value::Integer(i) => {
                if let Some(e) = est.get(&name)
                    && e.mean.is_finite()
                {
                    *i = e.mean.round() as i64;
                }
            }
            toml::Value::Float(f) => {
                if let Some(e) = est.get(&name) {
                    *f = e.mean;
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replication that never reached attempt 3 counts 0 there, whichever replication is
    /// first; the mean summary keeps the furthest attempt's entries, numbered from 1.
    #[test]
    fn attempts_missing_in_some_replications_read_zero() {
        use crate::summary::{AttemptPeak, Summary};
        let s = |rows: &[u64]| Summary {
            intents: 1,
            attempt_peaks: rows
                .iter()
                .enumerate()
                .map(|(i, &w)| AttemptPeak {
                    attempt: i as u64 + 1,
                    arrivals: w,
                    peak: w,
                    peak_window: w,
                })
                .collect(),
            ..Summary::default()
        };
        let (short, long) = (s(&[10, 4]), s(&[10, 6, 2]));
        for runs in [[&short, &long], [&long, &short]] {
            let a = aggregate(&runs);
            assert_eq!(a.estimates["attempt_peaks.2.peak_window"].mean, 5.0);
            assert_eq!(a.estimates["attempt_peaks.3.peak_window"].mean, 1.0);
            let want: Vec<(u64, u64)> = vec![(1, 10), (2, 5), (3, 1)];
            let got: Vec<(u64, u64)> = a
                .summary
                .attempt_peaks
                .iter()
                .map(|p| (p.attempt, p.peak_window))
                .collect();
            assert_eq!(got, want);
            let past = estimate(&a.estimates, "attempt_peaks.4.peak").unwrap();
            assert_eq!((past.mean, past.half_width, past.n), (0.0, 0.0, 2));
            assert!(estimate(&a.estimates, "attempt_peaks.0.peak").is_none());
            assert!(estimate(&a.estimates, "nope").is_none());
        }
    }

    /// [`estimates`] holds what [`aggregate`] holds for the names asked: read by a reader or
    /// from the map, present in every run or not, per-attempt past some runs' last attempt.
    #[test]
    fn estimates_are_aggregate_s() {
        use crate::summary::{AttemptPeak, Summary};
        let s = |i: u64, attempts: u64, drain: Option<f64>, recovered: Option<bool>| Summary {
            intents: 10 + i,
            amplification: 1.5 * i as f64,
            peak_retries: 7 * i,
            drain_ms: drain,
            recovered,
            recovery_ms: recovered.map(|_| i as f64),
            completion_ms: crate::summary::Percentiles {
                p99: 3.0 + i as f64,
                ..Default::default()
            },
            attempt_peaks: (1..=attempts)
                .map(|a| AttemptPeak {
                    attempt: a,
                    arrivals: a * i,
                    peak: a + i,
                    peak_window: a * 3,
                })
                .collect(),
            ..Summary::default()
        };
        let names = [
            "amplification",
            "peak_retries",
            "completion_ms.p99",
            "intents",
            "bucket_ms",
            "drain_ms",
            "recovered",
            "recovery_ms",
            "attempt_peaks.1.peak",
            "attempt_peaks.3.peak_window",
            "attempt_peaks.5.attempt",
            "attempt_peaks.0.peak",
            "tiers.0.served",
            "nope",
        ];
        let runs = [
            s(1, 2, Some(4.0), None),
            s(2, 3, None, Some(true)),
            s(3, 1, Some(2.0), Some(false)),
            s(4, 3, Some(1.0), None),
        ];
        for k in 1..=runs.len() {
            for first in 0..runs.len() {
                let picked: Vec<&Summary> =
                    (0..k).map(|j| &runs[(first + j) % runs.len()]).collect();
                let all = aggregate(&picked).estimates;
                let some = estimates(&picked, &names);
                let want: BTreeMap<String, Estimate> = all
                    .into_iter()
                    .filter(|(n, _)| names.contains(&n.as_str()))
                    .collect();
                // NaN half-widths (one run) compare by their bits.
                let bits = |m: &BTreeMap<String, Estimate>| -> Vec<(String, u64, u64, usize)> {
                    m.iter()
                        .map(|(n, e)| (n.clone(), e.mean.to_bits(), e.half_width.to_bits(), e.n))
                        .collect()
                };
                assert_eq!(bits(&some), bits(&want), "{k} runs from {first}");
            }
        }
    }

    #[test]
    fn mean_sd_ci() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), 5.0);
        assert!((sample_sd(&xs) - 2.138_089_935).abs() < 1e-9);
        let e = Estimate::of(&xs);
        // t(0.975, 7) = 2.3646
        assert!((e.half_width - 2.364_624 * 2.138_089_935 / 8f64.sqrt()).abs() < 1e-6);
        assert!(Estimate::of(&[3.0]).half_width.is_nan());
        assert!(mean(&[]).is_nan());
    }

    #[test]
    fn t_quantiles() {
        // Published tables (NIST/SEMATECH e-Handbook 1.3.6.7.2), to their 3 decimals.
        assert!((t975(1) - 12.706).abs() < 5e-4);
        assert!((t975(4) - 2.776).abs() < 5e-4);
        assert!((t975(30) - 2.042).abs() < 5e-4);
        assert!((t_quantile(0.99, 10) - 3.169).abs() < 5e-4);
        assert!((t_quantile(0.90, 5) - 2.015).abs() < 5e-4);
        assert_eq!(t_quantile(1.0, 5), f64::INFINITY);
        assert!((t975(50) - 2.0086).abs() < 1e-3);
        assert!((t975(100) - 1.9840).abs() < 1e-3);
        assert!((t975(1000) - 1.9623).abs() < 1e-3);
        assert!((t975(1_000_000) - Z975).abs() < 1e-3);
        let mut prev = t975(1);
        for df in 2..2000 {
            assert!(t975(df) <= prev, "t975 must decrease, df {df}");
            prev = t975(df);
        }
    }

    #[test]
    fn wilson_intervals() {
        // Reference values from the closed form (e.g. R's `prop.test(7, 10, correct = FALSE)`
        // gives 0.3968 .. 0.8922).
        let (lo, hi) = wilson(7, 10);
        assert!(
            (lo - 0.3968).abs() < 1e-4 && (hi - 0.8922).abs() < 1e-4,
            "{lo} {hi}"
        );
        // 0 of 10 and 10 of 10 are not empty intervals.
        let (lo, hi) = wilson(0, 10);
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 1e-4, "{hi}");
        let (lo, hi) = wilson(10, 10);
        assert!((lo - 0.7225).abs() < 1e-4 && hi == 1.0, "{lo}");
        assert!(wilson(0, 0).0.is_nan());
        assert_eq!(Share::of(3, 4).share, 0.75);
    }

    #[test]
    fn seeds_are_consecutive() {
        assert_eq!(replication_seeds(42, 3), vec![42, 43, 44]);
        assert_eq!(replication_seeds(u64::MAX, 2), vec![u64::MAX, 0]);
    }
}
