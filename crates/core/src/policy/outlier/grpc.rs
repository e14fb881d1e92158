//! gRPC's `outlier_detection` LB policy (gRFC A50 "gRPC xDS Outlier Detection Support",
//! grpc/proposal `A50-xds-outlier-detection.md`, "Outlier Detection Behavior"; grpc-go
//! `xds/internal/balancer/outlierdetection/balancer.go`, `intervalTimerAlgorithm`).
//!
//! - Only success rate and failure percentage, each on when its config is present (A50: "If set,
//!   success rate ejections will be performed"); with neither, calls are not even counted. Every
//!   call that ends in an error counts as a failure (grpc-go's `incrementCounter`:
//!   `info.Err == nil` is a success), so here every class but success does.
//! - **Each interval**: swap every address's call counter; run success rate, then failure
//!   percentage; then for each address: not ejected with a multiplier above 0, decrement it;
//!   ejected and `now > ejected_at + min(base × multiplier, max(base, max_ejection_time))`,
//!   uneject it. Ejection happens only here and takes the timer's time as its timestamp.
//! - **Success rate**: the addresses with at least `request_volume` calls in the last interval
//!   (grpc-go takes them from all addresses, ejected or not); fewer than `minimum_hosts`, stop.
//!   Mean and population stdev of their success *fractions*; each below `mean − stdev ×
//!   stdev_factor / 1000` is an outlier. **Failure percentage**: the same volume rule with its own
//!   `request_volume` and `minimum_hosts`; an outlier has `100 × failures / calls > threshold`
//!   (strictly, where Envoy's is `≥`).
//! - **Max ejection percent**, checked before each ejection: no ejection while `100 × ejected /
//!   addresses ≥ max_ejection_percent`. Unlike Envoy's source, the first ejection is therefore
//!   always allowed (0 ≥ 10 is false), whatever the number of addresses.
//! - An outlier that is already ejected is left as it is (grpc-go would count it twice).
//!
//! Defaults (A50 and grpc-go `config.go`): interval 10 s, base 30 s, max 300 s, 10 %; success
//! rate: stdev factor 1900, enforcement 100 %, 5 hosts, 100 calls; failure percentage: threshold
//! 85, enforcement 100 % (A50's value; grpc-go's config defaults it to 0), 5 hosts, 50 calls.
//! [`GrpcConfig::default`] has success rate on and failure percentage off: what A50's xDS mapping
//! makes of a cluster whose `outlier_detection` sets neither `enforcing_*` field.

use super::{CallCounter, Counts, enforce, later, percent, positive, success_rate_threshold};
use crate::base::invalid::Invalid;
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::balancer::Draw;

/// A50's `SuccessRateEjection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuccessRateEjection {
    pub stdev_factor: u32,
    pub enforcement_percentage: u32,
    pub minimum_hosts: u32,
    pub request_volume: u32,
}

impl Default for SuccessRateEjection {
    fn default() -> Self {
        SuccessRateEjection {
            stdev_factor: 1900,
            enforcement_percentage: 100,
            minimum_hosts: 5,
            request_volume: 100,
        }
    }
}

/// A50's `FailurePercentageEjection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailurePercentageEjection {
    pub threshold: u32,
    pub enforcement_percentage: u32,
    pub minimum_hosts: u32,
    pub request_volume: u32,
}

impl Default for FailurePercentageEjection {
    fn default() -> Self {
        FailurePercentageEjection {
            threshold: 85,
            enforcement_percentage: 100,
            minimum_hosts: 5,
            request_volume: 50,
        }
    }
}

/// A50's `OutlierDetectionLoadBalancingConfig` (without the child policy: that is the balancer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcConfig {
    pub interval: Duration,
    pub base_ejection_time: Duration,
    pub max_ejection_time: Duration,
    pub max_ejection_percent: u32,
    pub success_rate: Option<SuccessRateEjection>,
    pub failure_percentage: Option<FailurePercentageEjection>,
}

impl Default for GrpcConfig {
    fn default() -> Self {
        GrpcConfig {
            interval: Duration::from_secs(10),
            base_ejection_time: Duration::from_secs(30),
            max_ejection_time: Duration::from_secs(300),
            max_ejection_percent: 10,
            success_rate: Some(SuccessRateEjection::default()),
            failure_percentage: None,
        }
    }
}

impl GrpcConfig {
    /// A50's "Validation" (durations; percentages at most 100), named under `path`. A zero
    /// interval is refused too: the timer would never advance.
    pub fn validate(&self, path: &str) -> Result<(), Invalid> {
        positive(path, "interval", self.interval)?;
        percent(path, "max_ejection_percent", self.max_ejection_percent)?;
        if let Some(sr) = &self.success_rate {
            let p = format!("{path}.success_rate_ejection");
            percent(&p, "enforcement_percentage", sr.enforcement_percentage)?;
        }
        if let Some(fp) = &self.failure_percentage {
            let p = format!("{path}.failure_percentage_ejection");
            percent(&p, "threshold", fp.threshold)?;
            percent(&p, "enforcement_percentage", fp.enforcement_percentage)?;
        }
        Ok(())
    }

    fn counting(&self) -> bool {
        self.success_rate.is_some() || self.failure_percentage.is_some()
    }
}

/// One address's map entry.
#[derive(Clone, Copy, Debug, Default)]
struct Address {
    counter: CallCounter,
    ejected_at: Option<Time>,
    multiplier: u32,
    /// Times this address was ejected (for the report; not part of A50).
    ejections: u32,
}

/// gRPC's outlier detection over one tier's replicas.
#[derive(Clone, Debug)]
pub struct GrpcDetector {
    cfg: GrpcConfig,
    addresses: Vec<Address>,
    ejected: u32,
    next_tick: Time,
    counts: Counts,
}

impl GrpcDetector {
    /// A detector over `replicas` replicas whose interval timer starts at `start`.
    pub fn new(cfg: GrpcConfig, replicas: u32, start: Time) -> Self {
        let next_tick = later(start, cfg.interval);
        GrpcDetector {
            cfg,
            addresses: vec![Address::default(); replicas as usize],
            ejected: 0,
            next_tick,
            counts: Counts::default(),
        }
    }

    /// How many times `replica` has been ejected.
    pub fn ejections(&self, replica: u32) -> u32 {
        self.addresses[replica as usize].ejections
    }

    pub fn next_tick(&self) -> Time {
        self.next_tick
    }

    pub fn is_ejected(&self, replica: u32) -> bool {
        self.addresses[replica as usize].ejected_at.is_some()
    }

    /// The ejection-time multiplier of `replica`.
    pub fn multiplier(&self, replica: u32) -> u32 {
        self.addresses[replica as usize].multiplier
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// A call to `replica` ended in `class` (the picker's `Done` callback).
    pub fn record(&mut self, replica: u32, class: Class) {
        if self.cfg.counting() {
            self.addresses[replica as usize]
                .counter
                .record(class == Class::Success);
        }
    }

    /// `intervalTimerAlgorithm`, run by the timer at `now`.
    pub fn tick(&mut self, now: Time, draw: &mut impl Draw) {
        for a in &mut self.addresses {
            a.counter.swap();
        }
        if let Some(sr) = self.cfg.success_rate {
            self.success_rate(sr, now, draw);
        }
        if let Some(fp) = self.cfg.failure_percentage {
            self.failure_percentage(fp, now, draw);
        }
        let base = self.cfg.base_ejection_time.as_nanos();
        let cap = base.max(self.cfg.max_ejection_time.as_nanos());
        for a in &mut self.addresses {
            match a.ejected_at {
                None => a.multiplier = a.multiplier.saturating_sub(1),
                Some(at) => {
                    let time = base.saturating_mul(u64::from(a.multiplier)).min(cap);
                    if now.0 > at.0.saturating_add(time) {
                        a.ejected_at = None;
                        self.ejected -= 1;
                        self.counts.unejected += 1;
                    }
                }
            }
        }
        self.next_tick = later(now, self.cfg.interval);
    }

    /// Outliers by success fraction below `mean − stdev × factor / 1000`.
    fn success_rate(&mut self, cfg: SuccessRateEjection, now: Time, draw: &mut impl Draw) {
        let volume = u64::from(cfg.request_volume);
        let considered = |a: &Address| a.counter.last_interval().filter(|b| b.total >= volume);
        let fractions = self
            .addresses
            .iter()
            .filter_map(considered)
            .map(|b| b.success as f64 / b.total as f64);
        if (fractions.clone().count() as u64) < u64::from(cfg.minimum_hosts) {
            return;
        }
        let (_, required) = success_rate_threshold(fractions, cfg.stdev_factor);
        for i in 0..self.addresses.len() {
            let Some(b) = considered(&self.addresses[i]) else {
                continue;
            };
            if (b.success as f64 / b.total as f64) < required {
                self.try_eject(i, cfg.enforcement_percentage, now, draw);
            }
        }
    }

    /// Outliers by `100 × failures / calls > threshold`.
    fn failure_percentage(
        &mut self,
        cfg: FailurePercentageEjection,
        now: Time,
        draw: &mut impl Draw,
    ) {
        let volume = u64::from(cfg.request_volume);
        let considered = |a: &Address| a.counter.last_interval().filter(|b| b.total >= volume);
        let hosts = self.addresses.iter().filter_map(considered).count();
        if (hosts as u64) < u64::from(cfg.minimum_hosts) {
            return;
        }
        for i in 0..self.addresses.len() {
            let Some(b) = considered(&self.addresses[i]) else {
                continue;
            };
            let failure_percentage = (b.total - b.success) as f64 / b.total as f64 * 100.0;
            if failure_percentage > f64::from(cfg.threshold) {
                self.try_eject(i, cfg.enforcement_percentage, now, draw);
            }
        }
    }

    /// The max-percent check, the enforcement roll, `ejectEndpoint`.
    fn try_eject(&mut self, i: usize, enforcement: u32, now: Time, draw: &mut impl Draw) {
        if self.addresses[i].ejected_at.is_some() {
            return;
        }
        self.counts.detected += 1;
        let ejected_percent = f64::from(self.ejected) / self.addresses.len() as f64 * 100.0;
        if ejected_percent >= f64::from(self.cfg.max_ejection_percent) {
            self.counts.overflow += 1;
            return;
        }
        if enforce(enforcement, draw) {
            let a = &mut self.addresses[i];
            a.ejected_at = Some(now);
            a.multiplier = a.multiplier.saturating_add(1);
            a.ejections += 1;
            self.ejected += 1;
            self.counts.enforced += 1;
        }
    }
}
