//! Where intents come from: a burst, Poisson arrivals with a rate schedule, closed loops, or a
//! replayed trace.

use super::{Event, PathSim};
use crate::engine::BurstOrder;
use crate::model::WorkloadKind;
use crate::time::{Duration, Time};

impl PathSim<'_> {
    /// Schedules the workload's first starts.
    pub(super) fn start_workload(&mut self) {
        let w = &self.model.workload;
        match w.kind {
            WorkloadKind::Burst | WorkloadKind::Contention => {
                self.to_start = w.clients;
                self.tops.reserve(w.clients.min(1 << 24) as usize);
                let order = BurstOrder::of(w, self.draws);
                if !order.is_empty() {
                    self.queue.push(order.at(0).0, Event::Start { client: 0 });
                }
                self.burst = Some(order);
            }
            WorkloadKind::Open => {
                self.open_source = true;
                self.lambda_max = std::iter::once(w.rate.0)
                    .chain(w.schedule.iter().map(|p| p.rate.0))
                    .fold(0.0, f64::max);
                self.schedule_next_arrival(Time::ZERO);
            }
            WorkloadKind::Trace => {
                self.to_start = w.replay.arrivals.len() as u64;
                self.schedule_replay(0);
            }
            WorkloadKind::Closed => {
                self.to_start = w.intents;
                for worker in 0..w.workers.min(w.intents) {
                    self.queue.push(
                        Time::ZERO,
                        Event::Think {
                            worker: worker as u32,
                        },
                    );
                }
            }
        }
    }

    /// Schedules row `row` of the trace (one at a time: the queue holds one pending row).
    pub(super) fn schedule_replay(&mut self, row: u32) {
        let w = &self.model.workload;
        let Some(a) = w.replay.arrivals.get(row as usize) else {
            return;
        };
        let at = if w.speed == 1.0 {
            a.at
        } else {
            Duration::from_nanos_f64(a.at.0 as f64 / w.speed)
        };
        self.queue.push(Time::ZERO + at, Event::Replay { row });
    }

    /// Non-homogeneous Poisson arrivals by thinning (Lewis and Shedler 1979).
    pub(super) fn schedule_next_arrival(&mut self, from: Time) {
        let w = &self.model.workload;
        if w.intents > 0 && self.next_id >= w.intents {
            self.open_source = false;
            return;
        }
        let horizon = Time::ZERO + self.model.horizon;
        let mean_gap_ns = 1e9 / self.lambda_max;
        let mut t = from;
        loop {
            t = t + Duration::from_nanos_f64(self.arrivals_stream.exponential(mean_gap_ns));
            if t > horizon {
                self.open_source = false;
                return;
            }
            let accept = self.model.workload.rate_at(t) / self.lambda_max;
            if self.arrivals_stream.uniform() < accept {
                self.queue.push(t, Event::Arrival);
                return;
            }
        }
    }
}
