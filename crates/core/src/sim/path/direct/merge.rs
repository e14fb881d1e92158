//! Where the event loop would stop, and the counts, records and histograms merged into its
//! summary.

use super::Direct;
use crate::base::time::{Duration, Time};
use crate::model::WorkloadKind;
use crate::result::summary::{Ended, VariantResult};
use crate::sim::path::PathSim;

impl Direct<'_> {
    /// Where the event loop would stop, how, and after how many events; `None` when that
    /// depends on the global order of events (then the event loop runs the model).
    pub(super) fn ending(&self) -> Option<(Time, Ended, u64)> {
        let m = self.m;
        if self.unfinished > 0 || !self.all_started {
            // Every event up to the horizon is handled, stale timeouts included.
            let stale = self.stale.iter().filter(|&&t| t <= self.horizon.0).count() as u64;
            let events = self.live_events + stale;
            if events >= m.max_events {
                return None;
            }
            return Some((self.horizon, Ended::Horizon, events));
        }
        let end = self.last_final;
        let mut stale = 0u64;
        for &t in &self.stale {
            if t == end.0 {
                // Popped or not depends on its place among the last intent's events.
                return None;
            }
            stale += u64::from(t < end.0);
        }
        let events = self.live_events + stale;
        if events > m.max_events {
            return None;
        }
        Some((end, Ended::Settled, events))
    }

    /// Feeds the counters, the sorted records and the histograms into a `PathSim` and lets it
    /// build the result, so that the summary is assembled in one place.
    pub(super) fn finish(self, end: Time, ended: Ended, events: u64, full: bool) -> VariantResult {
        let m = self.m;
        // An inert copy of the model builds the sim (no burst order, no arrivals to draw);
        // the result is built from the real model.
        let mut inert = m.clone();
        inert.workload.kind = WorkloadKind::Burst;
        inert.workload.clients = 0;
        inert.workload.spread = Duration::ZERO;
        let mut sim = PathSim::new(&inert, self.seed);
        sim.cx.model = m;
        sim.prepare_windows(full);
        let n = &self.n;
        sim.c = n.c.clone();
        let h = &mut sim.hops[0].n;
        h.received = n.c.intents;
        h.sent = n.sent;
        h.retries = n.retries;
        h.retry_path_sent = n.retries;
        h.failed = n.hop_failed;
        h.timeouts = n.timeouts;
        h.requests_lost = n.requests_lost;
        h.responses_lost = n.responses_lost;
        h.late_responses = n.late_responses;
        h.retry_after_waits = n.retry_after_waits;
        let ts = &mut sim.tiers[0];
        let t = &mut ts.n;
        t.arrivals = n.arrivals;
        t.retry_arrivals = n.retry_arrivals;
        t.orphaned = n.orphaned;
        t.served = n.served;
        t.rejected = n.rejected;
        t.hung = n.hung;
        t.dropped_expired = n.dropped_expired;
        t.client_errors = n.client_errors;
        t.crashes = n.crashes;
        t.work = n.work;
        t.wasted = n.wasted;
        t.last_arrival = n.last_arrival;
        self.rec.feed_all(ts);
        sim.completions = self.completions;
        sim.successes = self.successes;
        sim.calls.live = self.unfinished;
        sim.events = events;
        sim.finish(&m.name, end, ended, full)
    }
}
