//! `[server.autoscale]`: a Horizontal Pod Autoscaler on a tier's replicas, under HPA's names
//! (`docs/replicas.md`, "Autoscaling"); unset keys take HPA's defaults.

use super::Rules;
use crate::base::invalid::{Invalid, invalid};
use crate::base::keys::{KeyTable, key};
use crate::base::time::Duration;
use serde::{Deserialize, Serialize};

/// What the autoscaler reads per ready replica.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Metric {
    /// Busy workers over `capacity` (a resource metric's `averageUtilization`, as a fraction).
    #[default]
    #[serde(rename = "utilisation", alias = "utilization")]
    Utilisation,
    /// Requests in service or queued (a pods metric's `averageValue`).
    #[serde(rename = "in-flight")]
    InFlight,
    /// Requests queued, waiting for a worker.
    #[serde(rename = "queue")]
    Queue,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Utilisation => "utilisation",
            Metric::InFlight => "in-flight",
            Metric::Queue => "queue",
        }
    }
}

/// What a sync makes of a ready replica that has no sample in the metric's window (it became
/// ready when the window had ended).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MissingMetrics {
    /// It counts as a ready replica at the others' average.
    #[default]
    Average,
    /// HPA's rule (`missingPods`): at the target (utilisation: at least 100 %) on a scale-down,
    /// at 0 on a scale-up, which damps both.
    Dampen,
}

/// HPA's `HPAScalingPolicyType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// At most `value` replicas per period.
    Pods,
    /// At most `value` percent of the replicas at the period's start per period.
    Percent,
}

/// One scaling policy (HPA's `HPAScalingPolicy`: `type`, `value`, `periodSeconds`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScalingPolicy {
    #[serde(rename = "type")]
    pub kind: PolicyKind,
    pub value: u32,
    pub period: Duration,
}

/// HPA's `selectPolicy`: which policy's limit wins.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SelectPolicy {
    /// The policy allowing the largest change.
    #[default]
    Max,
    /// The policy allowing the smallest change.
    Min,
    /// No scaling in this direction.
    Disabled,
}

/// `[server.autoscale]`'s keys.
pub const AUTOSCALE_KEYS: KeyTable = KeyTable {
    section: "server.autoscale",
    schema: "AutoscaleConfig",
    docs: &[("docs/model.md", "### Autoscaling")],
    runs: &[&[
        key(
            "metric",
            "`\"utilisation\"`",
            "what is averaged over the ready replicas: `utilisation` (busy workers over \
            `capacity`, a fraction; needs a limited `capacity`), `in-flight` (requests in service \
            or queued) or `queue` (requests queued)",
        ),
        key(
            "target",
            "required",
            "the metric's target per replica (HPA's `averageUtilization` as a fraction, or \
            `averageValue`); positive",
        ),
        key(
            "tolerance",
            "`0.1`",
            "no change while `|1 − metric / target| <= tolerance` \
            (kube-controller-manager's horizontal-pod-autoscaler-tolerance flag); in [0, 1)",
        ),
        key(
            "sync_period",
            "`\"15s\"`",
            "time between the autoscaler's syncs, the first at `sync_period` \
            (kube-controller-manager's horizontal-pod-autoscaler-sync-period flag); the metric is the time average over \
            one period; positive",
        ),
        key(
            "metric_delay",
            "`\"0s\"`",
            "the metric a sync reads is the average over the period that ended this long before \
            it (the metrics pipeline's scrape and resolution delay)",
        ),
        key(
            "min_replicas",
            "`1`",
            "the fewest replicas (`minReplicas`), at least 1",
        ),
        key(
            "max_replicas",
            "required",
            "the most replicas (`maxReplicas`), at least `min_replicas` and `replicas`, at most \
            1024; the tier keeps this many replica slots",
        ),
        key(
            "start_time",
            "`\"0s\"`",
            "how long a new replica takes to become ready (scheduling, image pull, start-up, \
            readiness probe); until then it gets no requests and counts as using nothing on a \
            scale-up",
        ),
        key(
            "missing_metrics",
            "`\"average\"`",
            "a ready replica without a sample in the window a sync reads (ready after the window \
            ended): `average` (a ready replica at the others' average) or `dampen` (HPA's rule: at \
            the target, for utilisation at least 1, on a scale-down; at 0 on a scale-up)",
        ),
        key(
            "cpu_initialization_period",
            "`\"0s\"`",
            "kube-controller-manager's horizontal-pod-autoscaler-cpu-initialization-period flag \
            (Kubernetes' default 5m): for this long after a replica was added, a sync whose window \
            began before the replica was ready counts it as not ready; `utilisation` only",
        ),
        key(
            "scale_up_stabilization",
            "`\"0s\"`",
            "`behavior.scaleUp.stabilizationWindowSeconds`: a scale-up goes no higher than the \
            lowest recommendation of this window; at most 1 h",
        ),
        key(
            "scale_down_stabilization",
            "`\"300s\"`",
            "`behavior.scaleDown.stabilizationWindowSeconds`: a scale-down goes no lower than the \
            highest recommendation of this window; at most 1 h",
        ),
        key(
            "scale_up_policies",
            "`[{ type = \"percent\", value = 100, period = \"15s\" }, { type = \"pods\", value = 4, \
            period = \"15s\" }]`",
            "`behavior.scaleUp.policies`: each allows `value` replicas (`pods`) or `value` percent \
            (`percent`, rounded up) more than there were at the start of its `period` (at most \
            30 min)",
        ),
        key(
            "scale_down_policies",
            "`[{ type = \"percent\", value = 100, period = \"15s\" }]`",
            "`behavior.scaleDown.policies`: as above, fewer (`percent` rounded down)",
        ),
        key(
            "scale_up_select",
            "`\"max\"`",
            "`behavior.scaleUp.selectPolicy`: `max` (the policy allowing the largest change), \
            `min` (the smallest) or `disabled` (never scale up)",
        ),
        key(
            "scale_down_select",
            "`\"max\"`",
            "`behavior.scaleDown.selectPolicy`: as above for scaling down",
        ),
    ]],
    expanded: &[],
};

/// The longest stabilisation window HPA accepts (`stabilizationWindowSeconds` <= 3600).
const MAX_STABILIZATION: Duration = Duration::from_secs(3600);
/// The longest policy period HPA accepts (`periodSeconds` <= 1800).
const MAX_PERIOD: Duration = Duration::from_secs(1800);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AutoscaleConfig {
    /// What is averaged over the ready replicas.
    pub metric: Metric,
    /// The metric's target per replica (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// No change while `|1 − metric / target| <= tolerance`.
    pub tolerance: f64,
    /// Time between syncs; the metric is averaged over one period.
    pub sync_period: Duration,
    /// The metric a sync reads ended this long before it.
    pub metric_delay: Duration,
    pub min_replicas: u32,
    /// The most replicas (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<u32>,
    /// How long a new replica takes to become ready.
    pub start_time: Duration,
    /// A ready replica without a sample in the window.
    pub missing_metrics: MissingMetrics,
    /// How long after it was added a replica ready within a sync's window counts as not ready.
    pub cpu_initialization_period: Duration,
    pub scale_up_stabilization: Duration,
    pub scale_down_stabilization: Duration,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_up_policies: Option<Vec<ScalingPolicy>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_down_policies: Option<Vec<ScalingPolicy>>,
    pub scale_up_select: SelectPolicy,
    pub scale_down_select: SelectPolicy,
}

impl Default for AutoscaleConfig {
    fn default() -> Self {
        AutoscaleConfig {
            metric: Metric::Utilisation,
            target: None,
            tolerance: 0.1,
            sync_period: Duration::from_secs(15),
            metric_delay: Duration::ZERO,
            min_replicas: 1,
            max_replicas: None,
            start_time: Duration::ZERO,
            missing_metrics: MissingMetrics::Average,
            cpu_initialization_period: Duration::ZERO,
            scale_up_stabilization: Duration::ZERO,
            scale_down_stabilization: Duration::from_secs(300),
            scale_up_policies: None,
            scale_down_policies: None,
            scale_up_select: SelectPolicy::Max,
            scale_down_select: SelectPolicy::Max,
        }
    }
}

fn policy(kind: PolicyKind, value: u32) -> ScalingPolicy {
    ScalingPolicy {
        kind,
        value,
        period: Duration::from_secs(15),
    }
}

impl AutoscaleConfig {
    /// `behavior.scaleUp` with HPA's defaults for what is unset.
    pub fn scale_up_rules(&self) -> Rules {
        Rules {
            stabilization: self.scale_up_stabilization,
            policies: self.scale_up_policies.clone().unwrap_or_else(|| {
                vec![
                    policy(PolicyKind::Percent, 100),
                    policy(PolicyKind::Pods, 4),
                ]
            }),
            select: self.scale_up_select,
        }
    }

    /// `behavior.scaleDown` with HPA's defaults for what is unset.
    pub fn scale_down_rules(&self) -> Rules {
        Rules {
            stabilization: self.scale_down_stabilization,
            policies: self
                .scale_down_policies
                .clone()
                .unwrap_or_else(|| vec![policy(PolicyKind::Percent, 100)]),
            select: self.scale_down_select,
        }
    }

    /// The ranges HPA's API validation accepts, under `p` (`server.autoscale`); `replicas` is
    /// the tier's starting count, `max_slots` the most replicas a tier may have.
    pub fn validate(&self, p: &str, replicas: u32, max_slots: u32) -> Result<(), Invalid> {
        let at = |f: &str| format!("{p}.{f}");
        match self.target {
            None => {
                return Err(invalid(
                    &at("target"),
                    "is required: the metric's target per replica",
                ));
            }
            Some(t) if !(t.is_finite() && t > 0.0) => {
                return Err(invalid(
                    &at("target"),
                    format!("must be a positive number, got {t}"),
                ));
            }
            Some(_) => {}
        }
        if !(self.tolerance.is_finite() && (0.0..1.0).contains(&self.tolerance)) {
            return Err(invalid(
                &at("tolerance"),
                format!("must be in [0, 1), got {}", self.tolerance),
            ));
        }
        if self.sync_period == Duration::ZERO {
            return Err(invalid(&at("sync_period"), "must be a positive duration"));
        }
        if self.cpu_initialization_period > Duration::ZERO && self.metric != Metric::Utilisation {
            return Err(invalid(
                &at("cpu_initialization_period"),
                format!(
                    "applies to metric = \"utilisation\" only (HPA applies it to CPU), got metric = \"{}\"",
                    self.metric.name()
                ),
            ));
        }
        if self.min_replicas == 0 {
            return Err(invalid(&at("min_replicas"), "must be at least 1, got 0"));
        }
        let Some(max) = self.max_replicas else {
            return Err(invalid(
                &at("max_replicas"),
                "is required: the most replicas the autoscaler may run",
            ));
        };
        let least = self.min_replicas.max(replicas);
        if max < least || max > max_slots {
            return Err(invalid(
                &at("max_replicas"),
                format!(
                    "must be in {least}..={max_slots} (at least min_replicas and the tier's replicas), got {max}"
                ),
            ));
        }
        for (name, d) in [
            ("scale_up_stabilization", self.scale_up_stabilization),
            ("scale_down_stabilization", self.scale_down_stabilization),
        ] {
            if d > MAX_STABILIZATION {
                return Err(invalid(&at(name), format!("must be at most 1h, got {d}")));
            }
        }
        for (name, policies) in [
            ("scale_up_policies", &self.scale_up_policies),
            ("scale_down_policies", &self.scale_down_policies),
        ] {
            let Some(list) = policies else { continue };
            if list.is_empty() {
                return Err(invalid(
                    &at(name),
                    "must hold at least one policy (select \"disabled\" to stop scaling this way)",
                ));
            }
            for (i, q) in list.iter().enumerate() {
                if q.value == 0 {
                    return Err(invalid(
                        &format!("{p}.{name}[{i}].value"),
                        "must be at least 1, got 0",
                    ));
                }
                if q.period == Duration::ZERO || q.period > MAX_PERIOD {
                    return Err(invalid(
                        &format!("{p}.{name}[{i}].period"),
                        format!("must be in (0s, 30m], got {}", q.period),
                    ));
                }
            }
        }
        Ok(())
    }
}
