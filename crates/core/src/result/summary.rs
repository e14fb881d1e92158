//! What a run reports: the typed form of the JSON contract in `docs/output.md`.
//!
//! Field names are read by users' scripts and CI: add fields, never rename them. Durations are
//! milliseconds as f64 in fields named `*_ms`.

use crate::result::stats::Share;
use serde::{Deserialize, Serialize};

/// The highest attempt number a run can report (`attempt_peaks.N`): the most attempts a retry
/// loop may make (`retry.max_attempts`, a layer's or a tier's; the model's limits use it).
pub const MAX_ATTEMPTS: u32 = 10_000;

/// Version of the JSON layout; readers refuse files with a different major number.
pub const SCHEMA_VERSION: u32 = 1;

/// Completion-time percentiles, milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// Why the run stopped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ended {
    /// Every intent settled and nothing was left in flight.
    #[default]
    Settled,
    /// The model's horizon was reached first.
    Horizon,
    /// The `max_events` guard stopped it (the summary is partial).
    MaxEvents,
    /// Its caller asked it to stop (the CLI on Ctrl-C, through [`crate::sim::path::run_model_until`]): the
    /// summary is partial, up to `end_ms`.
    Interrupted,
}

/// Totals and distributions of one run of one variant. `Default` is an empty run, so an engine
/// that does not measure some fields can end its literal with `..Default::default()`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Intents started.
    pub intents: u64,
    /// Attempts sent by clients (first tries and retries).
    pub attempts: u64,
    pub retries: u64,
    /// Attempts per intent.
    pub amplification: f64,
    /// Intents whose client was told success.
    pub succeeded: u64,
    /// Intents whose client gave up.
    pub failed: u64,
    /// Intents neither succeeded nor failed when the run stopped.
    pub unsettled: u64,
    /// Most server arrivals in one bucket (first attempts and retries).
    pub peak_arrivals: u64,
    /// Most retry arrivals in one bucket.
    pub peak_retries: u64,
    pub bucket_ms: f64,
    /// Most server arrivals (first attempts and retries) in any half-open window
    /// `[t, t + peak_window)`, exact over the arrival times (not over buckets).
    #[serde(default)]
    pub peak_arrivals_window: u64,
    /// Most retry arrivals in any such window.
    #[serde(default)]
    pub peak_retries_window: u64,
    /// The window's width (the model's `peak_window`, by default the bucket width).
    #[serde(default)]
    pub peak_window_ms: f64,
    /// Per attempt number at the server, 1 (first tries) to the highest that arrived, one entry
    /// each (zeros for a number none of whose attempts arrived). As metrics they are named by
    /// attempt number, `attempt_peaks.2.peak_window`; a number past the last reads 0.
    #[serde(default)]
    pub attempt_peaks: Vec<AttemptPeak>,
    /// From an intent's first send to its final outcome (settled intents only).
    pub completion_ms: Percentiles,
    /// As `completion_ms`, for the intents that succeeded only.
    #[serde(default)]
    pub success_ms: Percentiles,
    /// Time of the last arrival at the server.
    pub last_arrival_ms: f64,
    /// Time to drain: when the last intent settled (its client was told success or gave up).
    /// Absent when an intent was unsettled at the end, none started, or the run was truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_ms: Option<f64>,
    /// Intents whose effect was applied 0 times (settled intents only, as all below).
    pub lost: u64,
    pub applied_once: u64,
    /// Applied two or more times.
    pub duplicated: u64,
    /// The client was told success but the effect never happened.
    pub phantom: u64,
    /// The client gave up but the effect was applied.
    pub false_failures: u64,
    /// Intents without a final outcome when the run stopped: their client had not settled, or
    /// work of theirs was still queued, in service or on the wire (at the horizon or
    /// `max_events`). With `lost + applied_once + duplicated`, every intent in exactly one class.
    #[serde(default)]
    pub outcome_pending: u64,
    /// A replayed trace with a `key` column: the distinct intents of the rows started (a key
    /// or a row without one). Rows sharing a key are one intent, so the classes above (lost to
    /// outcome_pending) count these, not rows; absent without a key column.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub keys: u64,
    /// Total times an effect ran.
    pub effects: u64,
    /// Attempts that reached the server.
    pub arrivals: u64,
    pub timeouts: u64,
    /// Replies that came after their attempt had timed out or been superseded.
    pub late_responses: u64,
    pub requests_lost: u64,
    pub responses_lost: u64,
    /// Rejected at once: full queue (503) or outage.
    pub rejected: u64,
    /// Dropped from the queue because their client had already given up (deadline propagation).
    pub dropped_expired: u64,
    /// 409 answers to a concurrent duplicate (record-before-409); in the contention workload,
    /// writes refused because the record's version changed since the client read it.
    pub conflicts: u64,
    /// Duplicates answered from the dedupe store.
    pub replayed: u64,
    pub crashes: u64,
    /// Server busy time, and the part of it spent on attempts whose client had given up.
    pub work_ms: f64,
    pub wasted_work_ms: f64,
    pub wasted_share: f64,
    /// Mean wait in the queue of served requests, and time-averaged queue length and busy workers.
    pub mean_wait_ms: f64,
    pub mean_queue_len: f64,
    pub mean_busy: f64,
    /// Simulated time when the run stopped, why, and how many events it processed.
    pub end_ms: f64,
    pub ended: Ended,
    pub events: u64,
    /// The run stopped before its workload finished: at `max_events`, or at the horizon with
    /// intents of a finite workload (burst, closed, capped open) still unsettled. The summary
    /// is then partial.
    #[serde(default)]
    pub truncated: bool,
    /// Layered request paths only (`[[layer]]`, see `docs/layered.md`): per-layer counts, the
    /// amplification at the bottom next to its worst case and closed form, and orphaned work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layered: Option<Layered>,
    /// Every tier of the request path, top first; the last is `[server]` (`docs/output.md`).
    #[serde(default)]
    pub tiers: Vec<TierSummary>,
    /// Every tier with `server.fanout`, top first: its calls to the next tier and when it
    /// answered (absent without fan-out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fanout: Vec<FanoutSummary>,
    /// Every tier with `server.connections`, top first: its callers' connects and what they
    /// cost it (absent without connections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<ConnectionSummary>,
    /// 429 answers from the server's rate limiter (`docs/policies.md`, as all fields below).
    #[serde(default)]
    pub rate_limited: u64,
    /// "Overloaded; don't retry" answers (counted in `rejected` or `shed` too).
    #[serde(default)]
    pub overloaded: u64,
    /// Queued requests CoDel dropped at dequeue (`[server.shedding]`, every tier); absent
    /// when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shed: u64,
    /// Non-retryable 4xx answers.
    #[serde(default)]
    pub client_errors: u64,
    /// Retries (or hedges) a retry budget refused: the intent gave up instead.
    #[serde(default)]
    pub budget_denied: u64,
    /// Attempts the client's adaptive throttling rejected before sending them.
    #[serde(default)]
    pub throttled_locally: u64,
    /// Attempts a circuit breaker rejected (open, or half-open with no permit left).
    #[serde(default)]
    pub breaker_rejected: u64,
    /// First tries refused in the caller by those two (never sent): with them, `attempts +
    /// first_tries_refused = intents + retries` on a one-hop path. Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_tries_refused: u64,
    /// Times a circuit breaker opened (from closed or half-open).
    #[serde(default)]
    pub breaker_opened: u64,
    /// Retries whose delay was the server's `Retry-After` instead of the backoff.
    #[serde(default)]
    pub retry_after_waits: u64,
    /// Attempts the client's `[limiter]` held until it had a token (AWS adaptive mode), and
    /// their total wait in ms. Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub limiter_delayed: u64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub limiter_wait_ms: f64,
    /// First tries still waiting for the `[limiter]` when the run stopped (never sent): with
    /// them, `attempts + first_tries_refused + first_tries_waiting = intents + retries`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_tries_waiting: u64,
    /// Attempts the client's `[limiter]` refused (AIMD beyond its limit): never sent; the first
    /// tries among them are in `first_tries_refused`. Absent from JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub limiter_rejected: u64,
    /// Successes per second over the run.
    #[serde(default)]
    pub goodput_per_s: f64,
    /// Server arrivals per second over the run (offered load: first tries and retries).
    #[serde(default)]
    pub offered_per_s: f64,
    /// The trigger window (spike, outage, capacity drop), when the model has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_from_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_to_ms: Option<f64>,
    /// Goodput before the trigger, successes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_goodput_per_s: Option<f64>,
    /// With a trigger: whether goodput returned to its pre-trigger level and stayed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered: Option<bool>,
    /// Time from the trigger's end until goodput was back for good; absent when it never was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_ms: Option<f64>,
    /// The last tier's `peak_ready_replicas` and `mean_ready_replicas` (`[server.autoscale]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_ready_replicas: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ready_replicas: Option<f64>,
}

/// The server's load from one attempt number.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AttemptPeak {
    /// 1 = the first try, 2 = the first retry, ...
    pub attempt: u64,
    /// Arrivals at the server of this attempt number (they add up to `arrivals`).
    pub arrivals: u64,
    /// Most of them in one bucket of the model's bucket width.
    pub peak: u64,
    /// Most of them in any half-open window of the model's `peak_window`.
    pub peak_window: u64,
}

/// What a layered request path did, layer by layer (top first).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Layered {
    pub layers: Vec<LayerSummary>,
    /// Attempts reaching the bottom per intent (the same as `amplification`).
    pub amplification_bottom: f64,
    /// The product of every layer's `max_attempts`: what the bottom sees per intent when every
    /// attempt fails.
    pub worst_case_amplification: f64,
    /// The closed-form expectation of `amplification_bottom` (`docs/layered.md`), given when it
    /// applies: a known failure probability at the bottom, no timeouts and no budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_amplification: Option<f64>,
    /// Attempts that reached the bottom after some layer above had stopped waiting for them
    /// (timed out or given up): their result can no longer reach the user.
    pub orphaned: u64,
    /// `orphaned` / attempts at the bottom.
    pub orphaned_share: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// What one tier of the request path did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TierSummary {
    pub name: String,
    /// Requests that reached the tier (first tries and retries of every caller above).
    pub arrivals: u64,
    /// Arrivals with a retry somewhere on their path.
    pub retries: u64,
    /// Requests a worker started on.
    pub served: u64,
    /// Refused at once: full queue, concurrency limit, outage or `fail = "always"`.
    pub rejected: u64,
    /// Arrivals a hanging outage held without an answer (absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hung: u64,
    /// Dropped before service because their caller had stopped waiting.
    pub dropped_expired: u64,
    /// Dropped at dequeue by CoDel (`[server.shedding]`); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub shed: u64,
    /// Attempts to this tier whose caller timed out.
    pub timeouts: u64,
    /// Arrivals whose result could no longer reach the user (some caller above had stopped
    /// waiting).
    pub orphaned: u64,
    /// Worker busy time, and the part spent on requests nobody above was waiting for.
    pub work_ms: f64,
    pub wasted_work_ms: f64,
    pub mean_wait_ms: f64,
    pub mean_queue_len: f64,
    pub mean_busy: f64,
    pub peak_arrivals: u64,
    pub peak_retries: u64,
    /// Each replica's counts on a tier with `server.replicas > 1` (absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaSummary>,
    /// On a tier with an autoscaler (absent otherwise): the most replicas serving at once, and
    /// the serving replicas averaged over the run (replica-seconds over `end_ms`), the cost of
    /// what the autoscaler did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_ready_replicas: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_ready_replicas: Option<f64>,
}

/// What one tier's fan-out did (`summary.fanout[]`): a *leaf* is one of the calls it makes for
/// a request (a retry loop with the tier's `retry` policy), a *leaf call* one request those
/// send to the next tier (a first try or a retry).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FanoutSummary {
    /// The tier that fans out.
    pub tier: String,
    /// Its `fanout.k`.
    pub k: u64,
    /// Requests it fanned out (each served request that its own work did not fail).
    pub fans: u64,
    /// Leaves started, and leaf calls sent to the next tier.
    pub leaves: u64,
    pub leaf_calls: u64,
    /// `leaves` and `leaf_calls` per intent.
    pub leaves_per_intent: f64,
    pub leaf_calls_per_intent: f64,
    /// Fanned-out requests the tier answered with success, and with failure.
    pub answered_ok: u64,
    pub answered_failed: u64,
    /// Leaves not settled when the tier answered their request (still running, or not sent
    /// yet when a call failed at once).
    pub leaves_running_after: u64,
    /// Leaves cancelled once the tier had answered (`fanout.cancel`), the unsent included.
    pub leaves_cancelled: u64,
    /// Leaf calls a worker of the next tier started on after the tier had answered their
    /// request: work nobody waited for (0 with `cancel`).
    pub leaf_served_after: u64,
}

/// What the connections to one tier did (`summary.connections[]`): a *connect* is the server
/// work an attempt on a closed connection pays before its request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectionSummary {
    /// The tier connected to.
    pub tier: String,
    /// Connections opened (handshakes), and per intent.
    pub connects: u64,
    pub connects_per_intent: f64,
    /// Connects refused at once by `max_per_replica`.
    pub connects_refused: u64,
    /// Attempts failed at once, unsent, while their client waited out its reconnect backoff.
    pub connects_deferred: u64,
    /// Times a client's connections were closed (a broken connection or `drop_on`).
    pub drops: u64,
    /// The tier's work spent on connects, and its share of all the tier's work.
    pub connect_work_ms: f64,
    pub connect_work_share: f64,
    /// The most connections open at once over the tier's replicas, and at the end.
    pub peak_open: u64,
    pub open_at_end: u64,
}

/// What one replica of a replicated tier did (`summary.tiers[].replicas[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaSummary {
    /// The replica's index, 0-based (as a window's `replica` names it).
    pub replica: u32,
    /// Requests the balancers sent to it.
    pub arrivals: u64,
    /// Requests a worker started on.
    pub served: u64,
    /// Refused at once: full queue, concurrency limit, outage or `fail = "always"`.
    pub rejected: u64,
    /// Served requests that failed (500): `fail` or a failure window.
    pub errors: u64,
    /// Times an outlier detector took it out of its balancer's choice (summed over balancers).
    pub ejections: u64,
}

/// One layer's counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerSummary {
    pub name: String,
    /// Calls that reached this layer from above (for the top layer: intents).
    pub received: u64,
    /// Attempts this layer sent to the layer below (or to the bottom).
    pub sent: u64,
    /// `sent` minus the first attempt of each call.
    pub retries: u64,
    /// `sent` per intent: the cumulative amplification down to this layer's output.
    pub amplification: f64,
    /// `sent` / `received`: this layer's own factor.
    pub per_call: f64,
    /// Calls this layer answered with failure (every attempt failed, or the budget said no).
    pub failed: u64,
    pub timeouts: u64,
    /// Retries the layer's budget refused.
    pub budget_denied: u64,
    /// Calls that reached this layer after its caller had already stopped waiting.
    pub orphaned: u64,
}

/// Per-bucket time series, all of the same length; bucket `i` covers
/// `[i * bucket_ms, (i + 1) * bucket_ms)`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub bucket_ms: f64,
    /// First attempts arriving at the server.
    pub first: Vec<u32>,
    /// Retries arriving at the server.
    pub retries: Vec<u32>,
    /// Intents that succeeded (goodput), counted when the client learns it.
    pub succeeded: Vec<u32>,
    /// Time-averaged queue length.
    pub queue_len: Vec<f32>,
    /// Time-averaged busy workers.
    pub busy: Vec<f32>,
    /// Time-averaged serving (ready) replicas, when the tier has `[server.autoscale]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ready_replicas: Vec<f32>,
    /// Time-averaged learned per-attempt timeout of a first try, ms, when the caller of the tier
    /// has a learned `retry.timeout`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned_timeout_ms: Vec<f32>,
    /// Time-averaged learned hedging delay after a first copy, ms, when the caller of the tier
    /// has a learned `hedge.delay`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned_hedge_delay_ms: Vec<f32>,
    /// The same per tier, top first, when the path has more than one tier (the last is the
    /// series above).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<TierSeries>,
    /// Per replica, when the tier these series describe has `server.replicas` (2 to 64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaSeries>,
    /// Server arrivals per bucket by attempt number: `attempts[k]` for attempt `k + 1`, the last
    /// (attempt [`crate::sim::metrics::ATTEMPT_SERIES`]) holding that attempt and every later one;
    /// as long as `first` or empty. For the `--by-attempt` load chart; not written to JSON (the
    /// JSON `series` stays as it was), empty in a report read back from JSON.
    #[serde(default, skip_serializing)]
    pub attempts: Vec<Vec<u32>>,
}

/// One tier's arrivals and levels per bucket (same buckets as the [`Series`] it belongs to).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TierSeries {
    pub name: String,
    pub first: Vec<u32>,
    pub retries: Vec<u32>,
    pub queue_len: Vec<f32>,
    pub busy: Vec<f32>,
    /// Time-averaged serving (ready) replicas, on a tier with `[server.autoscale]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ready_replicas: Vec<f32>,
    /// Time-averaged learned timeout of the tier's caller, ms (as in [`Series`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned_timeout_ms: Vec<f32>,
    /// Time-averaged learned hedging delay of the tier's caller, ms (as in [`Series`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned_hedge_delay_ms: Vec<f32>,
    /// Per replica, on a tier with `server.replicas` (2 to 64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaSeries>,
}

/// One replica's counts per bucket (`series.replicas[]`, `series.tiers[].replicas[]`), as long
/// as its tier's series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaSeries {
    pub replica: u32,
    pub arrivals: Vec<u32>,
    pub served: Vec<u32>,
    pub rejected: Vec<u32>,
    /// Ejections that began in the bucket (over every balancer's detector).
    pub ejections: Vec<u32>,
}

/// One variant's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantResult {
    pub name: String,
    pub summary: Summary,
    pub series: Series,
    /// Completion-time CDF points `(ms, fraction)`, for charts.
    pub completion_cdf: Vec<(f64, f64)>,
    /// The same for the intents that succeeded, and for those that failed, each a CDF of its
    /// own (0..=1), for the split CDF chart. Not written to JSON (the JSON stays as it was);
    /// empty in a report read back from JSON, where the chart draws `completion_cdf`.
    #[serde(default, skip_serializing)]
    pub success_cdf: Vec<(f64, f64)>,
    #[serde(default, skip_serializing)]
    pub failure_cdf: Vec<(f64, f64)>,
}

/// The whole output of `run` or `compare`: what `--json` writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub schema_version: u32,
    /// The model's name.
    pub model: String,
    pub seed: u64,
    pub variants: Vec<VariantResult>,
}

/// One variant of a run with `--seeds N`: the plain fields hold the means (integer fields
/// rounded; the series and CDF are those of the first replication), `replications` the exact
/// means and the 95% confidence half-widths.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicatedVariant {
    #[serde(flatten)]
    pub result: VariantResult,
    pub replications: Replications,
}

/// Means and Student-t 95% confidence half-widths over replications, by dotted metric name
/// (`peak_retries`, `completion_ms.p99`). Metrics that are not finite in every replication are
/// left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Replications {
    pub n: u32,
    pub mean: std::collections::BTreeMap<String, f64>,
    pub ci95: std::collections::BTreeMap<String, f64>,
    /// Yes/no metrics (`recovered`) as the share of seeds with its Wilson 95% interval; only
    /// in runs that measure them (a model with a trigger).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub shares: std::collections::BTreeMap<String, Share>,
}

/// What `run`/`compare --seeds N --json` writes: a [`RunReport`] (every key of it, so readers of
/// the plain report still work) plus `seeds` and each variant's `replications`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicatedReport {
    pub schema_version: u32,
    pub model: String,
    /// The base seed; replication `i` used `seed + i` (see `stats::replication_seeds`).
    pub seed: u64,
    pub variants: Vec<ReplicatedVariant>,
    /// The seed of every replication, in order.
    pub seeds: Vec<u64>,
}

impl ReplicatedReport {
    /// The plain report (means), for the tables and charts that take one.
    pub fn to_run_report(&self) -> RunReport {
        RunReport {
            schema_version: self.schema_version,
            model: self.model.clone(),
            seed: self.seed,
            variants: self.variants.iter().map(|v| v.result.clone()).collect(),
        }
    }
}
