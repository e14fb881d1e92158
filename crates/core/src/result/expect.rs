//! Expectations: assertions about a run's summary, written in a model file as `[[expect]]`
//! tables or on the command line, evaluated over one or more seeds.
//!
//! ```toml
//! [[expect]]
//! metric = "peak_retries"   # a name from the JSON summary; dotted for nested: completion_ms.p99
//! op = "=="                 # <, <=, ==, >=, >
//! value = 1000              # a number; for *_ms metrics also a duration: "200ms", "2s"
//! variant = "no-jitter"     # optional; default: every variant
//! over = "all"              # all (every seed, the default), mean (the mean over seeds), or
//!                            # share (of the seeds where a yes/no metric, `recovered`, is yes)
//!
//! [[expect]]
//! assert = "peak_retries < 300"   # the compact form of metric/op/value
//! over = "mean"
//! ```
//!
//! The compact form (also what `--expect` takes) is `METRIC OP VALUE`, optionally followed by
//! `, over=mean` and `, variant=NAME`.
//!
//! ```
//! use retrystorm_core::expect::Expectation;
//! use retrystorm_core::load::load;
//!
//! let s = load("m.toml", "[workload]\nclients = 50\n[server]\nfail = \"always\"\n", &[]).unwrap();
//! let r = retrystorm_core::run_model(&s.base, 7, &mut |_| {});
//! let e = Expectation::parse("failed == 50").unwrap();
//! assert_eq!(e.holds(&r.summary), Ok(true));
//! ```

use crate::base::diagnostics::{LoadError, closest};
use crate::stats::Estimate;
use crate::summary::{LayerSummary, Layered, Summary, TierSummary};
use std::fmt;
use toml::{Table, Value};

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

impl Op {
    pub const ALL: [(&'static str, Op); 5] = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
    ];

    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.iter().find(|(t, _)| *t == s).map(|(_, o)| *o)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Eq => "==",
            Op::Ge => ">=",
            Op::Gt => ">",
        }
    }

    /// Whether `seen OP bound` holds (NaN never satisfies anything).
    pub fn test(self, seen: f64, bound: f64) -> bool {
        match self {
            Op::Lt => seen < bound,
            Op::Le => seen <= bound,
            Op::Eq => seen == bound,
            Op::Ge => seen >= bound,
            Op::Gt => seen > bound,
        }
    }
}

/// How an expectation treats several seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// It must hold for every seed.
    All,
    /// It must hold for the mean over seeds (reported with its 95% confidence interval).
    Mean,
    /// For a yes/no metric (`recovered`): it must hold for the share of seeds where it is yes,
    /// a number in [0, 1] (reported with its Wilson 95% interval).
    Share,
}

impl Over {
    pub fn as_str(self) -> &'static str {
        match self {
            Over::All => "all",
            Over::Mean => "mean",
            Over::Share => "share",
        }
    }
}

/// One assertion about a summary metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// Dotted metric name, e.g. `completion_ms.p99`.
    pub metric: String,
    pub op: Op,
    /// The bound, in the metric's unit (milliseconds for `*_ms`).
    pub value: f64,
    /// The value as written (`"200ms"`), for messages.
    pub value_text: String,
    /// The variant it applies to; `None` = every variant.
    pub variant: Option<String>,
    pub over: Over,
    /// Where it was written: `models/x.toml:31` or `--expect 'peak_retries<200'`.
    pub source: String,
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.metric,
            self.op.as_str(),
            self.value_text
        )?;
        match self.over {
            Over::All => {}
            Over::Mean => write!(f, " (mean over seeds)")?,
            Over::Share => write!(f, " (share of seeds)")?,
        }
        if let Some(v) = &self.variant {
            write!(f, " [variant {v}]")?;
        }
        Ok(())
    }
}

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
        // Counts a tier leaves out when zero (`hung`, `shed`) are metrics too.
        tiers: vec![TierSummary {
            hung: 1,
            shed: 1,
            ..TierSummary::default()
        }],
        attempt_peaks: vec![crate::summary::AttemptPeak::default()],
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
    names.extend(crate::stats::SHARE_METRICS.iter().map(|m| m.to_string()));
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
    if let Some((0, field)) = crate::summary::attempt_metric(name) {
        return Err(format!(
            "unknown metric `{name}`: attempts are numbered from 1 (the first try); did you mean `attempt_peaks.1.{field}`?"
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

pub use crate::summary::metrics;

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
    if let Some((n, field)) = crate::summary::attempt_metric(name)
        && n > 0
        && is_metric(name)
    {
        let a = usize::try_from(n - 1)
            .ok()
            .and_then(|i| s.attempt_peaks.get(i));
        let get: fn(&crate::summary::AttemptPeak) -> u64 = match field {
            "attempt" => |a| a.attempt,
            "arrivals" => |a| a.arrivals,
            "peak" => |a| a.peak,
            "peak_window" => |a| a.peak_window,
            _ => return Err(MetricError::Unknown(name.to_string())),
        };
        let absent = crate::summary::absent_attempt_value(name).unwrap_or(0.0);
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
        Value::Boolean(b) if crate::stats::SHARE_METRICS.contains(&name) => {
            Ok(f64::from(u8::from(*b)))
        }
        _ => Err(MetricError::NotANumber(name.to_string())),
    }
}

fn located(origin: &str, line: Option<usize>, field: Option<String>, message: String) -> LoadError {
    LoadError {
        origin: origin.to_string(),
        line,
        column: None,
        field,
        message,
    }
}

/// Reads a bound: a number, or for `*_ms` metrics a duration string ("200ms" = 200.0).
fn parse_bound(metric: &str, v: &Value) -> Result<(f64, String), String> {
    match v {
        Value::Integer(i) => Ok((*i as f64, i.to_string())),
        Value::Float(f) if f.is_finite() => Ok((*f, f.to_string())),
        Value::String(s) => parse_bound_text(metric, s),
        other => Err(format!("`value` must be a number, got {other}")),
    }
}

fn parse_bound_text(metric: &str, s: &str) -> Result<(f64, String), String> {
    let s = s.trim();
    if let Ok(f) = s.parse::<f64>()
        && f.is_finite()
    {
        return Ok((f, s.to_string()));
    }
    let last = metric.rsplit('.').next().unwrap_or(metric);
    let is_ms =
        metric.ends_with("_ms") || metric.starts_with("completion_ms.") || last.ends_with("_ms");
    if !is_ms {
        return Err(format!(
            "`{metric}` is not a duration metric; the value must be a number, got {s:?}"
        ));
    }
    crate::time::Duration::parse(s)
        .map(|d| (d.as_millis_f64(), s.to_string()))
        .map_err(|e| e.to_string())
}

impl Expectation {
    /// Parses the compact form `METRIC OP VALUE[, over=all|mean][, variant=NAME]`.
    pub fn parse(text: &str) -> Result<Expectation, LoadError> {
        Self::parse_from(&format!("--expect {text:?}"), text)
    }

    /// As [`Expectation::parse`], naming `source` in errors.
    pub fn parse_from(source: &str, text: &str) -> Result<Expectation, LoadError> {
        let err = |m: String| located(source, None, None, m);
        let mut parts = text.split(',');
        let main = parts.next().unwrap_or("").trim();
        let at = main
            .find(['<', '>', '='])
            .ok_or_else(|| err("expected METRIC OP VALUE with OP one of <, <=, ==, >=, >, e.g. \"peak_retries < 200\"".into()))?;
        let metric = main[..at].trim().to_string();
        let rest = &main[at..];
        let (op_text, value) = Op::ALL
            .iter()
            .find(|(t, _)| rest.starts_with(t))
            .map(|(t, _)| (*t, rest[t.len()..].trim()))
            .ok_or_else(|| {
                err(format!(
                    "unknown operator in {main:?}; use <, <=, ==, >=, >"
                ))
            })?;
        let op = Op::parse(op_text).expect("listed");
        if metric.is_empty() || value.is_empty() {
            return Err(err(format!("expected METRIC OP VALUE, got {main:?}")));
        }
        check_metric(&metric).map_err(err)?;
        let (value, value_text) = parse_bound_text(&metric, value).map_err(err)?;
        let mut e = Expectation {
            metric,
            op,
            value,
            value_text,
            variant: None,
            over: Over::All,
            source: source.to_string(),
        };
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| {
                err(format!(
                    "expected `over=mean`, `over=share` or `variant=NAME` after a comma, got {:?}",
                    p.trim()
                ))
            })?;
            match k.trim() {
                "over" => e.over = parse_over(v.trim()).map_err(err)?,
                "variant" => e.variant = Some(v.trim().to_string()),
                k => {
                    return Err(err(format!(
                        "unknown option `{k}`; use over=all|mean|share or variant=NAME"
                    )));
                }
            }
        }
        e.check_share().map_err(err)?;
        Ok(e)
    }

    /// `over = "share"` needs a yes/no metric and a bound that is a share, and a yes/no metric
    /// is only ever compared as a share or on every seed.
    fn check_share(&self) -> Result<(), String> {
        let yes_no = crate::stats::SHARE_METRICS.contains(&self.metric.as_str());
        match self.over {
            Over::Share if !yes_no => Err(format!(
                "`over = \"share\"` is for a yes/no metric ({}), not `{}`; use \"mean\"",
                crate::stats::SHARE_METRICS.join(", "),
                self.metric
            )),
            Over::Share if !(0.0..=1.0).contains(&self.value) => Err(format!(
                "a share is a number in [0, 1] (0.9 = 90% of seeds), got {}",
                self.value_text
            )),
            Over::Mean if yes_no => Err(format!(
                "`{}` is yes or no per seed: use `over = \"share\"` for the share of seeds (with its Wilson interval)",
                self.metric
            )),
            _ => Ok(()),
        }
    }

    /// Parses one `[[expect]]` table; errors name `origin:line`.
    pub fn from_table(origin: &str, line: usize, t: &Table) -> Result<Expectation, LoadError> {
        let line = (line > 0).then_some(line);
        let err =
            |field: &str, m: String| located(origin, line, Some(format!("expect.{field}")), m);
        const KEYS: [&str; 6] = ["metric", "op", "value", "variant", "over", "assert"];
        for k in t.keys() {
            if !KEYS.contains(&k.as_str()) {
                let hint = closest(k, &KEYS)
                    .map(|b| format!("; did you mean `{b}`?"))
                    .unwrap_or_default();
                return Err(err(
                    k,
                    format!("unknown key{hint} (allowed: {})", KEYS.join(", ")),
                ));
            }
        }
        let string = |k: &str| -> Result<Option<String>, LoadError> {
            match t.get(k) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(err(k, format!("must be a string, got {v}"))),
            }
        };
        let source = match line {
            Some(l) => format!("{origin}:{l}"),
            None => origin.to_string(),
        };
        let mut e = if let Some(a) = string("assert")? {
            if t.contains_key("metric") || t.contains_key("op") || t.contains_key("value") {
                return Err(err(
                    "assert",
                    "give either `assert` or `metric`/`op`/`value`, not both".into(),
                ));
            }
            let mut e =
                Expectation::parse_from(&source, &a).map_err(|x| err("assert", x.message))?;
            e.source = source.clone();
            e
        } else {
            let metric = string("metric")?.ok_or_else(|| {
                err(
                    "metric",
                    "every [[expect]] needs a `metric` (or an `assert = \"METRIC OP VALUE\"`)"
                        .into(),
                )
            })?;
            check_metric(&metric).map_err(|m| err("metric", m))?;
            let op_text = string("op")?
                .ok_or_else(|| err("op", "missing; one of <, <=, ==, >=, >".into()))?;
            let op = Op::parse(op_text.trim()).ok_or_else(|| {
                err(
                    "op",
                    format!("unknown operator {op_text:?}; one of <, <=, ==, >=, >"),
                )
            })?;
            let v = t
                .get("value")
                .ok_or_else(|| err("value", "missing; a number (or a duration for *_ms)".into()))?;
            let (value, value_text) = parse_bound(&metric, v).map_err(|m| err("value", m))?;
            Expectation {
                metric,
                op,
                value,
                value_text,
                variant: None,
                over: Over::All,
                source,
            }
        };
        if let Some(v) = string("variant")? {
            e.variant = Some(v);
        }
        if let Some(o) = string("over")? {
            e.over = parse_over(&o).map_err(|m| err("over", m))?;
        }
        e.check_share().map_err(|m| err("over", m))?;
        Ok(e)
    }

    /// Checks `variant` against the scenario's variant names (with a did-you-mean).
    pub fn check_variant(&self, names: &[&str]) -> Result<(), LoadError> {
        let Some(v) = &self.variant else {
            return Ok(());
        };
        if names.contains(&v.as_str()) {
            return Ok(());
        }
        let hint = closest(v, names)
            .map(|b| format!("did you mean `{b}`? "))
            .unwrap_or_default();
        Err(located(
            &self.source,
            None,
            Some("variant".into()),
            format!(
                "no variant {v:?} in the model; {hint}variants: {}",
                names.join(", ")
            ),
        ))
    }

    /// Whether it holds for one summary (for users' own tests; `over` is ignored).
    pub fn holds(&self, s: &Summary) -> Result<bool, MetricError> {
        metric(s, &self.metric).map(|x| self.op.test(x, self.value))
    }

    /// Whether it applies to a variant.
    pub fn applies_to(&self, variant: &str) -> bool {
        self.variant.as_deref().is_none_or(|v| v == variant)
    }

    /// Evaluates it on one variant's replications `(seed, summary)`.
    pub fn evaluate(&self, variant: &str, runs: &[(u64, &Summary)]) -> Outcome {
        let mut values = Vec::with_capacity(runs.len());
        let mut failing = Vec::new();
        let mut absent = Vec::new();
        for (seed, s) in runs {
            match metric(s, &self.metric) {
                Ok(x) => {
                    values.push((*seed, x));
                    if !self.op.test(x, self.value) {
                        failing.push((*seed, x));
                    }
                }
                Err(e) => absent.push((*seed, e.to_string())),
            }
        }
        let xs: Vec<f64> = values.iter().map(|(_, x)| *x).collect();
        let estimate = Estimate::of(&xs);
        let passed = absent.is_empty()
            && !values.is_empty()
            && match self.over {
                Over::All => failing.is_empty(),
                Over::Mean | Over::Share => self.op.test(estimate.mean, self.value),
            };
        // The seed to reproduce: the first failing (or missing) one; for a mean, the seed whose
        // value is furthest on the wrong side.
        let seed = if let Some((s, _)) = absent.first() {
            Some(*s)
        } else if passed {
            None
        } else {
            match self.over {
                Over::All => failing.first().map(|(s, _)| *s),
                Over::Mean => worst(&values, self.op),
                // The first seed on the side that makes the share too high or too low.
                Over::Share => {
                    let too_high = matches!(self.op, Op::Lt | Op::Le)
                        || (self.op == Op::Eq && estimate.mean > self.value);
                    let want = if too_high { 1.0 } else { 0.0 };
                    values.iter().find(|(_, x)| *x == want).map(|(s, _)| *s)
                }
            }
        };
        Outcome {
            variant: variant.to_string(),
            passed,
            values,
            estimate,
            failing,
            absent,
            seed,
        }
    }
}

fn worst(values: &[(u64, f64)], op: Op) -> Option<u64> {
    let cmp = |a: &&(u64, f64), b: &&(u64, f64)| a.1.total_cmp(&b.1);
    match op {
        Op::Lt | Op::Le => values.iter().max_by(cmp),
        Op::Gt | Op::Ge => values.iter().min_by(cmp),
        Op::Eq => values.first(),
    }
    .map(|(s, _)| *s)
}

fn parse_over(s: &str) -> Result<Over, String> {
    match s {
        "all" => Ok(Over::All),
        "mean" => Ok(Over::Mean),
        "share" => Ok(Over::Share),
        _ => Err(format!(
            "`over` must be \"all\" (every seed), \"mean\" or \"share\" (of seeds, for `recovered`), got {s:?}"
        )),
    }
}

/// The result of one expectation on one variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub variant: String,
    pub passed: bool,
    /// `(seed, value)` per replication where the metric was present.
    pub values: Vec<(u64, f64)>,
    /// Mean and 95% CI of `values`.
    pub estimate: Estimate,
    /// `(seed, value)` of replications that broke it (meaningful for `over = all`).
    pub failing: Vec<(u64, f64)>,
    /// `(seed, why)` of replications whose summary lacked the metric.
    pub absent: Vec<(u64, String)>,
    /// The seed to reproduce a failure with.
    pub seed: Option<u64>,
}

impl Outcome {
    /// What was seen, in one line: `1000 (seed 42)`, `157 .. 214 over 5 seeds`,
    /// `mean 171.2 ± 12.3 (95% CI, 5 seeds)`.
    pub fn seen(&self, over: Over) -> String {
        if let Some((seed, why)) = self.absent.first() {
            return format!("{why} (seed {seed})");
        }
        let n = self.values.len();
        match (over, n) {
            (_, 0) => "no value".to_string(),
            (_, 1) => format!("{} (seed {})", num(self.values[0].1), self.values[0].0),
            (Over::All, _) => {
                let lo = self
                    .values
                    .iter()
                    .map(|v| v.1)
                    .fold(f64::INFINITY, f64::min);
                let hi = self
                    .values
                    .iter()
                    .map(|v| v.1)
                    .fold(f64::NEG_INFINITY, f64::max);
                let mut s = if lo == hi {
                    format!("{} on all {n} seeds", num(lo))
                } else {
                    format!("{} .. {} over {n} seeds", num(lo), num(hi))
                };
                if let Some((seed, x)) = self.failing.first() {
                    s.push_str(&format!(
                        "; {} failing, first seed {seed} with {}",
                        self.failing.len(),
                        num(*x)
                    ));
                }
                s
            }
            (Over::Mean, _) => format!(
                "mean {} ± {} (95% CI, {n} seeds)",
                num(self.estimate.mean),
                num(self.estimate.half_width)
            ),
            (Over::Share, _) => {
                let yes = self.values.iter().filter(|(_, x)| *x >= 0.5).count() as u32;
                let s = crate::stats::Share::of(yes, n as u32);
                format!(
                    "{yes} of {n} seeds, share {} (95% Wilson CI {} .. {})",
                    num(s.share),
                    num(s.low),
                    num(s.high)
                )
            }
        }
    }
}

/// A number without noise: integers as integers, others with 1 to 4 decimals by magnitude.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let s = if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_form() {
        let e = Expectation::parse("peak_retries<200").unwrap();
        assert_eq!(
            (e.metric.as_str(), e.op, e.value),
            ("peak_retries", Op::Lt, 200.0)
        );
        let e = Expectation::parse("completion_ms.p99 <= 2s, over=mean, variant=full").unwrap();
        assert_eq!((e.op, e.value, e.over), (Op::Le, 2000.0, Over::Mean));
        assert_eq!(e.variant.as_deref(), Some("full"));
        let e = Expectation::parse("peak_retrie < 3").unwrap_err();
        assert!(e.to_string().contains("did you mean `peak_retries`"), "{e}");
        assert!(Expectation::parse("duplicated < 3ms").is_err());
        assert!(Expectation::parse("duplicated ~ 3").is_err());
        assert!(Expectation::parse("duplicated == 0, over=most").is_err());
    }

    #[test]
    fn table_form_points_at_the_line() {
        let t: Table = "metric = \"duplicatd\"\nop = \"==\"\nvalue = 0\n"
            .parse()
            .unwrap();
        let e = Expectation::from_table("m.toml", 12, &t).unwrap_err();
        assert!(e.to_string().starts_with("m.toml:12: expect.metric"), "{e}");
        assert!(e.to_string().contains("did you mean `duplicated`"), "{e}");
        let t: Table =
            "metric = \"completion_ms.p99\"\nop = \"<\"\nvalue = \"1.5s\"\nover = \"mean\"\n"
                .parse()
                .unwrap();
        let e = Expectation::from_table("m.toml", 3, &t).unwrap();
        assert_eq!((e.value, e.over), (1500.0, Over::Mean));
        assert_eq!(e.source, "m.toml:3");
        let t: Table = "assert = \"phantom == 0\"\nvariant = \"x\"\n"
            .parse()
            .unwrap();
        let e = Expectation::from_table("m.toml", 3, &t).unwrap();
        assert_eq!(e.variant.as_deref(), Some("x"));
        assert!(e.check_variant(&["y", "x"]).is_ok());
        assert!(
            e.check_variant(&["xx"])
                .unwrap_err()
                .to_string()
                .contains("did you mean `xx`")
        );
    }

    #[test]
    fn absent_optional_metrics_are_reported_as_absent() {
        let s = crate::load::load("m.toml", "[workload]\nclients = 3\n", &[]).unwrap();
        let r = crate::run_model(&s.base, 1, &mut |_| {});
        assert_eq!(metric(&r.summary, "intents"), Ok(3.0));
        assert!(matches!(
            metric(&r.summary, "layered.orphaned"),
            Err(MetricError::Absent(_))
        ));
        assert!(matches!(
            metric(&r.summary, "ended"),
            Err(MetricError::NotANumber(_))
        ));
        assert!(matches!(
            metric(&r.summary, "completion_ms.p98"),
            Err(MetricError::Unknown(_))
        ));
        let e = Expectation::parse("layered.orphaned == 0").unwrap();
        let o = e.evaluate("v", &[(1, &r.summary)]);
        assert!(!o.passed);
        assert!(
            o.seen(Over::All).contains("absent"),
            "{}",
            o.seen(Over::All)
        );
    }

    #[test]
    fn names_include_nested_and_plain() {
        let n = metric_names();
        for want in [
            "completion_ms.p99",
            "peak_retries",
            "recovery_ms",
            "layered.orphaned",
            "layered.expected_amplification",
            "layered.layers.N.sent",
            "tiers.N.served",
            "recovered",
        ] {
            assert!(n.contains(&want.to_string()), "{want} in {n:?}");
        }
        for not in ["completion_ms", "layered", "ended", "truncated"] {
            assert!(!n.contains(&not.to_string()), "{not} in {n:?}");
        }
    }

    #[test]
    fn a_share_of_seeds_with_its_wilson_interval() {
        let e = Expectation::parse("recovered >= 0.6, over=share").unwrap();
        assert_eq!(e.over, Over::Share);
        let yes = Summary {
            recovered: Some(true),
            ..Summary::default()
        };
        let no = Summary {
            recovered: Some(false),
            ..Summary::default()
        };
        assert_eq!(metric(&yes, "recovered"), Ok(1.0));
        // 7 of 10 recovered: 0.7 >= 0.6 holds, shown with Wilson's 0.40 .. 0.89.
        let runs: Vec<(u64, &Summary)> = (0..10)
            .map(|i| (i, if i < 7 { &yes } else { &no }))
            .collect();
        let o = e.evaluate("v", &runs);
        assert!(o.passed);
        assert_eq!(
            o.seen(Over::Share),
            "7 of 10 seeds, share 0.7 (95% Wilson CI 0.3968 .. 0.8922)"
        );
        // 0.8 fails, and the seed to look at is one that did not recover.
        let e = Expectation::parse("recovered >= 0.8, over=share").unwrap();
        let o = e.evaluate("v", &runs);
        assert!(!o.passed);
        assert_eq!(o.seed, Some(7));
        // A run without a trigger has no `recovered`: absent, not a silent 0.
        let none = Summary::default();
        assert!(!e.evaluate("v", &[(1, &none)]).passed);
        // Shares are for yes/no metrics, between 0 and 1; a yes/no metric is not averaged.
        let bad = |t: &str| Expectation::parse(t).unwrap_err().message;
        assert!(bad("peak_retries < 0.5, over=share").contains("yes/no metric"));
        assert!(bad("recovered >= 80, over=share").contains("[0, 1]"));
        assert!(bad("recovered >= 0.8, over=mean").contains("over = \"share\""));
    }

    #[test]
    fn unknown_metrics_get_the_closest_real_one() {
        let e = check_metric("p99").unwrap_err();
        assert!(e.contains("did you mean `completion_ms.p99`"), "{e}");
        let e = check_metric("peak_retry").unwrap_err();
        assert!(e.contains("did you mean `peak_retries`"), "{e}");
        let e = check_metric("completion_ms.p98").unwrap_err();
        assert!(e.contains("did you mean `completion_ms.p9"), "{e}");
        let e = check_metric("orphaned").unwrap_err();
        assert!(e.contains("did you mean `layered.orphaned`"), "{e}");
        let e = check_metric("ended").unwrap_err();
        assert!(e.contains("not a number"), "{e}");
        let e = check_metric("zzzzzzzzzzzzzzzz").unwrap_err();
        assert!(e.contains("metrics: intents, attempts"), "{e}");
        assert!(
            !e.contains("layered,") && !e.contains("ended") && !e.contains("truncated"),
            "{e}"
        );
        assert!(check_metric("layered.layers.3.sent").is_ok());
        assert!(check_metric("tiers.0.peak_arrivals").is_ok());
        assert!(check_metric("layered.nope").is_err());
        assert!(check_metric("layered").is_err());
        assert!(Expectation::parse("p99 < 2s").is_err());
    }

    fn with_attempts(rows: &[(u64, u64, u64)]) -> Summary {
        Summary {
            attempt_peaks: rows
                .iter()
                .enumerate()
                .map(
                    |(i, &(arrivals, peak, peak_window))| crate::summary::AttemptPeak {
                        attempt: i as u64 + 1,
                        arrivals,
                        peak,
                        peak_window,
                    },
                )
                .collect(),
            ..Summary::default()
        }
    }

    /// Per-attempt metrics are named by attempt number (from 1); one past the last reads 0.
    #[test]
    fn attempt_metrics_by_number_and_zero_past_the_last() {
        let s = with_attempts(&[(500, 500, 500), (500, 112, 119)]);
        assert_eq!(metric(&s, "attempt_peaks.1.arrivals"), Ok(500.0));
        assert_eq!(metric(&s, "attempt_peaks.2.peak"), Ok(112.0));
        assert_eq!(metric(&s, "attempt_peaks.2.peak_window"), Ok(119.0));
        assert_eq!(metric(&s, "attempt_peaks.3.peak_window"), Ok(0.0));
        assert_eq!(metric(&s, "attempt_peaks.70000.arrivals"), Ok(0.0));
        let m = metrics(&s);
        assert_eq!(m.get("attempt_peaks.2.peak_window"), Some(&119.0));
        assert!(!m.contains_key("attempt_peaks.0.peak_window"));
        for ok in [
            "attempt_peaks.2.peak_window",
            "attempt_peaks.9.peak",
            "attempt_peaks.1.arrivals",
            "peak_arrivals_window",
            "peak_retries_window",
        ] {
            assert!(check_metric(ok).is_ok(), "{ok}");
        }
        let e = check_metric("attempt_peaks.0.peak").unwrap_err();
        assert!(e.contains("numbered from 1"), "{e}");
        assert!(e.contains("`attempt_peaks.1.peak`"), "{e}");
        assert!(check_metric("attempt_peaks.2.peek").is_err());
        assert!(check_metric("attempt_peaks.2").is_err());
        assert!(metric(&s, "attempt_peaks.2.peek").is_err());
        let e = Expectation::parse("attempt_peaks.2.peak_window <= 120").unwrap();
        assert_eq!(e.holds(&s), Ok(true));
        let e = Expectation::parse("attempt_peaks.4.peak_window == 0").unwrap();
        assert_eq!(e.holds(&s), Ok(true));
    }
}
