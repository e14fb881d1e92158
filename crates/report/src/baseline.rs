//! `check --baseline old.json`: compare a run with a saved JSON report, metric by metric, and say
//! which got worse by more than a tolerance.
//!
//! Both sides are read from the JSON contract (`docs/output.md`): a plain report gives one value
//! per metric, a replicated one (`--seeds N`) a mean with its 95% confidence half-width. When both
//! sides have intervals, the difference gets its own 95% interval (Welch: each side's standard
//! error recovered from its half-width, Student t quantiles at any, also fractional, degrees of
//! freedom from `statrs`), and a worsening counts as a regression only when that interval excludes
//! zero, so that seed noise does not fail a build.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::fmt;

/// One metric of one variant: the value (a mean over `n` seeds) and its 95% half-width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Value {
    pub mean: f64,
    pub half_width: Option<f64>,
    pub n: u32,
}

/// A report reduced to what a comparison needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Side {
    pub model: String,
    pub seed: u64,
    /// The number of seeds (1 for a plain report).
    pub seeds: u32,
    /// Variants in report order, each with its metrics by dotted name.
    pub variants: Vec<(String, BTreeMap<String, Value>)>,
    /// The summary's leaves that hold a string where a number may belong, as (variant, dotted
    /// name, the string): a metric among them cannot be compared, and [`not_numbers`] says so.
    pub strings: Vec<(String, String, String)>,
}

/// Reads a `run`/`compare` JSON report, plain or replicated.
pub fn read(text: &str) -> Result<Side, String> {
    use serde_json::Value as J;
    let v: J = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    match v.get("schema_version").and_then(J::as_u64) {
        Some(n) if n == u64::from(retrystorm_core::summary::SCHEMA_VERSION) => {}
        Some(n) => {
            return Err(format!(
                "written by schema version {n}; this retrystorm reads version {}",
                retrystorm_core::summary::SCHEMA_VERSION
            ));
        }
        None => return Err("not a retrystorm JSON report (no `schema_version`)".into()),
    }
    let seeds = v
        .get("seeds")
        .and_then(J::as_array)
        .map_or(1, |s| s.len().max(1) as u32);
    let mut side = Side {
        model: v.get("model").and_then(J::as_str).unwrap_or("").to_string(),
        seed: v.get("seed").and_then(J::as_u64).unwrap_or(0),
        seeds,
        variants: Vec::new(),
        strings: Vec::new(),
    };
    let variants = v
        .get("variants")
        .and_then(J::as_array)
        .ok_or("no `variants` array")?;
    for (i, var) in variants.iter().enumerate() {
        // A corrupt entry is refused, not skipped: skipped, it would compare nothing and pass.
        let name = var
            .get("name")
            .and_then(J::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("variants[{i}]: no `name`; not a report retrystorm wrote"))?
            .to_string();
        let mut metrics = BTreeMap::new();
        if let Some(r) = var.get("replications") {
            let n = r.get("n").and_then(J::as_u64).unwrap_or(1) as u32;
            let ci = r.get("ci95").and_then(J::as_object);
            let means = r.get("mean").and_then(J::as_object).ok_or_else(|| {
                format!("variants[{i}] ({name}): `replications` without a `mean` object")
            })?;
            for (k, m) in means {
                let mean = m.as_f64().ok_or_else(|| {
                    format!("variants[{i}] ({name}): replications.mean.{k} is not a number")
                })?;
                let half_width = ci.and_then(|c| c.get(k)).and_then(J::as_f64);
                metrics.insert(
                    k.clone(),
                    Value {
                        mean,
                        half_width,
                        n,
                    },
                );
            }
        } else if let Some(s) = var.get("summary").filter(|s| s.is_object()) {
            let mut strings = Vec::new();
            flatten("", s, &mut metrics, &mut strings);
            side.strings
                .extend(strings.into_iter().map(|(k, v)| (name.clone(), k, v)));
        } else {
            return Err(format!(
                "variants[{i}] ({name}): neither a `summary` object nor `replications`"
            ));
        }
        side.variants.push((name, metrics));
    }
    Ok(side)
}

/// The summary's numbers by dotted name into `out`, its strings into `strings`.
fn flatten(
    prefix: &str,
    v: &serde_json::Value,
    out: &mut BTreeMap<String, Value>,
    strings: &mut Vec<(String, String)>,
) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out, strings);
            }
        }
        serde_json::Value::Number(n) => {
            if let Some(mean) = n.as_f64() {
                out.insert(
                    prefix.to_string(),
                    Value {
                        mean,
                        half_width: None,
                        n: 1,
                    },
                );
            }
        }
        serde_json::Value::String(t) => strings.push((prefix.to_string(), t.clone())),
        _ => {}
    }
}

/// The metrics compared when none are named: the ones a retry policy is judged by.
pub const DEFAULT_METRICS: &[&str] = &[
    "amplification",
    "peak_arrivals",
    "peak_retries",
    "completion_ms.p50",
    "completion_ms.p99",
    "succeeded",
    "failed",
    "lost",
    "duplicated",
    "phantom",
    "recovery_ms",
];

/// Metrics where more is better; for every other metric more is worse.
const HIGHER_IS_BETTER: &[&str] = &["succeeded", "applied_once", "goodput_per_s", "replayed"];

/// How much worse a metric may get: a share of the baseline (`5%`) or an amount (`3`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    Relative(f64),
    Absolute(f64),
}

impl Tolerance {
    /// `5%`, `0.5%`, `3`, `0`.
    pub fn parse(s: &str) -> Result<Tolerance, String> {
        let t = s.trim();
        let (num, rel) = match t.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (t, false),
        };
        let x: f64 = num
            .parse()
            .map_err(|_| format!("expected a percentage like 5% or an amount like 3, got {s:?}"))?;
        if !x.is_finite() || x < 0.0 {
            return Err(format!("must be finite and >= 0, got {s:?}"));
        }
        Ok(if rel {
            Tolerance::Relative(x / 100.0)
        } else {
            Tolerance::Absolute(x)
        })
    }

    fn margin(&self, old: f64) -> f64 {
        match *self {
            Tolerance::Relative(r) => r * old.abs(),
            Tolerance::Absolute(a) => a,
        }
    }

    fn text(&self) -> String {
        match *self {
            Tolerance::Relative(r) => format!("{}%", fmt::trim(r * 100.0)),
            Tolerance::Absolute(a) => fmt::num(a),
        }
    }
}

/// One metric of one variant, compared.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    pub variant: String,
    pub metric: String,
    pub old: Value,
    pub new: Value,
    /// How much worse the new value is (negative: better).
    pub worse_by: f64,
    /// The allowed worsening.
    pub margin: f64,
    /// The 95% half-width of the difference, when both sides have intervals.
    pub half_width: Option<f64>,
    pub regressed: bool,
}

/// Student t 0.975 quantile with `df` degrees of freedom (any positive, also fractional).
fn t975(df: f64) -> Option<f64> {
    StudentsT::new(0.0, 1.0, df)
        .ok()
        .map(|t| t.inverse_cdf(0.975))
}

/// The 95% half-width of `new - old` (Welch), when both have intervals over several seeds.
fn diff_half_width(old: &Value, new: &Value) -> Option<f64> {
    let se = |v: &Value| -> Option<(f64, f64)> {
        let hw = v.half_width?;
        if v.n < 2 {
            return None;
        }
        let df = f64::from(v.n - 1);
        Some((hw / t975(df)?, df))
    };
    let ((s1, d1), (s2, d2)) = (se(old)?, se(new)?);
    let var = s1 * s1 + s2 * s2;
    if var == 0.0 {
        return Some(0.0);
    }
    let df = var * var / (s1.powi(4) / d1 + s2.powi(4) / d2);
    Some(t975(df)? * var.sqrt())
}

/// Compares every variant present on both sides on `metrics`; metrics missing on either side
/// are left out (see [`missing`]).
pub fn compare(old: &Side, new: &Side, metrics: &[String], tol: Tolerance) -> Vec<Compared> {
    let mut out = Vec::new();
    for (name, now) in &new.variants {
        let Some((_, then)) = old.variants.iter().find(|(n, _)| n == name) else {
            continue;
        };
        for m in metrics {
            let (Some(o), Some(n)) = (then.get(m), now.get(m)) else {
                continue;
            };
            let sign = if HIGHER_IS_BETTER.contains(&m.as_str()) {
                -1.0
            } else {
                1.0
            };
            let worse_by = sign * (n.mean - o.mean);
            let margin = tol.margin(o.mean);
            let half_width = diff_half_width(o, n);
            let regressed = worse_by > margin + 1e-12 * o.mean.abs().max(1.0)
                && half_width.is_none_or(|h| worse_by > h);
            out.push(Compared {
                variant: name.clone(),
                metric: m.clone(),
                old: *o,
                new: *n,
                worse_by,
                margin,
                half_width,
                regressed,
            });
        }
    }
    out
}

/// How many values of `metrics` the baseline holds (over its variants): a comparison that
/// compares fewer proves less than the baseline could.
pub fn held(old: &Side, metrics: &[String]) -> usize {
    let numbers: usize = old
        .variants
        .iter()
        .map(|(_, ms)| metrics.iter().filter(|m| ms.contains_key(*m)).count())
        .sum();
    numbers + not_numbers(old, metrics).len()
}

/// The metrics of `metrics` the baseline holds as strings, not numbers (a report edited by
/// hand, or by another tool): each is held but cannot be compared, so it is named.
pub fn not_numbers(old: &Side, metrics: &[String]) -> Vec<String> {
    old.strings
        .iter()
        .filter(|(_, k, _)| metrics.contains(k))
        .map(|(v, k, t)| {
            format!("variant {v}: {k} is the string {t:?} in the baseline, not a number")
        })
        .collect()
}

/// What could not be compared: variants on one side only.
pub fn missing(old: &Side, new: &Side) -> Vec<String> {
    let mut out = Vec::new();
    for (n, _) in &old.variants {
        if !new.variants.iter().any(|(m, _)| m == n) {
            out.push(format!(
                "variant {n} is in the baseline but not in this run"
            ));
        }
    }
    for (n, _) in &new.variants {
        if !old.variants.iter().any(|(m, _)| m == n) {
            out.push(format!("variant {n} is not in the baseline"));
        }
    }
    out
}

fn value(v: &Value) -> String {
    fmt::pm(v.mean, v.half_width)
}

/// One line per comparison: `PASS`/`FAIL`, both values with their intervals, the change and the
/// tolerance.
pub fn render(results: &[Compared], tol: Tolerance) -> String {
    let w = results
        .iter()
        .map(|c| c.variant.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for c in results {
        let tag = if c.regressed { "FAIL" } else { "PASS" };
        let change = if c.worse_by == 0.0 {
            "no change".to_string()
        } else {
            let pct = if c.old.mean != 0.0 {
                format!(
                    " ({:+.1}%)",
                    100.0 * (c.new.mean - c.old.mean) / c.old.mean.abs()
                )
            } else {
                String::new()
            };
            let ci = c
                .half_width
                .map_or(String::new(), |h| format!(" ± {} (95% CI)", fmt::num(h)));
            let word = if c.worse_by > 0.0 { "worse" } else { "better" };
            format!("{word} by {}{pct}{ci}", fmt::num(c.worse_by.abs()))
        };
        let _ = writeln!(
            out,
            "{tag}  {:<w$}  {}: {} (baseline {}), {change}; tolerance {}",
            c.variant,
            c.metric,
            value(&c.new),
            value(&c.old),
            tol.text()
        );
        if within_noise(c) {
            let _ = writeln!(
                out,
                "      within seed noise: the 95% interval of the change includes 0"
            );
        }
    }
    out
}

/// Whether a comparison got worse beyond the tolerance but passed only because the 95% interval
/// of the change includes 0: too few seeds to tell a change from noise.
pub fn within_noise(c: &Compared) -> bool {
    !c.regressed && c.worse_by > c.margin
}

/// The comparisons as a GitHub-flavoured markdown table (for `check --baseline --md`, e.g.
/// appended to `$GITHUB_STEP_SUMMARY`): variant, metric, baseline, this run, change, verdict.
pub fn markdown(results: &[Compared]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|c| {
            let change = if c.new.mean == c.old.mean {
                "no change".to_string()
            } else if c.old.mean != 0.0 {
                format!(
                    "{:+.1}%",
                    100.0 * (c.new.mean - c.old.mean) / c.old.mean.abs()
                )
            } else {
                let d = c.new.mean - c.old.mean;
                format!("{}{}", if d > 0.0 { "+" } else { "-" }, fmt::num(d.abs()))
            };
            let verdict = if c.regressed {
                "FAIL"
            } else if within_noise(c) {
                "pass (within seed noise)"
            } else {
                "pass"
            };
            vec![
                c.variant.clone(),
                c.metric.clone(),
                value(&c.old),
                value(&c.new),
                change,
                verdict.to_string(),
            ]
        })
        .collect();
    let headers = [
        "variant", "metric", "baseline", "this run", "change", "verdict",
    ];
    crate::gfm::table(&headers, &[false, false, true, true, true, false], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(peak: f64, hw: Option<f64>, n: u32) -> Side {
        let mut m = BTreeMap::new();
        m.insert(
            "peak_retries".to_string(),
            Value {
                mean: peak,
                half_width: hw,
                n,
            },
        );
        m.insert(
            "succeeded".to_string(),
            Value {
                mean: 100.0,
                half_width: hw.map(|_| 1.0),
                n,
            },
        );
        Side {
            model: "m".into(),
            seed: 1,
            seeds: n,
            variants: vec![("v".into(), m)],
            strings: Vec::new(),
        }
    }

    #[test]
    fn tolerance_parses() {
        assert_eq!(Tolerance::parse("5%"), Ok(Tolerance::Relative(0.05)));
        assert_eq!(Tolerance::parse("3"), Ok(Tolerance::Absolute(3.0)));
        assert!(Tolerance::parse("-1%").is_err());
        assert!(Tolerance::parse("five").is_err());
    }

    #[test]
    fn a_worsening_beyond_the_tolerance_fails() {
        let metrics: Vec<String> = vec!["peak_retries".into(), "succeeded".into()];
        let r = compare(
            &side(100.0, None, 1),
            &side(110.0, None, 1),
            &metrics,
            Tolerance::Relative(0.05),
        );
        assert!(r[0].regressed);
        assert!(!r[1].regressed, "unchanged");
        let r = compare(
            &side(100.0, None, 1),
            &side(104.0, None, 1),
            &metrics,
            Tolerance::Relative(0.05),
        );
        assert!(!r[0].regressed, "within 5%");
        let r = compare(
            &side(100.0, None, 1),
            &side(90.0, None, 1),
            &metrics,
            Tolerance::Absolute(0.0),
        );
        assert!(!r[0].regressed, "better");
        let text = render(&r, Tolerance::Absolute(0.0));
        assert!(
            text.contains("PASS  v  peak_retries: 90.0 (baseline 100), better by 10.0 (-10.0%)"),
            "{text}"
        );
    }

    #[test]
    fn noise_inside_the_interval_does_not_fail() {
        let metrics: Vec<String> = vec!["peak_retries".into()];
        // +10 with half-widths of 20 on 5 seeds: not significant.
        let r = compare(
            &side(100.0, Some(20.0), 5),
            &side(110.0, Some(20.0), 5),
            &metrics,
            Tolerance::Relative(0.0),
        );
        assert!(!r[0].regressed);
        let h = r[0].half_width.unwrap();
        // Equal variances and n: Welch df = 8, half-width = t(8) * sqrt(2) * 20 / t(4).
        let expect = t975(8.0).unwrap() * 2f64.sqrt() * 20.0 / t975(4.0).unwrap();
        assert!((h - expect).abs() < 1e-9, "{h} vs {expect}");
        assert!(render(&r, Tolerance::Relative(0.0)).contains("within seed noise"));
        // +50: significant.
        let r = compare(
            &side(100.0, Some(20.0), 5),
            &side(150.0, Some(20.0), 5),
            &metrics,
            Tolerance::Relative(0.0),
        );
        assert!(r[0].regressed);
    }

    #[test]
    fn reads_plain_and_replicated_reports() {
        let plain = r#"{"schema_version":1,"model":"m","seed":3,"variants":[{"name":"a","summary":{"peak_retries":7,"completion_ms":{"p99":12.5}}}]}"#;
        let s = read(plain).unwrap();
        assert_eq!(s.seeds, 1);
        assert_eq!(s.variants[0].1["completion_ms.p99"].mean, 12.5);
        let rep = r#"{"schema_version":1,"model":"m","seed":3,"seeds":[3,4],"variants":[{"name":"a","summary":{},"replications":{"n":2,"mean":{"peak_retries":7.5},"ci95":{"peak_retries":6.3}}}]}"#;
        let s = read(rep).unwrap();
        assert_eq!(s.seeds, 2);
        assert_eq!(s.variants[0].1["peak_retries"].half_width, Some(6.3));
        assert!(
            read(r#"{"schema_version":9}"#)
                .unwrap_err()
                .contains("version 9")
        );
    }

    #[test]
    fn a_metric_held_as_a_string_is_counted_and_named_not_skipped() {
        let text = r#"{"schema_version":1,"model":"m","seed":3,"variants":[{"name":"a","summary":{"peak_retries":7,"recovery_ms":"12"}}]}"#;
        let old = read(text).unwrap();
        let metrics = vec!["peak_retries".to_string(), "recovery_ms".to_string()];
        assert_eq!(held(&old, &metrics), 2);
        assert_eq!(
            not_numbers(&old, &metrics),
            ["variant a: recovery_ms is the string \"12\" in the baseline, not a number"]
        );
        assert!(not_numbers(&old, &metrics[..1]).is_empty());
    }
}
