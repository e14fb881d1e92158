//! Parameter sweeps, as pure logic: `--vary KEY=RANGE_OR_LIST` parsing, the grid of runs, its
//! deterministic order and sharding. The sweep file (its header, lines and merge) is the report
//! crate's `sweep`; running is the command line's job.
//!
//! The grid is the cartesian product of the axes (the first `--vary` outermost) × the model's
//! variants × the replication seeds. Run `j` of the grid is
//! `j = ((point * variants) + variant) * seeds + replication`, and results are always written in
//! increasing `j`. Shard `I/N` (1-based) holds the runs with `j % N == I - 1`: round-robin, so
//! expensive corners of the grid spread over every shard.

use crate::base::time::Duration;
use serde::{Deserialize, Serialize};

/// One varied field and its values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// Dotted model key, e.g. `retry.base`.
    pub key: String,
    /// The values as `--set` would take them (`5ms`, `100`, `full`).
    pub values: Vec<String>,
}

impl Axis {
    /// The value's position on a numeric x axis: a number, or a duration in milliseconds.
    pub fn x(value: &str) -> Option<f64> {
        if let Ok(f) = value.trim().parse::<f64>() {
            return f.is_finite().then_some(f);
        }
        Duration::parse(value).ok().map(Duration::as_millis_f64)
    }

    /// Whether every value has a numeric position.
    pub fn numeric(&self) -> bool {
        self.values.iter().all(|v| Axis::x(v).is_some())
    }
}

/// Splits `V1,V2,...` at commas outside parentheses and brackets (`uniform(0ms, 60ms)` stays
/// whole).
pub fn split_values(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_string());
    out
}

/// The most values one `--vary` axis may have.
pub const MAX_RANGE: usize = 1_000_000;

/// The most runs one grid may have (points × variants × seeds).
pub const MAX_RUNS: u64 = 10_000_000;

/// Parses `KEY=FROM..TO:STEP` (inclusive of `TO` when the steps land on it; numbers or
/// durations) or `KEY=V1,V2,...`. A range is counted before it is expanded: non-finite bounds,
/// steps that are not positive, and ranges of more than [`MAX_RANGE`] values are refused, as is a
/// value listed twice.
pub fn parse_vary(spec: &str) -> Result<Axis, String> {
    let (key, rhs) = spec.split_once('=').ok_or_else(|| {
        "expected KEY=RANGE_OR_LIST, e.g. retry.base=5ms..50ms:5ms or retry.jitter=none,full"
            .to_string()
    })?;
    let key = key.trim();
    if key.is_empty()
        || !key
            .split('+')
            .all(|k| !k.is_empty() && k.split('.').all(crate::model::load::key_segment))
    {
        return Err(format!(
            "{key:?} is not a dotted key like retry.base (server.outages[0].to for an array's entry; KEY1+KEY2 sets both to each value)"
        ));
    }
    let rhs = rhs.trim();
    if rhs.chars().any(char::is_control) {
        return Err("a value is one line of text; give one --vary per field".to_string());
    }
    let values = match rhs.split_once("..") {
        Some((from, rest)) if !rhs.contains(',') => {
            let (to, step) = rest.split_once(':').ok_or_else(|| {
                format!("range {rhs:?} needs a step: FROM..TO:STEP, e.g. 10..200:10")
            })?;
            range(from.trim(), to.trim(), step.trim())?
        }
        _ => split_values(rhs),
    };
    if values.iter().any(String::is_empty) {
        return Err(format!("empty value in {rhs:?}"));
    }
    if values.len() > MAX_RANGE {
        return Err(format!(
            "{} values; an axis may have at most {MAX_RANGE}",
            values.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for v in &values {
        if !seen.insert(v.as_str()) {
            return Err(format!(
                "{v:?} is listed twice (each value makes one variant, named by its value)"
            ));
        }
    }
    Ok(Axis {
        key: key.to_string(),
        values,
    })
}

/// How many values `from..to:step` has, refused when that is not a count up to [`MAX_RANGE`].
fn count(span: f64, step: f64) -> Result<usize, String> {
    if !step.is_finite() || step <= 0.0 {
        return Err(format!("the step must be a positive number, got {step}"));
    }
    if !span.is_finite() {
        return Err("the bounds must be finite numbers".to_string());
    }
    if span < 0.0 {
        return Err("a range must go up: FROM <= TO".to_string());
    }
    // Counted in floating point, so that no step or span can overflow an integer.
    let n = (span / step + 1e-9).floor() + 1.0;
    if n.is_nan() || n > MAX_RANGE as f64 {
        return Err(format!(
            "the range has {} values; an axis may have at most {MAX_RANGE} (use a larger step)",
            if n.is_finite() && n < 1e18 {
                format!("{n:.0}")
            } else {
                format!("{n:.3e}")
            }
        ));
    }
    Ok(n as usize)
}

fn range(from: &str, to: &str, step: &str) -> Result<Vec<String>, String> {
    if let (Ok(a), Ok(b), Ok(s)) = (
        from.parse::<i128>(),
        to.parse::<i128>(),
        step.parse::<i128>(),
    ) {
        if s <= 0 {
            return Err(format!("the step must be positive, got {s}"));
        }
        if b < a {
            return Err("a range must go up: FROM <= TO".to_string());
        }
        let n = (b - a) / s + 1;
        if n > MAX_RANGE as i128 {
            return Err(format!(
                "the range has {n} values; an axis may have at most {MAX_RANGE} (use a larger step)"
            ));
        }
        return Ok((0..n).map(|i| (a + i * s).to_string()).collect());
    }
    let finite = |x: &str, what: &str| -> Result<Option<f64>, String> {
        match x.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Some(f)),
            Ok(_) => Err(format!("the {what} {x:?} is not a finite number")),
            Err(_) => Ok(None),
        }
    };
    if let (Some(a), Some(b), Some(s)) = (
        finite(from, "range bound")?,
        finite(to, "range bound")?,
        finite(step, "step")?,
    ) {
        let n = count(b - a, s)?;
        return Ok((0..n)
            .map(|i| {
                let x = a + i as f64 * s;
                // Round away binary noise (0.1 * 3 = 0.30000000000000004).
                let r = (x * 1e9).round() / 1e9;
                let t = format!("{r}");
                if t.contains('.') || t.contains('e') {
                    t
                } else {
                    format!("{t}.0")
                }
            })
            .collect());
    }
    let d = |s: &str| Duration::parse(s).map_err(|e| format!("range bound {s:?}: {e}"));
    let (a, b, s) = (d(from)?, d(to)?, d(step)?);
    if s.0 == 0 {
        return Err(format!("the step must be positive, got {step:?}"));
    }
    if b.0 < a.0 {
        return Err("a range must go up: FROM <= TO".to_string());
    }
    let n = (b.0 - a.0) / s.0 + 1;
    if n > MAX_RANGE as u64 {
        return Err(format!(
            "the range has {n} values; an axis may have at most {MAX_RANGE} (use a larger step)"
        ));
    }
    Ok((0..n)
        .map(|i| Duration(a.0 + i * s.0).to_string())
        .collect())
}

/// Parses `--shard I/N` (1 <= I <= N).
pub fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("expected I/N, e.g. 2/8, got {s:?}"))?;
    let (i, n): (u64, u64) = match (i.trim().parse(), n.trim().parse()) {
        (Ok(i), Ok(n)) => (i, n),
        _ => {
            return Err(format!(
                "expected I/N with whole numbers, e.g. 2/8, got {s:?}"
            ));
        }
    };
    if n == 0 || i == 0 || i > n {
        return Err(format!("I must be between 1 and N, got {s:?}"));
    }
    Ok((i, n))
}

/// The items of shard `i` of `n` (1-based) of a list of runs, in order: those at positions `j`
/// with `j % n == i - 1`, as [`Grid::shard`] takes a grid's.
pub fn shard_slice<T: Clone>(items: &[T], i: u64, n: u64) -> Vec<T> {
    items
        .iter()
        .enumerate()
        .filter(|(j, _)| *j as u64 % n == i.wrapping_sub(1))
        .map(|(_, x)| x.clone())
        .collect()
}

/// The sweep's runs: axes × variants × seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    pub axes: Vec<Axis>,
    pub variants: Vec<String>,
    pub seeds: Vec<u64>,
}

/// One run of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    pub index: u64,
    pub point: u64,
    pub variant: usize,
    pub replication: usize,
}

impl Grid {
    /// Number of parameter points (1 with no axes).
    pub fn points(&self) -> u64 {
        self.axes.iter().map(|a| a.values.len() as u64).product()
    }

    pub fn jobs(&self) -> u64 {
        self.points() * self.variants.len() as u64 * self.seeds.len() as u64
    }

    /// [`Grid::points`], or `None` when it does not fit in a `u64`.
    pub fn checked_points(&self) -> Option<u64> {
        self.axes
            .iter()
            .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64))
    }

    /// [`Grid::jobs`], or `None` when it does not fit in a `u64`.
    pub fn checked_jobs(&self) -> Option<u64> {
        self.checked_points()?
            .checked_mul(self.variants.len() as u64)?
            .checked_mul(self.seeds.len() as u64)
    }

    /// Why a grid read from a file cannot be a sweep's (an empty axis, no variants or seeds,
    /// more runs than a `u64` holds), if it cannot.
    pub fn invalid(&self) -> Option<String> {
        if let Some(a) = self.axes.iter().find(|a| a.values.is_empty()) {
            return Some(format!("the axis {} has no values", a.key));
        }
        if self.variants.is_empty() || self.seeds.is_empty() {
            return Some("the grid has no variants or no seeds".into());
        }
        self.checked_jobs()
            .is_none()
            .then(|| "the grid has more runs than can be counted".into())
    }

    pub fn job(&self, index: u64) -> Job {
        let s = self.seeds.len() as u64;
        let v = self.variants.len() as u64;
        Job {
            index,
            point: index / (s * v),
            variant: (index / s % v) as usize,
            replication: (index % s) as usize,
        }
    }

    /// The value index on each axis of `point` (first axis outermost).
    pub fn coords(&self, point: u64) -> Vec<usize> {
        let mut rest = point;
        let mut out = vec![0; self.axes.len()];
        for (i, a) in self.axes.iter().enumerate().rev() {
            let n = a.values.len() as u64;
            out[i] = (rest % n) as usize;
            rest /= n;
        }
        out
    }

    /// `(key, value)` of each axis at `point`.
    pub fn params(&self, point: u64) -> Vec<(String, String)> {
        self.coords(point)
            .into_iter()
            .zip(&self.axes)
            .map(|(i, a)| (a.key.clone(), a.values[i].clone()))
            .collect()
    }

    /// The `KEY=VALUE` overrides of `point`: one per key of each axis (an axis `a+b` sets both).
    pub fn sets(&self, point: u64) -> Vec<String> {
        self.params(point)
            .iter()
            .flat_map(|(k, v)| k.split('+').map(move |k| format!("{k}={v}")))
            .collect()
    }

    /// The runs of shard `i` of `n` (1-based), in order.
    pub fn shard(&self, i: u64, n: u64) -> impl Iterator<Item = u64> + '_ {
        (0..self.jobs()).filter(move |j| j % n == i - 1)
    }
}

#[cfg(test)]
mod tests;
