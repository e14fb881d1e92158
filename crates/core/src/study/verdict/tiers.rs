//! One tier judged: its capacity within its callers' timeout, the healthy state (the lowest
//! fixed point of attempts against the share of late replies) and the all-fail state (every
//! call fails, each hop above and the tier's own callers retrying as their policies allow).

use super::attempts::{breaker_pass, healthy_per_call, limiter_pass, orbit};
use super::queueing::Station;
use super::{TierVerdict, Verdict};
use crate::base::prose::short;
use crate::model::{FailMode, Model, WorkloadKind};
use crate::policy::Class;
use crate::policy::budget::Flow;
use crate::policy::shedding::SheddingKind;
use crate::sim::path::spec::{Hop, PathSpec};

/// Seconds of a duration.
fn secs(d: crate::base::time::Duration) -> f64 {
    d.0 as f64 / 1e9
}

/// The clients' calls per second when healthy: `workload.rate`, or a closed loop's throughput
/// (workers over think and response time, each tier of the path answering at that load, tier
/// 0 bounding it).
pub(super) fn healthy_client_calls(m: &Model, path: &PathSpec) -> f64 {
    let w = &m.workload;
    if w.kind != WorkloadKind::Closed {
        return w.rate.0;
    }
    let stations: Vec<Station> = path
        .tiers
        .iter()
        .zip(&path.hops)
        .map(|(t, h)| Station::of(&t.server, &h.network))
        .collect();
    let response = |x: f64| stations.iter().map(|s| s.response(x)).sum::<f64>();
    let (n, think) = (w.workers as f64, w.think.mean_ns() / 1e9);
    let cycle = |x: f64| x * (think + response(x)) - n;
    let top = stations
        .iter()
        .filter_map(Station::capacity)
        .fold(f64::INFINITY, f64::min);
    let mut hi = top.min(n / (think + response(0.0)).max(1e-12));
    if cycle(hi) <= 0.0 {
        return hi;
    }
    let mut lo = 0.0;
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if cycle(mid) <= 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// A closed loop's calls per second when every call fails after `orbit_s` seconds (an open
/// workload's rate does not change).
fn all_fail_client_calls(m: &Model, orbit_s: f64) -> f64 {
    let w = &m.workload;
    match w.kind {
        WorkloadKind::Closed => w.workers as f64 / (w.think.mean_ns() / 1e9 + orbit_s).max(1e-9),
        _ => w.rate.0,
    }
}

/// The state every retry loop above and at a tier reaches when all its calls fail: calls into
/// the tier's callers per second, and the attempts per second they send, with what decided it.
struct AllFail {
    attempts: f64,
    terms: Vec<String>,
}

/// Everything judging tier `k` needs.
pub(super) struct Judge<'a> {
    pub m: &'a Model,
    pub path: &'a PathSpec,
    /// Healthy calls per second into each hop, filled top down.
    pub healthy_calls: Vec<f64>,
}

impl Judge<'_> {
    fn processes(&self, k: usize) -> f64 {
        if k == 0 {
            self.m.workload.processes.max(1) as f64
        } else {
            1.0
        }
    }

    /// The model table whose retry policy is hop `k`'s, for a finding's location.
    pub fn retry_table(&self, k: usize) -> String {
        if !self.m.layers.is_empty() {
            format!("layer[{k}]")
        } else if k == 0 {
            "retry".into()
        } else {
            format!("tier[{}].retry", k - 1)
        }
    }

    /// The model table of tier `k`'s server.
    pub fn server_table(&self, k: usize) -> String {
        if k == self.path.bottom() {
            "server".into()
        } else if !self.m.layers.is_empty() {
            format!("layer[{}]", k + 1)
        } else {
            format!("tier[{k}].server")
        }
    }

    /// Tier `k` judged; the healthy calls of hop `k` must be known.
    pub fn tier(&mut self, k: usize) -> TierVerdict {
        let (hop, server) = (&self.path.hops[k], &self.path.tiers[k].server);
        let station = Station::of(server, &hop.network);
        let timeout = hop.retry.timeout.map(|t| secs(t.ceiling()));
        let loss = hop.network.request_loss;
        let mut terms = Vec::new();
        let capacity = match timeout {
            Some(t) => station.timeout_capacity(t),
            None => station.capacity().unwrap_or(f64::INFINITY),
        };
        terms.push(self.capacity_term(&station, capacity, timeout));
        let healthy = self.healthy(k, &station, capacity);
        match healthy {
            Some(a) => terms.push(format!(
                "healthy: {} calls/s make {} attempts/s",
                short(self.healthy_calls[k]),
                short(a)
            )),
            None => terms.push(format!(
                "healthy: {} calls/s and the retries of late replies reach capacity: no healthy state",
                short(self.healthy_calls[k])
            )),
        }
        if k + 1 < self.path.hops.len() {
            let served = healthy.unwrap_or(capacity.min(1e300)) * (1.0 - loss);
            // A tier that fans out makes `k` calls below for each request it serves.
            let calls = server.fanout.map_or(1.0, |f| f64::from(f.k));
            self.healthy_calls.push(served * calls);
        }
        let removed = self.work_removed(k, &station, timeout);
        let all_fail = self.all_fail(k);
        let arriving =
            all_fail.attempts * (1.0 - loss) * f64::from(u8::from(server.fail != FailMode::Always));
        let fail_capacity = self.all_fail_capacity(k, &station, timeout, capacity, &mut terms);
        terms.extend(all_fail.terms);
        let healthy_ratio = healthy.map_or(f64::INFINITY, |a| a * (1.0 - loss) / capacity);
        let (verdict, ratio, why) = if healthy.is_none() {
            let edge = self.edge_ratio(k, &station, capacity);
            (
                Verdict::Overloaded,
                edge,
                format!(
                    "over capacity while healthy: {} calls/s with the retries of late replies need {} x the {} requests/s it serves",
                    short(self.healthy_calls[k]),
                    short(edge),
                    short(capacity)
                ),
            )
        } else if let Some(reason) = removed {
            terms.push(reason.clone());
            (
                Verdict::Stable,
                healthy_ratio,
                format!(
                    "no all-fail state: {reason}; healthy load {} of capacity",
                    pct(healthy_ratio)
                ),
            )
        } else {
            let ratio = arriving / fail_capacity;
            let v = if ratio >= 1.0 {
                Verdict::Vulnerable
            } else {
                Verdict::Stable
            };
            let words = if ratio >= 1.0 {
                "a trigger can tip it: when every call fails"
            } else {
                "the all-fail state cannot sustain itself: when every call fails"
            };
            (
                v,
                ratio,
                format!(
                    "{words} {} attempts/s arrive against {} requests/s served within the timeout",
                    short(arriving),
                    short(fail_capacity),
                ),
            )
        };
        let table = if verdict == Verdict::Overloaded {
            self.server_table(k)
        } else {
            self.retry_table(k)
        };
        TierVerdict {
            tier: k,
            name: self.path.tiers[k].name.clone(),
            verdict,
            capacity_per_s: capacity.is_finite().then_some(capacity),
            healthy_per_s: healthy,
            all_fail_per_s: arriving,
            ratio,
            table,
            why,
            terms,
        }
    }

    fn capacity_term(&self, s: &Station, capacity: f64, timeout: Option<f64>) -> String {
        let Some(full) = s.capacity().map(|c| format!("{}/s", short(c))) else {
            return "capacity: unlimited workers that do not slow down: no load makes a reply later"
                .into();
        };
        match timeout {
            Some(t) => format!(
                "capacity: {full}; {}/s with a mean reply within the {} s timeout",
                short(capacity),
                short(t)
            ),
            None => format!("capacity: {full}; the callers have no timeout"),
        }
    }

    /// The lowest fixed point of `a = calls x attempts per call(share late at a)`, with the
    /// budget's cap on retries; none when it reaches `capacity` (no healthy state).
    fn healthy(&self, k: usize, s: &Station, capacity: f64) -> Option<f64> {
        let hop = &self.path.hops[k];
        let x = self.healthy_calls[k];
        let fail_p = match hop_fail(self.path, k) {
            FailMode::Never => 0.0,
            FailMode::Always => 1.0,
            FailMode::Probability(p) => p,
        };
        let loss = hop.network.request_loss + hop.network.response_loss;
        let mut a = x;
        for _ in 0..500 {
            if a * (1.0 - hop.network.request_loss) >= capacity {
                return None;
            }
            let late = hop.retry.timeout.map_or(0.0, |t| {
                s.late_share(a * (1.0 - hop.network.request_loss), secs(t.ceiling()))
            });
            let q = 1.0 - (1.0 - late) * (1.0 - fail_p) * (1.0 - loss.min(1.0));
            let per_call = healthy_per_call(q, f64::from(hop.retry.max_attempts));
            let retries = x * (per_call - 1.0);
            let successes = x * per_call * (1.0 - q);
            let flow = Flow {
                calls: x,
                successes,
                attempt_s: hop.retry.timeout.map_or(0.0, |t| secs(t.ceiling())),
                processes: self.processes(k),
            };
            let capped = hop
                .budget
                .kind
                .retry_limit(&hop.budget, &flow)
                .map_or(retries, |(l, _)| retries.min(l));
            let next = x + capped;
            if (next - a).abs() <= 1e-9 * a.max(1.0) {
                return Some(next);
            }
            a = next;
        }
        Some(a)
    }

    /// The healthy attempts per call at capacity over capacity: how far past it the callers go.
    fn edge_ratio(&self, k: usize, s: &Station, capacity: f64) -> f64 {
        let hop = &self.path.hops[k];
        let x = self.healthy_calls[k] * (1.0 - hop.network.request_loss);
        if !capacity.is_finite() || capacity <= 0.0 {
            return f64::INFINITY;
        }
        let late = hop
            .retry
            .timeout
            .map_or(0.0, |t| s.late_share(capacity * 0.999, secs(t.ceiling())));
        (x * healthy_per_call(late, f64::from(hop.retry.max_attempts)) / capacity).max(x / capacity)
    }

    /// Why work on calls that already failed cannot pile up at tier `k`, if it cannot.
    fn work_removed(&self, k: usize, s: &Station, timeout: Option<f64>) -> Option<String> {
        let (hop, server) = (&self.path.hops[k], &self.path.tiers[k].server);
        let Some(t) = timeout else {
            return Some(
                "the callers have no timeout, so a slow tier makes calls slow, not failed".into(),
            );
        };
        if server.fail == FailMode::Always {
            return Some("every attempt fails at once, without service".into());
        }
        if server.drop_expired {
            return Some("server.drop_expired drops queued requests whose caller gave up".into());
        }
        if hop.retry.cancel {
            return Some(
                "the callers cancel (retry.cancel): the tier drops what nobody waits for".into(),
            );
        }
        if server.shedding.kind == SheddingKind::Codel {
            let target = secs(server.shedding.target);
            if target + s.service + s.network < t {
                return Some(format!(
                    "CoDel keeps the queueing delay near {} s, under the {} s timeout",
                    short(target),
                    short(t)
                ));
            }
        }
        let limit = server.rate_limit.rate.0;
        if limit > 0.0 && s.capacity().is_none_or(|c| limit < c) {
            return Some(format!(
                "the rate limit lets at most {}/s reach the workers, under their capacity",
                short(limit)
            ));
        }
        let workers = s.workers?;
        // The queue and the concurrency limit are per replica, as the workers are.
        let replicas = f64::from(server.replicas);
        let held = [
            server.queue.0.map(|q| q as f64 * replicas + workers),
            server.concurrency_limit.0.map(|c| c as f64 * replicas),
        ]
        .into_iter()
        .flatten()
        .fold(f64::INFINITY, f64::min);
        let full = s.capacity()?;
        if held.is_finite() && held / full + s.network < t {
            return Some(format!(
                "the tier holds at most {} requests, {} s of work, under the {} s timeout: it refuses at once instead",
                short(held),
                short(held / full),
                short(t)
            ));
        }
        None
    }

    /// The requests per second tier `k` serves within the timeout when every call fails:
    /// fewer with ejected replicas, at most the rate limit.
    fn all_fail_capacity(
        &self,
        k: usize,
        s: &Station,
        timeout: Option<f64>,
        capacity: f64,
        terms: &mut Vec<String>,
    ) -> f64 {
        let server = &self.path.tiers[k].server;
        let mut c = capacity;
        if let Some(od) = &server.outlier_detection
            && server.replicas > 1
        {
            let replicas = f64::from(server.replicas);
            let pct = f64::from(od.max_ejection_percent.unwrap_or(10)).min(100.0);
            let panic = f64::from(server.panic_threshold.unwrap_or(50));
            let mut ejected = (replicas * pct / 100.0).floor();
            if od.always_eject_one_host.unwrap_or(false) {
                ejected = ejected.max(1.0);
            }
            if (replicas - ejected) / replicas * 100.0 >= panic && ejected > 0.0 {
                let left = (replicas - ejected) / replicas;
                let scaled = s.scaled(left, 1.0);
                c = timeout.map_or(scaled.capacity().unwrap_or(f64::INFINITY), |t| {
                    scaled.timeout_capacity(t)
                });
                terms.push(format!(
                    "ejection: {} of {} replicas out when every reply fails, {}/s left",
                    ejected,
                    replicas,
                    short(c)
                ));
            }
        }
        c
    }

    /// Every hop down to `k` retrying as it does when all its calls fail.
    fn all_fail(&self, k: usize) -> AllFail {
        let mut terms = Vec::new();
        let (mut calls, mut cancel_limit): (f64, Option<f64>) = (0.0, None);
        let span_below = self.spans(k);
        for j in 0..=k {
            let hop = &self.path.hops[j];
            let own = hop.retry.timeout.map(|t| secs(t.ceiling()));
            let (class, fail_s) = failure(hop, j == k, span_below[j + 1]);
            let deadline = hop.retry.deadline.map(secs);
            let limit = match (deadline, cancel_limit) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let o = orbit(hop, class, fail_s, limit);
            if j == 0 {
                calls = all_fail_client_calls(self.m, o.span);
                if self.m.workload.kind == WorkloadKind::Closed {
                    terms.push(format!(
                        "closed loop: {} workers, one call per {} s when every attempt fails",
                        self.m.workload.workers,
                        short(o.span)
                    ));
                }
            }
            let mut attempts = calls * o.attempts;
            let mut why = format!(
                "{}: {} calls/s x {} attempts",
                hop.name,
                short(calls),
                short(o.attempts)
            );
            if let Some(c) = &o.cut {
                why.push_str(&format!(" ({c})"));
            }
            attempts = self.caps(j, hop, calls, attempts, fail_s, &mut why);
            why.push_str(&format!(" = {} attempts/s", short(attempts)));
            terms.push(why);
            if hop.retry.cancel {
                cancel_limit = own.or(cancel_limit);
            }
            calls = attempts * (1.0 - hop.network.request_loss);
        }
        AllFail {
            attempts: calls / (1.0 - self.path.hops[k].network.request_loss).max(1e-12),
            terms,
        }
    }

    /// A hop's budget, breaker and limiter on its all-fail attempts.
    fn caps(
        &self,
        j: usize,
        hop: &Hop,
        calls: f64,
        attempts: f64,
        fail_s: f64,
        why: &mut String,
    ) -> f64 {
        let mut attempts = attempts;
        let flow = Flow {
            calls,
            successes: 0.0,
            attempt_s: fail_s,
            processes: self.processes(j),
        };
        if let Some((limit, w)) = hop.budget.kind.retry_limit(&hop.budget, &flow)
            && attempts - calls > limit
        {
            attempts = calls + limit;
            why.push_str(&format!(
                ", budget {}: retries <= {}/s ({w})",
                kind_name(&hop.budget),
                short(limit)
            ));
        }
        if let Some((pass, w)) =
            breaker_pass(&hop.breaker, calls, attempts, fail_s, self.processes(j))
            && pass < attempts
        {
            attempts = pass;
            why.push_str(&format!(", {w}"));
        }
        if j == 0
            && let Some((pass, w)) = limiter_pass(&hop.limiter, fail_s, self.processes(j))
            && pass < attempts
        {
            attempts = pass;
            why.push_str(&format!(", {w}"));
        }
        attempts
    }

    /// How long a call into each hop `j >= 1` takes to fail when everything below fails: its
    /// attempts' timeouts (or the span below them) and backoffs. Index `j`; entries above
    /// `k` are 0.
    fn spans(&self, k: usize) -> Vec<f64> {
        let n = self.path.hops.len();
        let mut span = vec![0.0; n + 1];
        for j in (0..=k).rev() {
            let hop = &self.path.hops[j];
            let (class, fail_s) = failure(hop, j == k, span[j + 1]);
            span[j] = orbit(hop, class, fail_s, hop.retry.deadline.map(secs)).span;
        }
        span
    }
}

/// How a call of `hop` fails when everything below fails, and after how long: at the judged tier
/// (`at_tier`) its own timeout; above it, its timeout when that comes before the calls below
/// (`below` seconds) give up, else the 500 the tier answers then.
fn failure(hop: &Hop, at_tier: bool, below: f64) -> (Class, f64) {
    let own = hop.retry.timeout.map(|t| secs(t.ceiling()));
    if at_tier {
        return (Class::Timeout, own.unwrap_or(0.0));
    }
    match own {
        Some(t) if t < below => (Class::Timeout, t),
        _ => (Class::ServerError, below),
    }
}

/// The failure mode of the tier hop `k` calls (its own handler; the tiers above fail only
/// through the calls below).
fn hop_fail(path: &PathSpec, k: usize) -> FailMode {
    path.tiers[k].server.fail
}

fn kind_name(b: &crate::policy::budget::BudgetConfig) -> String {
    serde_json::to_value(b.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn pct(r: f64) -> String {
    format!("{} %", short(r * 100.0))
}
