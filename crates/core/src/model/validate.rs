//! The semantic checks of a model: ranges, orderings, sizes, and keys that could not act.
//!
//! Each check names the dotted field and says what is allowed; `[retry]`, `[network]` and
//! `[server]` are checked by the same functions wherever they appear (the top level, a
//! `[[tier]]`, a `[[layer]]`).

use super::*;
use crate::invalid::{invalid, probability};

fn validate_attempts(path: &str, n: u32) -> Result<(), Invalid> {
    if n == 0 {
        return Err(invalid(path, "must be at least 1 (the first try counts)"));
    }
    if n > 10_000 {
        return Err(invalid(path, "at most 10000"));
    }
    Ok(())
}

/// The backoff fields shared by `[retry]`, `[[layer]]` and `[tier.retry]`, under `prefix`.
fn validate_backoff(prefix: &str, b: &Backoff) -> Result<(), Invalid> {
    if !(b.multiplier.is_finite() && b.multiplier >= 1.0) {
        return Err(invalid(
            &format!("{prefix}.multiplier"),
            format!("must be a finite number >= 1, got {}", b.multiplier),
        ));
    }
    if b.kind != BackoffKind::Immediate && b.cap < b.base {
        return Err(invalid(
            &format!("{prefix}.cap"),
            format!("must be >= {prefix}.base ({}), got {}", b.base, b.cap),
        ));
    }
    if b.kind == BackoffKind::Envoy && b.base < Duration::from_millis(1) {
        return Err(invalid(
            &format!("{prefix}.base"),
            format!(
                "Envoy's base_interval is whole milliseconds, at least 1ms; got {}",
                b.base
            ),
        ));
    }
    if b.jitter == Jitter::Decorrelated && b.base.0 == 0 && b.kind != BackoffKind::Immediate {
        return Err(invalid(
            &format!("{prefix}.base"),
            "decorrelated jitter needs a positive base",
        ));
    }
    Ok(())
}

/// Each sized jitter has its key, each key its jitter, and the amounts are in range.
fn validate_sizing(prefix: &str, z: &BackoffSpec) -> Result<(), Invalid> {
    let name = |j: Jitter| match j {
        Jitter::None => "none",
        Jitter::Full => "full",
        Jitter::Equal => "equal",
        Jitter::Decorrelated => "decorrelated",
        Jitter::Polly => "polly",
        Jitter::Proportional => "proportional",
        Jitter::Additive => "additive",
        Jitter::Absolute => "absolute",
    };
    let written = [
        (
            "randomization_factor",
            Jitter::Proportional,
            z.randomization_factor.is_some(),
        ),
        ("jitter_factor", Jitter::Additive, z.jitter_factor.is_some()),
        ("jitter_max", Jitter::Absolute, z.jitter_max.is_some()),
    ];
    for (key, kind, set) in written {
        if set && z.jitter != kind {
            return Err(invalid(
                &format!("{prefix}.{key}"),
                format!(
                    "has no effect: it sizes jitter = \"{}\" and this policy's jitter is \"{}\" (set it beside the jitter that uses it, in the same variant)",
                    name(kind),
                    name(z.jitter)
                ),
            ));
        }
        if !set && z.jitter == kind {
            let what = match kind {
                Jitter::Proportional => {
                    "a number in 0..=1, the share of the window the delay may move either way (cenkalti/backoff: 0.5, gRPC: 0.2)"
                }
                Jitter::Additive => {
                    "a number >= 0, the share of the window added at most (Kubernetes client-go: 0.1)"
                }
                _ => "a duration, the most added to the window (tenacity: \"1s\")",
            };
            return Err(invalid(
                &format!("{prefix}.jitter"),
                format!("jitter = \"{}\" needs {prefix}.{key}: {what}", name(kind)),
            ));
        }
    }
    if z.cap_applies.is_some() && z.jitter.amount_key().is_none() {
        return Err(invalid(
            &format!("{prefix}.cap_applies"),
            format!(
                "has no effect: only jitter = \"proportional\", \"additive\" or \"absolute\" can pass the cap, and this policy's jitter is \"{}\"",
                name(z.jitter)
            ),
        ));
    }
    if let Some(r) = z.randomization_factor
        && !(0.0..=1.0).contains(&r)
    {
        return Err(invalid(
            &format!("{prefix}.randomization_factor"),
            format!("must be a number in 0..=1, got {r}"),
        ));
    }
    if let Some(f) = z.jitter_factor
        && !(f.is_finite() && f >= 0.0)
    {
        return Err(invalid(
            &format!("{prefix}.jitter_factor"),
            format!("must be a finite number >= 0, got {f}"),
        ));
    }
    Ok(())
}

/// `[retry]` or a tier's `retry`, under `p`.
fn validate_retry(p: &str, r: &Retry) -> Result<(), Invalid> {
    validate_attempts(&format!("{p}.max_attempts"), r.max_attempts)?;
    if r.timeout == Some(Duration::ZERO) {
        return Err(invalid(
            &format!("{p}.timeout"),
            "must be a positive duration (omit it to wait forever)",
        ));
    }
    if r.deadline == Some(Duration::ZERO) {
        return Err(invalid(
            &format!("{p}.deadline"),
            "must be a positive duration (omit it for no overall deadline)",
        ));
    }
    validate_backoff(p, &r.backoff())?;
    validate_sizing(p, &r.backoff_spec)?;
    if let Some(b) = r.throttling_base
        && (b.0 == 0 || b > r.cap)
    {
        return Err(invalid(
            &format!("{p}.throttling_base"),
            format!(
                "must be a positive duration <= {p}.cap ({}), got {b}",
                r.cap
            ),
        ));
    }
    probability(&format!("{p}.restart_probability"), r.restart_probability)?;
    for (i, c) in r.retry_on.iter().enumerate() {
        if matches!(c, Class::Success | Class::ClientError | Class::Overloaded) {
            return Err(invalid(
                &format!("{p}.retry_on[{i}]"),
                format!(
                    "{:?} is never retried; allowed: timeout, connection, 503, 429, 5xx, 409",
                    c.name()
                ),
            ));
        }
    }
    if r.retry_after_cap == Some(Duration::ZERO) {
        return Err(invalid(
            &format!("{p}.retry_after_cap"),
            format!("must be a positive duration (use {p}.retry_after = \"ignore\" to ignore it)"),
        ));
    }
    Ok(())
}

fn validate_network(p: &str, n: &Network) -> Result<(), Invalid> {
    probability(&format!("{p}.request_loss"), n.request_loss)?;
    probability(&format!("{p}.response_loss"), n.response_loss)
}

/// `[server]` or a tier's `server`, under `p`.
fn validate_server(p: &str, s: &Server) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.{f}");
    if s.capacity.0 == Some(0) {
        return Err(invalid(
            &at("capacity"),
            "must be at least 1 (or \"unlimited\")",
        ));
    }
    if let FailMode::Probability(q) = s.fail {
        probability(&at("fail"), q)?;
    }
    probability(&at("crash_probability"), s.crash_probability)?;
    for (i, o) in s.outages.iter().enumerate() {
        if o.to <= o.from {
            return Err(invalid(
                &at(&format!("outages[{i}].to")),
                format!("must be after `from` ({})", o.from),
            ));
        }
        if o.answer == OutageAnswer::Hang && o.retry_after.is_some() {
            return Err(invalid(
                &at(&format!("outages[{i}].retry_after")),
                "has no effect: a hanging outage sends no answer to carry it (use answer = \"503\")",
            ));
        }
        if o.retry_after == Some(Duration::ZERO) {
            return Err(invalid(
                &at(&format!("outages[{i}].retry_after")),
                "must be a positive duration (omit it for a 503 without Retry-After)",
            ));
        }
        if let Some(later) = s.outages[i + 1..]
            .iter()
            .position(|e| e.from < o.to && o.from < e.to && e.answer != o.answer)
        {
            return Err(invalid(
                &at(&format!("outages[{}]", i + 1 + later)),
                "a hanging outage must not overlap a 503 outage (which answer would win?)",
            ));
        }
    }
    if s.concurrency_limit.0 == Some(0) {
        return Err(invalid(
            &at("concurrency_limit"),
            "must be at least 1 (or \"unlimited\")",
        ));
    }
    if !(s.slowdown.is_finite() && s.slowdown >= 0.0) {
        return Err(invalid(
            &at("slowdown"),
            format!("must be a finite number >= 0, got {}", s.slowdown),
        ));
    }
    probability(&at("client_error"), s.client_error)?;
    s.shedding.validate(&at("shedding"))?;
    for (i, d) in s.capacity_drops.iter().enumerate() {
        if d.to <= d.from {
            return Err(invalid(
                &at(&format!("capacity_drops[{i}].to")),
                format!("must be after `from` ({})", d.from),
            ));
        }
        if d.capacity == 0 {
            return Err(invalid(
                &at(&format!("capacity_drops[{i}].capacity")),
                format!("must be at least 1 (use {p}.outages for a window with no service)"),
            ));
        }
        if s.capacity.0.is_none() {
            return Err(invalid(
                &at(&format!("capacity_drops[{i}]")),
                format!("a capacity drop needs a limited {p}.capacity"),
            ));
        }
        if let Some(later) = s.capacity_drops[i + 1..]
            .iter()
            .position(|e| e.from < d.to && d.from < e.to)
        {
            return Err(invalid(
                &at(&format!("capacity_drops[{}]", i + 1 + later)),
                "capacity drops must not overlap",
            ));
        }
    }
    for (i, w) in s.slow_windows.iter().enumerate() {
        if w.to <= w.from {
            return Err(invalid(
                &at(&format!("slow_windows[{i}].to")),
                format!("must be after `from` ({})", w.from),
            ));
        }
        if !(w.factor.is_finite() && w.factor >= 1.0) {
            return Err(invalid(
                &at(&format!("slow_windows[{i}].factor")),
                format!(
                    "must be a finite number >= 1 (the service time of work started in the window is multiplied by it), got {}",
                    w.factor
                ),
            ));
        }
        if let Some(later) = s.slow_windows[i + 1..]
            .iter()
            .position(|e| e.from < w.to && w.from < e.to)
        {
            return Err(invalid(
                &at(&format!("slow_windows[{}]", i + 1 + later)),
                format!(
                    "slow windows must not overlap (it overlaps {p}.slow_windows[{i}]: which factor would win?)"
                ),
            ));
        }
    }
    if p == "server" {
        s.rate_limit.validate()?;
    }
    if s.fail == FailMode::Always {
        // Every request is answered 503 before a worker sees it: these would be ignored.
        let inert = [
            ("capacity", s.capacity.0.is_some()),
            ("queue", s.queue.0.is_some()),
            ("service", !s.service.is_zero()),
            ("slowdown", s.slowdown > 0.0),
            ("crash_probability", s.crash_probability > 0.0),
            ("client_error", s.client_error > 0.0),
            ("concurrency_limit", s.concurrency_limit.0.is_some()),
            ("capacity_drops", !s.capacity_drops.is_empty()),
            ("slow_windows", !s.slow_windows.is_empty()),
            ("outages", !s.outages.is_empty()),
            ("rate_limit", s.rate_limit.enabled()),
            ("drop_expired", s.drop_expired),
            ("contention", s.contention),
            ("shedding", !s.shedding.is_default()),
        ];
        if let Some((field, _)) = inert.iter().find(|(_, set)| *set) {
            return Err(invalid(
                &at(field),
                format!(
                    "has no effect: {p}.fail = \"always\" answers every request with 503 before a worker sees it (set {p}.fail to a probability or \"never\")"
                ),
            ));
        }
    }
    Ok(())
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
        self.validate_instances()?;
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
            WorkloadKind::Burst | WorkloadKind::Contention => {
                if w.clients == 0 {
                    return Err(invalid("workload.clients", "must be at least 1"));
                }
                if w.clients > MAX_INTENTS {
                    return Err(invalid(
                        "workload.clients",
                        format!(
                            "{} clients would need about {} of memory; the limit is {MAX_INTENTS} clients (about {})",
                            w.clients,
                            bytes(w.clients.saturating_mul(BYTES_PER_INTENT)),
                            bytes(MAX_INTENTS * BYTES_PER_INTENT)
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
            });
        let processes = match self.workload.kind {
            WorkloadKind::Burst | WorkloadKind::Contention => self.workload.clients,
            WorkloadKind::Closed => self.workload.workers,
            WorkloadKind::Open => self.workload.processes,
            WorkloadKind::Trace => self.workload.replay.processes(self.workload.processes),
        };
        if per_client && processes > MAX_POLICY_INSTANCES {
            return Err(invalid(
                "workload",
                format!(
                    "{processes} client processes each with their own budget, breaker or rate limit; at most {MAX_POLICY_INSTANCES} (use scope = \"shared\")"
                ),
            ));
        }
        Ok(())
    }

    /// Checks the `[[layer]]` tables: each is a hop of the request path (`docs/layered.md`).
    fn validate_layers(&self) -> Result<(), Invalid> {
        if self.layers.is_empty() {
            return Ok(());
        }
        if !self.tiers.is_empty() {
            return Err(invalid(
                "tier",
                "[[layer]] and [[tier]] are two ways to write one request path; use one (a [[tier]] has everything a [[layer]] has)",
            ));
        }
        if self.layers.len() > MAX_LAYERS {
            return Err(invalid(
                "layer",
                format!("{} layers; at most {MAX_LAYERS}", self.layers.len()),
            ));
        }
        let set = |a: toml::Value, b: toml::Value| a != b;
        if set(
            toml::Value::try_from(&self.retry).unwrap_or(toml::Value::Boolean(false)),
            toml::Value::try_from(Retry::default()).unwrap_or(toml::Value::Boolean(false)),
        ) {
            return Err(invalid(
                "retry",
                "with [[layer]] tables the top layer is the clients' retry policy: move these keys into layer[0] (or write the path with [[tier]] tables)",
            ));
        }
        if set(
            toml::Value::try_from(&self.network).unwrap_or(toml::Value::Boolean(false)),
            toml::Value::try_from(Network::default()).unwrap_or(toml::Value::Boolean(false)),
        ) {
            return Err(invalid(
                "network",
                "with [[layer]] tables each layer's `latency` is its hop's network, and layers lose no messages: write the path with [[tier]] tables (each has a `network`) to model loss",
            ));
        }
        if self.layers[0].budget.is_some()
            && self.budget.kind != crate::policy::budget::BudgetKind::None
        {
            return Err(invalid(
                "budget",
                "the top layer is the client: give its budget either in [budget] or in layer[0].budget, not both",
            ));
        }
        for (i, l) in self.layers.iter().enumerate() {
            let at = |f: &str| format!("layer[{i}].{f}");
            validate_attempts(&at("max_attempts"), l.max_attempts)?;
            if l.timeout == Some(Duration::ZERO) {
                return Err(invalid(
                    &at("timeout"),
                    "must be a positive duration (omit it to wait forever)",
                ));
            }
            validate_backoff(&format!("layer[{i}]"), &l.backoff())?;
            validate_sizing(&format!("layer[{i}]"), &l.backoff_spec)?;
            match l.budget {
                Some(LayerBudget::Tokens {
                    max_tokens,
                    token_ratio,
                }) => {
                    if !(max_tokens.is_finite() && max_tokens > 0.0) {
                        return Err(invalid(
                            &at("budget.max_tokens"),
                            format!("must be a finite number > 0, got {max_tokens}"),
                        ));
                    }
                    if !(token_ratio.is_finite() && token_ratio >= 0.0) {
                        return Err(invalid(
                            &at("budget.token_ratio"),
                            format!("must be a finite number >= 0, got {token_ratio}"),
                        ));
                    }
                }
                Some(LayerBudget::Ratio { ratio, .. }) if !(ratio.is_finite() && ratio >= 0.0) => {
                    return Err(invalid(
                        &at("budget.ratio"),
                        format!("must be a finite number >= 0, got {ratio}"),
                    ));
                }
                Some(LayerBudget::Ratio { .. }) | None => {}
            }
        }
        Ok(())
    }

    /// Checks the `[[tier]]` tables with the same rules as the top-level sections.
    fn validate_tiers(&self) -> Result<(), Invalid> {
        if self.tiers.len() + 1 > MAX_LAYERS {
            return Err(invalid(
                "tier",
                format!(
                    "{} tiers below the clients; at most {MAX_LAYERS}",
                    self.tiers.len() + 1
                ),
            ));
        }
        for (i, t) in self.tiers.iter().enumerate() {
            let p = format!("tier[{i}]");
            validate_server(&format!("{p}.server"), &t.server)?;
            if t.server.contention {
                return Err(invalid(
                    &format!("{p}.server.contention"),
                    "write contention is a behaviour of the last tier: set it in [server]",
                ));
            }
            validate_retry(&format!("{p}.retry"), &t.retry)?;
            validate_network(&format!("{p}.network"), &t.network)?;
            let prefixed = |e: Invalid| Invalid {
                path: format!("{p}.{}", e.path),
                message: e.message,
            };
            t.budget.validate().map_err(prefixed)?;
            t.breaker.validate().map_err(prefixed)?;
            t.hedge.validate(t.retry.max_attempts).map_err(prefixed)?;
            if t.hedge.delay.is_some() && t.budget.kind == crate::policy::budget::BudgetKind::Envoy
            {
                return Err(prefixed(invalid(
                    "budget.kind",
                    "Envoy's retry budget with hedge is not modelled; use budget.kind = \"grpc\" or no hedging",
                )));
            }
            if t.hedge.delay.is_some() && t.retry.retry_after == RetryAfterPolicy::Envoy {
                return Err(prefixed(invalid(
                    "retry.retry_after",
                    "\"envoy\" (rate_limited_retry_back_off) with hedge is not modelled; use \"honour\" or \"ignore\"",
                )));
            }
            t.server.rate_limit.validate().map_err(|e| Invalid {
                path: format!("{p}.server.{}", e.path.trim_start_matches("server.")),
                message: e.message,
            })?;
        }
        Ok(())
    }
}
