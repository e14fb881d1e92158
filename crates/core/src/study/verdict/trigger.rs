//! Whether the model's own trigger tips it: a fluid model of a one-tier path over time. The
//! queue holds a continuous amount of work; arrivals are the workload's rate at each instant plus
//! the retries scheduled by earlier failures (a late reply's retry one timeout plus the mean
//! backoff later, a refused one's one round trip plus the backoff or `Retry-After` later); the
//! workers drain it at the capacity of the moment (capacity drops, slow windows); an arrival's
//! reply is late when the work ahead of it plus its service outlasts the timeout. Deterministic
//! and without randomness, it follows means, so a model near its edge may go either way in the
//! simulator (`docs/verdict.md`, "Limits").

use super::attempts::delay_range;
use super::{Judgement, Verdict};
use crate::base::prose::short;
use crate::base::time::{Duration, Time};
use crate::model::{Model, OutageAnswer, WorkloadKind};
use crate::policy::Class;
use crate::policy::backoff::Backoff;
use crate::policy::budget::BudgetKind;
use crate::policy::limiter::LimiterKind;
use crate::sim::path::spec::PathSpec;
use serde::Serialize;

/// At most this many steps: the step widens for long horizons.
const MAX_STEPS: f64 = 400_000.0;

/// What the trigger does in the fluid model.
#[derive(Clone, Debug, Serialize)]
pub struct TriggerOutcome {
    /// The trigger window, in seconds.
    pub from_s: f64,
    pub to_s: f64,
    /// Whether replies are still late at the end of the run (none: not followed; `why` says why).
    pub tips: Option<bool>,
    /// Seconds from the trigger's end to the last late reply, when it recovers.
    pub recovers_after_s: Option<f64>,
    /// The longest reply (wait, service and network) in the fluid model, seconds; none = past
    /// the end of the run.
    pub peak_reply_s: Option<f64>,
    pub why: String,
}

/// The trigger followed, or why not; none when the model has no trigger or cannot tip.
pub(super) fn follow(m: &Model, j: &Judgement) -> Option<TriggerOutcome> {
    let (from, to) = m.trigger()?;
    let (from_s, to_s) = (from.0 as f64 / 1e9, to.0 as f64 / 1e9);
    let not = |why: String| TriggerOutcome {
        from_s,
        to_s,
        tips: None,
        recovers_after_s: None,
        peak_reply_s: None,
        why,
    };
    match j.verdict {
        Verdict::Unknown | Verdict::Overloaded => return None,
        Verdict::Stable => {
            return Some(TriggerOutcome {
                tips: Some(false),
                why: "stable: no trigger can tip it".into(),
                ..not(String::new())
            });
        }
        Verdict::Vulnerable => {}
    }
    let path = PathSpec::of(m);
    if let Some(why) = unfollowed(m, &path) {
        return Some(not(why));
    }
    Some(Fluid::new(m, &path).run(from_s, to_s))
}

/// What the fluid model leaves out, when the model has it.
fn unfollowed(m: &Model, path: &PathSpec) -> Option<String> {
    let hop = &path.hops[0];
    let server = &path.tiers[0].server;
    let why = if path.tiers.len() > 1 {
        "the fluid model follows one tier"
    } else if m.workload.kind != WorkloadKind::Open {
        "the fluid model follows an open workload"
    } else if hop.budget.kind != BudgetKind::None
        || hop.breaker.enabled
        || hop.limiter.kind != LimiterKind::None
        || hop.hedge.enabled()
    {
        "the fluid model has no budget, breaker, limiter or hedging"
    } else if hop.retry.timeout.is_none() || server.capacity.0.is_none() && server.slowdown == 0.0 {
        "without a timeout or a worker limit nothing queues past a timeout"
    } else if server.replicas > 1 {
        "the fluid model follows one server, not replicas"
    } else {
        return None;
    };
    Some(why.to_string())
}

/// The fluid state and the model's figures, in seconds and requests.
struct Fluid<'a> {
    m: &'a Model,
    dt: f64,
    steps: usize,
    timeout: f64,
    network: f64,
    service: f64,
    slowdown: f64,
    workers: Option<f64>,
    /// The most requests the tier holds (workers and queue); beyond it, refused at once.
    holds: f64,
    /// Retries scheduled, by attempt number (1 = the first retry): a difference array over the
    /// steps (a retry's mass spreads evenly over its jittered delay's range).
    retries: Vec<Vec<f64>>,
}

impl<'a> Fluid<'a> {
    fn new(m: &'a Model, path: &PathSpec) -> Fluid<'a> {
        let (hop, server) = (&path.hops[0], &path.tiers[0].server);
        let timeout = hop
            .retry
            .timeout
            .map_or(0.0, |t| t.ceiling().0 as f64 / 1e9);
        let horizon = m.horizon.0 as f64 / 1e9;
        let dt = (timeout / 200.0).max(1e-3).max(horizon / MAX_STEPS);
        let steps = (horizon / dt).ceil() as usize;
        let workers = server.capacity.0.map(|c| c as f64);
        let holds = [
            server.queue.0.map(|q| q as f64 + workers.unwrap_or(0.0)),
            server.concurrency_limit.0.map(|c| c as f64),
        ]
        .into_iter()
        .flatten()
        .fold(f64::INFINITY, f64::min);
        let attempts = hop.retry.max_attempts as usize;
        Fluid {
            m,
            dt,
            steps,
            timeout,
            network: (hop.network.request_latency().mean_ns()
                + hop.network.response_latency().mean_ns())
                / 1e9,
            service: server.service.mean_ns() / 1e9,
            slowdown: server.slowdown,
            workers,
            holds,
            retries: vec![vec![0.0; steps + 1]; attempts],
        }
    }

    fn at(&self, i: usize) -> Time {
        Time::ZERO + Duration::from_nanos_f64(i as f64 * self.dt * 1e9)
    }

    /// Workers and the service-time factor at step `i` (capacity drops, slow windows).
    fn capacity_at(&self, i: usize) -> (Option<f64>, f64) {
        let t = Duration(self.at(i).0);
        let s = &self.m.server;
        let workers = s
            .capacity_drops
            .iter()
            .filter(|d| d.from <= t && t < d.to)
            .map(|d| d.capacity as f64)
            .fold(self.workers, |w, d| Some(w.map_or(d, |w| w.min(d))));
        let factor = s
            .slow_windows
            .iter()
            .filter(|w| w.from <= t && t < w.to)
            .map(|w| w.factor)
            .fold(1.0, f64::max);
        (workers, factor)
    }

    /// Requests per second served at step `i` with `n` in the tier.
    fn rate(&self, i: usize, n: f64) -> f64 {
        let (workers, factor) = self.capacity_at(i);
        let busy = workers.map_or(n, |w| n.min(w));
        if busy <= 0.0 {
            return 0.0;
        }
        busy / (self.service * factor * (1.0 + self.slowdown * (busy - 1.0).max(0.0)))
    }

    /// The wait of an arrival at step `i` behind `ahead` requests: steps until the workers of the
    /// coming steps have served them (at full busy), in seconds; infinite past the horizon.
    fn wait(&self, i: usize, ahead: f64, served: &[f64]) -> f64 {
        let Some(w) = self.workers else {
            return 0.0;
        };
        if ahead < w {
            return 0.0;
        }
        let need = ahead - w + 1.0;
        let base = served[i];
        match served[i..].partition_point(|&c| c - base < need) {
            n if i + n < served.len() => n as f64 * self.dt,
            _ => f64::INFINITY,
        }
    }

    fn run(mut self, from_s: f64, to_s: f64) -> TriggerOutcome {
        let hop_retry = &self.m.retry;
        let backoff = hop_retry.backoff();
        let late_retried = hop_retry.retry_on.contains(&Class::Timeout);
        let refused_retried = hop_retry.retry_on.contains(&Class::Unavailable);
        // Cumulative service at full busy, for the waits.
        let full = |i: usize| {
            let (w, _) = self.capacity_at(i);
            self.rate(i, w.unwrap_or(0.0))
        };
        let mut served = vec![0.0; self.steps + 1];
        for i in 0..self.steps {
            served[i + 1] = served[i] + full(i) * self.dt;
        }
        let (mut n, mut last_late, mut peak) = (0.0f64, None, 0.0f64);
        let mut arriving = vec![0.0; self.retries.len()];
        for i in 0..self.steps {
            let t = self.at(i);
            let outage =
                self.m.server.outages.iter().find(|o| {
                    o.replica.is_none() && Time::ZERO + o.from <= t && t < Time::ZERO + o.to
                });
            let first = self.m.workload.rate_at(t) * self.dt;
            let wait = self.wait(i, n, &served);
            let (_, factor) = self.capacity_at(i);
            let busy = self.workers.map_or(n, |w| n.min(w));
            let reply = wait
                + self.service * factor * (1.0 + self.slowdown * (busy - 1.0).max(0.0))
                + self.network;
            peak = peak.max(reply);
            for (a, arrived) in arriving.iter_mut().enumerate() {
                *arrived += self.retries[a][i];
                let amount = if a == 0 { first } else { *arrived };
                if amount <= 0.0 {
                    continue;
                }
                let (later, retried) = match outage {
                    Some(o) if o.answer == OutageAnswer::Hang => (self.timeout, late_retried),
                    Some(o) => (
                        self.network + o.retry_after.map_or(0.0, |d| d.0 as f64 / 1e9),
                        refused_retried,
                    ),
                    None if n >= self.holds => (self.network, refused_retried),
                    None => {
                        n += amount;
                        if reply <= self.timeout {
                            continue;
                        }
                        if i + 1 < self.steps {
                            last_late = Some(i);
                        }
                        (self.timeout, late_retried)
                    }
                };
                if retried {
                    self.schedule(i, a, amount, later, &backoff);
                }
            }
            n = (n - self.rate(i, n) * self.dt).max(0.0);
        }
        self.outcome(from_s, to_s, last_late, peak)
    }

    /// The retry of `amount` attempts number `a` that failed at step `i`, known `later`
    /// seconds after: spread evenly over the steps its jittered delay may fall in.
    fn schedule(&mut self, i: usize, a: usize, amount: f64, later: f64, backoff: &Backoff) {
        if a + 1 >= self.retries.len() {
            return;
        }
        let (lo, hi) = delay_range(backoff, a as u32);
        let from = i + ((later + lo) / self.dt).round().max(1.0) as usize;
        let to = (i + ((later + hi) / self.dt).round().max(1.0) as usize).max(from) + 1;
        let per = amount / (to - from) as f64;
        if from < self.steps {
            self.retries[a + 1][from] += per;
            self.retries[a + 1][to.min(self.steps)] -= per;
        }
    }

    fn outcome(
        &self,
        from_s: f64,
        to_s: f64,
        last_late: Option<usize>,
        peak: f64,
    ) -> TriggerOutcome {
        let end = self.steps as f64 * self.dt;
        let window = self.m.recovery.window.0 as f64 / 1e9;
        let last = last_late.map(|i| (i + 1) as f64 * self.dt);
        let tips = last.is_some_and(|l| l > end - window);
        let recovers_after_s = (!tips).then(|| last.map_or(0.0, |l| (l - to_s).max(0.0)));
        let why = if tips {
            format!(
                "its trigger ({} s to {} s) tips it: replies are still late at the end ({} s), the longest reply {}",
                short(from_s),
                short(to_s),
                short(end),
                wait(peak)
            )
        } else {
            format!(
                "its trigger ({} s to {} s) does not tip it: the last late reply {} s after it, the longest reply {}",
                short(from_s),
                short(to_s),
                short(recovers_after_s.unwrap_or(0.0)),
                wait(peak)
            )
        };
        TriggerOutcome {
            from_s,
            to_s,
            tips: Some(tips),
            recovers_after_s,
            peak_reply_s: peak.is_finite().then_some(peak),
            why,
        }
    }
}

/// A wait in words: seconds, or past the end of the run.
fn wait(s: f64) -> String {
    if s.is_finite() {
        format!("{} s", short(s))
    } else {
        "past the end of the run".into()
    }
}
