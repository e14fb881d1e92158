//! The policies of each hop as `explain` prints them: the retry policy, budget, breaker, limiter
//! and rate limit that decide a result, as the model file's own `key = value` pairs.
//!
//! Which keys size a budget or a limiter is each kind's own answer (`BudgetKind::limits`,
//! `LimiterKind::keys`, written in the algorithm's file), so a policy added to the core shows
//! here without a second list to keep.

use retrystorm_core::model::{Discipline, HostPredicate, OutlierKind, Resend, Retry, Server, Wait};
use retrystorm_core::policy::Scope;
use retrystorm_core::policy::autoscale::{MissingMetrics, PolicyKind, Rules, SelectPolicy};
use retrystorm_core::policy::breaker::{BreakerConfig, Placement};
use retrystorm_core::policy::budget::{BudgetConfig, BudgetKind};
use retrystorm_core::policy::limiter::{LimiterConfig, LimiterKind};
use retrystorm_core::policy::ratelimit::RateLimitConfig;
use retrystorm_core::time::Duration;
use serde::Serialize;
use serde_json::Value;

/// `key = value` for a JSON value as the model file writes it (strings bare: `full`, `10s`).
fn pair(key: &str, v: &Value) -> String {
    match v {
        Value::String(s) => format!("{key} = {s}"),
        Value::Array(a) => format!(
            "{key} = [{}]",
            a.iter()
                .map(|x| x.as_str().map_or(x.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => format!("{key} = {other}"),
    }
}

/// The config as a JSON object, in declaration order.
fn fields(config: &impl Serialize) -> serde_json::Map<String, Value> {
    match serde_json::to_value(config) {
        Ok(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

/// `retry: max_attempts = 3, backoff = exponential, base = 100ms, ...`: the keys that are set.
pub fn retry(r: &Retry) -> String {
    let f = fields(r);
    let mut parts = vec![format!("max_attempts = {}", r.max_attempts)];
    for (k, v) in &f {
        if k == "timeout"
            && let Some(t) = r.timeout
        {
            // A learned timeout as `explain` words it, not as a JSON table.
            parts.push(format!("timeout = {t}"));
            continue;
        }
        let skip = match k.as_str() {
            // Printed on its own line with what it filled in.
            "mode" | "max_attempts" => true,
            "restart_probability" => v.as_f64() == Some(0.0),
            "first_exponent" => v.as_u64() == Some(0),
            "cancel" => v == &Value::Bool(false),
            "retry_on" => v.as_array().is_some_and(|a| a.is_empty()),
            _ => v.is_null(),
        };
        if !skip {
            parts.push(pair(k, v));
        }
    }
    format!("retry: {}", parts.join(", "))
}

/// `budget: kind = aws, scope = client, quota = 500, ...`, or `None` without a budget.
pub fn budget(b: &BudgetConfig) -> Option<String> {
    if b.kind == BudgetKind::None {
        return None;
    }
    let line = kind_line(&fields(b), b.kind.name(), b.kind.limits(b));
    Some(format!("budget: {line}"))
}

/// `limiter: kind = aimd, scope = client, initial_limit = 20, ...`, or `None` without one.
pub fn limiter(l: &LimiterConfig) -> Option<String> {
    if l.kind == LimiterKind::None {
        return None;
    }
    let line = kind_line(&fields(l), l.kind.name(), l.kind.keys());
    Some(format!("limiter: {line}"))
}

/// `kind = K, scope = S` and the keys that size this kind, in the section's order (left out when
/// unset).
fn kind_line(f: &serde_json::Map<String, Value>, kind: &str, keys: &[&str]) -> String {
    let mut parts = vec![format!("kind = {kind}")];
    if let Some(s) = f.get("scope") {
        parts.push(pair("scope", s));
    }
    for (k, v) in f {
        if keys.contains(&k.as_str()) && !v.is_null() {
            parts.push(pair(k, v));
        }
    }
    parts.join(", ")
}

/// `breaker: failure_rate_threshold = 50, ...`, or `None` when off.
pub fn breaker(b: &BreakerConfig) -> Option<String> {
    if !b.enabled {
        return None;
    }
    let f = fields(b);
    let parts: Vec<String> = f
        .iter()
        .filter(|(k, v)| k.as_str() != "enabled" && !v.is_null())
        .map(|(k, v)| pair(k, v))
        .collect();
    Some(format!("breaker: {}", parts.join(", ")))
}

/// Where the breaker sits against the retry loop and what that means (`breaker.placement`,
/// `retries_only`), or `None` when off: the two decorator orders of resilience4j
/// (`.withCircuitBreaker(cb).withRetry(r)` against `.withRetry(r).withCircuitBreaker(cb)`) and
/// Polly (`Policy.Wrap(retry, breaker)` against `Policy.Wrap(breaker, retry)`).
pub fn breaker_placement(b: &BreakerConfig) -> Option<String> {
    if !b.enabled {
        return None;
    }
    let what = match (b.placement, b.retries_only) {
        (Placement::PerAttempt, false) => {
            "Retry(CircuitBreaker(call)): asked before every attempt, it counts each attempt's outcome, so retries fill its window; once open it fails a call at its next attempt"
        }
        (Placement::PerAttempt, true) => {
            "Retry(CircuitBreaker(call)) for retries only: first tries always go out, every retry asks it; it counts each attempt's outcome, first tries' included"
        }
        (Placement::AroundRetries, _) => {
            "CircuitBreaker(Retry(call)): asked once per call, before its first try, it counts one outcome per call once its retries are over, so it opens after failed calls, not failed attempts; a call it lets through sends all its retries"
        }
    };
    Some(format!("breaker placement: {}, {what}", b.placement.name()))
}

/// `rate limit: rate = 100, burst = 10, scope = shared, retry_after = derived`, or `None`.
pub fn rate_limit(r: &RateLimitConfig) -> Option<String> {
    if r.rate.0 <= 0.0 {
        return None;
    }
    let f = fields(r);
    let parts: Vec<String> = f.iter().map(|(k, v)| pair(k, v)).collect();
    Some(format!("rate limit: {}", parts.join(", ")))
}

/// `queue: discipline = adaptive-lifo, shedding = {kind = codel, ...}`, or `None` for a plain
/// first-in-first-out queue.
pub fn queue(s: &Server) -> Option<String> {
    if s.discipline == Discipline::Fifo && s.shedding.is_default() {
        return None;
    }
    let f = fields(s);
    let mut parts = Vec::new();
    for k in ["queue", "discipline"] {
        if let Some(v) = f.get(k).filter(|v| !v.is_null()) {
            parts.push(pair(k, v));
        }
    }
    if !s.shedding.is_default() {
        let sh: Vec<String> = fields(&s.shedding)
            .iter()
            .map(|(k, v)| pair(k, v))
            .collect();
        parts.push(format!("shedding = {{{}}}", sh.join(", ")));
    }
    Some(format!("queue: {}", parts.join(", ")))
}

/// `replicas: 5 behind a shared round-robin balancer, ...`: the balancer, where retries go and
/// the outlier detection of a replicated tier; `None` for one replica.
pub fn replicas(s: &Server, r: &Retry) -> Option<String> {
    let b = s.balancer_spec()?;
    let mut line = format!(
        "replicas: {} behind {} {} balancer",
        s.replicas,
        match b.scope {
            Scope::Shared => "one shared",
            Scope::Client => "a per-client",
        },
        b.kind.name()
    );
    if let Some(more) = b.kind.describe(&b.params) {
        line.push_str(&more);
    }
    line.push_str(match r.retry_host_predicate {
        HostPredicate::None => "; a retry or hedge is placed afresh (it may meet the same replica)",
        HostPredicate::PreviousHosts => {
            "; a retry or hedge avoids the replicas its call tried (previous_hosts)"
        }
        HostPredicate::SameHost => "; every attempt of a call goes to its first try's replica",
    });
    if let Some(o) = &s.outlier_detection {
        line.push_str(match o.kind {
            OutlierKind::Envoy => "; Envoy outlier detection",
            OutlierKind::Grpc => "; gRPC outlier detection (gRFC A50)",
        });
    }
    Some(line)
}

/// `autoscale: HPA on utilisation, target = 0.7, ...`: the autoscaler with HPA's defaults
/// filled in; `None` without one.
pub fn autoscale(s: &Server) -> Option<String> {
    let a = s.autoscale.as_ref()?;
    let rules = |r: &Rules| {
        let policies: Vec<String> = r
            .policies
            .iter()
            .map(|p| {
                let kind = match p.kind {
                    PolicyKind::Pods => "pods",
                    PolicyKind::Percent => "percent",
                };
                format!("{kind} {} per {}", p.value, p.period)
            })
            .collect();
        let select = match r.select {
            SelectPolicy::Max => "the largest of",
            SelectPolicy::Min => "the smallest of",
            SelectPolicy::Disabled => "disabled:",
        };
        format!(
            "stabilization {}, {select} [{}]",
            r.stabilization,
            policies.join(", ")
        )
    };
    // HPA's grouping of replicas, named only when set (the defaults leave it out).
    let mut grouping = String::new();
    if a.missing_metrics == MissingMetrics::Dampen {
        grouping.push_str(", missing samples dampened");
    }
    if a.cpu_initialization_period > Duration::ZERO {
        let period = a.cpu_initialization_period;
        grouping.push_str(&format!(", cpu_initialization_period = {period}"));
    }
    Some(format!(
        "autoscale: HPA on {}, target = {}, replicas {} in {}..={}, tolerance = {}, sync_period = {}, \
         metric_delay = {}, start_time = {}{grouping}; up: {}; down: {}; a removed replica drains",
        a.metric.name(),
        a.target.unwrap_or(f64::NAN),
        s.replicas,
        a.min_replicas,
        s.replica_slots(),
        a.tolerance,
        a.sync_period,
        a.metric_delay,
        a.start_time,
        rules(&a.scale_up_rules()),
        rules(&a.scale_down_rules()),
    ))
}

/// A tier's fan-out (`server.fanout`): how many calls, what the answer waits for, what a retry
/// re-sends and whether the calls no longer needed are cancelled.
pub fn fanout(s: &Server) -> Option<String> {
    let f = s.fanout?;
    let wait = match f.wait {
        Wait::All => "all of them".to_string(),
        Wait::First => "the first".to_string(),
        Wait::Quorum(m) => format!("a quorum of {m}"),
    };
    Some(format!(
        "fan-out: {} calls to the next tier per request, answered on {wait}; a retry above re-sends {}; calls no longer needed {}",
        f.k,
        match f.resend {
            Resend::All => "all of them",
            Resend::Missing => "the missing ones",
        },
        if f.cancel { "are cancelled" } else { "run on" }
    ))
}

/// A warning when Envoy's outlier detection can never eject: Envoy ejects only while
/// `100 × (ejected + 1) / hosts ≤ max_ejection_percent` (or one host with
/// `always_eject_one_host`), so with the default 10 % a tier of fewer than 10 replicas ejects none.
pub fn ejection_warning(s: &Server) -> Option<String> {
    let o = s.outlier_detection.as_ref()?;
    let e = o.envoy();
    let one = 100.0 / f64::from(s.replicas.max(1));
    (o.kind == OutlierKind::Envoy && !e.always_eject_one_host && one > f64::from(e.max_ejection_percent))
        .then(|| {
            format!(
                "outlier_detection.max_ejection_percent = {} ejects no replica of {}: one is {:.0} % of the hosts, and Envoy ejects only while 100 × (ejected + 1) / hosts ≤ max_ejection_percent (raise it to {:.0}, or set always_eject_one_host = true)",
                e.max_ejection_percent,
                s.replicas,
                one,
                one.ceil()
            )
        })
}
