//! The loop that drives the event queue to its end, and the order in which a burst's clients
//! start. The engine (`sim/path`) supplies the events and state; the loop decides how a run
//! ends: when nothing is left to do, at the model's horizon, at its `max_events` guard, or when
//! the caller's stop flag is set (checked at the progress points only).

use crate::base::queue::EventQueue;
use crate::base::time::{Duration, Time};
use crate::model::{Model, Workload};
use crate::result::summary::Ended;
use crate::sim::draws::Draws;

/// An engine the shared loop can drive.
pub(crate) trait Engine {
    type Event: Copy;
    fn queue(&mut self) -> &mut EventQueue<Self::Event>;
    /// The next event; an engine may override it to prefetch what upcoming events touch.
    fn next_event(&mut self) -> Option<(Time, Self::Event)> {
        self.queue().pop()
    }
    /// Nothing is left to happen: every intent is final and the workload has no more to start.
    fn finished(&self) -> bool;
    fn handle(&mut self, now: Time, event: Self::Event);
    /// Its caller asked it to stop; read only where `progress` is called.
    fn stop_requested(&self) -> bool {
        false
    }
}

/// How a run ended, where the clock stopped, and how many events it processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunEnd {
    pub end: Time,
    pub ended: Ended,
    pub events: u64,
}

/// Where a run driven in steps has got to: the time of the last event handled, how many were
/// handled, and how the run ended once it has. Between two steps the run is at an event
/// boundary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reached {
    pub(crate) end: Time,
    pub(crate) events: u64,
    pub(crate) ended: Option<Ended>,
}

/// [`drive`] to the end of the run, from where it got to.
pub(crate) fn drive_to_end<S: Engine>(
    sim: &mut S,
    model: &Model,
    progress: &mut dyn FnMut(Time),
    at: &mut Reached,
) -> RunEnd {
    // No pause: `u64::MAX` events is at or past any `max_events`, which ends the run first.
    drive(sim, model, progress, at, u64::MAX).unwrap_or(RunEnd {
        end: at.end,
        ended: Ended::MaxEvents,
        events: at.events,
    })
}

/// Pops and handles events from where the run `at` got to until the engine is finished, the
/// horizon passes or `max_events` have been handled; `None` when it pauses first, once `pause`
/// events have been handled in all (`at` then says where). `progress` hears the clock every
/// 65,536 events and at the end; right after it, a stop the engine was asked for ends the run
/// there ([`Ended::Interrupted`]). A run paused and driven on handles the same events in the
/// same order as one driven at once.
pub(crate) fn drive<S: Engine>(
    sim: &mut S,
    model: &Model,
    progress: &mut dyn FnMut(Time),
    at: &mut Reached,
    pause: u64,
) -> Option<RunEnd> {
    if let Some(ended) = at.ended {
        let (end, events) = (at.end, at.events);
        return Some(RunEnd { end, ended, events });
    }
    let horizon = Time::ZERO + model.horizon;
    let max_events = model.max_events;
    // One comparison per event for both: which one was reached is asked only then.
    let limit = max_events.min(pause);
    let mut end = at.end;
    let mut events = at.events;
    let mut ended = Ended::Settled;
    loop {
        if sim.finished() {
            break;
        }
        if events >= limit {
            if events < max_events {
                (at.end, at.events) = (end, events);
                return None;
            }
            ended = Ended::MaxEvents;
            break;
        }
        // A radix heap cannot peek: the first event past the horizon is popped and dropped.
        let Some((now, ev)) = sim.next_event() else {
            // Nothing left to happen, yet intents remain: they would wait forever.
            ended = Ended::Horizon;
            end = horizon;
            break;
        };
        if now > horizon {
            ended = Ended::Horizon;
            end = horizon;
            break;
        }
        end = now;
        events += 1;
        if events & 0xffff == 0 {
            progress(now);
            if sim.stop_requested() {
                sim.handle(now, ev);
                ended = Ended::Interrupted;
                break;
            }
        }
        sim.handle(now, ev);
    }
    progress(end);
    *at = Reached {
        end,
        events,
        ended: Some(ended),
    };
    Some(RunEnd { end, ended, events })
}

/// The order in which a burst's clients start: all at `start`, or spread uniformly over
/// `[start, start + spread)` with each client's offset drawn from its own stream.
///
/// An engine keeps one `Start` event pending at a time and walks this order, instead of holding
/// a million start events in its queue.
#[derive(Clone, Debug)]
pub struct BurstOrder {
    start: Time,
    clients: u64,
    /// `(offset ns, client)` sorted; empty when every client starts at `start`.
    spread: Vec<(u64, u32)>,
}

impl BurstOrder {
    pub fn new(w: &Workload, seed: u64) -> Self {
        Self::of(w, Draws::new(seed))
    }

    /// [`BurstOrder::new`] with the run's streams.
    pub(crate) fn of(w: &Workload, draws: Draws) -> Self {
        let spread = if w.spread.0 > 0 {
            let mut v: Vec<(u64, u32)> = (0..w.clients)
                .map(|c| {
                    let d = draws.start(c).range_u64(0, w.spread.0 - 1);
                    (d, c as u32)
                })
                .collect();
            v.sort_unstable();
            v
        } else {
            Vec::new()
        };
        BurstOrder {
            start: Time::ZERO + w.start,
            clients: w.clients,
            spread,
        }
    }

    pub fn len(&self) -> u64 {
        self.clients
    }

    pub fn is_empty(&self) -> bool {
        self.clients == 0
    }

    /// When the `n`-th client in start order starts, and which client it is.
    pub fn at(&self, n: u32) -> (Time, u64) {
        match self.spread.get(n as usize) {
            Some(&(d, c)) => (self.start + Duration(d), u64::from(c)),
            None => (self.start, u64::from(n)),
        }
    }

    /// The `(time, n + 1)` of the start after the `n`-th, if any.
    pub fn next(&self, n: u32) -> Option<(Time, u32)> {
        (u64::from(n) + 1 < self.clients).then(|| (self.at(n + 1).0, n + 1))
    }

    /// Handles the `n`-th start: schedules the next one as `start(n + 1)` and returns the client
    /// that starts now.
    pub(crate) fn take<E: Copy>(
        &self,
        n: u32,
        q: &mut EventQueue<E>,
        start: impl Fn(u32) -> E,
    ) -> u64 {
        if let Some((t, next)) = self.next(n) {
            q.push(t, start(next));
        }
        self.at(n).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_starts_are_sorted_and_cover_every_client() {
        let w = Workload {
            clients: 1000,
            spread: Duration::from_millis(50),
            ..Workload::default()
        };
        let b = BurstOrder::new(&w, 7);
        let mut seen = vec![false; 1000];
        let mut last = Time::ZERO;
        for n in 0..1000 {
            let (t, c) = b.at(n);
            assert!(t >= last && t < Time::ZERO + Duration::from_millis(50));
            last = t;
            seen[c as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(b.next(999), None);
    }

    #[test]
    fn no_spread_starts_everyone_in_client_order() {
        let w = Workload {
            clients: 3,
            start: Duration::from_secs(1),
            ..Workload::default()
        };
        let b = BurstOrder::new(&w, 7);
        assert_eq!(b.at(2), (Time::ZERO + Duration::from_secs(1), 2));
        assert_eq!(b.next(0), Some((Time::ZERO + Duration::from_secs(1), 1)));
    }
}
