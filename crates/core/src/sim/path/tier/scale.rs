//! A tier's autoscaler (`[server.autoscale]`): which of its replica slots serve, start or
//! drain, the metric it reads, and its syncs. The decisions are HPA's
//! ([`crate::policy::autoscale::Hpa`]); this file gives it the tier.
//!
//! The tier keeps `max_replicas` slots. A slot is serving (the balancer picks among these), or
//! starting (added by a sync, ready `start_time` later), or idle: a replica removed by a
//! scale-down drains, getting no new request and finishing what it holds (Kubernetes takes a
//! terminating pod out of the endpoints and lets it end its requests), and an idle slot may be
//! taken by the next replica added (the work it still holds then finishes on its workers).
//!
//! The metric is a time average: the level summed over the serving replicas (busy workers, or
//! those and the queue, or the queue), integrated over the sync period that ended
//! `metric_delay` before the sync, over the serving replicas integrated over the same window.
//! The window's edges are `Sample` events at `k × sync_period − metric_delay`; the syncs at
//! `k × sync_period`. Nothing here draws a random number.

use super::Replica;
use crate::base::time::{Duration, Time};
use crate::policy::autoscale::{AutoscaleConfig, Hpa, Metric, Observed};
use crate::sim::metrics::Buckets;
use std::collections::VecDeque;

/// What a slot is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Gets no new request (never started, or removed and draining).
    Idle,
    /// Added at a sync; ready at `ready_at`. `order` counts the replicas added, to remove the
    /// newest first.
    Starting { ready_at: Time, order: u64 },
    /// In the balancer's choice since `order`-th readiness.
    Serving { order: u64 },
}

/// One tier's autoscaler.
#[derive(Clone, Debug)]
pub(crate) struct Scaler {
    hpa: Hpa,
    metric: Metric,
    capacity: f64,
    pub(in crate::sim::path) sync_period: Duration,
    metric_delay: Duration,
    start_time: Duration,
    slots: Vec<Slot>,
    orders: u64,
    serving: u32,
    starting: u32,
    /// The metric's level summed over the serving replicas, since `last`.
    level: u64,
    last: Time,
    /// Integrals since the start: the level, and the serving replicas, over time (ns).
    level_area: f64,
    serving_area: f64,
    /// The integrals at each window edge `k` not yet read by a sync, with `k`: edge `k` is at
    /// `k × sync_period − metric_delay`, the first `first_edge`, and syncs `k` reads edges
    /// `k − 1` and `k` (the start, as edge `first_edge − 1`, holds nothing yet).
    edges: VecDeque<(u64, f64, f64)>,
    first_edge: u64,
    next_edge: u64,
    next_sync: u64,
    /// The serving replicas' time integral goes to the tier's series from here.
    series_from: Time,
}

/// What an autoscaler's event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tick {
    /// A metric window's edge.
    Edge,
    Sync,
    /// Replica slot `replica` may be ready.
    Ready {
        replica: u16,
    },
}

/// The replicas a sync added (each ready at the time given), and whether it removed any.
pub(in crate::sim::path) struct Change {
    pub(in crate::sim::path) started: Vec<(u16, Time)>,
    pub(in crate::sim::path) removed: bool,
}

impl Scaler {
    pub(super) fn new(c: &AutoscaleConfig, replicas: u32, slots: u32, capacity: u64) -> Self {
        let mut orders = 0;
        let slots = (0..slots)
            .map(|r| {
                if r < replicas {
                    orders += 1;
                    Slot::Serving { order: orders }
                } else {
                    Slot::Idle
                }
            })
            .collect();
        Scaler {
            hpa: Hpa::new(c),
            metric: c.metric,
            capacity: capacity as f64,
            sync_period: c.sync_period,
            metric_delay: c.metric_delay,
            start_time: c.start_time,
            slots,
            orders,
            serving: replicas,
            starting: 0,
            level: 0,
            last: Time::ZERO,
            level_area: 0.0,
            serving_area: 0.0,
            edges: VecDeque::new(),
            first_edge: c.metric_delay.0 / c.sync_period.0 + 1,
            next_edge: c.metric_delay.0 / c.sync_period.0 + 1,
            next_sync: 1,
            series_from: Time::ZERO,
        }
    }

    /// The first window edge and the first sync (window edges at `k × period − delay` after
    /// the start).
    pub(in crate::sim::path) fn first_ticks(&self) -> (Time, Time) {
        let p = self.sync_period.0;
        (Time(self.first_edge * p - self.metric_delay.0), Time(p))
    }

    /// Replica `r`'s level of the metric.
    fn level_of(&self, r: &Replica) -> u64 {
        match self.metric {
            Metric::Utilisation => r.busy,
            Metric::InFlight => r.busy + r.waiting.len() as u64,
            Metric::Queue => r.waiting.len() as u64,
        }
    }

    /// The integrals up to `now`.
    fn advance(&mut self, now: Time) {
        if now > self.last {
            let dt = (now.0 - self.last.0) as f64;
            self.level_area += self.level as f64 * dt;
            self.serving_area += f64::from(self.serving) * dt;
            self.last = now;
        }
    }

    /// The replicas' levels changed at `now`.
    pub(super) fn observe(&mut self, now: Time, replicas: &[Replica]) {
        self.advance(now);
        self.level = self.serving_level(replicas);
    }

    fn serving_level(&self, replicas: &[Replica]) -> u64 {
        self.slots
            .iter()
            .zip(replicas)
            .filter(|(s, _)| matches!(s, Slot::Serving { .. }))
            .map(|(_, r)| self.level_of(r))
            .sum()
    }

    /// A window edge at `now`.
    pub(in crate::sim::path) fn sample(&mut self, now: Time) {
        self.advance(now);
        self.edges
            .push_back((self.next_edge, self.level_area, self.serving_area));
        self.next_edge += 1;
    }

    /// What sync `k`'s window shows per serving replica: the period that ended `metric_delay`
    /// before it, cut at the start of the run; nothing while that window has not begun.
    fn observed(&mut self) -> Option<Observed> {
        let k = self.next_sync;
        self.next_sync += 1;
        while self.edges.front().is_some_and(|e| e.0 + 1 < k) {
            self.edges.pop_front();
        }
        let edge = |i: u64| self.edges.iter().find(|e| e.0 == i).map(|e| (e.1, e.2));
        let (level1, serving1) = edge(k)?;
        let (level0, serving0) = if k > self.first_edge {
            edge(k - 1)?
        } else {
            (0.0, 0.0)
        };
        let serving = serving1 - serving0;
        if serving <= 0.0 {
            return None;
        }
        let mut per_replica = (level1 - level0) / serving;
        if self.metric == Metric::Utilisation {
            per_replica /= self.capacity;
        }
        Some(Observed {
            per_replica,
            ready: self.serving,
            starting: self.starting,
        })
    }

    /// The sync at `now`: HPA's decision, carried out on the slots.
    pub(in crate::sim::path) fn sync(
        &mut self,
        now: Time,
        replicas: &[Replica],
        series: &mut Buckets,
    ) -> Change {
        let observed = self.observed();
        let current = self.serving + self.starting;
        let desired = self.hpa.sync(now, current, observed);
        let mut change = Change {
            started: Vec::new(),
            removed: desired < current,
        };
        if desired > current {
            for _ in current..desired {
                let r = self.free_slot(replicas);
                self.orders += 1;
                let ready_at = now + self.start_time;
                self.slots[r] = Slot::Starting {
                    ready_at,
                    order: self.orders,
                };
                self.starting += 1;
                change.started.push((r as u16, ready_at));
            }
        } else if desired < current {
            self.advance(now);
            self.set_series(now, series);
            for _ in desired..current {
                self.remove_newest();
            }
            self.level = self.serving_level(replicas);
        }
        change
    }

    /// The slot for a new replica: the first idle one that holds no work, else the first idle.
    fn free_slot(&self, replicas: &[Replica]) -> usize {
        let idle = |&(_, s): &(usize, &Slot)| *s == Slot::Idle;
        let mut slots = self.slots.iter().enumerate().filter(idle);
        let first = slots.clone().next().map(|(r, _)| r);
        slots
            .find(|&(r, _)| replicas[r].busy == 0 && replicas[r].waiting.is_empty())
            .map(|(r, _)| r)
            .or(first)
            .expect("a scale-up never goes past max_replicas, so a slot is idle")
    }

    /// Removes one replica as a ReplicaSet picks it: a starting one before a serving one, and
    /// among them the newest (the latest added, or the latest ready).
    fn remove_newest(&mut self) {
        let newest = |starting: bool| {
            self.slots
                .iter()
                .enumerate()
                .filter_map(|(r, s)| match *s {
                    Slot::Starting { order, .. } if starting => Some((order, r)),
                    Slot::Serving { order } if !starting => Some((order, r)),
                    _ => None,
                })
                .max()
                .map(|(_, r)| r)
        };
        if let Some(r) = newest(true) {
            self.slots[r] = Slot::Idle;
            self.starting -= 1;
        } else if let Some(r) = newest(false) {
            self.slots[r] = Slot::Idle;
            self.serving -= 1;
        }
    }

    /// Replica `r` may be ready at `now`: whether it now serves (a replica removed while
    /// starting, or added again since, is not).
    pub(in crate::sim::path) fn ready(
        &mut self,
        now: Time,
        r: usize,
        replicas: &[Replica],
        series: &mut Buckets,
    ) -> bool {
        if !matches!(self.slots[r], Slot::Starting { ready_at, .. } if ready_at == now) {
            return false;
        }
        self.advance(now);
        self.set_series(now, series);
        self.orders += 1;
        self.slots[r] = Slot::Serving { order: self.orders };
        self.starting -= 1;
        self.serving += 1;
        self.level = self.serving_level(replicas);
        true
    }

    /// The serving replicas, in slot order: what the balancer chooses among.
    pub(in crate::sim::path) fn serving_hosts(&self) -> Vec<u32> {
        (0..self.slots.len() as u32)
            .filter(|&r| matches!(self.slots[r as usize], Slot::Serving { .. }))
            .collect()
    }

    /// The serving replicas' count up to `now` goes into the tier's series.
    pub(in crate::sim::path) fn set_series(&mut self, now: Time, series: &mut Buckets) {
        series.level(self.series_from, now, f64::from(self.serving));
        self.series_from = now;
    }
}
