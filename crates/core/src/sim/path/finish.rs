//! The one place counters become a [`Summary`]: intents and outcomes from the calls, the
//! bottom's load as the headline numbers, every tier and every hop in its own table.

use super::PathSim;
use super::balance::Balancing;
use super::learn::Learner;
use super::tier::TierState;
use crate::base::time::{Duration, Time};
use crate::model::{FailMode, StoreMode};
use crate::policy::budget::BudgetKind;
use crate::policy::recovery;
use crate::result::summary::{
    AttemptPeak, ConnectionSummary, Ended, FanoutSummary, LayerSummary, Layered, ReplicaSummary,
    Series, Summary, TierSeries, TierSummary, VariantResult,
};
use crate::sim::layered::{expected_bottom_attempts, worst_case_bottom_attempts};
use crate::sim::metrics::{self, Buckets, Levels, ReplicaEvent};

fn ms(ns: u128) -> f64 {
    ns as f64 / 1e6
}

/// The bottom's peaks, as the summary reports them.
struct Peaks {
    arrivals: u64,
    retries: u64,
    arrivals_window: u64,
    retries_window: u64,
    window_ms: f64,
    attempts: Vec<AttemptPeak>,
}

impl Peaks {
    fn of(b: &Buckets) -> Self {
        let (arrivals, retries) = b.peaks();
        let (arrivals_window, retries_window) = b.window_peaks();
        Peaks {
            arrivals,
            retries,
            arrivals_window,
            retries_window,
            window_ms: b.window_width().as_millis_f64(),
            attempts: b.attempt_peaks(),
        }
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { 0.0 } else { a / b }
}

impl PathSim<'_> {
    /// The run's result; with `full` false only its summary (no series or CDFs, which a sweep's
    /// runs would build and drop: for a small model they cost more than the run).
    pub(super) fn finish(
        mut self,
        name: &str,
        end: Time,
        ended: Ended,
        full: bool,
    ) -> VariantResult {
        for (h, ts) in self.hops.iter_mut().zip(&mut self.tiers) {
            if let Some(b) = &mut h.balancing {
                b.finish(end);
                for &(at, r) in &b.ejection_log {
                    ts.buckets
                        .replica(at, usize::from(r), ReplicaEvent::Ejected);
                }
            }
        }
        let (tiers, tier_series) = self.tier_rows(end, full);
        let peaks = Peaks::of(&self.tiers[self.cx.bottom].buckets);
        // Recovery is measured on the series, so a summary with a trigger needs it too.
        let mut series = if full || self.cx.model.trigger().is_some() {
            metrics::series(std::mem::take(&mut self.tiers[self.cx.bottom].buckets), end)
        } else {
            Default::default()
        };
        series.tiers = tier_series;
        if full {
            let n = series.first.len();
            let hop = &self.hops[self.cx.bottom];
            series.learned_timeout_ms = learned_series(hop.learned_timeout.as_deref(), end, n);
            series.learned_hedge_delay_ms = learned_series(hop.learned_hedge.as_deref(), end, n);
        }
        let mut summary = self.summary(tiers, peaks, end, ended);
        self.recovery(&mut summary, &series, end);
        if !full {
            return VariantResult {
                name: name.to_string(),
                summary,
                series: Default::default(),
                completion_cdf: Vec::new(),
                success_cdf: Vec::new(),
                failure_cdf: Vec::new(),
            };
        }
        VariantResult {
            name: name.to_string(),
            summary,
            series,
            completion_cdf: self.completions.cdf(),
            success_cdf: self.successes.cdf(),
            failure_cdf: self.completions.without(&self.successes).cdf(),
        }
    }

    /// Every tier's row, and with `full` on a path of several tiers their series.
    fn tier_rows(&mut self, end: Time, full: bool) -> (Vec<TierSummary>, Vec<TierSeries>) {
        let mut tiers = Vec::with_capacity(self.tiers.len());
        let mut tier_series = Vec::new();
        let n_tiers = self.tiers.len();
        for (t, ts) in self.tiers.iter_mut().enumerate() {
            let (mean_queue_len, mean_busy) = ts.levels.means(&mut ts.buckets, end);
            let mut ready_replicas = None;
            if let Some(sc) = &mut ts.scaler {
                sc.set_series(end, &mut ts.buckets);
                ready_replicas = Some(sc.ready_replicas(end));
            }
            let (peak_arrivals, peak_retries) = ts.buckets.peaks();
            let n = &ts.n;
            tiers.push(TierSummary {
                name: self.cx.spec.tiers[t].name.clone(),
                arrivals: n.arrivals,
                retries: n.retry_arrivals,
                served: n.served,
                rejected: n.rejected,
                hung: n.hung,
                dropped_expired: n.dropped_expired,
                shed: n.shed,
                timeouts: self.hops[t].n.timeouts,
                orphaned: n.orphaned,
                work_ms: ms(n.work),
                wasted_work_ms: ms(n.wasted),
                mean_wait_ms: ratio(ms(n.waits), n.served as f64),
                mean_queue_len,
                mean_busy,
                peak_arrivals,
                peak_retries,
                replicas: replica_rows(ts, self.hops[t].balancing.as_deref()),
                peak_ready_replicas: ready_replicas.map(|r| r.0),
                mean_ready_replicas: ready_replicas.map(|r| r.1),
            });
            if full && n_tiers > 1 {
                let s = metrics::series(ts.buckets.clone(), end);
                let n = s.first.len();
                tier_series.push(TierSeries {
                    name: self.cx.spec.tiers[t].name.clone(),
                    first: s.first,
                    retries: s.retries,
                    queue_len: s.queue_len,
                    busy: s.busy,
                    ready_replicas: s.ready_replicas,
                    replicas: s.replicas,
                    learned_timeout_ms: learned_series(
                        self.hops[t].learned_timeout.as_deref(),
                        end,
                        n,
                    ),
                    learned_hedge_delay_ms: learned_series(
                        self.hops[t].learned_hedge.as_deref(),
                        end,
                        n,
                    ),
                });
            }
            ts.levels = Levels::default();
        }
        (tiers, tier_series)
    }

    /// The summary's counters (a table of fields: each from its owner's counters).
    fn summary(&self, tiers: Vec<TierSummary>, peaks: Peaks, end: Time, ended: Ended) -> Summary {
        let b = self.tiers[self.cx.bottom].n;
        let bt = &tiers[self.cx.bottom];
        let bh = &self.hops[self.cx.bottom].n;
        let c = &self.c;
        let sum_hops =
            |f: fn(&super::hop::HopCounters) -> u64| self.hops.iter().map(|h| f(&h.n)).sum();
        let sum_tiers =
            |f: fn(&super::tier::TierCounters) -> u64| self.tiers.iter().map(|t| f(&t.n)).sum();
        let work: u128 = self.tiers.iter().map(|t| t.n.work).sum();
        let wasted: u128 = self.tiers.iter().map(|t| t.n.wasted).sum();
        let secs = end.0 as f64 / 1e9;
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        Summary {
            intents: c.intents,
            attempts: bh.sent,
            retries: bh.retry_path_sent,
            amplification: ratio(bh.sent as f64, c.intents as f64),
            succeeded: c.succeeded,
            failed: c.failed,
            unsettled: c.intents - c.succeeded - c.failed,
            peak_arrivals: peaks.arrivals,
            peak_retries: peaks.retries,
            bucket_ms: self.cx.model.bucket.as_millis_f64(),
            peak_arrivals_window: peaks.arrivals_window,
            peak_retries_window: peaks.retries_window,
            peak_window_ms: peaks.window_ms,
            attempt_peaks: peaks.attempts,
            completion_ms: self.completions.percentiles(),
            success_ms: self.successes.percentiles(),
            last_arrival_ms: b.last_arrival.as_millis_f64(),
            // Every intent started settled by the end (`crate::sim::path::run_model` also clears it for a
            // truncated run).
            drain_ms: (c.intents > 0 && c.succeeded + c.failed == c.intents)
                .then(|| c.last_settled.as_millis_f64()),
            lost: c.lost,
            applied_once: c.applied_once,
            duplicated: c.duplicated,
            phantom: c.phantom,
            false_failures: c.false_failures,
            outcome_pending: self
                .keyed
                .as_ref()
                .map_or(self.calls.live, |k| k.started - k.finished),
            keys: self.keyed.as_ref().map_or(0, |k| k.started),
            effects: c.effects,
            arrivals: b.arrivals,
            timeouts: sum_hops(|n| n.timeouts),
            late_responses: sum_hops(|n| n.late_responses),
            requests_lost: sum_hops(|n| n.requests_lost),
            responses_lost: sum_hops(|n| n.responses_lost),
            rejected: sum_tiers(|n| n.rejected),
            dropped_expired: sum_tiers(|n| n.dropped_expired),
            conflicts: c.conflicts,
            replayed: c.replayed,
            crashes: sum_tiers(|n| n.crashes),
            work_ms: ms(work),
            wasted_work_ms: ms(wasted),
            wasted_share: ratio(wasted as f64, work as f64),
            mean_wait_ms: bt.mean_wait_ms,
            mean_queue_len: bt.mean_queue_len,
            mean_busy: bt.mean_busy,
            peak_ready_replicas: bt.peak_ready_replicas,
            mean_ready_replicas: bt.mean_ready_replicas,
            end_ms: end.as_millis_f64(),
            ended,
            events: self.events,
            layered: self.layered(),
            rate_limited: sum_tiers(|n| n.rate_limited),
            overloaded: sum_tiers(|n| n.overloaded),
            shed: sum_tiers(|n| n.shed),
            client_errors: sum_tiers(|n| n.client_errors),
            budget_denied: sum_hops(|n| n.budget_denied),
            throttled_locally: sum_hops(|n| n.throttled_locally),
            breaker_rejected: sum_hops(|n| n.breaker_rejected),
            first_tries_refused: sum_hops(|n| n.first_tries_refused),
            breaker_opened: self
                .hops
                .iter()
                .flat_map(|h| h.breakers.iter())
                .map(|b| b.opened)
                .sum(),
            retry_after_waits: sum_hops(|n| n.retry_after_waits),
            limiter_delayed: sum_hops(|n| n.limiter_delayed),
            first_tries_waiting: self
                .hops
                .iter()
                .map(|h| h.first_tries_waiting(&self.calls))
                .sum(),
            limiter_rejected: sum_hops(|n| n.limiter_rejected),
            limiter_wait_ms: sum_hops(|n| n.limiter_wait_ns) as f64 / 1e6,
            goodput_per_s: per_s(c.succeeded),
            offered_per_s: per_s(b.arrivals),
            tiers,
            fanout: self.fanout_rows(),
            connections: self.connection_rows(),
            ..Default::default()
        }
    }

    /// Each fan-out tier's row (`summary.fanout[]`).
    fn fanout_rows(&self) -> Vec<FanoutSummary> {
        let intents = self.c.intents as f64;
        let spec = &self.cx.spec;
        (0..spec.tiers.len())
            .filter_map(|t| {
                let f = spec.tiers[t].server.fanout?;
                let n = &self.calls.fans.n[t];
                let leaf_calls = self.hops[t + 1].n.sent;
                Some(FanoutSummary {
                    tier: spec.tiers[t].name.clone(),
                    k: u64::from(f.k),
                    fans: n.fans,
                    leaves: n.leaves,
                    leaf_calls,
                    leaves_per_intent: ratio(n.leaves as f64, intents),
                    leaf_calls_per_intent: ratio(leaf_calls as f64, intents),
                    answered_ok: n.answered_ok,
                    answered_failed: n.answered_failed,
                    leaves_running_after: n.running_after,
                    leaves_cancelled: n.cancelled,
                    leaf_served_after: n.served_after,
                })
            })
            .collect()
    }

    /// Each row of `summary.connections[]`: the tiers with `server.connections`.
    fn connection_rows(&self) -> Vec<ConnectionSummary> {
        let intents = self.c.intents as f64;
        (0..self.tiers.len())
            .filter_map(|t| {
                let cn = self.hops[t].connections.as_deref()?;
                let tier = &self.tiers[t].n;
                Some(ConnectionSummary {
                    tier: self.cx.spec.tiers[t].name.clone(),
                    connects: cn.n.connects,
                    connects_per_intent: ratio(cn.n.connects as f64, intents),
                    connects_refused: cn.n.refused,
                    connects_deferred: cn.n.deferred,
                    drops: cn.n.drops,
                    connect_work_ms: ms(tier.connect_work),
                    connect_work_share: ratio(tier.connect_work as f64, tier.work as f64),
                    peak_open: cn.n.peak_open,
                    open_at_end: cn.open(),
                })
            })
            .collect()
    }

    /// The recovery after the model's trigger, measured on the goodput series.
    fn recovery(&self, summary: &mut Summary, series: &Series, end: Time) {
        let m = self.cx.model;
        if let Some(trigger) = m.trigger() {
            summary.trigger_from_ms = Some(trigger.0.as_millis_f64());
            summary.trigger_to_ms = Some(trigger.1.as_millis_f64());
            if let Some(r) = recovery::measure(
                &series.succeeded,
                Duration::from_nanos_f64(series.bucket_ms * 1e6),
                end,
                trigger,
                &m.recovery,
            ) {
                summary.baseline_goodput_per_s = Some(r.baseline_per_s);
                summary.recovered = Some(r.after.is_some());
                summary.recovery_ms = r.after.map(|d| d.as_millis_f64());
            }
        }
    }

    /// The per-hop report of a path with more than one hop (`docs/layered.md`).
    fn layered(&self) -> Option<Layered> {
        if self.hops.len() < 2 && self.cx.model.layers.is_empty() {
            return None;
        }
        let intents = self.c.intents.max(1) as f64;
        let layers = self
            .cx
            .spec
            .hops
            .iter()
            .zip(&self.hops)
            .map(|(h, s)| {
                let n = &s.n;
                LayerSummary {
                    name: h.name.clone(),
                    received: n.received,
                    sent: n.sent,
                    retries: n.retries,
                    amplification: n.sent as f64 / intents,
                    per_call: ratio(n.sent as f64, n.received as f64),
                    failed: n.failed,
                    timeouts: n.timeouts,
                    budget_denied: n.budget_denied,
                    orphaned: n.orphaned,
                }
            })
            .collect();
        let max_attempts: Vec<u32> = self
            .cx
            .spec
            .hops
            .iter()
            .map(|h| h.retry.max_attempts)
            .collect();
        let bottom = &self.tiers[self.cx.bottom].n;
        let bottom_server = &self.cx.spec.tiers[self.cx.bottom].server;
        // The closed form assumes independent failures at the bottom and nothing else that
        // fails, refuses or stops a retry anywhere on the path.
        let plain_hops = self.cx.spec.hops.iter().all(|h| {
            h.retry.timeout.is_none()
                && h.retry.deadline.is_none()
                && h.budget.kind == BudgetKind::None
                && !h.breaker.enabled
                && !h.hedge.enabled()
                && h.network.request_loss == 0.0
                && h.network.response_loss == 0.0
        });
        let plain_tiers = self.cx.spec.tiers.iter().enumerate().all(|(t, s)| {
            let s = &s.server;
            (t == self.cx.bottom || s.fail == FailMode::Never)
                && s.crash_probability == 0.0
                && s.client_error == 0.0
                && s.outages.is_empty()
                && s.failure_windows.is_empty()
                && s.queue.0.is_none()
                && s.concurrency_limit.0.is_none()
                && !s.rate_limit.enabled()
        });
        let closed_form_applies = plain_hops
            && plain_tiers
            && !bottom_server.contention
            && self.cx.model.idempotency.store == StoreMode::None;
        let p = match bottom_server.fail {
            FailMode::Never => 0.0,
            FailMode::Always => 1.0,
            FailMode::Probability(p) => p,
        };
        Some(Layered {
            layers,
            amplification_bottom: ratio(bottom.arrivals as f64, self.c.intents as f64),
            worst_case_amplification: worst_case_bottom_attempts(&max_attempts),
            expected_amplification: closed_form_applies
                .then(|| expected_bottom_attempts(p, &max_attempts)),
            orphaned: bottom.orphaned,
            orphaned_share: ratio(bottom.orphaned as f64, bottom.arrivals as f64),
        })
    }
}

/// The per-replica rows of a replicated tier (none for one replica).
fn replica_rows(ts: &TierState, balancing: Option<&Balancing>) -> Vec<ReplicaSummary> {
    if ts.replicas.len() < 2 {
        return Vec::new();
    }
    ts.replicas
        .iter()
        .enumerate()
        .map(|(r, rs)| ReplicaSummary {
            replica: r as u32,
            arrivals: rs.n.arrivals,
            served: rs.n.served,
            rejected: rs.n.rejected,
            errors: rs.n.errors,
            ejections: balancing.map_or(0, |b| b.ejections[r]),
        })
        .collect()
}

/// A learned duration's value per bucket in ms, `n` buckets long; empty for none.
fn learned_series(l: Option<&Learner>, end: Time, n: usize) -> Vec<f32> {
    let Some(l) = l else {
        return Vec::new();
    };
    let mut v = l.series(end);
    v.resize(n, 0.0);
    v
}
