//! The semantic checks of a model: ranges, orderings, sizes, and keys that could not act.
//!
//! Each check names the dotted field and says what is allowed; `[retry]`, `[network]` and
//! `[server]` are checked by the same functions wherever they appear (the top level, a
//! `[[tier]]`, a `[[layer]]`).

use super::*;
use crate::base::invalid::{invalid, non_negative, positive, probability};

mod backoff;
mod path;
mod replicas;
mod server;
mod written;

use backoff::{validate_backoff, validate_retry, validate_sizing};
use replicas::validate_host_selection;
use server::validate_server;

pub(super) fn validate_attempts(path: &str, n: u32) -> Result<(), Invalid> {
    if n == 0 {
        return Err(invalid(path, "must be at least 1 (the first try counts)"));
    }
    if n > MAX_ATTEMPTS {
        return Err(invalid(path, format!("at most {MAX_ATTEMPTS}")));
    }
    Ok(())
}

fn validate_network(p: &str, n: &Network) -> Result<(), Invalid> {
    probability(&format!("{p}.request_loss"), n.request_loss)?;
    probability(&format!("{p}.response_loss"), n.response_loss)
}

impl Model {
    /// Checks what types cannot: ranges, orderings, sizes.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.bucket.0 == 0 {
            return Err(invalid(
                "bucket",
                "must be a positive duration, e.g. \"10ms\"",
            ));
        }
        if self.horizon.0 == 0 {
            return Err(invalid("horizon", "must be a positive duration"));
        }
        if self.horizon.0 / self.bucket.0 > 50_000_000 {
            return Err(invalid(
                "bucket",
                format!(
                    "horizon / bucket gives {} buckets; at most 50000000 (widen the bucket)",
                    self.horizon.0 / self.bucket.0
                ),
            ));
        }
        if let Some(w) = self.peak_window {
            if w.0 == 0 {
                return Err(invalid(
                    "peak_window",
                    "must be a positive duration, e.g. \"100ms\" (omit it to use the bucket width)",
                ));
            }
            if w > self.horizon {
                return Err(invalid(
                    "peak_window",
                    format!(
                        "must be at most the horizon ({}), got {w}: no window of arrivals is longer than the run",
                        self.horizon
                    ),
                ));
            }
        }
        if self.max_events == 0 {
            return Err(invalid("max_events", "must be at least 1"));
        }
        self.validate_workload()?;
        validate_retry("retry", &self.retry)?;
        validate_network("network", &self.network)?;
        validate_server("server", &self.server)?;
        if self.server.fanout.is_some() {
            return Err(invalid(
                "server.fanout",
                "[server] is the last tier: it has no tier below to fan out to; set fanout in the server of the [[tier]] that calls the tier to fan out to",
            ));
        }
        self.validate_idempotency()?;
        self.budget.validate()?;
        self.breaker.validate()?;
        self.hedge.validate(self.retry.max_attempts)?;
        if self.hedge.delay.is_some()
            && self.budget.kind == crate::policy::budget::BudgetKind::Envoy
        {
            return Err(invalid(
                "budget.kind",
                "Envoy's retry budget with [hedge] is not modelled (Envoy counts hedged requests apart); use budget.kind = \"grpc\" or no hedging",
            ));
        }
        if self.hedge.delay.is_some() && self.retry.retry_after == RetryAfterPolicy::Envoy {
            return Err(invalid(
                "retry.retry_after",
                "\"envoy\" (rate_limited_retry_back_off) with [hedge] is not modelled; use \"honour\" or \"ignore\"",
            ));
        }
        self.limiter.validate()?;
        if self.limiter.enabled() && self.hedge.delay.is_some() {
            return Err(invalid(
                "limiter.kind",
                "a client-side limiter with [hedge] is not modelled (the AWS SDKs do not hedge); remove [hedge] or set limiter.kind = \"none\"",
            ));
        }
        self.recovery.validate()?;
        self.validate_layers()?;
        self.validate_tiers()?;
        self.validate_host_selection()?;
        self.validate_instances()?;
        Ok(())
    }

    /// Each retry loop's host selection against the tier it calls: `[retry]` calls the first
    /// `[[tier]]` (or `[server]`), `tier[i].retry` the next tier down.
    fn validate_host_selection(&self) -> Result<(), Invalid> {
        let n = self.tiers.len();
        let target = |k: usize| match self.tiers.get(k) {
            Some(t) => (format!("tier[{k}].server"), &t.server),
            None => ("server".to_string(), &self.server),
        };
        let (tp, ts) = target(0);
        validate_host_selection("retry", &self.retry, &tp, ts)?;
        for (i, t) in self.tiers.iter().enumerate() {
            let (tp, ts) = if i + 1 < n { target(i + 1) } else { target(n) };
            validate_host_selection(&format!("tier[{i}].retry"), &t.retry, &tp, ts)?;
        }
        Ok(())
    }

    /// The store needs keys, keys need a store, and neither acts where nothing is ever applied.
    fn validate_idempotency(&self) -> Result<(), Invalid> {
        let i = &self.idempotency;
        if i.ttl == Some(Duration::ZERO) {
            return Err(invalid(
                "idempotency.ttl",
                "must be a positive duration (omit it to keep keys forever)",
            ));
        }
        let store = i.store != StoreMode::None;
        let keyed = i.key != KeyMode::None;
        if store && !keyed {
            return Err(invalid(
                "idempotency.store",
                "has no effect without keys: set idempotency.key = \"per-intent\" (or \"per-attempt\")",
            ));
        }
        if keyed && !store {
            return Err(invalid(
                "idempotency.key",
                "has no effect without a dedupe store: set idempotency.store (\"record-before\", \"record-before-409\" or \"record-after\")",
            ));
        }
        if !store && (i.ttl.is_some() || !i.persist_key) {
            let field = if i.ttl.is_some() {
                "idempotency.ttl"
            } else {
                "idempotency.persist_key"
            };
            return Err(invalid(
                field,
                "has no effect without a dedupe store: set idempotency.store and idempotency.key",
            ));
        }
        if store && self.server.fail == FailMode::Always {
            return Err(invalid(
                "idempotency.store",
                "has no effect: server.fail = \"always\" answers every request with 503, so nothing is ever applied or remembered",
            ));
        }
        Ok(())
    }

    fn validate_workload(&self) -> Result<(), Invalid> {
        let w = &self.workload;
        match w.kind {
            WorkloadKind::Burst | WorkloadKind::Contention | WorkloadKind::Periodic => {
                if w.clients == 0 {
                    return Err(invalid("workload.clients", "must be at least 1"));
                }
                if w.clients > MAX_INTENTS {
                    return Err(invalid(
                        "workload.clients",
                        format!(
                            "{} clients would need about {} of memory; the limit is {MAX_INTENTS} clients (about {})",
                            w.clients,
                            bytes(u128::from(w.clients) * u128::from(BYTES_PER_INTENT)),
                            bytes(u128::from(MAX_INTENTS * BYTES_PER_INTENT))
                        ),
                    ));
                }
            }
            WorkloadKind::Open => {
                let rates = std::iter::once(w.rate.0).chain(w.schedule.iter().map(|p| p.rate.0));
                if rates.clone().all(|r| r == 0.0) {
                    return Err(invalid(
                        "workload.rate",
                        "an open workload needs a rate above zero somewhere, e.g. \"80/s\"",
                    ));
                }
                for (i, pair) in w.schedule.windows(2).enumerate() {
                    if pair[1].at < pair[0].at {
                        return Err(invalid(
                            &format!("workload.schedule[{}].at", i + 1),
                            "schedule points must be in time order",
                        ));
                    }
                }
            }
            WorkloadKind::Closed => {
                if w.workers == 0 {
                    return Err(invalid("workload.workers", "must be at least 1"));
                }
                if w.intents == 0 {
                    return Err(invalid(
                        "workload.intents",
                        "a closed workload needs a total number of intents >= 1",
                    ));
                }
                if w.intents > MAX_INTENTS {
                    return Err(invalid(
                        "workload.intents",
                        format!("at most {MAX_INTENTS}"),
                    ));
                }
            }
            WorkloadKind::Trace => {
                if w.trace.as_deref().is_none_or(|t| t.trim().is_empty()) {
                    return Err(invalid(
                        "workload.trace",
                        "kind = \"trace\" needs the file of arrivals: workload.trace = \"FILE\" (CSV or JSON Lines, relative to the model file)",
                    ));
                }
            }
        }
        self.validate_periodic()?;
        if w.kind != WorkloadKind::Trace && w.trace.is_some() {
            return Err(invalid(
                "workload.trace",
                "has no effect unless workload.kind = \"trace\"",
            ));
        }
        if !(w.speed.is_finite() && w.speed > 0.0) {
            return Err(invalid(
                "workload.speed",
                format!(
                    "must be a finite number > 0 (2.0 replays twice as fast), got {}",
                    w.speed
                ),
            ));
        }
        if w.processes == 0 {
            return Err(invalid("workload.processes", "must be at least 1"));
        }
        Ok(())
    }

    /// A periodic workload's period, jitter and restarts; refused on any other workload.
    fn validate_periodic(&self) -> Result<(), Invalid> {
        let w = &self.workload;
        if w.kind != WorkloadKind::Periodic {
            let written = [
                ("workload.period", w.period.is_some()),
                ("workload.jitter", w.jitter.is_some()),
                ("workload.phase", w.phase.is_some()),
                ("workload.restarts", !w.restarts.is_empty()),
            ];
            if let Some((field, _)) = written.iter().find(|(_, set)| *set) {
                return Err(invalid(
                    field,
                    "has no effect unless workload.kind = \"periodic\"",
                ));
            }
            return Ok(());
        }
        match w.period {
            None => {
                return Err(invalid(
                    "workload.period",
                    "kind = \"periodic\" needs the time between one client's calls, e.g. workload.period = \"30s\"",
                ));
            }
            Some(p) if p.0 == 0 => {
                return Err(invalid(
                    "workload.period",
                    "must be above zero, e.g. \"30s\"",
                ));
            }
            Some(_) => {}
        }
        if let Some(PeriodicJitter::Factor(f)) = w.jitter
            && !(f.is_finite() && f >= 0.0)
        {
            return Err(invalid(
                "workload.jitter.factor",
                format!(
                    "must be a finite number >= 0 (0.1 spreads each wait over a tenth of the period), got {f}"
                ),
            ));
        }
        for (i, pair) in w.restarts.windows(2).enumerate() {
            if pair[1] <= pair[0] {
                return Err(invalid(
                    &format!("workload.restarts[{}]", i + 1),
                    "restarts must be in time order, each after the one before",
                ));
            }
        }
        Ok(())
    }

    /// Per-client budgets, breakers and rate limits hold one instance per client process.
    fn validate_instances(&self) -> Result<(), Invalid> {
        let s = &self.server;
        let per_client = (self.budget.kind != crate::policy::budget::BudgetKind::None
            && self.budget.scope == Scope::Client)
            || (self.breaker.enabled && self.breaker.scope == Scope::Client)
            || (self.limiter.enabled() && self.limiter.scope == Scope::Client)
            || (s.rate_limit.enabled()
                && s.rate_limit.scope == Scope::Client
                && self.tiers.is_empty()
                && self.layers.len() <= 1)
            || self.tiers.first().is_some_and(|t| {
                t.server.rate_limit.enabled() && t.server.rate_limit.scope == Scope::Client
            })
            || self
                .tiers
                .first()
                .map_or(s, |t| &t.server)
                .balancer_spec()
                .is_some_and(|b| b.scope == Scope::Client);
        let processes = match self.workload.kind {
            WorkloadKind::Burst | WorkloadKind::Contention | WorkloadKind::Periodic => {
                self.workload.clients
            }
            WorkloadKind::Closed => self.workload.workers,
            WorkloadKind::Open => self.workload.processes,
            WorkloadKind::Trace => self.workload.replay.processes(self.workload.processes),
        };
        if per_client && processes > MAX_POLICY_INSTANCES {
            return Err(invalid(
                "workload",
                format!(
                    "{processes} client processes each with their own budget, breaker, rate limit or balancer; at most {MAX_POLICY_INSTANCES} (use scope = \"shared\")"
                ),
            ));
        }
        Ok(())
    }
}
