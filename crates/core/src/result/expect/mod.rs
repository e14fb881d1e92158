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
pub use crate::result::catalogue::{
    MetricError, check_metric, metric, metric_names, metrics, suggest,
};
use crate::result::stats::Estimate;
use crate::result::summary::Summary;
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
    crate::base::time::Duration::parse(s)
        .map(|d| (d.as_millis_f64(), s.to_string()))
        .map_err(|e| e.to_string())
}

impl Expectation {
    /// `metric op value` on every variant, over every seed, until its options narrow it.
    fn on_all(metric: String, op: Op, (value, value_text): (f64, String), source: String) -> Self {
        Expectation {
            metric,
            op,
            value,
            value_text,
            variant: None,
            over: Over::All,
            source,
        }
    }

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
        let mut e = Expectation::on_all(metric, op, (value, value_text), source.to_string());
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
        let yes_no = crate::result::catalogue::SHARE_METRICS.contains(&self.metric.as_str());
        match self.over {
            Over::Share if !yes_no => Err(format!(
                "`over = \"share\"` is for a yes/no metric ({}), not `{}`; use \"mean\"",
                crate::result::catalogue::SHARE_METRICS.join(", "),
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
            Expectation::on_all(metric, op, (value, value_text), source)
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
                let s = crate::result::stats::Share::of(yes, n as u32);
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
mod tests;
