//! Where intents come from: a burst, Poisson arrivals with a rate schedule, closed loops, a
//! replayed trace, or periodic clients. [`Workload`] owns what the workload has still to start
//! and schedules its own events (`Start`, `Arrival`, `Replay`, `Think`, `Tick`,
//! `ClientsRestart`); the path starts the intents it hands out.

use super::Event;
use super::call::NO_WORKER;
use crate::base::queue::EventQueue;
use crate::base::rng::Stream;
use crate::base::time::{Duration, Time};
use crate::model::{Model, Phase, WorkloadKind};
use crate::sim::draws::Draws;
use crate::sim::engine::BurstOrder;

/// The workload's state: what it will still start and its arrival process.
#[derive(Clone)]
pub(super) struct Workload {
    /// Intents the workload will still start (burst events pending, closed budget, trace rows).
    to_start: u64,
    /// The open workload's source is still producing arrivals.
    open_source: bool,
    burst: Option<BurstOrder>,
    arrivals: Stream,
    lambda_max: f64,
    /// The id of the next intent of an open, closed, trace or periodic workload.
    next_id: u64,
    /// Periodic: how many times the clients have started (1 + the restarts so far); a `Tick`
    /// of an earlier start is stale.
    starts: u32,
    /// Periodic: clients whose next call of the current start is scheduled.
    ticking: u64,
    /// The draws of the periodic clients' phases and waits (a forked run's branch).
    draws: Draws,
}

/// An intent the workload starts now: its id, its client process and its closed-loop worker
/// ([`NO_WORKER`] when none).
pub(super) struct Starts {
    pub(super) id: u64,
    pub(super) client: u32,
    pub(super) worker: u32,
}

impl Workload {
    /// The workload of `model`, its first starts scheduled on `queue`; `intents` is told how
    /// many intents a burst starts (to size the slab once).
    pub(super) fn new(
        model: &Model,
        draws: Draws,
        queue: &mut EventQueue<Event>,
        intents: impl FnOnce(usize),
    ) -> Self {
        let w = &model.workload;
        let mut s = Workload {
            to_start: 0,
            open_source: false,
            burst: None,
            arrivals: draws.arrivals(),
            lambda_max: 0.0,
            next_id: 0,
            starts: 0,
            ticking: 0,
            draws,
        };
        match w.kind {
            WorkloadKind::Burst | WorkloadKind::Contention => {
                s.to_start = w.clients;
                intents(w.clients.min(1 << 24) as usize);
                let order = BurstOrder::of(w, draws);
                if !order.is_empty() {
                    queue.push(order.at(0).0, Event::Start { client: 0 });
                }
                s.burst = Some(order);
            }
            WorkloadKind::Open => {
                s.open_source = true;
                s.lambda_max = std::iter::once(w.rate.0)
                    .chain(w.schedule.iter().map(|p| p.rate.0))
                    .fold(0.0, f64::max);
                s.schedule_next_arrival(model, queue, Time::ZERO);
            }
            WorkloadKind::Trace => {
                s.to_start = w.replay.arrivals.len() as u64;
                schedule_replay(model, queue, 0);
            }
            WorkloadKind::Periodic => {
                s.start_clients(model, queue, Time::ZERO + w.start);
                for at in &w.restarts {
                    queue.push(Time::ZERO + *at, Event::ClientsRestart);
                }
            }
            WorkloadKind::Closed => {
                s.to_start = w.intents;
                for worker in 0..w.workers.min(w.intents) {
                    let ev = Event::Think {
                        worker: worker as u32,
                    };
                    queue.push(Time::ZERO, ev);
                }
            }
        }
        s
    }

    /// The workload will start no more intents.
    #[inline]
    pub(super) fn exhausted(&self) -> bool {
        self.to_start == 0 && !self.open_source && self.ticking == 0
    }

    /// Handles one of the workload's own events: the intent it starts now, if any. The path
    /// starts it, then calls [`Workload::follow`].
    #[inline(always)]
    pub(super) fn take(
        &mut self,
        model: &Model,
        queue: &mut EventQueue<Event>,
        ev: Event,
    ) -> Option<Starts> {
        let (id, worker) = match ev {
            Event::Start { client: n } => {
                self.to_start -= 1;
                let order = self.burst.as_ref()?;
                (
                    order.take(n, queue, |client| Event::Start { client }),
                    NO_WORKER,
                )
            }
            Event::Arrival => (self.fresh_id(), NO_WORKER),
            Event::Replay { .. } => {
                self.to_start -= 1;
                (self.fresh_id(), NO_WORKER)
            }
            Event::Think { worker } => {
                if self.to_start == 0 {
                    return None;
                }
                self.to_start -= 1;
                (self.fresh_id(), worker)
            }
            Event::Tick { client, start, .. } if start + 1 == self.starts => {
                let id = self.fresh_id();
                return Some(Starts {
                    id,
                    client,
                    worker: NO_WORKER,
                });
            }
            _ => return None,
        };
        let client = client_of(model, id, worker);
        Some(Starts { id, client, worker })
    }

    /// After the intent of `ev` started: the open workload's next arrival, the trace's next row.
    pub(super) fn follow(
        &mut self,
        model: &Model,
        queue: &mut EventQueue<Event>,
        now: Time,
        ev: Event,
    ) {
        match ev {
            Event::Arrival => self.schedule_next_arrival(model, queue, now),
            Event::Replay { row } => schedule_replay(model, queue, row + 1),
            Event::Tick {
                client,
                start,
                call,
            } if start + 1 == self.starts => {
                let u = self.draws.tick(client, start, call + 1).uniform();
                let at = now + model.workload.periodic_wait(u);
                if at <= Time::ZERO + model.horizon {
                    let call = call + 1;
                    queue.push(
                        at,
                        Event::Tick {
                            client,
                            start,
                            call,
                        },
                    );
                } else {
                    self.ticking -= 1;
                }
            }
            Event::ClientsRestart => self.start_clients(model, queue, now),
            _ => {}
        }
    }

    /// Every periodic client starts (again) at `from`: its first call at once (`phase =
    /// "aligned"`) or uniform over one period (`"spread"`). Calls of an earlier start that are
    /// still scheduled become stale.
    fn start_clients(&mut self, model: &Model, queue: &mut EventQueue<Event>, from: Time) {
        let w = &model.workload;
        let (start, horizon) = (self.starts, Time::ZERO + model.horizon);
        self.starts += 1;
        self.ticking = 0;
        let period = w.period.unwrap_or(Duration::ZERO);
        for client in 0..w.clients as u32 {
            let at = match w.phase.unwrap_or_default() {
                Phase::Aligned => from,
                Phase::Spread => {
                    let u = self.draws.tick(client, start, 0).uniform();
                    from + Duration::from_nanos_f64(period.0 as f64 * u)
                }
            };
            if at <= horizon {
                queue.push(
                    at,
                    Event::Tick {
                        client,
                        start,
                        call: 0,
                    },
                );
                self.ticking += 1;
            }
        }
    }

    /// The arrival process draws from `draws` from now on (a forked run's branch): a fresh
    /// stream, so a branch's arrivals differ from the run it was copied from.
    pub(super) fn rekey(&mut self, draws: Draws) {
        self.arrivals = draws.arrivals();
        self.draws = draws;
    }

    fn fresh_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A closed-workload worker whose intent settled thinks, then starts its next one.
    pub(super) fn think(
        &self,
        model: &Model,
        draws: Draws,
        queue: &mut EventQueue<Event>,
        now: Time,
        worker: u32,
        intents: u64,
    ) {
        let think = model.workload.think;
        let d = if think.is_zero() {
            Duration::ZERO
        } else {
            think.sample(&mut draws.think(worker, intents))
        };
        queue.push(now + d, Event::Think { worker });
    }

    /// Non-homogeneous Poisson arrivals by thinning (Lewis and Shedler 1979).
    fn schedule_next_arrival(&mut self, model: &Model, queue: &mut EventQueue<Event>, from: Time) {
        let w = &model.workload;
        if w.intents > 0 && self.next_id >= w.intents {
            self.open_source = false;
            return;
        }
        let horizon = Time::ZERO + model.horizon;
        let mean_gap_ns = 1e9 / self.lambda_max;
        let mut t = from;
        loop {
            t = t + Duration::from_nanos_f64(self.arrivals.exponential(mean_gap_ns));
            if t > horizon {
                self.open_source = false;
                return;
            }
            let accept = w.rate_at(t) / self.lambda_max;
            if self.arrivals.uniform() < accept {
                queue.push(t, Event::Arrival);
                return;
            }
        }
    }
}

/// The client process of intent `id`: the closed-loop worker, round-robin over `processes` in
/// an open workload, the row's class in a trace (round-robin without a class column), else the
/// burst client itself.
fn client_of(model: &Model, id: u64, worker: u32) -> u32 {
    let w = &model.workload;
    if worker != NO_WORKER {
        worker
    } else if w.kind == WorkloadKind::Open {
        (id % w.processes.max(1)) as u32
    } else if w.kind == WorkloadKind::Trace {
        match w.replay.classes.len() {
            0 => (id % w.processes.max(1)) as u32,
            _ => w.replay.arrivals[id as usize].class,
        }
    } else {
        id as u32
    }
}

/// Schedules row `row` of the trace (one at a time: the queue holds one pending row).
fn schedule_replay(model: &Model, queue: &mut EventQueue<Event>, row: u32) {
    let w = &model.workload;
    let Some(a) = w.replay.arrivals.get(row as usize) else {
        return;
    };
    let at = if w.speed == 1.0 {
        a.at
    } else {
        Duration::from_nanos_f64(a.at.0 as f64 / w.speed)
    };
    queue.push(Time::ZERO + at, Event::Replay { row });
}
