//! Replicas behind a load balancer: the `[server]` keys that make a tier several
//! servers, choose among them and eject the bad ones, and the `[retry]` keys that send a retry to
//! another replica. Semantics and sources: `docs/replicas.md`; the state machines are
//! [`crate::policy::balancer`] and [`crate::policy::outlier`].

use crate::base::keys::{KeyTable, key};
use crate::base::time::{Duration, Time};
use crate::policy::Scope;
pub use crate::policy::balancer::BalancerKind;
use crate::policy::balancer::{self, Params};
use crate::policy::outlier::envoy::EnvoyConfig;
use crate::policy::outlier::grpc::{FailurePercentageEjection, GrpcConfig, SuccessRateEjection};
use crate::policy::outlier::{Detector, envoy::EnvoyDetector, grpc::GrpcDetector};
use serde::{Deserialize, Serialize};

/// `server.outlier_detection.kind`: whose outlier detection.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum OutlierKind {
    /// Envoy's cluster `outlier_detection`.
    #[default]
    Envoy,
    /// gRPC's outlier detection LB policy (gRFC A50), configured from the same Envoy fields as
    /// gRPC's xDS client reads them.
    Grpc,
}

/// `[server.outlier_detection]`'s keys.
pub const OUTLIER_KEYS: KeyTable = KeyTable {
    section: "server.outlier_detection",
    schema: "OutlierDetection",
    docs: &[("docs/model.md", "### Replicas")],
    runs: &[&[
        key(
            "kind",
            "`\"envoy\"`",
            "`envoy`: Envoy's detector (consecutive 5xx, consecutive gateway failures, success \
            rate, failure percentage); `grpc`: gRPC's outlier detection LB policy (gRFC A50, \
            \"xDS Outlier Detection Support\"), configured from these fields as gRPC's xDS client \
            reads them: success rate and failure percentage only (the five consecutive-error and \
            `always_eject_one_host` fields are refused), `max_ejection_time` 300 s by default, \
            failure percentage on only when `enforcing_failure_percentage` is above 0, the first \
            ejection always allowed",
        ),
        key(
            "interval",
            "`\"10s\"`",
            "time between ejection sweeps (which also return ejected replicas); positive",
        ),
        key(
            "base_ejection_time",
            "`\"30s\"`",
            "an ejection lasts `base_ejection_time × ejections so far` (the multiplier goes down \
            again while the replica stays healthy), at most `max_ejection_time`; positive",
        ),
        key(
            "max_ejection_time",
            "`max(\"300s\", base_ejection_time)`",
            "the longest ejection; not below `base_ejection_time` (Envoy refuses it). gRPC: 300 s",
        ),
        key(
            "max_ejection_time_jitter",
            "`\"0s\"`",
            "Envoy: up to this much random time added to each ejection",
        ),
        key(
            "max_ejection_percent",
            "`10`",
            "percent of the replicas that may be ejected at once, 0..=100. Envoy ejects while `100 \
            × (ejected + 1) / replicas <= max_ejection_percent`: with the default 10, fewer than \
            10 replicas eject nothing unless `always_eject_one_host`",
        ),
        key(
            "always_eject_one_host",
            "`false`",
            "Envoy: one replica may be ejected whatever `max_ejection_percent` says",
        ),
        key(
            "consecutive_5xx",
            "`5`",
            "Envoy: eject after this many 5xx answers in a row (a 500, a 503, a reset, a timeout)",
        ),
        key(
            "enforcing_consecutive_5xx",
            "`100`",
            "Envoy: percent chance that such an outlier is ejected",
        ),
        key(
            "consecutive_gateway_failure",
            "`5`",
            "Envoy: eject after this many 502/503/504 in a row (a 503, a broken connection, a \
            timeout)",
        ),
        key(
            "enforcing_consecutive_gateway_failure",
            "`0`",
            "Envoy: percent chance that such an outlier is ejected (0: counted, never ejected)",
        ),
        key(
            "success_rate_minimum_hosts",
            "`5`",
            "success rate ejection runs only with this many replicas of enough volume",
        ),
        key(
            "success_rate_request_volume",
            "`100`",
            "requests a replica needs in one interval to count for success rate",
        ),
        key(
            "success_rate_stdev_factor",
            "`1900`",
            "thousandths: a replica whose success rate is below `mean − stdev × factor / 1000` is \
            an outlier",
        ),
        key(
            "enforcing_success_rate",
            "`100`",
            "percent chance that a success rate outlier is ejected; with `kind = \"grpc\"`, 0 \
            turns success rate ejection off",
        ),
        key(
            "failure_percentage_threshold",
            "`85`",
            "a replica with at least this percent of failures in an interval is an outlier (gRPC: \
            above it)",
        ),
        key(
            "failure_percentage_minimum_hosts",
            "`5`",
            "failure percentage ejection runs only with this many replicas of enough volume",
        ),
        key(
            "failure_percentage_request_volume",
            "`50`",
            "requests a replica needs in one interval to count for failure percentage",
        ),
        key(
            "enforcing_failure_percentage",
            "`0`",
            "percent chance that a failure percentage outlier is ejected (0: off)",
        ),
    ]],
    expanded: &[],
};

/// `[server.outlier_detection]`: Envoy's `OutlierDetection` fields under Envoy's names; unset
/// fields take Envoy's defaults (gRFC A50's for `kind = "grpc"`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OutlierDetection {
    pub kind: OutlierKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_ejection_time: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ejection_time: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ejection_time_jitter: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_ejection_percent: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub always_eject_one_host: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consecutive_5xx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforcing_consecutive_5xx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consecutive_gateway_failure: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforcing_consecutive_gateway_failure: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success_rate_minimum_hosts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success_rate_request_volume: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success_rate_stdev_factor: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforcing_success_rate: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_percentage_threshold: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_percentage_minimum_hosts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_percentage_request_volume: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforcing_failure_percentage: Option<u32>,
}

impl OutlierDetection {
    /// Envoy's detector configuration: each field set here, Envoy's default for the rest.
    pub fn envoy(&self) -> EnvoyConfig {
        let d = EnvoyConfig::default();
        EnvoyConfig {
            interval: self.interval.unwrap_or(d.interval),
            base_ejection_time: self.base_ejection_time.unwrap_or(d.base_ejection_time),
            max_ejection_time: self.max_ejection_time.or(d.max_ejection_time),
            max_ejection_time_jitter: self
                .max_ejection_time_jitter
                .unwrap_or(d.max_ejection_time_jitter),
            max_ejection_percent: self.max_ejection_percent.unwrap_or(d.max_ejection_percent),
            always_eject_one_host: self
                .always_eject_one_host
                .unwrap_or(d.always_eject_one_host),
            consecutive_5xx: self.consecutive_5xx.unwrap_or(d.consecutive_5xx),
            enforcing_consecutive_5xx: self
                .enforcing_consecutive_5xx
                .unwrap_or(d.enforcing_consecutive_5xx),
            consecutive_gateway_failure: self
                .consecutive_gateway_failure
                .unwrap_or(d.consecutive_gateway_failure),
            enforcing_consecutive_gateway_failure: self
                .enforcing_consecutive_gateway_failure
                .unwrap_or(d.enforcing_consecutive_gateway_failure),
            success_rate_minimum_hosts: self
                .success_rate_minimum_hosts
                .unwrap_or(d.success_rate_minimum_hosts),
            success_rate_request_volume: self
                .success_rate_request_volume
                .unwrap_or(d.success_rate_request_volume),
            success_rate_stdev_factor: self
                .success_rate_stdev_factor
                .unwrap_or(d.success_rate_stdev_factor),
            enforcing_success_rate: self
                .enforcing_success_rate
                .unwrap_or(d.enforcing_success_rate),
            failure_percentage_threshold: self
                .failure_percentage_threshold
                .unwrap_or(d.failure_percentage_threshold),
            failure_percentage_minimum_hosts: self
                .failure_percentage_minimum_hosts
                .unwrap_or(d.failure_percentage_minimum_hosts),
            failure_percentage_request_volume: self
                .failure_percentage_request_volume
                .unwrap_or(d.failure_percentage_request_volume),
            enforcing_failure_percentage: self
                .enforcing_failure_percentage
                .unwrap_or(d.enforcing_failure_percentage),
        }
    }

    /// gRPC's configuration as its xDS client builds it from the cluster's `outlier_detection`
    /// (gRFC A50, "xDS Integration"): the same durations and percent; success rate ejection only
    /// if `enforcing_success_rate` (default 100) is above 0, failure percentage only if
    /// `enforcing_failure_percentage` (default 0) is; `max_ejection_time` defaults to 300 s.
    pub fn grpc(&self) -> GrpcConfig {
        let d = GrpcConfig::default();
        let sr = SuccessRateEjection::default();
        let fp = FailurePercentageEjection::default();
        let sr_enforce = self.enforcing_success_rate.unwrap_or(100);
        let fp_enforce = self.enforcing_failure_percentage.unwrap_or(0);
        GrpcConfig {
            interval: self.interval.unwrap_or(d.interval),
            base_ejection_time: self.base_ejection_time.unwrap_or(d.base_ejection_time),
            max_ejection_time: self.max_ejection_time.unwrap_or(d.max_ejection_time),
            max_ejection_percent: self.max_ejection_percent.unwrap_or(d.max_ejection_percent),
            success_rate: (sr_enforce > 0).then(|| SuccessRateEjection {
                stdev_factor: self.success_rate_stdev_factor.unwrap_or(sr.stdev_factor),
                enforcement_percentage: sr_enforce,
                minimum_hosts: self.success_rate_minimum_hosts.unwrap_or(sr.minimum_hosts),
                request_volume: self
                    .success_rate_request_volume
                    .unwrap_or(sr.request_volume),
            }),
            failure_percentage: (fp_enforce > 0).then(|| FailurePercentageEjection {
                threshold: self.failure_percentage_threshold.unwrap_or(fp.threshold),
                enforcement_percentage: fp_enforce,
                minimum_hosts: self
                    .failure_percentage_minimum_hosts
                    .unwrap_or(fp.minimum_hosts),
                request_volume: self
                    .failure_percentage_request_volume
                    .unwrap_or(fp.request_volume),
            }),
        }
    }

    /// The fields gRPC's outlier detection does not have (A50 reads only success rate and
    /// failure percentage, and adds no jitter to the ejection time), with whether each is set.
    pub fn envoy_only(&self) -> [(&'static str, bool); 6] {
        [
            (
                "max_ejection_time_jitter",
                self.max_ejection_time_jitter.is_some(),
            ),
            ("consecutive_5xx", self.consecutive_5xx.is_some()),
            (
                "enforcing_consecutive_5xx",
                self.enforcing_consecutive_5xx.is_some(),
            ),
            (
                "consecutive_gateway_failure",
                self.consecutive_gateway_failure.is_some(),
            ),
            (
                "enforcing_consecutive_gateway_failure",
                self.enforcing_consecutive_gateway_failure.is_some(),
            ),
            (
                "always_eject_one_host",
                self.always_eject_one_host.is_some(),
            ),
        ]
    }

    /// A detector over `replicas` replicas whose interval timer starts at `start`.
    pub fn detector(&self, replicas: u32, start: Time) -> Detector {
        match self.kind {
            OutlierKind::Envoy => {
                Detector::Envoy(EnvoyDetector::new(self.envoy(), replicas, start))
            }
            OutlierKind::Grpc => Detector::Grpc(GrpcDetector::new(self.grpc(), replicas, start)),
        }
    }
}

/// A window `[from, to)` in which served requests fail (500) with `probability` instead of
/// `server.fail`'s: a bad deploy, a poisoned cache, one replica's failing disk. Same draw as
/// `fail` (common random numbers).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureWindow {
    pub from: Duration,
    pub to: Duration,
    pub probability: f64,
    /// The replica it strikes (0-based); absent = every replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

/// `retry.retry_host_predicate`: which replica a retry (or a hedged copy) may go to.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum HostPredicate {
    /// The balancer picks every attempt afresh: a retry may land on the replica that failed.
    #[default]
    None,
    /// Envoy's `envoy.retry_host_predicates.previous_hosts`: the balancer is asked again (up to
    /// `host_selection_retry_max_attempts` times) while it picks a replica already tried.
    #[serde(alias = "previous_hosts")]
    PreviousHosts,
    /// Every attempt of a call goes to the replica of its first (a client holding one
    /// connection): the retry meets the same host.
    #[serde(alias = "same_host")]
    SameHost,
}

impl HostPredicate {
    pub fn is_default(&self) -> bool {
        *self == HostPredicate::None
    }
}

/// The balancer a tier's callers use, resolved from its `server` keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BalancerSpec {
    pub kind: BalancerKind,
    pub params: Params,
    pub scope: Scope,
    pub panic_threshold: u32,
}

impl super::Server {
    /// The replicas the tier keeps: `replicas`, or with an autoscaler its `max_replicas` (the
    /// slots its replicas come and go in).
    pub fn replica_slots(&self) -> u32 {
        self.autoscale
            .as_ref()
            .and_then(|a| a.max_replicas)
            .map_or(self.replicas, |max| max.max(self.replicas))
    }

    /// The balancer of a replicated tier (`None` for one replica); round robin, shared, by
    /// default.
    pub fn balancer_spec(&self) -> Option<BalancerSpec> {
        if self.replica_slots() <= 1 {
            return None;
        }
        Some(BalancerSpec {
            kind: self.balancer.unwrap_or(BalancerKind::RoundRobin),
            params: Params {
                choice_count: self.choice_count.unwrap_or(balancer::DEFAULT_CHOICE_COUNT),
                decay: self.ewma_decay.unwrap_or(balancer::DEFAULT_DECAY),
            },
            scope: self.balancer_scope.unwrap_or(Scope::Shared),
            panic_threshold: self
                .panic_threshold
                .unwrap_or(balancer::DEFAULT_PANIC_THRESHOLD_PERCENT),
        })
    }

    /// The keys that mean something only with `replicas > 1`, with whether each is set.
    pub fn balancer_keys(&self) -> [(&'static str, bool); 7] {
        [
            ("balancer", self.balancer.is_some()),
            ("choice_count", self.choice_count.is_some()),
            ("ewma_decay", self.ewma_decay.is_some()),
            ("balancer_scope", self.balancer_scope.is_some()),
            ("panic_threshold", self.panic_threshold.is_some()),
            ("outlier_detection", self.outlier_detection.is_some()),
            (
                "replica",
                self.outages.iter().any(|o| o.replica.is_some())
                    || self.capacity_drops.iter().any(|d| d.replica.is_some())
                    || self.slow_windows.iter().any(|w| w.replica.is_some())
                    || self.failure_windows.iter().any(|w| w.replica.is_some()),
            ),
        ]
    }
}

pub(super) fn is_one(n: &u32) -> bool {
    *n == 1
}
