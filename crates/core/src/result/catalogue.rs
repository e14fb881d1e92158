//! The one metric catalogue: every number a run's summary holds, by its dotted name
//! (`completion_ms.p99`, `tiers.0.served`, `attempt_peaks.2.peak`). Expectations, sweeps, tune,
//! sensitivity and the statistics over seeds all read metrics here: the names that exist
//! ([`metric_names`], [`check_metric`] with a did-you-mean), one run's values ([`metrics`],
//! [`metric`]) and the yes/no metrics whose mean is a share ([`SHARE_METRICS`]).

use crate::base::diagnostics::closest;
use crate::result::summary::{
    AttemptPeak, ConnectionSummary, FanoutSummary, LayerSummary, Layered, MAX_ATTEMPTS,
    Percentiles, ReplicaSummary, Summary, TierSummary,
};
use toml::Value;

/// The metrics that are yes (1) or no (0) per run, for which
/// [`crate::result::aggregate::Aggregate::shares`] holds a [`crate::result::stats::Share`].
pub const SHARE_METRICS: [&str; 1] = ["recovered"];

/// Top-level field names of a serde struct, read from its `Deserialize` implementation.
fn fields_of<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> de::Deserializer<'de> for Probe<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("probe"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("probe"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut out: &'static [&'static str] = &[];
    let _ = T::deserialize(Probe(&mut out));
    out
}

/// A summary with every optional part present, so that its numeric fields can be listed.
fn full_summary() -> Summary {
    let mut t = match Value::try_from(Summary {
        layered: Some(Layered {
            layers: vec![LayerSummary::default()],
            expected_amplification: Some(0.0),
            ..Layered::default()
        }),
        // Counts a tier leaves out when zero (`hung`, `shed`) or without an autoscaler are
        // metrics too.
        tiers: vec![TierSummary {
            hung: 1,
            shed: 1,
            replicas: vec![ReplicaSummary::default()],
            peak_ready_replicas: Some(1),
            mean_ready_replicas: Some(1.0),
            ..TierSummary::default()
        }],
        attempt_peaks: vec![AttemptPeak::default()],
        fanout: vec![FanoutSummary::default()],
        connections: vec![ConnectionSummary::default()],
        ..Summary::default()
    }) {
        Ok(Value::Table(t)) => t,
        _ => return Summary::default(),
    };
    // Optional numbers left out of a default summary (`recovery_ms`): present as 1, found by
    // trying, so a field added to the core later is listed too. Optional flags stay out.
    for f in fields_of::<Summary>() {
        if t.contains_key(*f) {
            continue;
        }
        // A float, or a count left out when zero (`first_tries_refused`, `limiter_delayed`):
        // 1, not 0, which such a field would leave out again.
        for one in [Value::Float(1.0), Value::Integer(1)] {
            let mut with = t.clone();
            with.insert((*f).to_string(), one);
            if Value::Table(with.clone()).try_into::<Summary>().is_ok() {
                t = with;
                break;
            }
        }
    }
    Value::Table(t).try_into().unwrap_or_default()
}

/// Every metric name an expectation (or `sweep --metric`) may use: the summary's numeric fields,
/// dotted for nested ones (`completion_ms.p99`, `layered.orphaned`); per-tier and per-layer
/// counts are `tiers.N.FIELD` and `layered.layers.N.FIELD`. Fields that are not numbers (`ended`,
/// `truncated`) are not metrics.
pub fn metric_names() -> Vec<String> {
    let mut names: Vec<String> = metrics(&full_summary())
        .into_keys()
        .map(|k| generic(&k))
        .collect();
    // Yes/no per run (1 or 0), present only in runs with a trigger.
    names.extend(SHARE_METRICS.iter().map(|m| m.to_string()));
    names.sort();
    names
}

/// A dotted name with its indices as `N`: `tiers.0.served` -> `tiers.N.served`.
fn generic(name: &str) -> String {
    name.split('.')
        .enumerate()
        .map(|(i, seg)| {
            if i > 0 && !seg.is_empty() && seg.chars().all(|c| c.is_ascii_digit()) {
                "N"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The names in [`metric_names`] order as the summary has them (top-level fields in field order).
fn ordered_names() -> Vec<String> {
    let all = metric_names();
    let mut out = Vec::with_capacity(all.len());
    for f in fields_of::<Summary>() {
        for n in &all {
            if n == f || n.starts_with(&format!("{f}.")) {
                out.push(n.clone());
            }
        }
    }
    for n in all {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// The metric name closest to `got`: one whose last part is `got` (`p99` ->
/// `completion_ms.p99`), else the nearest by edit distance (whole name or last part).
pub fn suggest(got: &str) -> Option<String> {
    let names = ordered_names();
    let last = |n: &str| n.rsplit('.').next().unwrap_or(n).to_string();
    if let Some(n) = names
        .iter()
        .filter(|n| n.contains('.') && last(n) == got)
        // The least nested, and among those the first in the summary (`completion_ms.p99`
        // before `success_ms.p99`).
        .min_by_key(|n| n.matches('.').count())
    {
        return Some(n.clone());
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    if let Some(b) = closest(got, &refs) {
        return Some(b.to_string());
    }
    let got_last = last(got);
    let lasts: Vec<String> = names.iter().map(|n| last(n)).collect();
    let last_refs: Vec<&str> = lasts.iter().map(String::as_str).collect();
    let b = closest(&got_last, &last_refs)?;
    names.iter().find(|n| last(n) == b).cloned()
}

/// Whether `name` is a metric: one of [`metric_names`], with any index for `N`.
fn is_metric(name: &str) -> bool {
    metric_names().contains(&generic(name))
}

/// Checks a metric name before anything runs, with a did-you-mean (or the list of metrics).
pub fn check_metric(name: &str) -> Result<(), String> {
    if let Some((0, field)) = attempt_metric(name) {
        return Err(format!(
            "unknown metric `{name}`: attempts are numbered from 1 (the first try); did you mean `attempt_peaks.1.{field}`?"
        ));
    }
    // An attempt no run can make would read 0 in every run: an expectation that cannot fail.
    if let Some((n, _)) = attempt_metric(name)
        && n > u64::from(MAX_ATTEMPTS)
    {
        return Err(format!(
            "unknown metric `{name}`: attempts are numbered 1 to {MAX_ATTEMPTS} (retry.max_attempts is at most {MAX_ATTEMPTS}), so no run reaches this one"
        ));
    }
    if is_metric(name) {
        return Ok(());
    }
    let head = name.split('.').next().unwrap_or(name);
    let what = if fields_of::<Summary>().contains(&head) && !name.contains('.') {
        format!("`{name}` is not a number, so not a metric")
    } else {
        format!("unknown metric `{name}`")
    };
    Err(match suggest(name) {
        Some(best) => format!("{what}; did you mean `{best}`?"),
        None => format!("{what}; metrics: {}", ordered_names().join(", ")),
    })
}

/// Why a metric could not be read from a summary.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetricError {
    /// An optional metric this run did not produce (e.g. `recovery_ms` when nothing recovered).
    #[error("`{0}` is absent from this summary (the run did not measure it)")]
    Absent(String),
    #[error("`{0}` is not a number")]
    NotANumber(String),
    #[error("no metric `{0}` in the summary")]
    Unknown(String),
}

/// Reads one metric by its dotted name.
pub fn metric(s: &Summary, name: &str) -> Result<f64, MetricError> {
    // Per attempt number (from 1); an attempt that never reached the server reads 0.
    if let Some((n, field)) = attempt_metric(name)
        && n > 0
        && is_metric(name)
    {
        let a = usize::try_from(n - 1)
            .ok()
            .and_then(|i| s.attempt_peaks.get(i));
        let get: fn(&AttemptPeak) -> u64 = match field {
            "attempt" => |a| a.attempt,
            "arrivals" => |a| a.arrivals,
            "peak" => |a| a.peak,
            "peak_window" => |a| a.peak_window,
            _ => return Err(MetricError::Unknown(name.to_string())),
        };
        let absent = absent_attempt_value(name).unwrap_or(0.0);
        return Ok(a.map_or(absent, |a| get(a) as f64));
    }
    let v = Value::try_from(s).map_err(|_| MetricError::Unknown(name.to_string()))?;
    let mut cur = &v;
    for (depth, seg) in name.split('.').enumerate() {
        let next = match cur {
            Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => cur.get(seg),
        };
        match next {
            Some(x) => cur = x,
            None => {
                // A missing top-level field is an optional one this run left out (also for
                // names nested under it); a missing child of a present field is a typo.
                let known = is_metric(name);
                return Err(if depth == 0 && known {
                    MetricError::Absent(name.to_string())
                } else {
                    MetricError::Unknown(name.to_string())
                });
            }
        }
    }
    match cur {
        Value::Integer(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        Value::Boolean(b) if SHARE_METRICS.contains(&name) => Ok(f64::from(u8::from(*b))),
        _ => Err(MetricError::NotANumber(name.to_string())),
    }
}

/// The summary field whose entries are named by attempt number (from 1), not by position.
pub const ATTEMPT_PEAKS: &str = "attempt_peaks";

/// `attempt_peaks.N.FIELD` as `(N, FIELD)` when `N` is a number (any, 0 included).
pub fn attempt_metric(name: &str) -> Option<(u64, &str)> {
    let rest = name.strip_prefix(ATTEMPT_PEAKS)?.strip_prefix('.')?;
    let (n, field) = rest.split_once('.')?;
    if n.is_empty() || !n.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((n.parse().unwrap_or(u64::MAX), field))
}

/// What a per-attempt metric reads for an attempt number that never reached the server: 0, and
/// its own number for `attempt`. None for other names (and for attempt 0, which is no attempt).
pub fn absent_attempt_value(name: &str) -> Option<f64> {
    match attempt_metric(name)? {
        (0, _) => None,
        (n, "attempt") => Some(n as f64),
        _ => Some(0.0),
    }
}

/// Every numeric metric of a summary by its dotted name (absent optional fields are absent).
pub fn metrics(s: &Summary) -> std::collections::BTreeMap<String, f64> {
    let mut out = Vec::with_capacity(128);
    if let Ok(v) = toml::Value::try_from(s) {
        flatten(&v, &mut String::new(), &mut out);
    }
    // Built in bulk from the sorted pairs (a later duplicate wins, as an insert would): a sweep
    // flattens every run's summary, and one insert per metric was most of its fixed cost.
    out.into_iter().collect()
}

/// Appends the numbers under `v` to `out`, named `name` (a buffer the recursion extends and
/// restores) and their path below it.
fn flatten(v: &toml::Value, name: &mut String, out: &mut Vec<(String, f64)>) {
    let len = name.len();
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                if len > 0 {
                    name.push('.');
                }
                name.push_str(k);
                flatten(x, name, out);
                name.truncate(len);
            }
        }
        // Arrays (e.g. `layered.layers`) are indexed: `layered.layers.0.sent`; `attempt_peaks`
        // by attempt number, from 1: `attempt_peaks.2.peak_window`.
        toml::Value::Array(a) => {
            let from = usize::from(name.as_str() == ATTEMPT_PEAKS);
            for (i, x) in a.iter().enumerate() {
                use std::fmt::Write;
                let _ = write!(name, ".{}", i + from);
                flatten(x, name, out);
                name.truncate(len);
            }
        }
        toml::Value::Integer(i) => out.push((name.clone(), *i as f64)),
        toml::Value::Float(f) => out.push((name.clone(), *f)),
        // `recovered` is yes or no per run: 1 or 0, so its mean over seeds is a share.
        toml::Value::Boolean(b) if SHARE_METRICS.contains(&name.as_str()) => {
            out.push((name.clone(), f64::from(u8::from(*b))));
        }
        _ => {}
    }
}

/// One metric read straight from a summary's field, for a caller that reads a few metrics of
/// many summaries (a sweep's table: three metrics of every run) and would otherwise build
/// [`metrics`]' map of every metric for each. [`MetricReader::read`] gives exactly what
/// `metrics(s).get(name)` gives (`tests::readers_read_what_metrics_holds`); names it does not
/// cover ([`MetricReader::of`] is `None`) are read from [`metrics`].
#[derive(Clone, Copy, Debug)]
pub struct MetricReader(Reader);

#[derive(Clone, Copy, Debug)]
enum Reader {
    Count(fn(&Summary) -> u64),
    Float(fn(&Summary) -> f64),
    Optional(fn(&Summary) -> Option<f64>),
    /// Field `.1` of the percentiles `.0` (`completion_ms`, `success_ms`).
    Percentile(fn(&Summary) -> &Percentiles, fn(&Percentiles) -> f64),
    /// Entry `.0` (attempt number - 1) of `attempt_peaks`, absent past the last.
    Attempt(usize, fn(&AttemptPeak) -> u64),
    /// A name [`metrics`] never holds (attempt 0, an unknown field of an attempt).
    Absent,
}

impl MetricReader {
    /// The reader of `name`, when it is a top-level count or time, a completion percentile,
    /// `drain_ms` or a per-attempt metric.
    pub fn of(name: &str) -> Option<MetricReader> {
        use Reader::{Count, Float};
        if let Some((n, field)) = attempt_metric(name) {
            // Only the name `metrics` writes (`attempt_peaks.2.peak`, not `.02.`) is held.
            if name != format!("{ATTEMPT_PEAKS}.{n}.{field}") {
                return Some(MetricReader(Reader::Absent));
            }
            let get: fn(&AttemptPeak) -> u64 = match field {
                "attempt" => |a| a.attempt,
                "arrivals" => |a| a.arrivals,
                "peak" => |a| a.peak,
                "peak_window" => |a| a.peak_window,
                _ => return Some(MetricReader(Reader::Absent)),
            };
            return Some(MetricReader(match usize::try_from(n) {
                Ok(n) if n > 0 => Reader::Attempt(n - 1, get),
                _ => Reader::Absent,
            }));
        }
        if let Some((family, field)) = name.split_once('.') {
            let of: fn(&Summary) -> &Percentiles = match family {
                "completion_ms" => |s| &s.completion_ms,
                "success_ms" => |s| &s.success_ms,
                _ => return None,
            };
            let get: fn(&Percentiles) -> f64 = match field {
                "p50" => |p| p.p50,
                "p90" => |p| p.p90,
                "p99" => |p| p.p99,
                "p999" => |p| p.p999,
                "max" => |p| p.max,
                "mean" => |p| p.mean,
                _ => return None,
            };
            return Some(MetricReader(Reader::Percentile(of, get)));
        }
        let r = match name {
            "intents" => Count(|s| s.intents),
            "attempts" => Count(|s| s.attempts),
            "retries" => Count(|s| s.retries),
            "amplification" => Float(|s| s.amplification),
            "succeeded" => Count(|s| s.succeeded),
            "failed" => Count(|s| s.failed),
            "unsettled" => Count(|s| s.unsettled),
            "peak_arrivals" => Count(|s| s.peak_arrivals),
            "peak_retries" => Count(|s| s.peak_retries),
            "bucket_ms" => Float(|s| s.bucket_ms),
            "peak_arrivals_window" => Count(|s| s.peak_arrivals_window),
            "peak_retries_window" => Count(|s| s.peak_retries_window),
            "peak_window_ms" => Float(|s| s.peak_window_ms),
            "last_arrival_ms" => Float(|s| s.last_arrival_ms),
            "drain_ms" => Reader::Optional(|s| s.drain_ms),
            "lost" => Count(|s| s.lost),
            "applied_once" => Count(|s| s.applied_once),
            "duplicated" => Count(|s| s.duplicated),
            "phantom" => Count(|s| s.phantom),
            "false_failures" => Count(|s| s.false_failures),
            "outcome_pending" => Count(|s| s.outcome_pending),
            "effects" => Count(|s| s.effects),
            "arrivals" => Count(|s| s.arrivals),
            "timeouts" => Count(|s| s.timeouts),
            "rejected" => Count(|s| s.rejected),
            "work_ms" => Float(|s| s.work_ms),
            "wasted_work_ms" => Float(|s| s.wasted_work_ms),
            "wasted_share" => Float(|s| s.wasted_share),
            "mean_wait_ms" => Float(|s| s.mean_wait_ms),
            "mean_busy" => Float(|s| s.mean_busy),
            "end_ms" => Float(|s| s.end_ms),
            "events" => Count(|s| s.events),
            "goodput_per_s" => Float(|s| s.goodput_per_s),
            "offered_per_s" => Float(|s| s.offered_per_s),
            _ => return None,
        };
        Some(MetricReader(r))
    }

    /// `metrics(s).get(name)` for the name this reader was made for.
    #[inline]
    pub fn read(&self, s: &Summary) -> Option<f64> {
        // A count past `i64::MAX` is not a TOML integer: `metrics` has none (no run counts
        // that far).
        let count = |n: u64| i64::try_from(n).ok().map(|n| n as f64);
        match self.0 {
            Reader::Count(f) => count(f(s)),
            Reader::Float(f) => Some(f(s)),
            Reader::Optional(f) => f(s),
            Reader::Percentile(of, get) => Some(get(of(s))),
            Reader::Attempt(i, f) => s.attempt_peaks.get(i).and_then(|a| count(f(a))),
            Reader::Absent => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A summary whose every number is different (so a reader of the wrong field is caught),
    /// with three attempts and `drain_ms` set or not.
    fn numbered(drain: bool) -> Summary {
        let mut s = full_summary();
        s.attempt_peaks = vec![AttemptPeak::default(); 3];
        s.drain_ms = drain.then_some(0.0);
        let mut v = Value::try_from(&s).unwrap();
        fn number(v: &mut Value, next: &mut i64) {
            match v {
                Value::Table(t) => t.iter_mut().for_each(|(_, x)| number(x, next)),
                Value::Array(a) => a.iter_mut().for_each(|x| number(x, next)),
                Value::Integer(i) => {
                    *next += 1;
                    *i = *next;
                }
                Value::Float(f) => {
                    *next += 1;
                    *f = *next as f64 + 0.25;
                }
                _ => {}
            }
        }
        number(&mut v, &mut 1000);
        v.try_into().unwrap()
    }

    #[test]
    fn readers_read_what_metrics_holds() {
        let mut names: Vec<String> = metrics(&numbered(true)).into_keys().collect();
        names.extend(
            [
                "attempt_peaks.0.peak",
                "attempt_peaks.4.peak",
                "attempt_peaks.02.peak",
                "attempt_peaks.2.nope",
                "attempt_peaks.99999999999999999999999.peak",
                "drain_ms",
            ]
            .map(String::from),
        );
        let mut read = 0;
        for s in [numbered(true), numbered(false), Summary::default()] {
            let all = metrics(&s);
            for name in &names {
                if let Some(r) = MetricReader::of(name) {
                    assert_eq!(r.read(&s), all.get(name).copied(), "{name}");
                    read += 1;
                }
            }
        }
        assert!(read > 3 * 60, "{read}");
        for name in [
            "amplification",
            "peak_retries",
            "completion_ms.p99",
            "success_ms.mean",
            "bucket_ms",
        ] {
            assert!(MetricReader::of(name).is_some(), "{name}");
        }
    }
}
