//! Event traces: the history of a few intents, for seeing *why* one was applied twice.
//!
//! The path engine calls [`Tracer::record`] at each step of an intent (sent, arrived, served,
//! applied, answered, backed off, settled) and [`Tracer::finalise`] once its outcome is known;
//! a run without a tracer pays one `Option` check per step and nothing else, and a traced run
//! draws exactly what an untraced one draws (the tracer only reads), so its results are the
//! same. The tracer does no I/O: the CLI writes [`TraceLog`] as JSON Lines (`--trace`).
//!
//! What is kept, and the bounds:
//! - without an outcome filter, the intents with the lowest ids (`intents` of them: the first
//!   started in an open or closed workload, the first clients of a burst);
//! - with one, every intent is recorded while it is live and kept only if it ends in that
//!   outcome, until `intents` are kept (then the live ones are let go);
//! - at most `max_events` events are held at once (live buffers and kept intents together): an
//!   intent whose next event does not fit is dropped whole (never kept half-traced) and counted
//!   in [`TraceLog::dropped`].

use crate::base::time::{Duration, Time};
use crate::policy::Class;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which intents a trace keeps, by how they ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutcomeFilter {
    /// Applied at least twice (`duplicated`).
    Duplicated,
    /// Never applied (`lost`).
    Lost,
    /// Applied exactly once.
    AppliedOnce,
    /// Reported a success but never applied.
    Phantom,
    /// Reported a failure but applied.
    FalseFailure,
    /// The client saw a success.
    Succeeded,
    /// The client gave up.
    Failed,
}

impl OutcomeFilter {
    /// Every filter with its name, as `--trace-outcome` takes it.
    pub const ALL: [(&'static str, OutcomeFilter); 7] = [
        ("duplicated", OutcomeFilter::Duplicated),
        ("lost", OutcomeFilter::Lost),
        ("applied-once", OutcomeFilter::AppliedOnce),
        ("phantom", OutcomeFilter::Phantom),
        ("false-failure", OutcomeFilter::FalseFailure),
        ("succeeded", OutcomeFilter::Succeeded),
        ("failed", OutcomeFilter::Failed),
    ];

    /// The filter named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    fn matches(self, succeeded: bool, applied: u32) -> bool {
        match self {
            OutcomeFilter::Duplicated => applied >= 2,
            OutcomeFilter::Lost => applied == 0,
            OutcomeFilter::AppliedOnce => applied == 1,
            OutcomeFilter::Phantom => succeeded && applied == 0,
            OutcomeFilter::FalseFailure => !succeeded && applied > 0,
            OutcomeFilter::Succeeded => succeeded,
            OutcomeFilter::Failed => !succeeded,
        }
    }
}

/// What to trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOptions {
    /// How many intents to keep.
    pub intents: u64,
    /// Keep only intents that ended so (else the lowest ids).
    pub outcome: Option<OutcomeFilter>,
    /// How many events may be held at once.
    pub max_events: u64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            intents: 100,
            outcome: None,
            max_events: 100_000,
        }
    }
}

/// One step of an intent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// The intent starts (its client's first attempt follows).
    Start,
    /// A caller sends attempt `attempt` over hop `hop` to tier `hop`.
    Send,
    /// The request was lost on the network to the tier.
    RequestLost,
    /// The request reaches tier `hop`.
    Arrive,
    /// A worker of tier `hop` starts serving it (after its wait in the queue).
    Serve,
    /// The effect happened at the last tier (the intent's `applied` count goes up).
    Applied,
    /// Tier `hop` held the request without an answer (a hanging outage) or dropped it
    /// unserved (its caller had stopped waiting).
    Dropped,
    /// Tier `hop` answers with `class`.
    Respond,
    /// The answer was lost on the network back.
    ResponseLost,
    /// The caller learns how the attempt ended (`class`: an answer, `timeout`, `connection`).
    Result,
    /// An answer came after the caller had stopped waiting for it.
    LateReply,
    /// The caller backs off `delay_ns` before its next attempt.
    Backoff,
    /// The caller is done: `class` is its last result (`success` or why it gave up).
    Settled,
    /// Nothing of the intent is in flight any more: `applied` times applied, `outcome`.
    Final,
}

/// One line of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TraceEvent {
    pub time_ns: u64,
    pub intent: u64,
    /// The hop (0 = the clients) and so the tier (0 = the first) the step happened at.
    pub hop: u8,
    /// The attempt number at that hop, from 0.
    pub attempt: u16,
    pub event: Step,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<&'static str>,
}

impl TraceEvent {
    /// A step with no detail.
    pub fn new(now: Time, intent: u64, hop: usize, attempt: u16, event: Step) -> Self {
        TraceEvent {
            time_ns: now.0,
            intent,
            hop: hop as u8,
            attempt,
            event,
            class: None,
            delay_ns: None,
            applied: None,
            outcome: None,
        }
    }
    pub fn with_class(mut self, class: Class) -> Self {
        self.class = Some(class);
        self
    }
    pub fn with_delay(mut self, d: Duration) -> Self {
        self.delay_ns = Some(d.0);
        self
    }
}

/// What a trace kept: each intent's events in order, intents by id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceLog {
    pub intents: Vec<Vec<TraceEvent>>,
    /// Intents that would have been kept but were dropped at the `max_events` bound.
    pub dropped: u64,
}

impl TraceLog {
    /// Every event, intent by intent.
    pub fn events(&self) -> impl Iterator<Item = &TraceEvent> {
        self.intents.iter().flatten()
    }
}

/// Records intents as the engine runs (see the module doc).
#[derive(Debug)]
pub struct Tracer {
    opt: TraceOptions,
    /// Live intents being recorded; `None` once dropped at the bound.
    live: BTreeMap<u64, Option<Vec<TraceEvent>>>,
    kept: BTreeMap<u64, Vec<TraceEvent>>,
    held: u64,
    dropped: u64,
}

impl Tracer {
    pub fn new(opt: TraceOptions) -> Self {
        Tracer {
            opt,
            live: BTreeMap::new(),
            kept: BTreeMap::new(),
            held: 0,
            dropped: 0,
        }
    }

    /// Whether intent `id` is not recorded at all (past the first ids, or enough kept).
    fn ignores(&self, id: u64) -> bool {
        match self.opt.outcome {
            None => id >= self.opt.intents,
            Some(_) => self.kept.len() as u64 >= self.opt.intents,
        }
    }

    /// Records one step of an intent.
    pub fn record(&mut self, ev: TraceEvent) {
        let id = ev.intent;
        if ev.event == Step::Start {
            if self.ignores(id) {
                return;
            }
            self.live.insert(id, Some(Vec::new()));
        }
        let Some(slot) = self.live.get_mut(&id) else {
            return;
        };
        let Some(events) = slot else { return };
        if self.held >= self.opt.max_events {
            self.held -= events.len() as u64;
            *slot = None;
            return;
        }
        events.push(ev);
        self.held += 1;
    }

    /// Intent `id` is over (`applied` times applied, its client saw a success or not): keeps or
    /// forgets it.
    pub fn finalise(&mut self, now: Time, id: u64, succeeded: bool, applied: u32) {
        let Some(slot) = self.live.remove(&id) else {
            return;
        };
        let full = self.kept.len() as u64 >= self.opt.intents;
        let Some(mut events) = slot else {
            self.dropped += u64::from(!full && self.wanted(succeeded, applied));
            return;
        };
        if full || !self.wanted(succeeded, applied) {
            self.held -= events.len() as u64;
            return;
        }
        if self.held >= self.opt.max_events {
            self.held -= events.len() as u64;
            self.dropped += 1;
            return;
        }
        let mut last = TraceEvent::new(now, id, 0, 0, Step::Final);
        last.applied = Some(applied);
        last.outcome = Some(outcome_name(succeeded, applied));
        events.push(last);
        self.held += 1;
        self.kept.insert(id, events);
        if self.opt.outcome.is_some() && self.kept.len() as u64 >= self.opt.intents {
            // Enough kept: the intents still live will not be, so stop recording them.
            self.live.clear();
            self.held = self.kept.values().map(|e| e.len() as u64).sum();
        }
    }

    fn wanted(&self, succeeded: bool, applied: u32) -> bool {
        self.opt
            .outcome
            .is_none_or(|f| f.matches(succeeded, applied))
    }

    /// The end of the run: without a filter, intents still live are kept as they stand (their
    /// last step is not `final`).
    pub fn finish(mut self) -> TraceLog {
        if self.opt.outcome.is_none() {
            for (id, slot) in std::mem::take(&mut self.live) {
                match slot {
                    Some(events) => {
                        self.kept.insert(id, events);
                    }
                    None => self.dropped += 1,
                }
            }
        }
        TraceLog {
            intents: self.kept.into_values().collect(),
            dropped: self.dropped,
        }
    }
}

/// The outcome of an intent as the summary counts it.
fn outcome_name(succeeded: bool, applied: u32) -> &'static str {
    match (succeeded, applied) {
        (true, 0) => "phantom",
        (false, 1..) => "false-failure",
        (_, 0) => "lost",
        (_, 1) => "applied-once",
        _ => "duplicated",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, id: u64, step: Step) -> TraceEvent {
        TraceEvent::new(Time(t), id, 0, 0, step)
    }

    fn run(opt: TraceOptions, intents: &[(u64, bool, u32, usize)]) -> TraceLog {
        let mut tr = Tracer::new(opt);
        for &(id, ok, applied, steps) in intents {
            tr.record(ev(0, id, Step::Start));
            for s in 1..steps {
                tr.record(ev(s as u64, id, Step::Send));
            }
            tr.finalise(Time(99), id, ok, applied);
        }
        tr.finish()
    }

    #[test]
    fn without_a_filter_the_lowest_ids_are_kept() {
        let opt = TraceOptions {
            intents: 2,
            ..Default::default()
        };
        let log = run(opt, &[(3, true, 1, 2), (0, true, 1, 2), (1, false, 0, 3)]);
        let ids: Vec<u64> = log.intents.iter().map(|i| i[0].intent).collect();
        assert_eq!(ids, [0, 1]);
        assert_eq!(log.intents[1].last().unwrap().outcome, Some("lost"));
        assert_eq!(log.intents[1].len(), 4, "start, two sends, final");
    }

    #[test]
    fn a_filter_keeps_only_matching_intents_up_to_the_count() {
        let opt = TraceOptions {
            intents: 2,
            outcome: Some(OutcomeFilter::Duplicated),
            ..Default::default()
        };
        let log = run(
            opt,
            &[
                (0, true, 1, 2),
                (1, true, 2, 2),
                (2, true, 3, 2),
                (3, true, 2, 2),
            ],
        );
        let ids: Vec<u64> = log.intents.iter().map(|i| i[0].intent).collect();
        assert_eq!(ids, [1, 2]);
        assert!(
            log.events()
                .all(|e| e.event != Step::Final || e.applied >= Some(2))
        );
    }

    #[test]
    fn the_event_bound_drops_whole_intents() {
        let opt = TraceOptions {
            intents: 10,
            outcome: None,
            max_events: 7,
        };
        // 3 + final = 4 held, then the second needs 4 more: dropped whole.
        let log = run(opt, &[(0, true, 1, 3), (1, true, 1, 3), (2, true, 1, 2)]);
        let ids: Vec<u64> = log.intents.iter().map(|i| i[0].intent).collect();
        assert_eq!(ids, [0, 2]);
        assert_eq!(log.dropped, 1);
        assert!(log.events().count() <= 7);
    }

    #[test]
    fn once_enough_are_kept_the_live_ones_are_let_go() {
        let opt = TraceOptions {
            intents: 1,
            outcome: Some(OutcomeFilter::Failed),
            max_events: 4,
        };
        let mut tr = Tracer::new(opt);
        // Intent 0 is live and holds 2 events when intent 1 fails and is kept.
        tr.record(ev(0, 0, Step::Start));
        tr.record(ev(0, 0, Step::Send));
        tr.record(ev(1, 1, Step::Start));
        tr.finalise(Time(2), 1, false, 0);
        // Intent 0 was let go: its steps are not held, and it does not count as dropped.
        tr.record(ev(3, 0, Step::Send));
        tr.finalise(Time(4), 0, false, 0);
        let log = tr.finish();
        assert_eq!(log.intents.len(), 1);
        assert_eq!(log.intents[0][0].intent, 1);
        assert_eq!(log.dropped, 0);
    }

    #[test]
    fn filters_parse_by_name() {
        for (name, f) in OutcomeFilter::ALL {
            assert_eq!(OutcomeFilter::parse(name), Some(f));
        }
        assert_eq!(OutcomeFilter::parse("twice"), None);
    }
}
