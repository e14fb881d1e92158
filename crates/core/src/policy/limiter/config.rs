//! The `[limiter]` section: which limiter, its settings and their checks.

use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Duration;
use crate::policy::Scope;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimiterKind {
    /// No client-side limiter.
    None,
    /// botocore's adaptive retry mode: a CUBIC-controlled token bucket, on after the first
    /// throttle; a send waits for a token.
    AwsAdaptive,
    /// Netflix concurrency-limits' `AIMDLimit` behind a `SimpleLimiter`: attempts beyond the
    /// limit in flight are rejected in the client.
    Aimd,
    /// Netflix concurrency-limits' `Gradient2Limit`: the limit follows the ratio of a long-term
    /// RTT average to the latest RTT; beyond it, rejected.
    Gradient2,
    /// Netflix concurrency-limits' `VegasLimit`: the limit follows the queue estimated from the
    /// smallest RTT seen; beyond it, rejected.
    Vegas,
}

/// The `[limiter]` section: a client-side limit on the client's own sends.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimiterConfig {
    pub kind: LimiterKind,
    /// One limiter per client process (botocore: one per client object), or one for all.
    pub scope: Scope,
    /// aws-adaptive: CUBIC's scale constant `C` (botocore `_SCALE_CONSTANT`).
    pub cubic_c: f64,
    /// aws-adaptive: CUBIC's multiplicative decrease `beta` (botocore `_BETA`).
    pub cubic_beta: f64,
    /// aws-adaptive: the smallest fill rate, tokens per second (botocore `_MIN_RATE`).
    pub min_fill_rate: f64,
    /// aws-adaptive: the measured rate's EWMA weight of the newest bucket (`_DEFAULT_SMOOTHING`,
    /// 0.8); gradient2: the new limit's weight (0.2); vegas: the new limit's weight (1.0).
    pub smoothing: Option<f64>,
    /// aws-adaptive: the measured rate's bucket (`_TIME_BUCKET_RANGE`).
    pub rate_bucket: Duration,
    /// aimd, gradient2, vegas: the starting limit (`initialLimit`).
    pub initial_limit: u32,
    /// aimd, gradient2: the smallest limit (`minLimit`); vegas has none (1).
    pub min_limit: u32,
    /// aimd, gradient2, vegas: the largest limit (`maxLimit` / `maxConcurrency`: 200; vegas 1000).
    pub max_limit: Option<u32>,
    /// aimd: the multiplicative decrease on a drop (`backoffRatio`), in [0.5, 1).
    pub backoff_ratio: f64,
    /// aimd: an RTT above this counts as a drop (`timeout`).
    pub timeout: Duration,
    /// gradient2: added to the gradient's limit each update (`queueSize`).
    pub queue_size: u32,
    /// gradient2: the long RTT's window in samples (`longWindow`).
    pub long_window: u32,
    /// gradient2: how far the short RTT may exceed the long one before the limit falls
    /// (`rttTolerance`), >= 1.
    pub rtt_tolerance: f64,
    /// vegas: the no-load RTT is re-probed every `jitter * probe_multiplier * limit` samples.
    pub probe_multiplier: u32,
}

impl Default for LimiterConfig {
    fn default() -> Self {
        LimiterConfig {
            kind: LimiterKind::None,
            scope: Scope::Client,
            cubic_c: 0.4,
            cubic_beta: 0.7,
            min_fill_rate: 0.5,
            smoothing: None,
            rate_bucket: Duration::from_millis(500),
            // AIMDLimit.Builder.
            initial_limit: 20,
            min_limit: 20,
            max_limit: None,
            backoff_ratio: 0.9,
            timeout: Duration::from_secs(5),
            // Gradient2Limit.Builder.
            queue_size: 4,
            long_window: 600,
            rtt_tolerance: 1.5,
            // VegasLimit.Builder.
            probe_multiplier: 30,
        }
    }
}

impl LimiterConfig {
    pub fn enabled(&self) -> bool {
        self.kind != LimiterKind::None
    }

    /// `smoothing`, or the kind's default.
    pub fn smoothing(&self) -> f64 {
        self.smoothing.unwrap_or(match self.kind {
            LimiterKind::Gradient2 => 0.2,
            LimiterKind::Vegas => 1.0,
            _ => 0.8,
        })
    }

    /// `max_limit`, or the kind's default (`maxLimit` / `maxConcurrency`).
    pub fn max_limit(&self) -> u32 {
        self.max_limit.unwrap_or(match self.kind {
            LimiterKind::Vegas => 1000,
            _ => 200,
        })
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        match self.kind {
            LimiterKind::Aimd => return self.validate_aimd(),
            LimiterKind::Gradient2 => return self.validate_gradient2(),
            LimiterKind::Vegas => return self.validate_vegas(),
            _ => {}
        }
        if self.kind != LimiterKind::AwsAdaptive {
            return Ok(());
        }
        let positive = |path: &str, v: f64, what: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(invalid(
                    path,
                    format!("must be a number > 0 ({what}), got {v}"),
                ))
            }
        };
        positive("limiter.cubic_c", self.cubic_c, "botocore uses 0.4")?;
        positive(
            "limiter.min_fill_rate",
            self.min_fill_rate,
            "botocore uses 0.5",
        )?;
        for (path, v, what) in [
            ("limiter.cubic_beta", self.cubic_beta, "botocore uses 0.7"),
            ("limiter.smoothing", self.smoothing(), "botocore uses 0.8"),
        ] {
            if !(v.is_finite() && v > 0.0 && v < 1.0) {
                return Err(invalid(
                    path,
                    format!("must be in (0, 1) ({what}), got {v}"),
                ));
            }
        }
        if self.rate_bucket.0 == 0 {
            return Err(invalid(
                "limiter.rate_bucket",
                "must be a positive duration (botocore uses 500ms)",
            ));
        }
        Ok(())
    }
}

impl LimiterConfig {
    fn validate_aimd(&self) -> Result<(), Invalid> {
        if !(self.backoff_ratio >= 0.5 && self.backoff_ratio < 1.0) {
            return Err(invalid(
                "limiter.backoff_ratio",
                format!(
                    "must be in [0.5, 1.0) (AIMDLimit's precondition; default 0.9), got {}",
                    self.backoff_ratio
                ),
            ));
        }
        self.validate_limits()?;
        if self.timeout.0 == 0 {
            return Err(invalid(
                "limiter.timeout",
                "must be a positive duration (AIMDLimit's default 5s)",
            ));
        }
        Ok(())
    }

    /// `min_limit` >= 1, `max_limit` >= `min_limit`.
    fn validate_limits(&self) -> Result<(), Invalid> {
        if self.min_limit == 0 {
            return Err(invalid("limiter.min_limit", "must be at least 1"));
        }
        if self.max_limit() < self.min_limit {
            return Err(invalid(
                "limiter.max_limit",
                format!(
                    "must be >= min_limit ({}), got {}",
                    self.min_limit,
                    self.max_limit()
                ),
            ));
        }
        Ok(())
    }

    fn validate_smoothing(&self, default: &str) -> Result<(), Invalid> {
        let s = self.smoothing();
        if !(s.is_finite() && s > 0.0 && s <= 1.0) {
            return Err(invalid(
                "limiter.smoothing",
                format!("must be in (0, 1] (default {default}), got {s}"),
            ));
        }
        Ok(())
    }

    fn validate_gradient2(&self) -> Result<(), Invalid> {
        self.validate_limits()?;
        self.validate_smoothing("0.2")?;
        if !(self.rtt_tolerance.is_finite() && self.rtt_tolerance >= 1.0) {
            return Err(invalid(
                "limiter.rtt_tolerance",
                format!(
                    "must be >= 1.0 (Gradient2Limit's precondition; default 1.5), got {}",
                    self.rtt_tolerance
                ),
            ));
        }
        if self.long_window == 0 {
            return Err(invalid(
                "limiter.long_window",
                "must be at least 1 sample (default 600)",
            ));
        }
        Ok(())
    }

    fn validate_vegas(&self) -> Result<(), Invalid> {
        if self.max_limit() == 0 {
            return Err(invalid("limiter.max_limit", "must be at least 1"));
        }
        self.validate_smoothing("1.0")?;
        if self.probe_multiplier == 0 {
            return Err(invalid(
                "limiter.probe_multiplier",
                "must be at least 1 (default 30)",
            ));
        }
        Ok(())
    }
}

impl LimiterKind {
    /// The name written in a model file.
    pub fn name(self) -> &'static str {
        match self {
            LimiterKind::None => "none",
            LimiterKind::AwsAdaptive => "aws-adaptive",
            LimiterKind::Aimd => "aimd",
            LimiterKind::Gradient2 => "gradient2",
            LimiterKind::Vegas => "vegas",
        }
    }
}

/// Each `[limiter]` tuning key and the kinds that read it (`kind` is read by all).
const READ_BY: &[(&str, &[LimiterKind])] = {
    use LimiterKind::*;
    &[
        ("scope", &[AwsAdaptive, Aimd, Gradient2, Vegas]),
        ("cubic_c", &[AwsAdaptive]),
        ("cubic_beta", &[AwsAdaptive]),
        ("min_fill_rate", &[AwsAdaptive]),
        ("rate_bucket", &[AwsAdaptive]),
        ("smoothing", &[AwsAdaptive, Gradient2, Vegas]),
        ("initial_limit", &[Aimd, Gradient2, Vegas]),
        ("min_limit", &[Aimd, Gradient2]),
        ("max_limit", &[Aimd, Gradient2, Vegas]),
        ("backoff_ratio", &[Aimd]),
        ("timeout", &[Aimd]),
        ("queue_size", &[Gradient2]),
        ("long_window", &[Gradient2]),
        ("rtt_tolerance", &[Gradient2]),
        ("probe_multiplier", &[Vegas]),
    ]
};

impl LimiterConfig {
    /// Refuses a key the user wrote (`written`, the `[limiter]` table's keys) that this kind
    /// never reads: it would be accepted and change nothing.
    pub fn check_written<'a>(
        &self,
        written: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), Invalid> {
        for key in written {
            let Some((_, kinds)) = READ_BY.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            if kinds.contains(&self.kind) {
                continue;
            }
            let readers: Vec<String> = kinds.iter().map(|k| format!("\"{}\"", k.name())).collect();
            let why = if self.kind == LimiterKind::None {
                "there is no limiter (limiter.kind = \"none\")".to_string()
            } else {
                format!("this limiter is \"{}\"", self.kind.name())
            };
            return Err(invalid(
                &format!("limiter.{key}"),
                format!(
                    "has no effect: it tunes limiter.kind = {} and {why} (remove it, or set the kind that reads it)",
                    readers.join(" or ")
                ),
            ));
        }
        Ok(())
    }
}
