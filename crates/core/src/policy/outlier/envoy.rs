//! Envoy's `outlier_detection` (envoyproxy/envoy `source/common/upstream/
//! outlier_detection_impl.cc`, `DetectorImpl` and `DetectorHostMonitorImpl`; the architecture
//! overview "Outlier detection", docs/root/intro/arch_overview/upstream/outlier.rst).
//!
//! - **Consecutive 5xx** (`putHttpResponseCode`): every 5xx counts, any other answer resets the
//!   count; the host is ejected when the count *reaches* `consecutive_5xx` (`++n == threshold`).
//!   **Consecutive gateway failures** count 502, 503 and 504 the same way (another 5xx resets
//!   them). The attempt to eject resets the count (`onConsecutiveErrorWorker`), enforced or not;
//!   an ejected host's count is not reset and, having passed the threshold, cannot fire again
//!   until it is unejected (which resets every count).
//! - **Answer classes**: a 5xx from the handler is a 500; 503 (outage, full queue, shedding,
//!   "overloaded"), a broken connection (`LocalOriginConnectFailed` → 503) and a timeout
//!   (`LocalOriginTimeout` → 504) are gateway failures; every other answer (2xx, 4xx, 409, 429)
//!   is a success (`split_external_local_origin_errors = false`, the default).
//! - **Ejecting** (`ejectHost`): allowed while `100 × (ejected + 1) / hosts ≤
//!   max_ejection_percent`, or when nothing is ejected and `always_eject_one_host` is set. The
//!   proto says 10 % "will eject at least one host regardless of the value", but the source does
//!   that only with `always_eject_one_host` (default false): with the default 10 % a tier of
//!   fewer than 10 replicas ejects nothing. Then the `enforcing_*` roll; if it passes the host is
//!   ejected, its ejection count grows and its multiplier goes up by one unless `multiplier ×
//!   base ≥ max + base` (so it stops one step past the cap).
//! - **Each interval** (`onIntervalTimer`): unejects every host with `min(base × multiplier,
//!   max_ejection_time) + jitter ≤ now − ejected_at`; swaps the success-rate buckets; runs success
//!   rate and failure percentage over the last interval (below); then decrements the multiplier of
//!   every host not ejected that was unejected at least one interval ago. An ejection therefore
//!   lasts until the first interval tick after its time is up.
//! - **Success rate** (`processSuccessRateEjections`, `successRateEjectionThreshold`): skipped if
//!   the tier has fewer hosts than both `success_rate_minimum_hosts` and
//!   `failure_percentage_minimum_hosts`. Among hosts not ejected, those with at least
//!   `success_rate_request_volume` requests in the last interval are valid; with at least
//!   `success_rate_minimum_hosts` valid hosts, each one whose success rate (in percent) is below
//!   `mean − stdev × success_rate_stdev_factor / 1000` (population stdev) is an outlier.
//!   **Failure percentage**: with at least `failure_percentage_minimum_hosts` hosts of at least
//!   `failure_percentage_request_volume` requests, each with `100 − rate ≥ threshold` is one.
//!   Hosts are taken in replica order (Envoy's is a hash map's); one already ejected in this
//!   sweep by success rate is not ejected again (Envoy asserts it cannot be).
//!
//! Not modelled: `split_external_local_origin_errors` (and the local-origin detectors it
//! enables), unejection by an active health check, extension monitors.
//!
//! Defaults (`DetectorConfig` in `outlier_detection_impl.h`): interval 10 s, base 30 s, max
//! `max(300 s, base)`, no jitter, 10 %, 5 consecutive 5xx enforced at 100 %, 5 consecutive
//! gateway failures enforced at 0 %, success rate on (5 hosts, 100 requests, factor 1900, 100 %),
//! failure percentage off (85 %, 5 hosts, 50 requests, enforced at 0 %).

use super::{CallCounter, Counts, enforce, later, percent, positive, success_rate_threshold};
use crate::base::invalid::{Invalid, invalid};
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use crate::policy::balancer::Draw;

/// Envoy's `OutlierDetection` fields this model uses, with Envoy's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvoyConfig {
    pub interval: Duration,
    pub base_ejection_time: Duration,
    /// `None`: `max(300 s, base_ejection_time)`.
    pub max_ejection_time: Option<Duration>,
    pub max_ejection_time_jitter: Duration,
    pub max_ejection_percent: u32,
    pub always_eject_one_host: bool,
    pub consecutive_5xx: u32,
    pub enforcing_consecutive_5xx: u32,
    pub consecutive_gateway_failure: u32,
    pub enforcing_consecutive_gateway_failure: u32,
    pub success_rate_minimum_hosts: u32,
    pub success_rate_request_volume: u32,
    pub success_rate_stdev_factor: u32,
    pub enforcing_success_rate: u32,
    pub failure_percentage_threshold: u32,
    pub failure_percentage_minimum_hosts: u32,
    pub failure_percentage_request_volume: u32,
    pub enforcing_failure_percentage: u32,
}

impl Default for EnvoyConfig {
    fn default() -> Self {
        EnvoyConfig {
            interval: Duration::from_secs(10),
            base_ejection_time: Duration::from_secs(30),
            max_ejection_time: None,
            max_ejection_time_jitter: Duration::ZERO,
            max_ejection_percent: 10,
            always_eject_one_host: false,
            consecutive_5xx: 5,
            enforcing_consecutive_5xx: 100,
            consecutive_gateway_failure: 5,
            enforcing_consecutive_gateway_failure: 0,
            success_rate_minimum_hosts: 5,
            success_rate_request_volume: 100,
            success_rate_stdev_factor: 1900,
            enforcing_success_rate: 100,
            failure_percentage_threshold: 85,
            failure_percentage_minimum_hosts: 5,
            failure_percentage_request_volume: 50,
            enforcing_failure_percentage: 0,
        }
    }
}

impl EnvoyConfig {
    /// `max_ejection_time`, or Envoy's default `max(300 s, base_ejection_time)`.
    pub fn max_ejection_time(&self) -> Duration {
        self.max_ejection_time
            .unwrap_or(Duration::from_secs(300).max(self.base_ejection_time))
    }

    /// The proto's bounds and `DetectorImpl::create`'s check, named under `path`.
    pub fn validate(&self, path: &str) -> Result<(), Invalid> {
        positive(path, "interval", self.interval)?;
        positive(path, "base_ejection_time", self.base_ejection_time)?;
        if let Some(max) = self.max_ejection_time {
            positive(path, "max_ejection_time", max)?;
        }
        for (field, value) in [
            ("max_ejection_percent", self.max_ejection_percent),
            ("enforcing_consecutive_5xx", self.enforcing_consecutive_5xx),
            (
                "enforcing_consecutive_gateway_failure",
                self.enforcing_consecutive_gateway_failure,
            ),
            ("enforcing_success_rate", self.enforcing_success_rate),
            (
                "failure_percentage_threshold",
                self.failure_percentage_threshold,
            ),
            (
                "enforcing_failure_percentage",
                self.enforcing_failure_percentage,
            ),
        ] {
            percent(path, field, value)?;
        }
        if self.max_ejection_time() < self.base_ejection_time {
            return Err(invalid(
                &format!("{path}.max_ejection_time"),
                "cannot be smaller than base_ejection_time (Envoy refuses it)",
            ));
        }
        Ok(())
    }
}

/// Why a host was found an outlier (Envoy's `OutlierEjectionType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Consecutive5xx,
    ConsecutiveGatewayFailure,
    SuccessRate,
    FailurePercentage,
}

/// What Envoy's outlier detector sees of an answer (`putHttpResponseCode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Not a 5xx.
    Success,
    /// A 5xx other than 502, 503, 504.
    ServerError,
    /// 502, 503 or 504 (`isGatewayError`).
    GatewayError,
}

impl Answer {
    /// The HTTP answer Envoy's detector counts for an attempt's class (see the module header).
    pub fn of(class: Class) -> Answer {
        match class {
            Class::ServerError => Answer::ServerError,
            Class::Unavailable | Class::Overloaded | Class::Timeout | Class::Connection => {
                Answer::GatewayError
            }
            Class::Success | Class::Throttled | Class::Conflict | Class::ClientError => {
                Answer::Success
            }
        }
    }
}

/// One host's monitor (`DetectorHostMonitorImpl`).
#[derive(Clone, Debug, Default)]
struct Host {
    consecutive_5xx: u32,
    consecutive_gateway: u32,
    counter: CallCounter,
    ejected: bool,
    last_ejection: Option<Time>,
    last_unejection: Option<Time>,
    ejections: u32,
    /// `eject_time_backoff_`: the ejection-time multiplier.
    multiplier: u32,
    jitter: Duration,
}

/// Envoy's outlier detector over one tier's replicas.
#[derive(Clone, Debug)]
pub struct EnvoyDetector {
    cfg: EnvoyConfig,
    hosts: Vec<Host>,
    /// `ejections_active`.
    active: u32,
    next_tick: Time,
    /// The last sweep's `(mean, threshold)` success rates in percent, when it computed them.
    success_rate: Option<(f64, f64)>,
    counts: Counts,
    /// Reused by each sweep: `(replica, success rate %)` of the hosts with enough volume.
    valid_sr: Vec<(u32, f64)>,
    valid_fp: Vec<(u32, f64)>,
}

impl EnvoyDetector {
    /// A detector over `replicas` replicas whose interval timer starts at `start`.
    pub fn new(cfg: EnvoyConfig, replicas: u32, start: Time) -> Self {
        let next_tick = later(start, cfg.interval);
        EnvoyDetector {
            cfg,
            hosts: vec![Host::default(); replicas as usize],
            active: 0,
            next_tick,
            success_rate: None,
            counts: Counts::default(),
            valid_sr: Vec::with_capacity(replicas as usize),
            valid_fp: Vec::with_capacity(replicas as usize),
        }
    }

    /// When the engine must call [`tick`](Self::tick) next.
    pub fn next_tick(&self) -> Time {
        self.next_tick
    }

    pub fn is_ejected(&self, replica: u32) -> bool {
        self.hosts[replica as usize].ejected
    }

    /// How many times `replica` has been ejected (`num_ejections`).
    pub fn ejections(&self, replica: u32) -> u32 {
        self.hosts[replica as usize].ejections
    }

    /// The ejection-time multiplier of `replica` (`ejectTimeBackoff`).
    pub fn multiplier(&self, replica: u32) -> u32 {
        self.hosts[replica as usize].multiplier
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The last sweep's success-rate mean and ejection threshold, in percent (Envoy's
    /// `successRateAverage` and `successRateEjectionThreshold`; `None` where Envoy reports -1).
    pub fn success_rate(&self) -> Option<(f64, f64)> {
        self.success_rate
    }

    /// An attempt sent to `replica` ended in `class`; consecutive-error ejections happen here.
    pub fn record(&mut self, replica: u32, class: Class, now: Time, draw: &mut impl Draw) {
        let answer = Answer::of(class);
        let cfg = &self.cfg;
        let h = &mut self.hosts[replica as usize];
        h.counter.record(answer == Answer::Success);
        let mut fired = [None, None];
        match answer {
            Answer::Success => {
                h.consecutive_5xx = 0;
                h.consecutive_gateway = 0;
            }
            Answer::ServerError | Answer::GatewayError => {
                if answer == Answer::GatewayError {
                    h.consecutive_gateway += 1;
                    if h.consecutive_gateway == cfg.consecutive_gateway_failure {
                        fired[0] = Some(Cause::ConsecutiveGatewayFailure);
                    }
                } else {
                    h.consecutive_gateway = 0;
                }
                h.consecutive_5xx += 1;
                if h.consecutive_5xx == cfg.consecutive_5xx {
                    fired[1] = Some(Cause::Consecutive5xx);
                }
            }
        }
        for cause in fired.into_iter().flatten() {
            self.on_consecutive(replica, cause, now, draw);
        }
    }

    /// `onConsecutiveErrorWorker`: nothing for a host already ejected; else try, then reset.
    fn on_consecutive(&mut self, replica: u32, cause: Cause, now: Time, draw: &mut impl Draw) {
        if self.hosts[replica as usize].ejected {
            return;
        }
        self.counts.detected += 1;
        self.eject(replica, cause, now, draw);
        let h = &mut self.hosts[replica as usize];
        match cause {
            Cause::ConsecutiveGatewayFailure => h.consecutive_gateway = 0,
            _ => h.consecutive_5xx = 0,
        }
    }

    /// `ejectHost`: the max-percent check, the enforcement roll, the ejection.
    fn eject(&mut self, replica: u32, cause: Cause, now: Time, draw: &mut impl Draw) {
        let cfg = &self.cfg;
        let max_percent = f64::from(cfg.max_ejection_percent.min(100));
        let ejected_percent = 100.0 * f64::from(self.active + 1) / self.hosts.len() as f64;
        let allowed =
            ejected_percent <= max_percent || (cfg.always_eject_one_host && self.active == 0);
        if !allowed {
            self.counts.overflow += 1;
            return;
        }
        let enforcing = match cause {
            Cause::Consecutive5xx => cfg.enforcing_consecutive_5xx,
            Cause::ConsecutiveGatewayFailure => cfg.enforcing_consecutive_gateway_failure,
            Cause::SuccessRate => cfg.enforcing_success_rate,
            Cause::FailurePercentage => cfg.enforcing_failure_percentage,
        };
        if !enforce(enforcing, draw) {
            return;
        }
        let jitter_ms = cfg.max_ejection_time_jitter.as_nanos() / 1_000_000;
        let jitter = if jitter_ms > 0 {
            Duration::from_millis(draw.below(jitter_ms + 1))
        } else {
            Duration::ZERO
        };
        let (base, max) = (
            cfg.base_ejection_time.as_nanos(),
            cfg.max_ejection_time().as_nanos(),
        );
        self.active += 1;
        self.counts.enforced += 1;
        let h = &mut self.hosts[replica as usize];
        h.ejected = true;
        h.ejections += 1;
        h.last_ejection = Some(now);
        h.jitter = jitter;
        if u64::from(h.multiplier).saturating_mul(base) < max.saturating_add(base) {
            h.multiplier += 1;
        }
    }

    /// The interval timer fired at `now` (the engine calls it at [`next_tick`](Self::next_tick)).
    pub fn tick(&mut self, now: Time, draw: &mut impl Draw) {
        let (base, max) = (
            self.cfg.base_ejection_time.as_nanos(),
            self.cfg.max_ejection_time().as_nanos(),
        );
        for i in 0..self.hosts.len() {
            let h = &self.hosts[i];
            if let (true, Some(at)) = (h.ejected, h.last_ejection) {
                let time = (base.saturating_mul(u64::from(h.multiplier))).min(max);
                if time.saturating_add(h.jitter.as_nanos()) <= now.0.saturating_sub(at.0) {
                    self.uneject(i, now);
                }
            }
            self.hosts[i].counter.swap();
        }
        self.sweep(now, draw);
        let interval = self.cfg.interval.as_nanos();
        for h in self.hosts.iter_mut().filter(|h| !h.ejected) {
            if let Some(at) = h.last_unejection
                && now.0.saturating_sub(at.0) >= interval
            {
                h.multiplier = h.multiplier.saturating_sub(1);
            }
        }
        self.next_tick = later(now, self.cfg.interval);
    }

    /// `unejectHost`: the counts reset so that a few new errors do not eject it again at once.
    fn uneject(&mut self, i: usize, now: Time) {
        self.active -= 1;
        self.counts.unejected += 1;
        let h = &mut self.hosts[i];
        h.ejected = false;
        h.consecutive_5xx = 0;
        h.consecutive_gateway = 0;
        h.last_unejection = Some(now);
    }

    /// `processSuccessRateEjections` for external-origin answers.
    fn sweep(&mut self, now: Time, draw: &mut impl Draw) {
        let cfg = &self.cfg;
        self.success_rate = None;
        let n = self.hosts.len() as u64;
        if n < u64::from(cfg.success_rate_minimum_hosts)
            && n < u64::from(cfg.failure_percentage_minimum_hosts)
        {
            return;
        }
        let (mut sr, mut fp) = (
            std::mem::take(&mut self.valid_sr),
            std::mem::take(&mut self.valid_fp),
        );
        sr.clear();
        fp.clear();
        for (i, h) in self.hosts.iter().enumerate().filter(|(_, h)| !h.ejected) {
            let Some(b) = h.counter.last_interval() else {
                continue;
            };
            let rate = b.success as f64 * 100.0 / b.total as f64;
            if b.total >= u64::from(cfg.success_rate_request_volume) {
                sr.push((i as u32, rate));
            }
            if b.total >= u64::from(cfg.failure_percentage_request_volume) {
                fp.push((i as u32, rate));
            }
        }
        if !sr.is_empty() && sr.len() as u64 >= u64::from(cfg.success_rate_minimum_hosts) {
            let rates = sr.iter().map(|&(_, rate)| rate);
            let (mean, threshold) = success_rate_threshold(rates, cfg.success_rate_stdev_factor);
            self.success_rate = Some((mean, threshold));
            for &(r, _) in sr.iter().filter(|&&(_, rate)| rate < threshold) {
                self.counts.detected += 1;
                self.eject(r, Cause::SuccessRate, now, draw);
            }
        }
        let fp_threshold = f64::from(self.cfg.failure_percentage_threshold);
        if !fp.is_empty() && fp.len() as u64 >= u64::from(self.cfg.failure_percentage_minimum_hosts)
        {
            for &(r, _) in fp.iter().filter(|&&(_, rate)| 100.0 - rate >= fp_threshold) {
                if !self.hosts[r as usize].ejected {
                    self.counts.detected += 1;
                    self.eject(r, Cause::FailurePercentage, now, draw);
                }
            }
        }
        (self.valid_sr, self.valid_fp) = (sr, fp);
    }
}
