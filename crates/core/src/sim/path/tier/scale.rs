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
use crate::policy::autoscale::{AutoscaleConfig, Hpa, Metric, MissingMetrics, Observed};
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
    /// In the balancer's choice since `order`-th readiness, at `since`; `added` is when a sync
    /// added it (`None` for the replicas there at the start).
    Serving {
        order: u64,
        since: Time,
        added: Option<Time>,
    },
}

/// The integrals at a metric window's edge `k` (at `k × sync_period − metric_delay`): the
/// level and the serving replicas over time, summed, and per slot when kept.
#[derive(Clone, Debug)]
struct Edge {
    k: u64,
    level: f64,
    serving: f64,
    slots: Vec<(f64, f64)>,
}

/// Each slot's level and integrals, kept only when the CPU initialisation period may count a
/// ready replica as not ready: a sync then takes that replica's share out of its window.
#[derive(Clone, Debug)]
struct SlotAreas {
    level: Vec<u64>,
    level_area: Vec<f64>,
    serving_area: Vec<f64>,
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
    missing_metrics: MissingMetrics,
    cpu_initialization_period: Duration,
    slots: Vec<Slot>,
    orders: u64,
    serving: u32,
    /// The most replicas serving at once so far.
    peak_serving: u32,
    starting: u32,
    /// The metric's level summed over the serving replicas, since `last`.
    level: u64,
    last: Time,
    /// Integrals since the start: the level, and the serving replicas, over time (ns).
    level_area: f64,
    serving_area: f64,
    /// Per slot, with a CPU initialisation period.
    slot_areas: Option<SlotAreas>,
    /// The window edges not yet read by a sync: the first is `first_edge`, and sync `k` reads
    /// edges `k − 1` and `k` (the start, as edge `first_edge − 1`, holds nothing yet).
    edges: VecDeque<Edge>,
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
        let slot_areas = (c.cpu_initialization_period > Duration::ZERO).then(|| SlotAreas {
            level: vec![0; slots as usize],
            level_area: vec![0.0; slots as usize],
            serving_area: vec![0.0; slots as usize],
        });
        let mut orders = 0;
        let slots = (0..slots)
            .map(|r| {
                if r < replicas {
                    orders += 1;
                    Slot::Serving {
                        order: orders,
                        since: Time::ZERO,
                        added: None,
                    }
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
            missing_metrics: c.missing_metrics,
            cpu_initialization_period: c.cpu_initialization_period,
            slots,
            orders,
            serving: replicas,
            peak_serving: replicas,
            starting: 0,
            level: 0,
            last: Time::ZERO,
            level_area: 0.0,
            serving_area: 0.0,
            slot_areas,
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
            if let Some(a) = &mut self.slot_areas {
                for (r, s) in self.slots.iter().enumerate() {
                    if matches!(s, Slot::Serving { .. }) {
                        a.level_area[r] += a.level[r] as f64 * dt;
                        a.serving_area[r] += dt;
                    }
                }
            }
            self.last = now;
        }
    }

    /// The replicas' levels changed at `now`.
    pub(super) fn observe(&mut self, now: Time, replicas: &[Replica]) {
        self.advance(now);
        self.relevel(replicas);
    }

    /// The metric's level, summed over the serving replicas (and per slot when kept).
    fn relevel(&mut self, replicas: &[Replica]) {
        let serving = |s: &Slot| matches!(s, Slot::Serving { .. });
        self.level = self
            .slots
            .iter()
            .zip(replicas)
            .filter(|(s, _)| serving(s))
            .map(|(_, r)| self.level_of(r))
            .sum();
        if let Some(mut a) = self.slot_areas.take() {
            for (r, (s, rep)) in self.slots.iter().zip(replicas).enumerate() {
                a.level[r] = if serving(s) { self.level_of(rep) } else { 0 };
            }
            self.slot_areas = Some(a);
        }
    }

    /// A window edge at `now`.
    pub(in crate::sim::path) fn sample(&mut self, now: Time) {
        self.advance(now);
        let slots = self.slot_areas.as_ref().map_or_else(Vec::new, |a| {
            a.level_area
                .iter()
                .copied()
                .zip(a.serving_area.iter().copied())
                .collect()
        });
        self.edges.push_back(Edge {
            k: self.next_edge,
            level: self.level_area,
            serving: self.serving_area,
            slots,
        });
        self.next_edge += 1;
    }

    /// Sync `k`'s window: from `(k − 1) × sync_period − metric_delay` (at least the start) to
    /// `k × sync_period − metric_delay`.
    fn window(&self, k: u64) -> (Time, Time) {
        let (p, d) = (self.sync_period.0, self.metric_delay.0);
        (Time(((k - 1) * p).saturating_sub(d)), Time(k * p - d))
    }

    /// What sync `k` (at `now`) sees: the period that ended `metric_delay` before it, cut at the
    /// start of the run, averaged per serving replica, with the replicas grouped as HPA's
    /// `groupPods` does; nothing while that window has not begun or no replica has a sample.
    fn observed(&mut self, now: Time) -> Option<Observed> {
        let k = self.next_sync;
        self.next_sync += 1;
        while self.edges.front().is_some_and(|e| e.k + 1 < k) {
            self.edges.pop_front();
        }
        let edge = |i: u64| self.edges.iter().find(|e| e.k == i);
        let end = edge(k)?;
        let start = if k > self.first_edge {
            Some(edge(k - 1)?)
        } else {
            None
        };
        let mut level = end.level - start.map_or(0.0, |e| e.level);
        let mut serving = end.serving - start.map_or(0.0, |e| e.serving);
        if serving <= 0.0 {
            return None;
        }
        let (from, to) = self.window(k);
        let mut o = Observed {
            per_replica: 0.0,
            ready: self.serving,
            unready: self.starting,
            missing: 0,
        };
        for (r, slot) in self.slots.iter().enumerate() {
            let Slot::Serving { since, added, .. } = *slot else {
                continue;
            };
            if self.missing_metrics == MissingMetrics::Dampen && since >= to {
                // Ready when the window had ended: no sample (`missingPods`).
                o.ready -= 1;
                o.missing += 1;
            } else if since > from
                && added.is_some_and(|a| now < a + self.cpu_initialization_period)
            {
                // Within the CPU initialisation period, and the window began before it was
                // ready: its sample is dropped (`unreadyPods`).
                o.ready -= 1;
                o.unready += 1;
                let area = |e: Option<&Edge>| e.and_then(|e| e.slots.get(r).copied());
                let (l1, s1) = area(Some(end)).unwrap_or_default();
                let (l0, s0) = area(start).unwrap_or_default();
                level -= l1 - l0;
                serving -= s1 - s0;
            }
        }
        if o.ready == 0 || serving <= 0.0 {
            return None;
        }
        o.per_replica = level / serving;
        if self.metric == Metric::Utilisation {
            o.per_replica /= self.capacity;
        }
        Some(o)
    }

    /// The sync at `now`: HPA's decision, carried out on the slots.
    pub(in crate::sim::path) fn sync(
        &mut self,
        now: Time,
        replicas: &[Replica],
        series: &mut Buckets,
    ) -> Change {
        let observed = self.observed(now);
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
            self.relevel(replicas);
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
                    Slot::Serving { order, .. } if !starting => Some((order, r)),
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
        self.slots[r] = Slot::Serving {
            order: self.orders,
            since: now,
            added: Some(Time(now.0 - self.start_time.0)),
        };
        self.starting -= 1;
        self.serving += 1;
        self.peak_serving = self.peak_serving.max(self.serving);
        self.relevel(replicas);
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

    /// At the end of the run (`end`): the most replicas that served at once, and the serving
    /// replicas' time average over the run.
    pub(in crate::sim::path) fn ready_replicas(&mut self, end: Time) -> (u64, f64) {
        self.advance(end);
        let mean = if end.0 > 0 {
            self.serving_area / end.0 as f64
        } else {
            f64::from(self.serving)
        };
        (u64::from(self.peak_serving), mean)
    }
}
