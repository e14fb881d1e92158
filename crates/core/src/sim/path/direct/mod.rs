//! The direct path: a model whose clients cannot affect each other runs each client's attempts
//! straight from its keyed draws, one intent after another, with no event queue and no intent
//! slab. The output is byte-identical to the event loop's (`tests: direct_path`).
//!
//! Why it is exact: every draw is keyed by `(seed, intent id, purpose, index)`, so an intent's
//! draws do not depend on when the loop gets to it; with no capacity, queue, store, budget,
//! breaker, limiter or rate limit nothing one intent does changes another's answers. What does
//! depend on the global order is rebuilt here: an intent's own events run in the order the loop
//! would pop them (time, then insertion); the counters are sums; the completion times go to the
//! same order-free histogram; the load series, bucket peaks and sliding-window peaks are fed the
//! arrivals, successes and busy levels sorted by time (ties do not change them, see
//! [`crate::sim::metrics::Buckets::arrival`]); the run's end, event count and how it ended follow from
//! each intent's last event and the timeouts left pending after it (the loop stops as soon as
//! nothing is live, so such a timeout counts only if it fires before the last intent ends).
//!
//! A run whose outcome would depend on the global order in a way not rebuilt here goes back to
//! the event loop at run time ([`run`] returns `None`): a pending timeout at exactly the instant
//! the last intent ends, a run that would stop at `max_events`, and busy levels past the series'
//! stored buckets (where merging would add their areas in another order). So does a run that
//! would keep more than [`records::MAX_RECORDS`] records (4 bytes per arrival, success and
//! service step): the event loop keeps the intents in flight and one peak window's arrivals.
//!
//! The parts: [`rule`] (which models are eligible), [`intent`] (one client's attempts from its
//! draws; [`rejected`] when every attempt is rejected at once), [`records`] (the time-ordered arrivals, successes and busy levels, and their feed to
//! the buckets) and [`merge`] (the run's end, and the counts into the event loop's summary).

mod intent;
mod merge;
mod records;
mod rejected;
mod rule;

pub use rule::{EnginePath, engine_path};

use self::intent::Ev;
use self::records::Records;
use crate::base::dist::Dist;
use crate::base::time::{Duration, Time};
use crate::model::Model;
use crate::policy::ClassSet;
use crate::policy::backoff::{Backoff, BackoffKind};
use crate::result::summary::{Ended, VariantResult};
use crate::sim::draws::Draws;
use crate::sim::metrics::{Completions, MAX_STORED_BUCKETS};
use crate::sim::path::Counters;
use std::sync::atomic::AtomicBool;

/// Runs `m` on the direct path, or returns `None` when it must take the event loop (see the
/// module's notes). `full`: the series and CDFs too (else the summary only). [`crate::sim::path::run_model`]
/// calls it first and runs the event loop when it returns `None`.
pub fn run(
    m: &Model,
    seed: u64,
    progress: &mut dyn FnMut(Time),
    full: bool,
) -> Option<VariantResult> {
    run_until(m, seed, progress, full, None)
}

/// [`run`], stopping at the first progress point after `stop` is set: the intents run so far
/// make the result, [`Ended::Interrupted`]. (When where they end depends on the global order,
/// `None`: the event loop, given the same flag, then stops at its first progress point.)
pub fn run_until(
    m: &Model,
    seed: u64,
    progress: &mut dyn FnMut(Time),
    full: bool,
    stop: Option<&AtomicBool>,
) -> Option<VariantResult> {
    if engine_path(m) != EnginePath::Direct {
        return None;
    }
    let mut d = Direct::new(m, seed);
    // `None`: past `max_events` already: the event loop stops there, after far less work.
    let stopped = d.run_intents(progress, stop)?;
    let (end, mut ended, events) = d.ending()?;
    if stopped {
        ended = Ended::Interrupted;
    }
    if d.rec.busy_ops && d.rec.max_op_time >= (MAX_STORED_BUCKETS as u64).saturating_mul(m.bucket.0)
    {
        return None;
    }
    let r = d.finish(end, ended, events, full);
    progress(end);
    Some(r)
}

#[derive(Default)]
struct Counts {
    /// The intents' own counters, the event loop's type.
    c: Counters,
    // Hop 0.
    sent: u64,
    retries: u64,
    hop_failed: u64,
    timeouts: u64,
    requests_lost: u64,
    responses_lost: u64,
    late_responses: u64,
    retry_after_waits: u64,
    // The server.
    arrivals: u64,
    retry_arrivals: u64,
    orphaned: u64,
    served: u64,
    rejected: u64,
    hung: u64,
    dropped_expired: u64,
    client_errors: u64,
    crashes: u64,
    work: u128,
    wasted: u128,
    last_arrival: Time,
}

struct Direct<'m> {
    m: &'m Model,
    seed: u64,
    /// Every stream of the run, keyed by `sim/draws.rs` as the event loop keys them.
    draws: Draws,
    horizon: Time,
    retry_on: ClassSet,
    retry_after_cap: Duration,
    req_lat: Dist,
    resp_lat: Dist,
    n: Counts,
    completions: Completions,
    successes: Completions,
    /// The time-ordered records for the bottom's buckets.
    rec: Records,
    /// Events of intents up to their finalisation (or the horizon).
    live_events: u64,
    /// Timeouts still pending when their intent was finalised (stale: the loop pops them only
    /// while some other intent is live).
    stale: Vec<u64>,
    /// Intents not finalised by the horizon.
    unfinished: u64,
    /// Every planned start happened by the horizon.
    all_started: bool,
    last_final: Time,
    /// An intent's pending events `(time, insertion, event)`.
    pending: Vec<(Time, u32, Ev)>,
    seq: u32,
    /// The model's backoff, built once.
    backoff: Backoff,
    /// `backoff.window(n)` in ns for every retry `n` of an exponential, linear or constant
    /// backoff, handed to the jitter (`Backoff::next_delay`): the same values, without the
    /// floating point per retry. Empty for every other backoff.
    windows: Vec<u64>,
    /// Every attempt is rejected the instant it is sent ([`rejected::rejects_at_once`]): the
    /// intents take the loop of [`Direct::intent_rejected`].
    rejected_at_once: bool,
}

/// [`Direct::windows`] for `m`.
fn window_table(m: &Model) -> Vec<u64> {
    let b = m.retry.backoff();
    let tabled = matches!(
        b.kind,
        BackoffKind::Exponential | BackoffKind::Linear | BackoffKind::Constant
    );
    if !tabled {
        return Vec::new();
    }
    (0..m.retry.max_attempts).map(|n| b.window(n).0).collect()
}

impl<'m> Direct<'m> {
    fn new(m: &'m Model, seed: u64) -> Self {
        Direct {
            m,
            seed,
            draws: Draws::new(seed),
            horizon: Time::ZERO + m.horizon,
            retry_on: ClassSet::of(&m.retry.retry_on),
            retry_after_cap: m.retry.retry_after_cap.unwrap_or(m.retry.cap),
            req_lat: m.network.request_latency(),
            resp_lat: m.network.response_latency(),
            n: Counts::default(),
            completions: Completions::default(),
            successes: Completions::default(),
            rec: Records::new(m),
            live_events: 0,
            stale: Vec::new(),
            unfinished: 0,
            all_started: true,
            last_final: Time::ZERO,
            pending: Vec::with_capacity(4),
            seq: 0,
            backoff: m.retry.backoff(),
            windows: window_table(m),
            rejected_at_once: rejected::rejects_at_once(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run keeps at most its record budget: past it the direct path stops and the event loop
    /// runs the model (the same results, `tests: direct_path`), so memory does not grow with the
    /// arrivals of a run. The budget is lowered here so that a small herd passes it.
    #[test]
    fn a_run_past_its_record_budget_takes_the_event_loop() {
        let text = "[workload]\nclients = 1000\n[retry]\nmax_attempts = 5\nbackoff = \"immediate\"\n[server]\nfail = \"always\"\n[network]\nlatency = \"1ms\"\n";
        let m = crate::model::load::load("m.toml", text, &[]).unwrap().base;
        assert_eq!(engine_path(&m), EnginePath::Direct);
        // 5,000 arrivals: within a budget of 5,000 the direct path runs it.
        let mut d = Direct::new(&m, 1);
        d.rec.budget = 5_000;
        assert_eq!(d.run_intents(&mut |_| {}, None), Some(false));
        let mut d = Direct::new(&m, 1);
        d.rec.budget = 4_000;
        assert_eq!(d.run_intents(&mut |_| {}, None), None);
        // It stopped at the first intent past the budget: at most one intent's records more.
        assert!(d.rec.kept <= 4_005, "{}", d.rec.kept);
    }
}
