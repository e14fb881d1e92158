//! Kubernetes' Horizontal Pod Autoscaler (autoscaling/v2) as a pure state machine on the
//! simulated clock: the caller passes `now` and the metric, and gets the replica count to scale
//! to. Written from `kubernetes/kubernetes`, `pkg/controller/podautoscaler`:
//!
//! - `replica_calculator.go`, `calcPlainMetricReplicas`: the usage ratio `metric / target` over
//!   the ready replicas; inside the tolerance band (`|1 − ratio| ≤ tolerance`) nothing changes,
//!   else `ceil(ratio × ready)`; on a scale-up with replicas not yet ready, those count as using
//!   nothing, and the change is dropped if that brings the ratio into the band or across 1
//!   ([`recommend`]). Ready replicas without a sample (`missingPods`) count as the target (for
//!   utilisation, at least 100 %) on a scale-down and as nothing on a scale-up, under the same
//!   guards; `groupPods` decides which replicas are unready or missing (the tier does, in
//!   `sim/path/tier/scale.rs`).
//! - `horizontal.go`, `normalizeDesiredReplicasWithBehaviors`: first
//!   `stabilizeRecommendationWithBehaviors` (the lowest recommendation of the scale-up window and
//!   the highest of the scale-down window bound the change; every sync's raw recommendation is
//!   recorded), then `convertDesiredReplicasWithBehaviorRate` with
//!   `calculateScaleUpLimitWithScalingRules` / `calculateScaleDownLimitWithBehaviors` (each
//!   policy allows a change from the replica count at the start of its period, `Pods` by a
//!   count, `Percent` by a share, rounded up for a scale-up and down for a scale-down;
//!   `selectPolicy` picks the largest change, the smallest, or none) and the min and max
//!   replicas; `getReplicasChangePerPeriod` and `storeScaleEvent` keep the scale events.
//! - The defaults of `HorizontalPodAutoscalerBehavior` (`pkg/apis/autoscaling/v2/defaults.go`):
//!   scale-up without stabilisation, at most `max(4 pods, 100 %)` per 15 s; scale-down stabilised
//!   over 300 s, at most 100 % per 15 s; `selectPolicy: Max`; tolerance 0.1 and a 15 s sync
//!   period (`kube-controller-manager` flags).

pub mod config;

use crate::base::time::{Duration, Time};
pub use config::{
    AUTOSCALE_KEYS, AutoscaleConfig, Metric, MissingMetrics, PolicyKind, ScalingPolicy,
    SelectPolicy,
};

/// One direction's scaling rules (HPA's `HPAScalingRules`).
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    pub stabilization: Duration,
    pub policies: Vec<ScalingPolicy>,
    pub select: SelectPolicy,
}

/// What the metric shows at a sync, after `groupPods`: the mean per replica over the `ready`
/// replicas that have a sample, `unready` replicas (not ready yet, or within the CPU
/// initialisation period; `unreadyPods`) and `missing` ready replicas without a sample
/// (`missingPods`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observed {
    pub per_replica: f64,
    pub ready: u32,
    pub unready: u32,
    pub missing: u32,
}

/// The replica count `calcPlainMetricReplicas` (and `GetResourceReplicas`) recommends for
/// `current` replicas given what is `observed`, the `target` per replica and the `tolerance`;
/// a missing replica counts as `missing_at` on a scale-down and as 0 on a scale-up, an unready
/// one as 0 on a scale-up.
pub fn recommend(
    observed: Observed,
    target: f64,
    tolerance: f64,
    missing_at: f64,
    current: u32,
) -> u32 {
    let Observed {
        per_replica,
        ready,
        unready,
        missing,
    } = observed;
    let ratio = per_replica / target;
    let scale_up_with_unready = unready > 0 && ratio > 1.0;
    if !scale_up_with_unready && missing == 0 {
        if (1.0 - ratio).abs() <= tolerance {
            return current;
        }
        return ceil_count(ratio * f64::from(ready));
    }
    let mut total = per_replica * f64::from(ready);
    let mut counted = ready;
    if missing > 0 && ratio < 1.0 {
        total += missing_at * f64::from(missing);
        counted += missing;
    } else if missing > 0 && ratio > 1.0 {
        counted += missing;
    }
    if scale_up_with_unready {
        counted += unready;
    }
    let new_ratio = total / (target * f64::from(counted));
    let turns = (ratio < 1.0 && new_ratio > 1.0) || (ratio > 1.0 && new_ratio < 1.0);
    if (1.0 - new_ratio).abs() <= tolerance || turns {
        return current;
    }
    let new = ceil_count(new_ratio * f64::from(counted));
    if (new_ratio < 1.0 && new > current) || (new_ratio > 1.0 && new < current) {
        return current;
    }
    new
}

/// `int32(math.Ceil(x))`, never negative.
fn ceil_count(x: f64) -> u32 {
    x.ceil().clamp(0.0, f64::from(u32::MAX)) as u32
}

/// A change of the replica count the autoscaler made, and when.
#[derive(Clone, Copy, Debug)]
struct ScaleEvent {
    at: Time,
    change: u32,
}

/// One autoscaler: its settings and what it remembers between syncs.
#[derive(Clone, Debug)]
pub struct Hpa {
    pub min: u32,
    pub max: u32,
    pub target: f64,
    pub tolerance: f64,
    /// What a replica without a sample counts as on a scale-down: the target, or for
    /// utilisation (a resource metric) at least all of its request (`fallbackUtilization`).
    pub missing_at: f64,
    pub up: Rules,
    pub down: Rules,
    /// Every sync's raw recommendation (`a.recommendations`), as long as a window needs it.
    recommendations: Vec<(Time, u32)>,
    up_events: Vec<ScaleEvent>,
    down_events: Vec<ScaleEvent>,
}

impl Hpa {
    pub fn new(c: &AutoscaleConfig) -> Self {
        let target = c.target.unwrap_or(f64::NAN);
        Hpa {
            min: c.min_replicas,
            max: c.max_replicas.unwrap_or(c.min_replicas),
            target,
            tolerance: c.tolerance,
            missing_at: match c.metric {
                Metric::Utilisation => target.max(1.0),
                Metric::InFlight | Metric::Queue => target,
            },
            up: c.scale_up_rules(),
            down: c.scale_down_rules(),
            recommendations: Vec::new(),
            up_events: Vec::new(),
            down_events: Vec::new(),
        }
    }

    /// One sync at `now` with `current` replicas (ready and starting): the replica count to
    /// scale to. `observed` is `None` when there is no metric (no ready replica, no full window
    /// yet), and without a ready replica that has a sample HPA's reconcile stops before
    /// recommending anything too.
    pub fn sync(&mut self, now: Time, current: u32, observed: Option<Observed>) -> u32 {
        // Out of range, reconcile goes straight to the bound, without the behaviours.
        let desired = if current > self.max {
            self.max
        } else if current < self.min {
            self.min
        } else {
            let raw = match observed {
                Some(o) if o.ready > 0 => {
                    recommend(o, self.target, self.tolerance, self.missing_at, current)
                }
                _ => return current,
            };
            let stabilized = self.stabilize(now, current, raw);
            self.limit_rate(now, current, stabilized)
        };
        self.record(now, current, desired);
        desired
    }

    /// `stabilizeRecommendationWithBehaviors`: the current count moved at most up to the lowest
    /// recommendation of the scale-up window and down to the highest of the scale-down window
    /// (each including `raw`); `raw` is recorded.
    fn stabilize(&mut self, now: Time, current: u32, raw: u32) -> u32 {
        let up_cutoff = Time(now.0.saturating_sub(self.up.stabilization.0));
        let down_cutoff = Time(now.0.saturating_sub(self.down.stabilization.0));
        let (mut up, mut down) = (raw, raw);
        for &(at, rec) in &self.recommendations {
            if at > up_cutoff {
                up = up.min(rec);
            }
            if at > down_cutoff {
                down = down.max(rec);
            }
        }
        let stabilized = current.max(up).min(down);
        // Samples older than both windows are never read again (HPA overwrites one of them).
        let oldest = up_cutoff.min(down_cutoff);
        self.recommendations.retain(|&(at, _)| at > oldest);
        self.recommendations.push((now, raw));
        stabilized
    }

    /// `convertDesiredReplicasWithBehaviorRate`: `desired` within what the policies allow this
    /// period, and within the min and max replicas.
    fn limit_rate(&self, now: Time, current: u32, desired: u32) -> u32 {
        if desired > current {
            let limit = self.scale_up_limit(now, current).max(current);
            desired.min(limit.min(self.max))
        } else if desired < current {
            let limit = self.scale_down_limit(now, current).min(current);
            desired.max(limit.max(self.min))
        } else {
            desired
        }
    }

    /// The replica count at the start of a policy's period: `current` less what was added in
    /// it and plus what was removed (`periodStartReplicas`).
    fn period_start(&self, now: Time, current: u32, period: Duration) -> i64 {
        let cutoff = Time(now.0.saturating_sub(period.0));
        let changed = |events: &[ScaleEvent]| -> i64 {
            events
                .iter()
                .filter(|e| e.at > cutoff)
                .map(|e| i64::from(e.change))
                .sum()
        };
        i64::from(current) - changed(&self.up_events) + changed(&self.down_events)
    }

    /// `calculateScaleUpLimitWithScalingRules`.
    fn scale_up_limit(&self, now: Time, current: u32) -> u32 {
        let proposals = self.up.policies.iter().map(|p| {
            let start = self.period_start(now, current, p.period);
            match p.kind {
                PolicyKind::Pods => start + i64::from(p.value),
                PolicyKind::Percent => {
                    (start as f64 * (1.0 + f64::from(p.value) / 100.0)).ceil() as i64
                }
            }
        });
        let limit = match self.up.select {
            SelectPolicy::Disabled => return current,
            SelectPolicy::Max => proposals.max(),
            SelectPolicy::Min => proposals.min(),
        };
        to_count(limit.unwrap_or(i64::from(current)))
    }

    /// `calculateScaleDownLimitWithBehaviors`.
    fn scale_down_limit(&self, now: Time, current: u32) -> u32 {
        let proposals = self.down.policies.iter().map(|p| {
            let start = self.period_start(now, current, p.period);
            match p.kind {
                PolicyKind::Pods => start - i64::from(p.value),
                // Go's int32(float) truncates toward zero.
                PolicyKind::Percent => (start as f64 * (1.0 - f64::from(p.value) / 100.0)) as i64,
            }
        });
        // The largest change down is the lowest count.
        let limit = match self.down.select {
            SelectPolicy::Disabled => return current,
            SelectPolicy::Max => proposals.min(),
            SelectPolicy::Min => proposals.max(),
        };
        to_count(limit.unwrap_or(i64::from(current)))
    }

    /// `storeScaleEvent`: a change is remembered as long as the longest policy period of its
    /// direction needs it.
    fn record(&mut self, now: Time, current: u32, desired: u32) {
        let keep = |rules: &Rules, events: &mut Vec<ScaleEvent>| {
            let longest = rules.policies.iter().map(|p| p.period).max();
            let cutoff = Time(now.0.saturating_sub(longest.unwrap_or(Duration::ZERO).0));
            events.retain(|e| e.at > cutoff);
        };
        if desired > current {
            keep(&self.up, &mut self.up_events);
            self.up_events.push(ScaleEvent {
                at: now,
                change: desired - current,
            });
        } else if desired < current {
            keep(&self.down, &mut self.down_events);
            self.down_events.push(ScaleEvent {
                at: now,
                change: current - desired,
            });
        }
    }
}

fn to_count(x: i64) -> u32 {
    x.clamp(0, i64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests;
