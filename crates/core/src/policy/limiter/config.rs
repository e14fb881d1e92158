//! The `[limiter]` section: which limiter and the settings of every kind (each kind reads its own,
//! listed in its file with its checks), and the checks they share.

use super::LimiterKind;
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::Duration;
use crate::policy::Scope;
use serde::{Deserialize, Serialize};

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
        self.smoothing.unwrap_or(self.kind.default_smoothing())
    }

    /// `max_limit`, or the kind's default (`maxLimit` / `maxConcurrency`).
    pub fn max_limit(&self) -> u32 {
        self.max_limit.unwrap_or(self.kind.default_max_limit())
    }

    /// The checks of the chosen kind (each limiter's own, in its file).
    pub fn validate(&self) -> Result<(), Invalid> {
        self.kind.validate(self)
    }
}

impl LimiterConfig {
    /// `min_limit` >= 1, `max_limit` >= `min_limit`.
    pub(super) fn validate_limits(&self) -> Result<(), Invalid> {
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

    /// `smoothing` in (0, 1]; the message names the kind's default (`0.2`, `1.0`).
    pub(super) fn validate_smoothing(&self) -> Result<(), Invalid> {
        let s = self.smoothing();
        if !(s.is_finite() && s > 0.0 && s <= 1.0) {
            let default = self.kind.default_smoothing();
            return Err(invalid(
                "limiter.smoothing",
                format!("must be in (0, 1] (default {default:?}), got {s}"),
            ));
        }
        Ok(())
    }
}

impl LimiterConfig {
    /// Refuses a key the user wrote (`written`, the `[limiter]` table's keys) that this kind
    /// never reads: it would be accepted and change nothing.
    pub fn check_written<'a>(
        &self,
        written: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), Invalid> {
        for key in written {
            // `scope` is read by every limiter, the other keys by the kinds that list them.
            let readers: Vec<LimiterKind> = LimiterKind::LIMITERS
                .iter()
                .copied()
                .filter(|k| key == "scope" || k.keys().contains(&key))
                .collect();
            if readers.is_empty() || readers.contains(&self.kind) {
                continue;
            }
            let readers: Vec<String> = readers
                .iter()
                .map(|k| format!("\"{}\"", k.name()))
                .collect();
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
