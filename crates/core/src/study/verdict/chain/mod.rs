//! A one-tier model as a continuous-time Markov chain in the manner of Metafor
//! (mpi-sws-rse/metafor, "Formal Analysis of Metastable Failures"): the state is the requests in
//! the tier and the requests in the retry orbit, with Metafor's rates ([`rates`]), truncated at
//! the tier's bounded queue and an orbit cut where it no longer changes the answer. Solved in
//! the tool by block elimination over queue lengths ([`blocks`]); it gives the expected time
//! from an empty tier to a tipped one (the queue at 90 % of `server.queue`, Metafor's mark) and
//! back to a healthy one (less than one timeout of work queued), and the share of time in each.
//! `docs/verdict.md`, "The Markov chain", gives the states, rates, truncation and limits.

mod blocks;
pub mod rates;

use super::attempts::mean_delay;
use crate::model::{FailMode, Model, WorkloadKind};
use crate::policy::Class;
use crate::policy::budget::BudgetKind;
use crate::policy::limiter::LimiterKind;
use crate::policy::shedding::SheddingKind;
use crate::sim::path::spec::PathSpec;
use blocks::Tridiagonal;
use rates::Rates;
use serde::Serialize;

/// The largest chain solved: queue lengths x orbit sizes.
pub const MAX_STATES: usize = 40_000;

/// The largest block-elimination work solved, queue lengths x orbit sizes^3 (about 30 ms of a
/// release build at the limit), so that `explain` stays well under 100 ms a model.
pub const MAX_WORK: usize = 20_000_000;

/// The orbit is cut where the tipped tier's orbit is larger with at most this probability.
pub const ORBIT_TAIL: f64 = 1e-2;

/// The fewest orbit sizes kept.
const MIN_ORBIT: usize = 10;

/// Tipped: the tier holds this share of `server.queue` (Metafor's experiments: 90 of 100).
pub const TIPPED_SHARE: f64 = 0.9;

/// What the chain says of a one-tier model, in seconds and shares of time.
#[derive(Clone, Debug, Serialize)]
pub struct ChainReport {
    /// Requests the tier may hold, 0 included: `server.queue` + workers + 1.
    pub queue_lengths: usize,
    /// Orbit sizes kept after truncation.
    pub orbit_sizes: usize,
    pub states: usize,
    /// Tipped: at least this many requests in the tier.
    pub tipped_at: usize,
    /// Healthy: fewer than this many (one timeout of work at full service).
    pub healthy_below: usize,
    /// Expected seconds from an empty tier and orbit to a tipped tier.
    pub time_to_tip_s: f64,
    /// Expected seconds from the tipped state the chain enters first to a healthy one.
    pub time_to_recover_s: f64,
    /// Long-run shares of time healthy and tipped (the rest is in between).
    pub healthy_share: f64,
    pub tipped_share: f64,
}

/// Why the chain was not solved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChainError {
    #[error("{model}: the Markov chain does not model it: {why}")]
    Outside { model: String, why: String },
    #[error(
        "{model}: the Markov chain would have {states} states ({lengths} queue lengths x {orbit} orbit sizes) and {work} units of work, over its limits of {max_states} states and {max_work} units (queue lengths x orbit sizes^3): a smaller server.queue makes it smaller"
    )]
    TooLarge {
        model: String,
        states: usize,
        lengths: usize,
        orbit: usize,
        work: usize,
        max_states: usize,
        max_work: usize,
    },
    #[error("{model}: the Markov chain's linear solve met a singular block: no answer")]
    Singular { model: String },
}

/// The chain of a one-tier model, solved; or why not.
pub fn solve(m: &Model) -> Result<ChainReport, ChainError> {
    let outside = |why: &str| ChainError::Outside {
        model: m.name.clone(),
        why: why.to_string(),
    };
    let base = rates_of(m).map_err(outside)?;
    let tipped_at = ((TIPPED_SHARE * queue_of(m) as f64).ceil() as usize).max(1);
    let healthy_below = (base.timeout * base.served(base.workers)).floor() as usize;
    if healthy_below == 0 || healthy_below >= tipped_at {
        return Err(outside(&format!(
            "its tipped mark (90 % of server.queue) is {} requests and one timeout of work is {}: no request waits past the timeout before it tips",
            tipped_at, healthy_below
        )));
    }
    at_orbit(m, &base, orbit_cut(&base), tipped_at, healthy_below)
}

/// Where the orbit is cut. Once tipped every reply is late (`tail = 1`), so the orbit gains
/// `alpha lambda` a second and each orbiting request leaves at `d`: it holds a Poisson number
/// of requests with mean `alpha lambda / d`. The cut keeps all but [`ORBIT_TAIL`] of it.
pub fn orbit_cut(r: &Rates) -> usize {
    let mean = rates::ALPHA * r.arrival / r.drop();
    if mean > MAX_STATES as f64 {
        // Past any chain solved: the size alone refuses it.
        return mean.ceil() as usize;
    }
    // The Poisson distribution summed term by term, each term in logarithms (no underflow).
    let (mut below, mut ln_factorial, mut k) = (0.0, 0.0, 0.0f64);
    loop {
        below += (k * mean.ln() - mean - ln_factorial).exp();
        k += 1.0;
        ln_factorial += k.ln();
        if 1.0 - below <= ORBIT_TAIL {
            return (k as usize).max(MIN_ORBIT);
        }
    }
}

/// The chain with `orbit` orbit sizes solved, or refused as too large.
fn at_orbit(
    m: &Model,
    base: &Rates,
    orbit: usize,
    tipped_at: usize,
    healthy_below: usize,
) -> Result<ChainReport, ChainError> {
    let lengths = base.max_jobs + 1;
    let (states, work) = (
        lengths.saturating_mul(orbit),
        lengths.saturating_mul(orbit.saturating_pow(3)),
    );
    if states > MAX_STATES || work > MAX_WORK {
        return Err(ChainError::TooLarge {
            model: m.name.clone(),
            states,
            lengths,
            orbit,
            work,
            max_states: MAX_STATES,
            max_work: MAX_WORK,
        });
    }
    let r = Rates {
        orbit,
        ..base.clone()
    };
    let singular = |_| ChainError::Singular {
        model: m.name.clone(),
    };
    let (time_to_tip_s, entry) = tip(&r, tipped_at).map_err(singular)?;
    let time_to_recover_s = recover(&r, healthy_below, tipped_at, &entry).map_err(singular)?;
    let pi = r.generator(0, lengths).stationary().map_err(singular)?;
    let share =
        |levels: std::ops::Range<usize>| -> f64 { levels.map(|n| pi[n].iter().sum::<f64>()).sum() };
    Ok(ChainReport {
        queue_lengths: lengths,
        orbit_sizes: orbit,
        states,
        tipped_at,
        healthy_below,
        time_to_tip_s,
        time_to_recover_s,
        healthy_share: share(0..healthy_below),
        tipped_share: share(tipped_at..lengths),
    })
}

/// The expected time from (0, 0) to a level `>= tipped_at`, and the distribution of the orbit
/// when the chain gets there. With `A` the generator on levels below, `u = -A^-1 1` is the
/// expected time to leave and `-A^-1 Q(., entry)` where it enters; both at (0, 0) come from one
/// solve of `A^T z = e_(0,0)`.
fn tip(r: &Rates, tipped_at: usize) -> Result<(f64, Vec<f64>), blocks::Singular> {
    let a = r.generator(0, tipped_at);
    let mut unit = vec![vec![0.0; r.orbit]; tipped_at];
    unit[0][0] = 1.0;
    let z = a.transposed().solve(&unit)?;
    let time = -z.iter().flatten().sum::<f64>();
    let up = r.generator(tipped_at - 1, tipped_at + 1).upper.remove(0);
    let mut entry: Vec<f64> = up.vec_mul(&z[tipped_at - 1]).iter().map(|v| -v).collect();
    let total: f64 = entry.iter().sum();
    entry.iter_mut().for_each(|p| *p /= total);
    Ok((time, entry))
}

/// The expected time from level `tipped_at` (orbit distributed as `entry`) to a level below
/// `healthy_below`: `w = -A^-1 1` on the levels from `healthy_below` up.
fn recover(
    r: &Rates,
    healthy_below: usize,
    tipped_at: usize,
    entry: &[f64],
) -> Result<f64, blocks::Singular> {
    let a: Tridiagonal = r.generator(healthy_below, r.max_jobs + 1);
    let ones = vec![vec![-1.0; r.orbit]; a.diag.len()];
    let w = a.solve(&ones)?;
    Ok(entry
        .iter()
        .zip(&w[tipped_at - healthy_below])
        .map(|(p, t)| p * t)
        .sum())
}

/// `server.queue`, which the caller has checked is bounded.
fn queue_of(m: &Model) -> u64 {
    m.server.queue.0.unwrap_or(0)
}

/// The chain's rates for a model it can judge, or why it cannot (the first reason).
fn rates_of(m: &Model) -> Result<Rates, &'static str> {
    let path = PathSpec::of(m);
    let (hop, server) = (&path.hops[0], &path.tiers[0].server);
    let w = &m.workload;
    let why = if path.tiers.len() > 1 {
        Some("it models one tier, and the request path has more")
    } else if w.kind != WorkloadKind::Open || w.rate.0 <= 0.0 {
        Some("it needs an open workload with a steady rate (Poisson arrivals)")
    } else if server.capacity.0.is_none() {
        Some("it needs a bounded pool of workers (server.capacity)")
    } else if server.queue.0.is_none() {
        Some("it truncates the queue at server.queue, and the queue is unbounded")
    } else if hop.retry.timeout.is_none() {
        Some("it needs a per-attempt timeout (retry.timeout)")
    } else if server.replicas > 1 {
        Some("it models one server, not replicas")
    } else if hop.budget.kind != BudgetKind::None
        || hop.breaker.enabled
        || hop.limiter.kind != LimiterKind::None
        || hop.hedge.enabled()
    {
        Some("it has no retry budget, breaker, client-side limiter or hedging")
    } else if server.drop_expired
        || hop.retry.cancel
        || server.shedding.kind != SheddingKind::None
        || server.rate_limit.rate.0 > 0.0
        || server.concurrency_limit.0.is_some()
    {
        Some("it has no drop_expired, cancellation, shedding, rate limit or concurrency limit")
    } else if server.fail != FailMode::Never
        || hop.network.request_loss > 0.0
        || hop.network.response_loss > 0.0
    {
        Some("it has no failures but timeouts (server.fail, network loss)")
    } else if hop.retry.deadline.is_some() {
        Some("it has no deadline: every request makes max_attempts attempts")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(why);
    }
    let timeout = hop
        .retry
        .timeout
        .map_or(0.0, |t| t.ceiling().0 as f64 / 1e9);
    let retries = if hop.retry.retry_on.contains(&Class::Timeout) {
        f64::from(hop.retry.max_attempts - 1)
    } else {
        0.0
    };
    if retries == 0.0 {
        // Metafor's rates send `alpha lambda tail` arrivals into the tier besides `lambda`
        // (the (n + 1, o + 1) transition): without retries that is load the system never sees.
        return Err(
            "it needs retries on timeouts: without them Metafor's rates still add alpha x lambda arrivals once replies are late, load the tier never sees",
        );
    }
    let backoff = hop.retry.backoff();
    let delays: f64 = (0..retries as u32).map(|n| mean_delay(&backoff, n)).sum();
    let workers = server.capacity.0.unwrap_or(1) as usize;
    Ok(Rates {
        arrival: w.rate.0,
        service: server.service.mean_ns() / 1e9,
        slowdown: server.slowdown,
        workers,
        max_jobs: (queue_of(m) as usize).saturating_add(workers),
        orbit: MIN_ORBIT,
        timeout,
        retries,
        attempt_s: timeout + delays / (retries + 1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::rates::tests::example as metafor_example;
    use super::*;

    #[test]
    fn metafor_example_tips_in_metafors_61_2_s() {
        let (time, entry) = tip(&metafor_example(), 90).unwrap();
        assert!((time - 61.2).abs() < 0.05, "{time}");
        assert!((entry.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(entry.iter().all(|p| *p >= -1e-12));
    }
}
