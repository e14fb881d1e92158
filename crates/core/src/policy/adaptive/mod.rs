//! A duration learned from recent latencies: a per-attempt timeout (`retry.timeout`) or a hedging
//! delay (`hedge.delay`) written as `{ percentile = 99, window = "60s", factor = 2, min, max }`
//! instead of a fixed duration.
//!
//! The value is `clamp(factor x P x 2^(n-1), min, max)` for attempt `n` (the first is 1), where
//! `P` is the percentile of the latencies the caller saw over the last `window`; the doubling
//! with `attempt_doubling = true` only. This is restate's adaptive timeout (restatedev/restate PR
//! #4419, the `adaptive-timeout` crate: `clamp(safety_factor x P99.99 x 2^(attempt-1), min, max)`
//! from a sliding HdrHistogram of 60 s in 10 sub-windows); a rolling p95 as typeclaw's TTFB
//! deadline (typeclaw PR #1217) is `percentile = 95`. Before any latency is in the window the
//! value is `max`. The estimator itself is [`estimator::Estimator`].

pub mod estimator;

use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Duration;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A duration the model fixes, or one the caller learns from the latencies it sees.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Adaptive {
    /// A duration string, e.g. `"250ms"`, as before learned values existed.
    Fixed(Duration),
    /// `{ percentile = 99, window = "60s", factor = 2, min = "10ms", max = "1s" }`.
    Learned(Learned),
}

/// How a learned duration is estimated (see the module's notes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Learned {
    /// The percentile of recent latencies, in (0, 100] (restate: 99.99; a hedge: 95).
    #[serde(default = "default_percentile")]
    pub percentile: f64,
    /// How far back the latencies count (restate: 60 s), kept as ten slices of a tenth each.
    #[serde(default = "default_window")]
    pub window: Duration,
    /// The safety factor the percentile is multiplied by (restate's `safety_factor`), > 0.
    #[serde(default = "default_factor")]
    pub factor: f64,
    /// The shortest value.
    #[serde(default)]
    pub min: Duration,
    /// The longest value, and the value before any latency is in the window (required: absent
    /// reads as zero, which validation refuses with what to write).
    #[serde(default)]
    pub max: Duration,
    /// Each retry's value doubles the one before (restate's `2^(attempt-1)`), within `max`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attempt_doubling: bool,
}

fn default_percentile() -> f64 {
    99.0
}
fn default_window() -> Duration {
    Duration::from_secs(60)
}
fn default_factor() -> f64 {
    1.0
}

impl Adaptive {
    /// The longest the duration may be: the fixed one, or a learned one's `max`. What a reader
    /// that does not run the estimator (the stability verdict, `explain`'s advice) takes.
    pub fn ceiling(self) -> Duration {
        match self {
            Adaptive::Fixed(d) => d,
            Adaptive::Learned(l) => l.max,
        }
    }

    /// The duration, when it is fixed.
    pub fn fixed(self) -> Option<Duration> {
        match self {
            Adaptive::Fixed(d) => Some(d),
            Adaptive::Learned(_) => None,
        }
    }

    /// The estimator's settings, when the duration is learned.
    pub fn learned(self) -> Option<Learned> {
        match self {
            Adaptive::Fixed(_) => None,
            Adaptive::Learned(l) => Some(l),
        }
    }

    /// A fixed duration must be positive; a learned one's keys must make sense (`path` is the
    /// key, e.g. `retry.timeout`).
    pub fn validate(self, path: &str, fixed_zero: &str) -> Result<(), Invalid> {
        match self {
            Adaptive::Fixed(d) if d == Duration::ZERO => Err(invalid(path, fixed_zero)),
            Adaptive::Fixed(_) => Ok(()),
            Adaptive::Learned(l) => l.validate(path),
        }
    }
}

impl Learned {
    fn validate(&self, path: &str) -> Result<(), Invalid> {
        let p = self.percentile;
        if !(p.is_finite() && p > 0.0 && p <= 100.0) {
            return Err(invalid(
                &format!("{path}.percentile"),
                format!("must be a number in (0, 100], e.g. 99, got {p}"),
            ));
        }
        if self.window == Duration::ZERO {
            return Err(invalid(
                &format!("{path}.window"),
                "must be a positive duration, e.g. \"60s\"",
            ));
        }
        let f = self.factor;
        if !(f.is_finite() && f > 0.0) {
            return Err(invalid(
                &format!("{path}.factor"),
                format!(
                    "must be a finite number > 0 (the percentile is multiplied by it), got {f}"
                ),
            ));
        }
        if self.max == Duration::ZERO {
            return Err(invalid(
                &format!("{path}.max"),
                "a learned duration needs a positive max, e.g. max = \"1s\": the longest value, \
                 used before any latency is seen",
            ));
        }
        if self.min > self.max {
            return Err(invalid(
                &format!("{path}.min"),
                format!("must be <= {path}.max ({}), got {}", self.max, self.min),
            ));
        }
        Ok(())
    }
}

/// `250ms`, or `learned p99 over 60s x 2 in [10ms, 1s]` (`, doubling per retry`).
impl fmt::Display for Adaptive {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Adaptive::Fixed(d) => write!(f, "{d}"),
            Adaptive::Learned(l) => {
                write!(
                    f,
                    "learned p{} over {} x {} in [{}, {}]",
                    l.percentile, l.window, l.factor, l.min, l.max
                )?;
                if l.attempt_doubling {
                    f.write_str(", doubling per retry")?;
                }
                Ok(())
            }
        }
    }
}

/// A duration string or a table of [`Learned`]'s keys: the errors of each are its own
/// (`Duration`'s for a string or a bare number, the table's for an unknown or missing key).
impl<'de> Deserialize<'de> for Adaptive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Adaptive;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a duration string with a unit, e.g. \"10ms\", or a table such as \
                     { percentile = 99, window = \"60s\", factor = 2, max = \"1s\" }",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Adaptive, E> {
                let d = de::value::StrDeserializer::<E>::new(s);
                Duration::deserialize(d).map(Adaptive::Fixed)
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Adaptive, E> {
                Duration::deserialize(de::value::I64Deserializer::<E>::new(n)).map(Adaptive::Fixed)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Adaptive, E> {
                Duration::deserialize(de::value::U64Deserializer::<E>::new(n)).map(Adaptive::Fixed)
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Adaptive, E> {
                Duration::deserialize(de::value::F64Deserializer::<E>::new(n)).map(Adaptive::Fixed)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Adaptive, A::Error> {
                Learned::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(Adaptive::Learned)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests;
