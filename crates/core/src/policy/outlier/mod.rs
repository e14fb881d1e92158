//! Outlier ejection: passive health checking that takes a replica out of the balancer's
//! choice for a while, as two pure state machines. No model key selects them yet.
//!
//! - [`envoy`]: Envoy's `outlier_detection` (envoyproxy/envoy
//!   `source/common/upstream/outlier_detection_impl.cc`, defaults in `outlier_detection_impl.h`
//!   and `api/envoy/config/cluster/v3/outlier_detection.proto`; docs "Outlier detection"):
//!   consecutive 5xx and consecutive gateway failures eject at once, success rate and failure
//!   percentage at each interval; ejection time `base × multiplier` capped by `max_ejection_time`.
//! - [`grpc`]: gRPC's `outlier_detection` LB policy (gRFC A50 "gRPC xDS Outlier Detection
//!   Support", grpc/proposal `A50-xds-outlier-detection.md`; grpc-go
//!   `xds/internal/balancer/outlierdetection/balancer.go`): success rate and failure percentage
//!   only, evaluated at each interval.
//!
//! # How the engine will drive it
//!
//! One detector per balancer (see [`crate::policy::balancer`]): Envoy keeps one per cluster in
//! each proxy and gRPC one per channel, so a per-client balancer has its own detector and a shared
//! one shares it. The engine calls `record(replica, class, ..)` when an attempt's answer (or
//! timeout) reaches the client, `tick(now, ..)` at every interval boundary (`next_tick()`; the
//! timer starts when the detector is built, as both arm theirs then) and asks `is_ejected(replica)`
//! to build the hosts a pick chooses among ([`crate::policy::balancer::hosts_to_use`]). Ejection
//! starts in `record` or `tick` and ends only in `tick`, so between those calls the answer needs
//! no clock.
//!
//! The `enforcing_*` percentages and Envoy's ejection jitter draw from a stream of the detector's
//! own (keyed like its balancer's, with a purpose of its own), passed in as a
//! [`Draw`]: an enforcement roll never shifts an arrival, service,
//! loss, backoff or balancer draw. A roll is drawn only when its outcome is uncertain (a
//! percentage strictly between 0 and 100; a jitter above 0), where Envoy always draws: the
//! decisions are the same, the stream is simply not spent on certainties.

pub mod envoy;
pub mod grpc;

#[cfg(test)]
mod tests;

use crate::base::invalid::{Invalid, invalid};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::balancer::Draw;
use envoy::EnvoyDetector;
use grpc::GrpcDetector;

/// Either detector, behind the four calls the engine makes (see the module header).
#[derive(Clone, Debug)]
pub enum Detector {
    Envoy(EnvoyDetector),
    Grpc(GrpcDetector),
}

impl Detector {
    /// An attempt sent to `replica` ended in `class` at `now`.
    pub fn record(&mut self, replica: u32, class: Class, now: Time, draw: &mut impl Draw) {
        match self {
            Detector::Envoy(d) => d.record(replica, class, now, draw),
            Detector::Grpc(d) => d.record(replica, class),
        }
    }

    /// The interval timer fired at `now`.
    pub fn tick(&mut self, now: Time, draw: &mut impl Draw) {
        match self {
            Detector::Envoy(d) => d.tick(now, draw),
            Detector::Grpc(d) => d.tick(now, draw),
        }
    }

    /// When the engine must call [`tick`](Self::tick) next.
    pub fn next_tick(&self) -> Time {
        match self {
            Detector::Envoy(d) => d.next_tick(),
            Detector::Grpc(d) => d.next_tick(),
        }
    }

    pub fn is_ejected(&self, replica: u32) -> bool {
        match self {
            Detector::Envoy(d) => d.is_ejected(replica),
            Detector::Grpc(d) => d.is_ejected(replica),
        }
    }

    /// How many times `replica` has been ejected so far.
    pub fn ejections(&self, replica: u32) -> u32 {
        match self {
            Detector::Envoy(d) => d.ejections(replica),
            Detector::Grpc(d) => d.ejections(replica),
        }
    }

    pub fn counts(&self) -> Counts {
        match self {
            Detector::Envoy(d) => d.counts(),
            Detector::Grpc(d) => d.counts(),
        }
    }
}

/// Successes and attempts in one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bucket {
    success: u64,
    total: u64,
}

/// Envoy's `SuccessRateAccumulator` and gRFC A50's "Call Counter" (A50: "This design is based
/// directly on Envoy's implementation"): the active bucket counts the current interval; at each
/// interval the other is zeroed and the two swap, so the inactive one holds the interval just
/// ended, which is what the algorithms read.
#[derive(Clone, Copy, Debug, Default)]
struct CallCounter {
    active: Bucket,
    inactive: Bucket,
}

impl CallCounter {
    fn record(&mut self, success: bool) {
        self.active.total += 1;
        self.active.success += u64::from(success);
    }
    fn swap(&mut self) {
        self.inactive = self.active;
        self.active = Bucket::default();
    }
    /// The interval just ended, `None` without any request.
    fn last_interval(&self) -> Option<Bucket> {
        (self.inactive.total > 0).then_some(self.inactive)
    }
}

/// The mean and population standard deviation of `values` (both Envoy's
/// `successRateEjectionThreshold` and grpc-go's `meanAndStdDev` divide the variance by `n`).
fn mean_and_stdev(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count() as f64;
    let mean = values.clone().sum::<f64>() / n;
    let variance = values.map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, variance.sqrt())
}

/// The success-rate ejection threshold of a non-empty set of success rates:
/// `(mean, mean − stdev × stdev_factor / 1000)`.
pub fn success_rate_threshold(
    rates: impl Iterator<Item = f64> + Clone,
    stdev_factor: u32,
) -> (f64, f64) {
    let (mean, stdev) = mean_and_stdev(rates);
    (mean, mean - stdev * (f64::from(stdev_factor) / 1000.0))
}

/// An `enforcing_*` roll: Envoy's `featureEnabled(key, pct)` (`random() % 100 < pct`) and A50's
/// "choose a random integer in [0, 100). If that number is less than `enforcement_percentage`".
fn enforce(percent: u32, draw: &mut impl Draw) -> bool {
    percent >= 100 || (percent > 0 && (draw.below(100) as u32) < percent)
}

/// A percentage field: at most 100 (both protos: `uint32 = {lte: 100}`).
fn percent(path: &str, field: &str, value: u32) -> Result<(), Invalid> {
    if value > 100 {
        return Err(invalid(
            &format!("{path}.{field}"),
            format!("must be a percentage in 0..=100, got {value}"),
        ));
    }
    Ok(())
}

/// A duration field that must be positive (Envoy's `duration = {gt {}}`).
fn positive(path: &str, field: &str, value: Duration) -> Result<(), Invalid> {
    if value == Duration::ZERO {
        return Err(invalid(
            &format!("{path}.{field}"),
            "must be a positive duration, e.g. \"10s\"",
        ));
    }
    Ok(())
}

/// `t + d`, saturating: the next interval tick.
fn later(t: Time, d: Duration) -> Time {
    Time(t.0.saturating_add(d.as_nanos()))
}

/// How many ejections happened, and how many were detected but not carried out, over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Outliers found (Envoy's `ejections_detected_*`).
    pub detected: u64,
    /// Ejections carried out (`ejections_enforced_*`, gRPC's `ejections_enforced`).
    pub enforced: u64,
    /// Refused by `max_ejection_percent` (`ejections_overflow`).
    pub overflow: u64,
    /// Ejections ended.
    pub unejected: u64,
}
