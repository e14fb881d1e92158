//! What a run's state reads between two events, for a study that scores a run as it goes (rare
//! event splitting, `study/rare`). Each gauge is a counter the engine keeps as it goes: reading
//! one costs a few additions, so it can be read after every event.

use super::PathSim;
use crate::base::time::Time;

/// A number read off a run's state at an event boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gauge {
    Queue,
    InFlight,
    Orbit,
    Attempts,
}

/// Every gauge, once: its name on the command line and in JSON, and what it counts.
pub const GAUGES: [(Gauge, &str, &str); 4] = [
    (
        Gauge::Queue,
        "queue",
        "requests at the tiers, waiting or in service (every tier, every replica)",
    ),
    (
        Gauge::InFlight,
        "in_flight",
        "intents started and not yet final (waiting, in service, on the network or in backoff)",
    ),
    (
        Gauge::Orbit,
        "orbit",
        "intents whose client is past its first attempt (backing off, or waiting on a retry or a hedged copy) and has not settled",
    ),
    (
        Gauge::Attempts,
        "attempts",
        "attempts the clients sent in the last second (first tries, retries and hedged copies, counted in tenths of a second)",
    ),
];

impl Gauge {
    /// The gauge named `name`, if there is one.
    pub fn parse(name: &str) -> Option<Gauge> {
        GAUGES.iter().find(|g| g.1 == name).map(|g| g.0)
    }

    pub fn name(self) -> &'static str {
        GAUGES.iter().find(|g| g.0 == self).map_or("", |g| g.1)
    }

    /// The names that exist, for a message: `queue, in_flight`.
    pub fn names() -> String {
        GAUGES.map(|g| g.1).join(", ")
    }
}

impl PathSim<'_> {
    /// This run, keeping the counters that only studies read (the orbit and the attempts of
    /// the last second); set before the first event, as a fork keeps it.
    pub fn gauged(mut self) -> Self {
        self.calls.gauged = true;
        self
    }

    /// The time of the last event handled: where the run stands.
    pub fn now(&self) -> Time {
        self.cx.now
    }

    /// The gauge's value where the run stands (the orbit and attempts read 0 unless the run
    /// is [`gauged`](Self::gauged)).
    pub fn gauge(&self, g: Gauge) -> u64 {
        match g {
            Gauge::Queue => self.tiers.iter().map(|t| t.load()).sum(),
            Gauge::InFlight => self.calls.live,
            Gauge::Orbit => self.calls.orbit.count,
            Gauge::Attempts => self.calls.pace.per_second(self.cx.now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gauge_is_named_once_and_parses_back() {
        for (g, name, _) in GAUGES {
            assert_eq!(Gauge::parse(name), Some(g));
            assert_eq!(g.name(), name);
        }
        assert_eq!(Gauge::parse("retries"), None);
        assert_eq!(Gauge::names(), "queue, in_flight, orbit, attempts");
    }
}
