//! One estimate from the seeds' splitting runs, its 95% interval, and what brute force would
//! have spent for an interval as narrow.
//!
//! The interval is log-normal (a delta-method interval for the log of the estimate), from one
//! of two variances:
//! - over independent repetitions (`--seeds N`, N at least 2): the estimate is the mean of the
//!   seeds' estimates and the variance is theirs, with Student's t for N - 1 degrees of freedom.
//!   It holds whatever the particles of one run share, so it is the one to trust.
//! - from one run: the sum over the stages of `(1 - r) / (r n)`, the relative variance if each
//!   stage's passes were independent binomial draws. Copies of one parent share what was
//!   already scheduled when it was copied (the next arrival, a service under way), so their
//!   passes are not independent and this interval is too narrow by a factor that depends on the
//!   model; it is reported only when there is one seed, and says so.

use super::SplitRun;
use crate::result::stats::{mean, sample_sd, t975};
use serde::Serialize;

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Where an interval's variance came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalKind {
    /// Independent repetitions over the seeds.
    Seeds,
    /// One run's stages, as if their passes were independent.
    Stages,
}

/// The seeds' runs joined: the estimate, its 95% interval, and the work against brute force.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RareEstimate {
    pub probability: f64,
    pub low: f64,
    pub high: f64,
    pub interval: IntervalKind,
    /// Events spent by every run of every seed.
    pub events: u64,
    /// The mean events of a plain run (a stage-0 particle).
    pub events_per_plain_run: f64,
    /// Plain runs brute force needs for the same relative half-width:
    /// `(1.96 / h)^2 (1 - p) / p`.
    pub brute_force_runs: f64,
    /// Those runs' events: `brute_force_runs x events_per_plain_run`.
    pub brute_force_events: f64,
    pub runs: Vec<SplitRun>,
}

impl RareEstimate {
    /// The interval's half-width relative to the estimate.
    pub fn relative_half_width(&self) -> f64 {
        (self.high - self.low) / (2.0 * self.probability)
    }
}

/// The estimate of the runs of one or more seeds (at least one run).
pub fn combine(runs: Vec<SplitRun>) -> RareEstimate {
    let estimates: Vec<f64> = runs.iter().map(|r| r.estimate).collect();
    let p = mean(&estimates);
    let (log_sd, interval) = if runs.len() >= 2 {
        let se = sample_sd(&estimates) / (runs.len() as f64).sqrt();
        (t975(runs.len() - 1) * se / p, IntervalKind::Seeds)
    } else {
        (
            Z95 * runs[0].relative_variance().sqrt(),
            IntervalKind::Stages,
        )
    };
    // A probability: an interval wide enough to pass 1 is cut there.
    let (low, high) = (p * (-log_sd).exp(), (p * log_sd.exp()).min(1.0));
    let events = runs.iter().map(|r| r.events).sum();
    let plain = mean(
        &runs
            .iter()
            .map(|r| r.events_per_plain_run)
            .collect::<Vec<_>>(),
    );
    let h = (high - low) / (2.0 * p);
    let brute_force_runs = (Z95 / h).powi(2) * (1.0 - p) / p;
    RareEstimate {
        probability: p,
        low,
        high,
        interval,
        events,
        events_per_plain_run: plain,
        brute_force_runs,
        brute_force_events: brute_force_runs * plain,
        runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::rare::Stage;

    fn run(seed: u64, estimate: f64, passed: u32) -> SplitRun {
        SplitRun {
            seed,
            estimate,
            stages: vec![Stage {
                level: None,
                passed,
                particles: 100,
            }],
            events: 1000,
            events_per_plain_run: 10.0,
        }
    }

    #[test]
    fn one_run_takes_its_stages_and_several_their_spread() {
        let one = combine(vec![run(1, 0.25, 25)]);
        assert_eq!(one.interval, IntervalKind::Stages);
        // (1 - 0.25) / (0.25 x 100) = 0.03.
        let w = Z95 * 0.03f64.sqrt();
        assert!((one.high / 0.25 - w.exp()).abs() < 1e-12);
        assert!((one.low * one.high - 0.25 * 0.25).abs() < 1e-12);
        let brute = (Z95 / one.relative_half_width()).powi(2) * 3.0;
        assert!((one.brute_force_runs - brute).abs() < 1e-9);
        assert!((one.brute_force_events - 10.0 * brute).abs() < 1e-6);
        let two = combine(vec![run(1, 0.2, 20), run(2, 0.3, 30)]);
        assert_eq!(two.interval, IntervalKind::Seeds);
        assert!((two.probability - 0.25).abs() < 1e-12);
        let se = sample_sd(&[0.2, 0.3]) / 2f64.sqrt();
        assert!((two.low - 0.25 * (-t975(1) * se / 0.25).exp()).abs() < 1e-12);
        // 0.25 x exp(12.7 x 0.2): a probability's interval is cut at 1.
        assert_eq!(two.high, 1.0);
        assert_eq!(two.events, 2000);
    }
}
