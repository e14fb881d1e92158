//! `[workload]`: who sends intents, when, and how many (burst, open, closed, contention, trace,
//! periodic).

use super::*;
use crate::base::dist::Dist;
use crate::base::keys::{KeyTable, key};
use crate::base::time::{Duration, Time};
use serde::{Deserialize, Serialize};

/// Where intents come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// `clients` intents, all at `start` or spread uniformly over `[start, start + spread)`.
    Burst,
    /// Poisson arrivals at `rate`, changed over time by `schedule`.
    Open,
    /// `workers` loops that each run intents back to back (with `think` between) until
    /// `intents` have been started in all.
    Closed,
    /// `clients` clients each update one shared record once with optimistic concurrency (read
    /// the version, write if unchanged), retrying conflicts: the AWS Architecture Blog's
    /// "Exponential Backoff And Jitter" model, run by the one engine (`sim/path/store.rs` keeps the
    /// versioned record).
    Contention,
    /// Production traffic replay: one intent per row of the `trace` file (CSV or JSON Lines of
    /// timestamps, [`crate::model::replay`]), `speed` times as fast.
    Trace,
    /// `clients` clients that each call every `period` until the horizon, as re-lists, resyncs
    /// and polls do: each wait jittered by `jitter`, the first call placed by `phase`, every
    /// client started again at each of `restarts` (a deploy).
    Periodic,
}

/// How a periodic client jitters its wait between two calls.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum PeriodicJitter {
    /// Every wait is exactly `period`.
    None,
    /// `{ factor = f }`: each wait is `period * (1 + f * U)`, U uniform on [0, 1), as client-go's
    /// `wait.Jitter(period, f)` that `wait.JitterUntil` draws before each call.
    Factor(f64),
    /// `{ spread = "2s" }`: each wait is `period + spread * U`, a fixed spread.
    Spread(Duration),
}

/// Where a periodic client's first call falls (at the start and after each restart).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Every client calls at once (a deploy that starts them all together).
    #[default]
    Aligned,
    /// Each client's first call is uniform over one period (clients that started long ago).
    Spread,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// burst: number of clients (one intent each).
    pub clients: u64,
    /// burst: when the burst starts.
    pub start: Duration,
    /// burst: width of the window the starts are spread over (0 = all at `start`).
    pub spread: Duration,
    /// open: arrival rate before the first schedule point.
    pub rate: Rate,
    /// open: rate changes over time (steps, ramps, spikes).
    pub schedule: Vec<RatePoint>,
    /// closed: concurrent workers.
    pub workers: u64,
    /// closed: total intents over all workers; open: optional cap on arrivals (0 = none).
    pub intents: u64,
    /// closed: pause between one intent's end and the next one's start.
    pub think: Dist,
    /// open: client processes the arrivals come from (round-robin by arrival number); the unit
    /// of `scope = "client"` budgets, breakers and rate limits. Burst: each client is one process;
    /// closed: each worker; trace: each `class`, or `processes` round-robin without classes.
    pub processes: u64,
    /// trace: the file of arrivals, relative to the model file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// trace: replay speed; 2.0 replays the trace in half the time (twice the load).
    #[serde(skip_serializing_if = "is_one")]
    pub speed: f64,
    /// periodic: the time between one client's calls (before jitter); required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Duration>,
    /// periodic: how each wait is jittered; absent = none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter: Option<PeriodicJitter>,
    /// periodic: where each client's first call falls; absent = aligned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// periodic: times at which every client starts again (its next call placed by `phase`
    /// from then on; calls in flight go on).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restarts: Vec<Duration>,
    /// trace: the parsed arrivals, filled in by the loader from `trace` (the core reads no file).
    #[serde(skip)]
    #[schemars(skip)]
    pub replay: std::sync::Arc<crate::model::replay::Trace>,
}

/// `[workload]`'s keys.
pub const WORKLOAD_KEYS: KeyTable = KeyTable {
    section: "workload",
    schema: "Workload",
    docs: &[("docs/model.md", "## `[workload]`")],
    runs: &[&[
        key(
            "kind",
            "`\"burst\"`",
            "`burst`, `open`, `closed`, `trace` or `periodic` (below) (and `contention`, see \
            `docs/layered.md` / validation)",
        ),
        key(
            "clients",
            "`1000`",
            "burst: number of clients, one intent each (periodic: the clients, one intent per \
            call); at most 20,000,000 (about 100 bytes each, \
            so a run stays under 2 GB; `docs/performance.md`, \"Memory bounds\")",
        ),
        key(
            "start",
            "`\"0\"`",
            "burst: when the burst starts; periodic: when the clients start",
        ),
        key(
            "spread",
            "`\"0\"`",
            "burst: starts are uniform over `[start, start + spread)`; 0 = all at `start`",
        ),
        key(
            "rate",
            "`\"100/s\"`",
            "open: Poisson arrival rate before the first schedule point",
        ),
        key(
            "schedule",
            "`[]`",
            "open: `[{ at = \"10s\", rate = \"400/s\" }, { at = \"12s\", rate = \"100/s\" }]`; \
            `ramp = true` on a point moves linearly from the previous rate to this one",
        ),
        key(
            "workers",
            "`10`",
            "closed: workers, each running intents back to back",
        ),
        key(
            "intents",
            "`0`",
            "closed: total intents over all workers (required); open: stop arrivals after this \
            many (0 = no limit)",
        ),
        key(
            "think",
            "`\"0\"`",
            "closed: distribution of the pause between an intent's end and the worker's next",
        ),
        key(
            "processes",
            "`1`",
            "open: the client processes the arrivals come from (round-robin by arrival number): \
            the unit of `scope = \"client\"` budgets, breakers and rate limits (a burst client \
            and a closed worker are one process each)",
        ),
        key(
            "trace",
            "none",
            "trace: the file of arrivals, CSV or JSON Lines, relative to the model file (required \
            with `kind = \"trace\"`, refused otherwise)",
        ),
        key(
            "speed",
            "`1.0`",
            "trace: replay speed; `2.0` replays the trace in half the time, twice the load (must \
            be > 0)",
        ),
        key(
            "period",
            "none",
            "periodic: the time between one client's calls before jitter (required with \
            `kind = \"periodic\"`, refused otherwise)",
        ),
        key(
            "jitter",
            "`\"none\"`",
            "periodic: `{ factor = 0.1 }` waits `period * (1 + 0.1 * U)` (client-go's \
            `JitterUntil`), `{ spread = \"2s\" }` waits `period + 2s * U`, U uniform on [0, 1)",
        ),
        key(
            "phase",
            "`\"aligned\"`",
            "periodic: `aligned`, every client's first call at `start` (a deploy), or `spread`, \
            uniform over one period from `start`",
        ),
        key(
            "restarts",
            "`[]`",
            "periodic: times at which every client starts again, its next call placed by \
            `phase` from then (calls in flight go on), e.g. `[\"10m\"]`",
        ),
    ]],
    expanded: &[],
};

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

impl Workload {
    /// A periodic client's wait after its call, from `u` uniform on [0, 1).
    pub fn periodic_wait(&self, u: f64) -> Duration {
        let period = self.period.unwrap_or(Duration::ZERO);
        match self.jitter.unwrap_or(PeriodicJitter::None) {
            PeriodicJitter::None => period,
            PeriodicJitter::Factor(f) => Duration::from_nanos_f64(period.0 as f64 * (1.0 + f * u)),
            PeriodicJitter::Spread(s) => period + Duration::from_nanos_f64(s.0 as f64 * u),
        }
    }

    /// The open workload's arrival rate at `t` (requests per second): `rate` before the first
    /// schedule point, then each point's rate (moving linearly to it when it has `ramp`).
    pub fn rate_at(&self, t: Time) -> f64 {
        let mut rate = self.rate.0;
        let mut prev = (Time::ZERO, self.rate.0);
        for p in &self.schedule {
            let at = Time::ZERO + p.at;
            if t < at {
                if p.ramp && at > prev.0 {
                    let f = (t.0 - prev.0.0) as f64 / (at.0 - prev.0.0) as f64;
                    return prev.1 + (p.rate.0 - prev.1) * f;
                }
                return rate;
            }
            rate = p.rate.0;
            prev = (at, p.rate.0);
        }
        rate
    }
}

impl Default for Workload {
    fn default() -> Self {
        Workload {
            kind: WorkloadKind::Burst,
            clients: 1000,
            start: Duration::ZERO,
            spread: Duration::ZERO,
            rate: Rate(100.0),
            schedule: Vec::new(),
            workers: 10,
            intents: 0,
            think: Dist::default(),
            processes: 1,
            trace: None,
            speed: 1.0,
            period: None,
            jitter: None,
            phase: None,
            restarts: Vec::new(),
            replay: Default::default(),
        }
    }
}

/// A point of the open workload's rate schedule: from `at` on the rate is `rate`; with
/// `ramp = true` the rate moves linearly from the previous point's rate to this one.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RatePoint {
    pub at: Duration,
    pub rate: Rate,
    #[serde(default)]
    pub ramp: bool,
}
