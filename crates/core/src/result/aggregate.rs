//! Replications of one variant reduced to an estimate per metric: the means and 95% confidence
//! half-widths of every metric of the catalogue, the yes/no metrics as shares, and a summary that
//! holds the means.

use crate::result::catalogue::{
    ATTEMPT_PEAKS, MetricReader, SHARE_METRICS, absent_attempt_value, attempt_metric, check_metric,
    metrics,
};
use crate::result::stats::{Estimate, Share};
use crate::result::summary::Summary;
use std::collections::BTreeMap;

/// Replications of one variant reduced to means and CI half-widths, per metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    /// A summary holding the means: float fields exactly, integer fields rounded to the
    /// nearest integer, non-numeric fields (`ended`) from the first replication.
    pub summary: Summary,
    /// Every numeric metric by its dotted name ([`metrics`]).
    pub estimates: BTreeMap<String, Estimate>,
    /// The yes/no metrics ([`SHARE_METRICS`]) present in every replication, as shares.
    pub shares: BTreeMap<String, Share>,
}

/// Aggregates the summaries of replications (at least one) of the same variant.
pub fn aggregate(runs: &[&Summary]) -> Aggregate {
    assert!(!runs.is_empty(), "aggregate needs at least one summary");
    let flat: Vec<BTreeMap<String, f64>> = runs.iter().map(|s| metrics(s)).collect();
    let mut estimates = BTreeMap::new();
    // Per-attempt metrics of an attempt some replication never reached read 0 there, so the
    // names are those of the replication that reached the furthest attempt.
    let longest = (0..runs.len())
        .max_by_key(|&i| (runs[i].attempt_peaks.len(), usize::MAX - i))
        .unwrap_or(0);
    let names = flat[0]
        .keys()
        .chain(flat[longest].keys().filter(|k| attempt_metric(k).is_some()));
    for name in names {
        let zero = absent_attempt_value(name);
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
/// map of every metric per run: the metrics [`MetricReader`] covers are read
/// from the summaries' fields, the others from [`metrics`]. A sweep's table
/// reads three metrics of every run (`tests::estimates_are_aggregate_s`).
pub fn estimates(runs: &[&Summary], names: &[&str]) -> BTreeMap<String, Estimate> {
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
                .get_or_insert_with(|| runs.iter().map(|s| metrics(s)).collect())
                .iter()
                .map(|m| m.get(name).copied())
                .collect(),
        };
        // `aggregate`'s names: the first run's, and the furthest attempt's per-attempt ones.
        let named =
            values[0].is_some() || (attempt_metric(name).is_some() && values[longest].is_some());
        if !named {
            continue;
        }
        let zero = absent_attempt_value(name);
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
    let value = absent_attempt_value(name)?;
    let reps = est.get("intents").map_or(0, |e| e.n);
    check_metric(name).is_ok().then_some(Estimate {
        mean: value,
        half_width: if reps < 2 { f64::NAN } else { 0.0 },
        n: reps,
    })
}

fn replace_means(v: &mut toml::Value, prefix: &str, est: &BTreeMap<String, Estimate>) {
    let children: Vec<(String, &mut toml::Value)> = match v {
        toml::Value::Table(t) => t.iter_mut().map(|(k, x)| (k.clone(), x)).collect(),
        // Named as `metrics` names them: `attempt_peaks` from 1.
        toml::Value::Array(a) => {
            let from = usize::from(prefix == ATTEMPT_PEAKS);
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
        use crate::result::summary::{AttemptPeak, Summary};
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
        use crate::result::summary::{AttemptPeak, Summary};
        let s = |i: u64, attempts: u64, drain: Option<f64>, recovered: Option<bool>| Summary {
            intents: 10 + i,
            amplification: 1.5 * i as f64,
            peak_retries: 7 * i,
            drain_ms: drain,
            recovered,
            recovery_ms: recovered.map(|_| i as f64),
            completion_ms: crate::result::summary::Percentiles {
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
}
