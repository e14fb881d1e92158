//! Write contention with optimistic concurrency: the model behind the AWS Architecture Blog post
//! "Exponential Backoff And Jitter" (Marc Brooker, 2015) and its simulator
//! (`aws-samples/aws-arch-backoff-simulator`, `src/backoff_simulator.py`).
//!
//! `workload.clients` clients each want to update one shared record once. A record holds a
//! version number. An update is a read and a conditional write:
//!
//! 1. the client sends a read; when it *arrives* at the record, the record's current version is
//!    captured and sent back;
//! 2. when the client has the version, it sends a write carrying it; when the write *arrives*,
//!    it commits (the version goes up by one) if the version is still the one the client read,
//!    and conflicts otherwise, that is, exactly when some other client's write committed between
//!    this client's read arriving and its write arriving;
//! 3. the answer travels back; on a conflict the client backs off (`retry.*`) and starts again
//!    with a new read, until it has committed once (or used up `retry.max_attempts`).
//!
//! Every message takes an independent draw from `network.request_latency` (client to record) or
//! `network.response_latency` (back); the blog uses `|N(10 ms, 2 ms)|` for both, which is
//! `latency = "normal(10ms, 2ms)"`. The record answers at once (no service time, no queue, no
//! failures), as in the blog's simulator. After a conflict the next read leaves after the backoff,
//! so it arrives `backoff + latency` after the conflict reply, as the blog's `write_rsp` does.
//!
//! "Calls" in the blog are writes: here `attempts` (and `arrivals`) count writes; each write has
//! one read before it. `conflicts` counts refused writes; the time until the last client finishes
//! is `end_ms` (and `completion_ms.max` when every client starts at 0). The blog's simulator
//! counts retries from 1, so its first window is `2 * base`: `retry.first_exponent = 1`.
//!
//! Draws are keyed by `(seed, client, purpose, index)`: the read of attempt `a` uses index `2a`,
//! its write `2a + 1`, and the backoff after attempt `a` uses index `a` (see [`crate::rng`]).

use crate::engine::{self, BurstOrder, Engine};
use crate::metrics::{self, Buckets, Completions};
use crate::model::Model;
use crate::queue::EventQueue;
use crate::rng::{Purpose, Stream};
use crate::summary::{Ended, Summary, VariantResult};
use crate::time::{Duration, Time};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The client sends its first read.
    Start { client: u32 },
    /// A read reaches the record.
    ReadArrive { client: u32 },
    /// The version reaches the client, which sends its write.
    ReadReply { client: u32 },
    /// A write reaches the record.
    WriteArrive { client: u32 },
    /// The write's answer reaches the client.
    WriteReply { client: u32, ok: bool },
}

#[derive(Clone, Copy, Debug, Default)]
struct Client {
    start: Time,
    /// The version the last read saw.
    read_version: u64,
    /// Writes sent so far; the outstanding attempt is `attempts - 1` once its write is sent.
    attempts: u32,
    prev_backoff: Option<Duration>,
}

#[derive(Default)]
struct Counters {
    writes: u64,
    retries: u64,
    conflicts: u64,
    succeeded: u64,
    failed: u64,
    last_arrival: Time,
}

/// A contention run in progress.
pub struct OccSim<'m> {
    model: &'m Model,
    seed: u64,
    queue: EventQueue<Event>,
    clients: Vec<Client>,
    version: u64,
    live: u64,
    buckets: Buckets,
    completions: Completions,
    c: Counters,
    events: u64,
    /// The order in which the burst's clients start.
    burst: BurstOrder,
}

impl Engine for OccSim<'_> {
    type Event = Event;
    fn queue(&mut self) -> &mut EventQueue<Event> {
        &mut self.queue
    }
    fn finished(&self) -> bool {
        self.live == 0
    }
    fn handle(&mut self, now: Time, ev: Event) {
        OccSim::handle(self, now, ev)
    }
}

impl<'m> OccSim<'m> {
    /// A run of `model`, whose workload is `contention` ([`Model::validate`] checks the rest).
    pub fn new(model: &'m Model, seed: u64) -> Self {
        let w = &model.workload;
        let n = w.clients as usize;
        let mut sim = OccSim {
            model,
            seed,
            queue: EventQueue::new(),
            clients: vec![Client::default(); n],
            version: 0,
            live: w.clients,
            buckets: Buckets::new(model.bucket),
            completions: Completions::default(),
            c: Counters::default(),
            events: 0,
            burst: BurstOrder::new(w, seed),
        };
        if !sim.burst.is_empty() {
            sim.queue
                .push(sim.burst.at(0).0, Event::Start { client: 0 });
        }
        sim
    }

    /// Runs until every client has committed or given up; `progress` gets the clock now and then.
    pub fn run(mut self, name: &str, progress: &mut dyn FnMut(Time)) -> VariantResult {
        let model = self.model;
        let r = engine::drive(&mut self, model, progress);
        self.events = r.events;
        self.finish(name, r.end, r.ended)
    }

    #[inline]
    fn latency(&self, client: u32, purpose: Purpose, index: u64) -> Duration {
        let n = &self.model.network;
        let d = if purpose == Purpose::RequestLatency {
            n.request_latency()
        } else {
            n.response_latency()
        };
        if d.is_zero() {
            Duration::ZERO
        } else {
            d.sample(&mut Stream::new(
                self.seed,
                u64::from(client),
                purpose,
                index,
            ))
        }
    }

    /// Sends the read of the client's next attempt, `delay` from now.
    fn send_read(&mut self, now: Time, client: u32, delay: Duration) {
        let a = u64::from(self.clients[client as usize].attempts);
        let lat = self.latency(client, Purpose::RequestLatency, 2 * a);
        self.queue
            .push(now + delay + lat, Event::ReadArrive { client });
    }

    fn handle(&mut self, now: Time, ev: Event) {
        match ev {
            Event::Start { client: n } => {
                let client = self
                    .burst
                    .take(n, &mut self.queue, |client| Event::Start { client })
                    as u32;
                self.clients[client as usize].start = now;
                self.send_read(now, client, Duration::ZERO);
            }
            Event::ReadArrive { client } => {
                let c = &mut self.clients[client as usize];
                c.read_version = self.version;
                let a = u64::from(c.attempts);
                let lat = self.latency(client, Purpose::ResponseLatency, 2 * a);
                self.queue.push(now + lat, Event::ReadReply { client });
            }
            Event::ReadReply { client } => {
                let c = &mut self.clients[client as usize];
                let a = u64::from(c.attempts);
                c.attempts += 1;
                self.c.writes += 1;
                if a > 0 {
                    self.c.retries += 1;
                }
                let lat = self.latency(client, Purpose::RequestLatency, 2 * a + 1);
                self.queue.push(now + lat, Event::WriteArrive { client });
            }
            Event::WriteArrive { client } => {
                let c = &self.clients[client as usize];
                let a = u64::from(c.attempts - 1);
                self.buckets.arrival(now, a > 0);
                self.c.last_arrival = now;
                let ok = c.read_version == self.version;
                if ok {
                    self.version += 1;
                } else {
                    self.c.conflicts += 1;
                }
                let lat = self.latency(client, Purpose::ResponseLatency, 2 * a + 1);
                self.queue.push(now + lat, Event::WriteReply { client, ok });
            }
            Event::WriteReply { client, ok } => {
                if ok {
                    return self.settle(now, client, true);
                }
                let m = self.model;
                let c = self.clients[client as usize];
                if c.attempts >= m.retry.max_attempts {
                    return self.settle(now, client, false);
                }
                let retries_made = c.attempts - 1;
                let delay = m.retry.backoff().delay(
                    retries_made,
                    c.prev_backoff,
                    &mut Stream::new(
                        self.seed,
                        u64::from(client),
                        Purpose::Backoff,
                        u64::from(retries_made),
                    ),
                );
                if let Some(deadline) = m.retry.deadline
                    && now + delay >= c.start + deadline
                {
                    return self.settle(now, client, false);
                }
                self.clients[client as usize].prev_backoff = Some(delay);
                self.send_read(now, client, delay);
            }
        }
    }

    fn settle(&mut self, now: Time, client: u32, ok: bool) {
        self.live -= 1;
        self.completions
            .record(now.since(self.clients[client as usize].start));
        if ok {
            self.c.succeeded += 1;
            self.buckets.success(now);
        } else {
            self.c.failed += 1;
        }
    }

    fn finish(self, name: &str, end: Time, ended: Ended) -> VariantResult {
        let (peak_arrivals, peak_retries) = self.buckets.peaks();
        let series = metrics::series(self.buckets, end);
        let c = &self.c;
        let intents = self.model.workload.clients;
        let summary = Summary {
            intents,
            attempts: c.writes,
            retries: c.retries,
            amplification: c.writes as f64 / intents.max(1) as f64,
            succeeded: c.succeeded,
            failed: c.failed,
            unsettled: intents - c.succeeded - c.failed,
            peak_arrivals,
            peak_retries,
            bucket_ms: self.model.bucket.as_millis_f64(),
            completion_ms: self.completions.percentiles(),
            last_arrival_ms: c.last_arrival.as_millis_f64(),
            // Each committed write is applied once; a client that gave up applied nothing.
            lost: c.failed,
            applied_once: c.succeeded,
            duplicated: 0,
            phantom: 0,
            false_failures: 0,
            effects: c.succeeded,
            arrivals: c.writes,
            timeouts: 0,
            late_responses: 0,
            requests_lost: 0,
            responses_lost: 0,
            rejected: 0,
            dropped_expired: 0,
            conflicts: c.conflicts,
            replayed: 0,
            crashes: 0,
            work_ms: 0.0,
            wasted_work_ms: 0.0,
            wasted_share: 0.0,
            mean_wait_ms: 0.0,
            mean_queue_len: 0.0,
            mean_busy: 0.0,
            end_ms: end.as_millis_f64(),
            ended,
            events: self.events,
            layered: None,
            ..Default::default()
        };
        VariantResult {
            name: name.to_string(),
            summary,
            series,
            completion_cdf: self.completions.cdf(),
        }
    }
}

/// Runs a contention `model` with `seed`, named after the model.
pub fn run(model: &Model, seed: u64) -> VariantResult {
    OccSim::new(model, seed).run(&model.name, &mut |_| {})
}
