//! Recovery after a trigger: does goodput return to its pre-trigger level, and when?
//!
//! A *trigger* is a window of trouble: a load spike, an outage, a capacity drop. A system that
//! goes back to its old goodput soon after the trigger ends has recovered; one that stays degraded
//! after the trigger is gone is in a metastable failure state (Bronson et al., "Metastable
//! Failures in Distributed Systems", HotOS 2021).
//!
//! - **Baseline**: successes per second over `recovery.baseline` before the trigger starts
//!   (default: the second half of the time before the trigger, at most 10 s, so that the warm-up
//!   at time zero is left out).
//! - **Recovered at** `t`: the goodput over every window of `recovery.window` (default 2 s) that
//!   starts at or after `t` and ends before the run does is at least `recovery.fraction` (default
//!   0.8) times the baseline. Windows slide by one bucket. `recovery_ms` is the first such `t`
//!   minus the trigger's end, in whole buckets; absent when even the last window is below, or
//!   when no whole window fits between the trigger's end and the end of the run. The defaults
//!   keep Poisson noise from reading as a relapse: at 750 successes/s a 2 s window has a standard
//!   deviation of about 2.6 %, so 0.8 is 7 deviations below the mean (with 1 s and 0.9 a 60 s
//!   run dips below by chance).
//!
//! The trigger ([`crate::model::Model::trigger`]) is `recovery.trigger` when given; otherwise the span of the server's outages and
//! capacity drops; otherwise, for an open workload, the first stretch of the schedule whose rate
//! is above the initial `workload.rate` (a spike), ending at the first later point back at or
//! below it.

use crate::invalid::Invalid;
use crate::time::Window;
use crate::time::{Duration, Time};
use serde::{Deserialize, Serialize};

/// The `[recovery]` section.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryConfig {
    pub trigger: Option<Window>,
    pub window: Duration,
    pub fraction: f64,
    pub baseline: Option<Duration>,
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        RecoveryConfig {
            trigger: None,
            window: Duration::from_secs(2),
            fraction: 0.8,
            baseline: None,
        }
    }
}

impl RecoveryConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        let bad = |path: &str, message: String| {
            Err(Invalid {
                path: path.to_string(),
                message,
            })
        };
        if let Some(t) = self.trigger
            && t.to <= t.from
        {
            return bad(
                "recovery.trigger.to",
                format!("must be after `from` ({})", t.from),
            );
        }
        if self.window.0 == 0 {
            return bad("recovery.window", "must be a positive duration".into());
        }
        if !(self.fraction > 0.0 && self.fraction <= 1.0) {
            return bad(
                "recovery.fraction",
                format!("must be in (0, 1], got {}", self.fraction),
            );
        }
        if self.baseline == Some(Duration::ZERO) {
            return bad("recovery.baseline", "must be a positive duration".into());
        }
        Ok(())
    }
}

/// What [`measure`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recovery {
    pub from: Time,
    pub to: Time,
    /// Pre-trigger goodput, successes per second.
    pub baseline_per_s: f64,
    /// Time from the trigger's end until goodput stayed at the baseline level; `None` = never.
    pub after: Option<Duration>,
}

/// Measures recovery from `succeeded` (successes per bucket of width `bucket`) for a run that
/// ended at `end`. `None` when there is no baseline to compare with: the trigger starts at zero,
/// or nothing succeeded before it.
pub fn measure(
    succeeded: &[u32],
    bucket: Duration,
    end: Time,
    (from, to): (Time, Time),
    c: &RecoveryConfig,
) -> Option<Recovery> {
    let b = bucket.0.max(1);
    let baseline_len = c
        .baseline
        .map(|d| d.0)
        .unwrap_or_else(|| (from.0 / 2).min(10_000_000_000));
    // Whole buckets inside [from - baseline_len, from).
    let b_end = (from.0 / b) as usize;
    let b_start = (from.0.saturating_sub(baseline_len)).div_ceil(b) as usize;
    if b_end <= b_start {
        return None;
    }
    let count = |lo: usize, hi: usize| -> u64 {
        (lo..hi)
            .map(|i| u64::from(succeeded.get(i).copied().unwrap_or(0)))
            .sum()
    };
    let secs = |n: usize| n as f64 * b as f64 / 1e9;
    let baseline_per_s = count(b_start, b_end) as f64 / secs(b_end - b_start);
    if baseline_per_s <= 0.0 {
        // Nothing succeeded before the trigger: there is no level to return to.
        return None;
    }
    let mut out = Recovery {
        from,
        to,
        baseline_per_s,
        after: None,
    };
    let w = c.window.0.div_ceil(b).max(1) as usize;
    let first = to.0.div_ceil(b) as usize;
    // Buckets [0, full) are complete.
    let full = (end.0 / b) as usize;
    if first + w > full {
        return Some(out);
    }
    let threshold = c.fraction * baseline_per_s;
    let mut sum = count(full - w, full);
    // Scan windows from the last one back: the answer is one past the last window below.
    let mut j = full - w;
    let mut recovered_from = None;
    loop {
        if (sum as f64) / secs(w) < threshold {
            break;
        }
        recovered_from = Some(j);
        if j == first {
            break;
        }
        j -= 1;
        sum = sum + u64::from(succeeded.get(j).copied().unwrap_or(0))
            - u64::from(succeeded.get(j + w).copied().unwrap_or(0));
    }
    out.after = recovered_from.map(|j| Duration((j as u64 * b).saturating_sub(to.0)));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Duration = Duration::from_millis(100);

    fn cfg() -> RecoveryConfig {
        // 0.95 so that one empty 100 ms bucket in a 1 s window counts as below.
        RecoveryConfig {
            fraction: 0.95,
            window: Duration::from_secs(1),
            ..RecoveryConfig::default()
        }
    }

    fn s(x: u64) -> Time {
        Time(x * 1_000_000_000)
    }

    #[test]
    fn recovers_after_a_dip() {
        // 10 per 100 ms = 100/s, a dip to 0 from 10 s to 14 s, trigger 10..12 s, run ends 30 s.
        let mut g = vec![10u32; 300];
        for x in &mut g[100..140] {
            *x = 0;
        }
        let r = measure(&g, B, s(30), (s(10), s(12)), &cfg()).unwrap();
        assert_eq!(r.baseline_per_s, 100.0);
        // The first 1 s window at >= 90/s starts at 14 s: 2 s after the trigger's end.
        assert_eq!(r.after, Some(Duration::from_secs(2)));
        // The same but never back.
        for x in &mut g[140..] {
            *x = 5;
        }
        let r = measure(&g, B, s(30), (s(10), s(12)), &cfg()).unwrap();
        assert_eq!(r.after, None);
    }

    #[test]
    fn partial_recovery_counts_from_the_last_dip() {
        let mut g = vec![10u32; 300];
        // Back at 13 s but a relapse from 20 s to 21 s.
        g[100..130].fill(0);
        g[200..210].fill(0);
        let r = measure(&g, B, s(30), (s(10), s(12)), &cfg()).unwrap();
        assert_eq!(r.after, Some(Duration::from_secs(9)));
        // No dip at all: recovered at the trigger's end.
        let g = vec![10u32; 300];
        let r = measure(&g, B, s(30), (s(10), s(12)), &cfg()).unwrap();
        assert_eq!(r.after, Some(Duration::ZERO));
        // The run ends before a whole window fits: not recovered, not measurable.
        let r = measure(&g, B, Time(12_500_000_000), (s(10), s(12)), &cfg()).unwrap();
        assert_eq!(r.after, None);
        // A trigger at zero has no baseline, nor has a run where nothing succeeded before it.
        assert!(measure(&g, B, s(30), (s(0), s(2)), &cfg()).is_none());
        assert!(measure(&[0; 300], B, s(30), (s(10), s(12)), &cfg()).is_none());
    }
}
