//! Layered retries: one request path through a chain of layers, each retrying on its own.
//!
//! A model with `[[layer]]` tables (top first, e.g. app -> SDK -> proxy -> service) runs here.
//! Each layer receives a *call* from the layer above, sends up to `max_attempts` attempts to the
//! layer below (backoff between them, an optional per-attempt timeout and retry budget), and
//! answers the caller with the first success or with failure. The last layer's attempts reach the
//! *bottom* (`[server]`), which takes `server.service` and fails each attempt independently with
//! probability `server.fail`. A failure at the bottom is seen by every layer above, and each may
//! retry it: three layers of three attempts can send 3^3 = 27 attempts to the bottom for one user
//! action (the article: "Retry at one layer"; the Google SRE book, chapter "Addressing Cascading
//! Failures", on retries at multiple levels of the stack).
//!
//! Timeouts do not cancel anything below (no deadline propagation): an attempt a layer stopped
//! waiting for goes on, and so may its retries further down. Work whose result can no longer reach
//! the user is *orphaned*; the engine counts it by walking the chain of callers, which stay in
//! memory (reference counted) while anything below them is alive.
//!
//! The expected number of bottom attempts per intent has a closed form when failures are
//! independent and nothing times out ([`expected_bottom_attempts`], derived in `docs/layered.md`);
//! `tests/layered.rs` checks the engine against it. Every random draw is keyed by
//! `(seed, intent, purpose, path)`, where the path is the sequence of attempt numbers from the top
//! to the attempt, so variants share draws for the attempts they share (see [`crate::rng`]).

use crate::engine::{self, BurstOrder, Engine};
use crate::metrics::{self, Buckets, Completions, Levels};
use crate::model::{Budget, FailMode, Model};
use crate::queue::EventQueue;
use crate::rng::{Purpose, Stream, mix64};
use crate::summary::{Ended, LayerSummary, Layered, Summary, VariantResult};
use crate::time::{Duration, Time};

const NONE: u32 = u32::MAX;

/// `E[attempts at the bottom per intent]` when the bottom fails each attempt independently with
/// probability `p` and no layer times out or has a budget. `max_attempts` lists the layers top
/// first. With `q_1 = p` for the last layer, layer `k` (counted from the bottom) makes on average
/// `(1 - q_k^{n_k}) / (1 - q_k)` attempts per call (`n_k` when `q_k = 1`) and fails a call with
/// probability `q_{k+1} = q_k^{n_k}`; by Wald's identity the expected attempts multiply. The
/// product telescopes to `(1 - p^N) / (1 - p)` with `N` the product of `max_attempts`.
pub fn expected_bottom_attempts(p: f64, max_attempts: &[u32]) -> f64 {
    let mut q = p;
    let mut e = 1.0;
    for &n in max_attempts.iter().rev() {
        let n = n as i32;
        e *= if q >= 1.0 {
            f64::from(n)
        } else {
            (1.0 - q.powi(n)) / (1.0 - q)
        };
        q = q.powi(n);
    }
    e
}

/// The bottom attempts per intent when every attempt fails: the product of `max_attempts`.
pub fn worst_case_bottom_attempts(max_attempts: &[u32]) -> f64 {
    max_attempts.iter().map(|&n| f64::from(n)).product()
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// A burst client starts its intent at the top layer.
    Start { client: u32 },
    /// Backoff elapsed: `call` sends its next attempt.
    Send { call: u32, generation: u32 },
    /// Attempt `attempt` of `parent` reaches the layer below (or the bottom). Holds a reference.
    Arrive { parent: u32, attempt: u16 },
    /// The bottom finished attempt `attempt` of `parent`. Holds the arrival's reference.
    Done {
        parent: u32,
        attempt: u16,
        failed: bool,
        service: Duration,
    },
    /// The answer to attempt `attempt` reaches `call`. Holds a reference.
    Reply { call: u32, attempt: u16, ok: bool },
    /// Attempt `attempt` of `call` timed out.
    Timeout {
        call: u32,
        generation: u32,
        attempt: u16,
    },
}

/// One call received by one layer: its retry loop.
#[derive(Clone, Copy, Debug)]
struct Call {
    parent: u32,
    parent_attempt: u16,
    layer: u16,
    intent: u32,
    /// Attempts sent so far; the outstanding one is `attempts - 1`.
    attempts: u16,
    awaiting: bool,
    settled: bool,
    /// Some attempt on the way down to this call was a retry.
    retry_path: bool,
    /// Messages, children and pending replies that refer to this call.
    refs: u32,
    generation: u32,
    /// The stable key of this call within its intent (see [`child_path`]).
    path: u64,
    prev_backoff: Option<Duration>,
}

#[derive(Clone, Copy, Debug)]
struct Intent {
    id: u64,
    start: Time,
    applied: u32,
    succeeded: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct LayerCounters {
    received: u64,
    sent: u64,
    retries: u64,
    failed: u64,
    timeouts: u64,
    budget_denied: u64,
    orphaned: u64,
    /// Budget state: tokens (gRPC) or balance (ratio).
    tokens: f64,
}

#[derive(Default)]
struct Counters {
    intents: u64,
    succeeded: u64,
    failed: u64,
    lost: u64,
    applied_once: u64,
    duplicated: u64,
    false_failures: u64,
    effects: u64,
    arrivals: u64,
    retry_arrivals: u64,
    orphaned: u64,
    late: u64,
    work: u128,
    wasted: u128,
    last_arrival: Time,
}

/// The key of attempt `attempt` of the call keyed `path`: the call it creates below has this
/// path, and the attempt's draws (latency, failure, service, the backoff after it) use it.
#[inline]
fn child_path(path: u64, attempt: u16) -> u64 {
    mix64(path ^ (u64::from(attempt) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// A layered run in progress.
pub struct LayeredSim<'m> {
    model: &'m Model,
    seed: u64,
    queue: EventQueue<Event>,
    calls: Vec<Call>,
    free_calls: Vec<u32>,
    intents: Vec<Intent>,
    free_intents: Vec<u32>,
    live: u64,
    to_start: u64,
    busy: u64,
    layers: Vec<LayerCounters>,
    buckets: Buckets,
    levels: Levels,
    completions: Completions,
    c: Counters,
    events: u64,
    /// The order in which the burst's clients start.
    burst: BurstOrder,
}

impl Engine for LayeredSim<'_> {
    type Event = Event;
    fn queue(&mut self) -> &mut EventQueue<Event> {
        &mut self.queue
    }
    fn finished(&self) -> bool {
        self.live == 0 && self.to_start == 0
    }
    fn handle(&mut self, now: Time, ev: Event) {
        LayeredSim::handle(self, now, ev)
    }
}

impl<'m> LayeredSim<'m> {
    /// A run of `model`, which must have at least one `[[layer]]` and a burst workload
    /// ([`Model::validate`] checks both).
    pub fn new(model: &'m Model, seed: u64) -> Self {
        assert!(!model.layers.is_empty(), "the layered engine needs layers");
        let w = &model.workload;
        let mut sim = LayeredSim {
            model,
            seed,
            queue: EventQueue::new(),
            calls: Vec::new(),
            free_calls: Vec::new(),
            intents: Vec::new(),
            free_intents: Vec::new(),
            live: 0,
            to_start: w.clients,
            busy: 0,
            layers: model
                .layers
                .iter()
                .map(|l| LayerCounters {
                    tokens: match l.budget {
                        Some(Budget::Tokens { max_tokens, .. }) => max_tokens,
                        Some(Budget::Ratio { min_retries, .. }) => min_retries as f64,
                        None => 0.0,
                    },
                    ..LayerCounters::default()
                })
                .collect(),
            buckets: Buckets::new(model.bucket),
            levels: Levels::default(),
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

    /// Runs to the end and reports. `progress` is called now and then with the clock.
    pub fn run(mut self, name: &str, progress: &mut dyn FnMut(Time)) -> VariantResult {
        let model = self.model;
        let r = engine::drive(&mut self, model, progress);
        self.events = r.events;
        self.finish(name, r.end, r.ended)
    }

    fn handle(&mut self, now: Time, ev: Event) {
        match ev {
            Event::Start { client: n } => {
                self.to_start -= 1;
                let client = self
                    .burst
                    .take(n, &mut self.queue, |client| Event::Start { client });
                self.start_intent(now, client);
            }
            Event::Send { call, generation } => {
                if self.calls[call as usize].generation == generation {
                    self.send(now, call);
                }
            }
            Event::Arrive { parent, attempt } => self.arrive(now, parent, attempt),
            Event::Done {
                parent,
                attempt,
                failed,
                service,
            } => self.done(now, parent, attempt, failed, service),
            Event::Reply { call, attempt, ok } => {
                let c = &mut self.calls[call as usize];
                c.refs -= 1;
                if c.awaiting && c.attempts == attempt + 1 {
                    self.outcome(now, call, ok);
                } else {
                    self.c.late += 1;
                }
                self.maybe_free(call);
            }
            Event::Timeout {
                call,
                generation,
                attempt,
            } => {
                let c = &self.calls[call as usize];
                if c.generation == generation && c.awaiting && c.attempts == attempt + 1 {
                    self.layers[c.layer as usize].timeouts += 1;
                    self.attempt_failed(now, call);
                }
            }
        }
    }

    #[inline]
    fn stream(&self, call: u32, purpose: Purpose, key: u64) -> Stream {
        let id = self.intents[self.calls[call as usize].intent as usize].id;
        Stream::new(self.seed, id, purpose, key)
    }

    fn alloc_call(&mut self, call: Call) -> u32 {
        match self.free_calls.pop() {
            Some(i) => {
                let generation = self.calls[i as usize].generation;
                self.calls[i as usize] = Call { generation, ..call };
                i
            }
            None => {
                self.calls.push(call);
                (self.calls.len() - 1) as u32
            }
        }
    }

    fn start_intent(&mut self, now: Time, id: u64) {
        let intent = Intent {
            id,
            start: now,
            applied: 0,
            succeeded: false,
        };
        let slot = match self.free_intents.pop() {
            Some(i) => {
                self.intents[i as usize] = intent;
                i
            }
            None => {
                self.intents.push(intent);
                (self.intents.len() - 1) as u32
            }
        };
        self.live += 1;
        self.c.intents += 1;
        let call = self.alloc_call(Call {
            parent: NONE,
            parent_attempt: 0,
            layer: 0,
            intent: slot,
            attempts: 0,
            awaiting: false,
            settled: false,
            retry_path: false,
            refs: 0,
            generation: 0,
            path: 0,
            prev_backoff: None,
        });
        self.receive(call, true);
        self.send(now, call);
    }

    /// A call reached its layer: count it and feed the layer's budget.
    fn receive(&mut self, call: u32, wanted: bool) {
        let k = self.calls[call as usize].layer as usize;
        let l = &mut self.layers[k];
        l.received += 1;
        if !wanted {
            l.orphaned += 1;
        }
        if let Some(Budget::Ratio { ratio, .. }) = self.model.layers[k].budget {
            l.tokens += ratio;
        }
    }

    /// Is attempt `attempt` of `call` still awaited all the way up to the user?
    fn chain_alive(&self, mut call: u32, mut attempt: u16) -> bool {
        loop {
            let c = &self.calls[call as usize];
            if !(c.awaiting && c.attempts == attempt + 1) {
                return false;
            }
            if c.parent == NONE {
                return true;
            }
            attempt = c.parent_attempt;
            call = c.parent;
        }
    }

    fn send(&mut self, now: Time, call: u32) {
        let c = &mut self.calls[call as usize];
        let attempt = c.attempts;
        c.attempts += 1;
        c.awaiting = true;
        c.refs += 1;
        let (k, generation, path) = (c.layer as usize, c.generation, c.path);
        let layer = &self.model.layers[k];
        let l = &mut self.layers[k];
        l.sent += 1;
        if attempt > 0 {
            l.retries += 1;
        }
        if let Some(timeout) = layer.timeout {
            self.queue.push(
                now + timeout,
                Event::Timeout {
                    call,
                    generation,
                    attempt,
                },
            );
        }
        let lat = if layer.latency.is_zero() {
            Duration::ZERO
        } else {
            let key = child_path(path, attempt);
            layer
                .latency
                .sample(&mut self.stream(call, Purpose::RequestLatency, key))
        };
        self.queue.push(
            now + lat,
            Event::Arrive {
                parent: call,
                attempt,
            },
        );
    }

    fn arrive(&mut self, now: Time, parent: u32, attempt: u16) {
        let wanted = self.chain_alive(parent, attempt);
        let p = self.calls[parent as usize];
        let path = child_path(p.path, attempt);
        let retry_path = p.retry_path || attempt > 0;
        let below = p.layer as usize + 1;
        if below < self.model.layers.len() {
            let child = self.alloc_call(Call {
                parent,
                parent_attempt: attempt,
                layer: below as u16,
                intent: p.intent,
                attempts: 0,
                awaiting: false,
                settled: false,
                retry_path,
                refs: 0,
                generation: 0,
                path,
                prev_backoff: None,
            });
            self.receive(child, wanted);
            return self.send(now, child);
        }
        // The bottom.
        self.c.arrivals += 1;
        self.c.last_arrival = now;
        if retry_path {
            self.c.retry_arrivals += 1;
        }
        if !wanted {
            self.c.orphaned += 1;
        }
        self.buckets.arrival(now, retry_path);
        let server = &self.model.server;
        let (failed, service) = match server.fail {
            FailMode::Always => (true, Duration::ZERO),
            fail => {
                let failed = match fail {
                    FailMode::Probability(q) => {
                        self.stream(parent, Purpose::Failure, path).bernoulli(q)
                    }
                    _ => false,
                };
                let service = if server.service.is_zero() {
                    Duration::ZERO
                } else {
                    server
                        .service
                        .sample(&mut self.stream(parent, Purpose::Service, path))
                };
                (failed, service)
            }
        };
        self.busy += 1;
        self.levels.set(&mut self.buckets, now, 0, self.busy);
        self.queue.push(
            now + service,
            Event::Done {
                parent,
                attempt,
                failed,
                service,
            },
        );
    }

    fn done(&mut self, now: Time, parent: u32, attempt: u16, failed: bool, service: Duration) {
        self.busy -= 1;
        self.levels.set(&mut self.buckets, now, 0, self.busy);
        self.c.work += u128::from(service.0);
        if !self.chain_alive(parent, attempt) {
            self.c.wasted += u128::from(service.0);
        }
        if !failed {
            let i = self.calls[parent as usize].intent as usize;
            self.intents[i].applied += 1;
            self.c.effects += 1;
        }
        // The arrival's reference moves to the reply.
        self.reply(now, parent, attempt, !failed);
    }

    /// Sends the answer to attempt `attempt` of `call` back up; the caller of this function has
    /// already taken the reference the reply holds.
    fn reply(&mut self, now: Time, call: u32, attempt: u16, ok: bool) {
        let c = &self.calls[call as usize];
        let layer = &self.model.layers[c.layer as usize];
        let lat = if layer.latency.is_zero() {
            Duration::ZERO
        } else {
            let key = child_path(c.path, attempt);
            layer
                .latency
                .sample(&mut self.stream(call, Purpose::ResponseLatency, key))
        };
        self.queue
            .push(now + lat, Event::Reply { call, attempt, ok });
    }

    fn outcome(&mut self, now: Time, call: u32, ok: bool) {
        let k = self.calls[call as usize].layer as usize;
        if ok {
            if let Some(Budget::Tokens {
                max_tokens,
                token_ratio,
            }) = self.model.layers[k].budget
            {
                let t = &mut self.layers[k].tokens;
                *t = (*t + token_ratio).min(max_tokens);
            }
            self.calls[call as usize].awaiting = false;
            self.settle(now, call, true);
        } else {
            self.attempt_failed(now, call);
        }
    }

    /// The outstanding attempt failed (an error or a timeout): retry or give up.
    fn attempt_failed(&mut self, now: Time, call: u32) {
        let c = &mut self.calls[call as usize];
        c.awaiting = false;
        let (k, attempts, path, prev, generation) = (
            c.layer as usize,
            c.attempts,
            c.path,
            c.prev_backoff,
            c.generation,
        );
        let layer = &self.model.layers[k];
        let state = &mut self.layers[k];
        if let Some(Budget::Tokens { .. }) = layer.budget {
            state.tokens = (state.tokens - 1.0).max(0.0);
        }
        if u32::from(attempts) >= layer.max_attempts {
            return self.settle(now, call, false);
        }
        let allowed = match layer.budget {
            None => true,
            Some(Budget::Tokens { max_tokens, .. }) => state.tokens > max_tokens / 2.0,
            Some(Budget::Ratio { .. }) => {
                if state.tokens >= 1.0 {
                    state.tokens -= 1.0;
                    true
                } else {
                    false
                }
            }
        };
        if !allowed {
            state.budget_denied += 1;
            return self.settle(now, call, false);
        }
        let retries_made = u32::from(attempts) - 1;
        let key = child_path(path, attempts - 1);
        let delay = layer.backoff().delay(
            retries_made,
            prev,
            &mut self.stream(call, Purpose::Backoff, key),
        );
        self.calls[call as usize].prev_backoff = Some(delay);
        self.queue
            .push(now + delay, Event::Send { call, generation });
    }

    fn settle(&mut self, now: Time, call: u32, ok: bool) {
        let c = &mut self.calls[call as usize];
        c.settled = true;
        c.awaiting = false;
        let (k, parent, parent_attempt, intent) = (
            c.layer as usize,
            c.parent,
            c.parent_attempt,
            c.intent as usize,
        );
        if !ok {
            self.layers[k].failed += 1;
        }
        if parent == NONE {
            let i = &mut self.intents[intent];
            i.succeeded = ok;
            self.completions.record(now.since(i.start));
            if ok {
                self.c.succeeded += 1;
                self.buckets.success(now);
            } else {
                self.c.failed += 1;
            }
        } else {
            self.calls[parent as usize].refs += 1;
            self.reply(now, parent, parent_attempt, ok);
        }
        self.maybe_free(call);
    }

    /// Frees a settled call nothing refers to any more, then its parent if that frees it too;
    /// freeing the top call finalises the intent.
    fn maybe_free(&mut self, mut call: u32) {
        loop {
            let c = &mut self.calls[call as usize];
            if !c.settled || c.refs > 0 {
                return;
            }
            c.settled = false;
            c.generation = c.generation.wrapping_add(1);
            let (parent, intent) = (c.parent, c.intent);
            self.free_calls.push(call);
            if parent == NONE {
                let i = self.intents[intent as usize];
                match i.applied {
                    0 => self.c.lost += 1,
                    1 => self.c.applied_once += 1,
                    _ => self.c.duplicated += 1,
                }
                if !i.succeeded && i.applied > 0 {
                    self.c.false_failures += 1;
                }
                self.free_intents.push(intent);
                self.live -= 1;
                return;
            }
            self.calls[parent as usize].refs -= 1;
            call = parent;
        }
    }

    fn finish(mut self, name: &str, end: Time, ended: Ended) -> VariantResult {
        let (_, mean_busy) = self.levels.means(&mut self.buckets, end);
        let (peak_arrivals, peak_retries) = self.buckets.peaks();
        let series = metrics::series(std::mem::take(&mut self.buckets), end);
        let c = &self.c;
        let intents = c.intents.max(1) as f64;
        let model = self.model;
        let max_attempts: Vec<u32> = model.layers.iter().map(|l| l.max_attempts).collect();
        let closed_form_applies = model
            .layers
            .iter()
            .all(|l| l.timeout.is_none() && l.budget.is_none());
        let p = match model.server.fail {
            FailMode::Never => 0.0,
            FailMode::Always => 1.0,
            FailMode::Probability(p) => p,
        };
        let layers = model
            .layers
            .iter()
            .zip(&self.layers)
            .enumerate()
            .map(|(i, (l, n))| LayerSummary {
                name: if l.name.is_empty() {
                    format!("layer{i}")
                } else {
                    l.name.clone()
                },
                received: n.received,
                sent: n.sent,
                retries: n.retries,
                amplification: n.sent as f64 / intents,
                per_call: if n.received == 0 {
                    0.0
                } else {
                    n.sent as f64 / n.received as f64
                },
                failed: n.failed,
                timeouts: n.timeouts,
                budget_denied: n.budget_denied,
                orphaned: n.orphaned,
            })
            .collect();
        let amplification = if c.intents == 0 {
            0.0
        } else {
            c.arrivals as f64 / c.intents as f64
        };
        let ms = |ns: u128| ns as f64 / 1e6;
        let layered = Layered {
            layers,
            amplification_bottom: amplification,
            worst_case_amplification: worst_case_bottom_attempts(&max_attempts),
            expected_amplification: closed_form_applies
                .then(|| expected_bottom_attempts(p, &max_attempts)),
            orphaned: c.orphaned,
            orphaned_share: if c.arrivals == 0 {
                0.0
            } else {
                c.orphaned as f64 / c.arrivals as f64
            },
        };
        let summary = Summary {
            intents: c.intents,
            attempts: c.arrivals,
            retries: c.retry_arrivals,
            amplification,
            succeeded: c.succeeded,
            failed: c.failed,
            unsettled: c.intents - c.succeeded - c.failed,
            peak_arrivals,
            peak_retries,
            bucket_ms: model.bucket.as_millis_f64(),
            completion_ms: self.completions.percentiles(),
            last_arrival_ms: c.last_arrival.as_millis_f64(),
            lost: c.lost,
            applied_once: c.applied_once,
            duplicated: c.duplicated,
            phantom: 0,
            false_failures: c.false_failures,
            effects: c.effects,
            arrivals: c.arrivals,
            timeouts: self.layers.iter().map(|l| l.timeouts).sum(),
            late_responses: c.late,
            requests_lost: 0,
            responses_lost: 0,
            rejected: 0,
            dropped_expired: 0,
            conflicts: 0,
            replayed: 0,
            crashes: 0,
            work_ms: ms(c.work),
            wasted_work_ms: ms(c.wasted),
            wasted_share: if c.work == 0 {
                0.0
            } else {
                c.wasted as f64 / c.work as f64
            },
            mean_wait_ms: 0.0,
            mean_queue_len: 0.0,
            mean_busy,
            end_ms: end.as_millis_f64(),
            ended,
            events: self.events,
            layered: Some(layered),
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

/// Runs a layered `model` with `seed`, named after the model.
pub fn run(model: &Model, seed: u64) -> VariantResult {
    LayeredSim::new(model, seed).run(&model.name, &mut |_| {})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_edges() {
        assert_eq!(expected_bottom_attempts(0.0, &[3, 3, 3]), 1.0);
        assert_eq!(expected_bottom_attempts(1.0, &[3, 3, 3]), 27.0);
        assert_eq!(worst_case_bottom_attempts(&[3, 3, 3]), 27.0);
        // One layer: 1 + p + p^2.
        assert!((expected_bottom_attempts(0.5, &[3]) - 1.75).abs() < 1e-12);
        // Two layers of 2 with p = 0.5: bottom layer 1.5 per call and fails with 0.25; the top
        // makes 1 + 0.25 calls: 1.5 * 1.25.
        assert!((expected_bottom_attempts(0.5, &[2, 2]) - 1.875).abs() < 1e-12);
        // The telescoped form.
        for (p, n) in [
            (0.9, vec![3, 3, 3, 3]),
            (0.3, vec![2, 4]),
            (0.99, vec![5, 1, 7]),
        ] {
            let big_n: i32 = n.iter().map(|&x| x as i32).product();
            let closed = (1.0 - f64::powi(p, big_n)) / (1.0 - p);
            assert!((expected_bottom_attempts(p, &n) - closed).abs() < 1e-9 * closed);
        }
    }
}
