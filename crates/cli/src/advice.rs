//! `retrystorm explain MODEL`: the resolved model's key facts, and warnings about what a
//! designer needs to know before running it (overloaded tiers, breakers that cannot open,
//! timeouts shorter than the service time, capacity drops and slow windows below the offered
//! load, slow windows that push the service time past the timeout). `run`,
//! `compare` and `check` print the same warnings on stderr ([`warn_models`]).

use crate::policy_lines;
use retrystorm_core::model::{
    DropOn, FailMode, Model, PeriodicJitter, Phase, Retry, Server, WorkloadKind,
};
use retrystorm_core::policy::Scope;
use retrystorm_core::policy::adaptive::Adaptive;
use retrystorm_core::policy::breaker::{BreakerConfig, Placement, WindowType};
use retrystorm_core::policy::budget::BudgetConfig;
use retrystorm_core::policy::hedge::HedgeConfig;
use retrystorm_core::time::{Duration, Time};

/// One hop of the path: the retry policy and breaker of a caller, and the server it calls.
struct Hop<'a> {
    name: String,
    retry: &'a Retry,
    breaker: &'a BreakerConfig,
    budget: &'a BudgetConfig,
    hedge: &'a HedgeConfig,
    server: &'a Server,
}

fn hops(m: &Model) -> Vec<Hop<'_>> {
    let mut out = Vec::new();
    let (mut retry, mut breaker, mut budget, mut hedge) =
        (&m.retry, &m.breaker, &m.budget, &m.hedge);
    for (i, t) in m.tiers.iter().enumerate() {
        let name = if t.name.is_empty() {
            format!("tier{i}")
        } else {
            t.name.clone()
        };
        out.push(Hop {
            name,
            retry,
            breaker,
            budget,
            hedge,
            server: &t.server,
        });
        (retry, breaker, budget, hedge) = (&t.retry, &t.breaker, &t.budget, &t.hedge);
    }
    out.push(Hop {
        name: "server".into(),
        retry,
        breaker,
        budget,
        hedge,
        server: &m.server,
    });
    out
}

/// The facts and warnings of one resolved model, as lines.
pub fn explain_model(m: &Model) -> (Vec<String>, Vec<String>) {
    let mut out = Lines::default();
    out.facts.push(format!("workload: {}", workload(m)));
    out.facts.push(format!(
        "horizon: {}, bucket: {}, seed: {}",
        m.horizon, m.bucket, m.seed
    ));
    out.facts
        .push(retrystorm_core::path::engine_path(m).describe(m));
    out.facts.push(size(m).0);
    periodic_herd(m, &mut out);
    for (i, h) in hops(m).iter().enumerate() {
        let tier = Tier::of(i, h);
        tier.facts(m, &mut out);
        tier.overload(m, &mut out);
        tier.slow_windows(m, &mut out);
        tier.connections(&mut out);
        tier.failure_windows(&mut out);
        tier.timeout_and_breaker(m, &mut out);
    }
    (out.facts, out.warnings)
}

/// What `explain` prints of a model: facts, then warnings.
#[derive(Default)]
struct Lines {
    facts: Vec<String>,
    warnings: Vec<String>,
}

/// The workload in a few words.
fn workload(m: &Model) -> String {
    let w = &m.workload;
    match w.kind {
        WorkloadKind::Burst => format!("burst of {} clients", w.clients),
        WorkloadKind::Contention => format!("contention among {} clients", w.clients),
        WorkloadKind::Open => format!("open, {} requests/s", w.rate.0),
        WorkloadKind::Closed => format!("closed, {} workers, {} intents", w.workers, w.intents),
        WorkloadKind::Trace => format!(
            "trace {}, {} arrivals at {}x speed",
            w.trace.as_deref().unwrap_or("?"),
            w.replay.arrivals.len(),
            w.speed
        ),
        WorkloadKind::Periodic => format!(
            "periodic, {} clients every {}{}, first calls {}{}",
            w.clients,
            w.period.unwrap_or_default(),
            match w.jitter.unwrap_or(PeriodicJitter::None) {
                PeriodicJitter::None => String::new(),
                PeriodicJitter::Factor(f) => format!(" plus up to {} of it", trim(f)),
                PeriodicJitter::Spread(s) => format!(" plus up to {s}"),
            },
            match w.phase.unwrap_or_default() {
                Phase::Aligned => "all at once",
                Phase::Spread => "spread over one period",
            },
            match w.restarts.len() {
                0 => String::new(),
                n => format!(", {n} restart{}", if n == 1 { "" } else { "s" }),
            }
        ),
    }
}

/// A periodic workload whose calls stay in step: with no jitter, clients that start together
/// (`phase = "aligned"`, at the start and at each restart) call together every period.
fn periodic_herd(m: &Model, out: &mut Lines) {
    let w = &m.workload;
    let unjittered = match w.jitter.unwrap_or(PeriodicJitter::None) {
        PeriodicJitter::None => true,
        PeriodicJitter::Factor(f) => f == 0.0,
        PeriodicJitter::Spread(s) => s.0 == 0,
    };
    let aligned = w.phase.unwrap_or_default() == Phase::Aligned;
    if w.kind == WorkloadKind::Periodic && unjittered && aligned && w.clients > 1 {
        out.warnings.push(format!(
            "workload: {} periodic clients with no jitter start together, so all of them call in the same instant every {}: a herd that recurs (workload.jitter = {{ factor = 0.1 }} spreads each wave over a tenth of the period)",
            w.clients,
            w.period.unwrap_or_default()
        ));
    }
}

/// One tier of the path (hop `i`) with its service figures: mean service time, workers and
/// the capacity they give (none when either is unlimited).
struct Tier<'h> {
    i: usize,
    h: &'h Hop<'h>,
    mean_ms: f64,
    workers: Option<u64>,
    capacity: Option<f64>,
}

impl<'h> Tier<'h> {
    fn of(i: usize, h: &'h Hop<'h>) -> Tier<'h> {
        let mean_ms = h.server.service.mean_ns() / 1e6;
        // Workers over every replica: capacity is per replica.
        let workers = h
            .server
            .capacity
            .0
            .map(|c| c * u64::from(h.server.replicas));
        let capacity = workers
            .filter(|_| mean_ms > 0.0)
            .map(|n| n as f64 * 1000.0 / mean_ms);
        Tier {
            i,
            h,
            mean_ms,
            workers,
            capacity,
        }
    }

    /// The tier's line (workers, service, capacity, its callers' attempts), the retry mode
    /// and every policy that decides its result.
    fn facts(&self, m: &Model, out: &mut Lines) {
        let (i, h, mean_ms) = (self.i, self.h, self.mean_ms);
        // A rate limit answers 429 beyond its rate: the most the tier serves, whatever its workers.
        let limit = h.server.rate_limit.rate.0;
        let serves = match (self.capacity, limit > 0.0) {
            (Some(c), true) if limit < c => format!("{} requests/s (its rate limit)", trim(limit)),
            (None, true) => format!("{} requests/s (its rate limit)", trim(limit)),
            (Some(c), _) => format!("{} requests/s", trim(c)),
            (None, false) => "unlimited".into(),
        };
        out.facts.push(format!(
            "tier {i} {}: {} workers, mean service {} ms, capacity {}; its callers make up to {} {}{}{}",
            h.name,
            self.workers.map_or("unlimited".into(), |n| n.to_string()),
            trim(mean_ms),
            serves,
            h.retry.max_attempts,
            if h.retry.max_attempts == 1 { "attempt" } else { "attempts" },
            h.retry.timeout.map_or(String::new(), |t| format!(", timeout {t}")),
            // A learned hedging delay is said here (a fixed one, as before, is not).
            h.hedge
                .delay
                .filter(|d| d.learned().is_some())
                .map_or(String::new(), |d| format!(", hedging delay {d}")),
        ));
        if let Some(mode) = &h.retry.mode {
            out.facts
                .push(format!("tier {i} {}: {}", h.name, mode_set(mode)));
        }
        // What decides the result: the callers' policies and the tier's own rate limit.
        let limiter = (i == 0)
            .then(|| policy_lines::limiter(&m.limiter))
            .flatten();
        let policies = [
            Some(format!("callers' {}", policy_lines::retry(h.retry))),
            policy_lines::budget(h.budget).map(|b| format!("callers' {b}")),
            policy_lines::breaker(h.breaker).map(|b| format!("callers' {b}")),
            policy_lines::breaker_placement(h.breaker).map(|b| format!("callers' {b}")),
            limiter.map(|l| format!("callers' {l}")),
            policy_lines::rate_limit(&h.server.rate_limit),
            policy_lines::queue(h.server),
            policy_lines::replicas(h.server, h.retry),
            policy_lines::autoscale(h.server),
            policy_lines::fanout(h.server),
        ];
        for p in policies.into_iter().flatten() {
            out.facts.push(format!("tier {i} {}: {p}", h.name));
        }
    }

    /// An open workload above the tier's capacity, always or during one of its capacity drops.
    fn overload(&self, m: &Model, out: &mut Lines) {
        let (i, h, mean_ms, w) = (self.i, self.h, self.mean_ms, &m.workload);
        // Every request of an open workload reaches every tier at least once.
        if w.kind == WorkloadKind::Open
            && let Some(c) = self.capacity
            && w.rate.0 > c
        {
            out.warnings.push(format!(
                "tier {i} {}: the open workload sends at least {} requests/s against a capacity of {} requests/s ({} workers / {} ms): overloaded before any failure or retry",
                h.name,
                trim(w.rate.0),
                trim(c),
                self.workers.unwrap_or(0),
                trim(mean_ms)
            ));
        }
        if w.kind != WorkloadKind::Open || mean_ms <= 0.0 {
            return;
        }
        for (k, d) in h.server.capacity_drops.iter().enumerate() {
            let Some(offered) = offered_during(m, d.from, d.to) else {
                continue;
            };
            // A drop on one replica leaves the others whole.
            let replicas = u64::from(h.server.replicas);
            let workers = match (d.replica, h.server.capacity.0) {
                (Some(_), Some(per)) => per * (replicas - 1) + d.capacity,
                _ => d.capacity * replicas,
            };
            let c = workers as f64 * 1000.0 / mean_ms;
            if offered > c {
                out.warnings.push(format!(
                    "tier {i} {}: capacity_drops[{k}] leaves {} workers from {} s to {} s, a capacity of {} requests/s against the open workload's {} requests/s: overloaded during the drop (the queue grows, timeouts and retries follow)",
                    h.name,
                    workers,
                    trim(d.from.as_millis_f64() / 1000.0),
                    trim(d.to.as_millis_f64() / 1000.0),
                    trim(c),
                    trim(offered),
                ));
            }
        }
    }

    /// The connection cost as a fact: what a connect costs, what drops a connection, and the
    /// capacity left when every attempt reconnects (`capacity / (service + connect)`).
    fn connections(&self, out: &mut Lines) {
        let (i, h) = (self.i, self.h);
        let Some(c) = &h.server.connections else {
            return;
        };
        let connect_ms = c.connect.mean_ns() / 1e6;
        let drops: Vec<&str> = c
            .drop_on
            .iter()
            .map(|d| match d {
                DropOn::Timeout => "a timeout",
                DropOn::ServerError => "a 5xx",
                DropOn::Answer => "every answer",
            })
            .collect();
        let reconnecting = self
            .workers
            .map(|n| n as f64 * 1000.0 / (self.mean_ms + connect_ms));
        out.facts.push(format!(
            "tier {i} {}: connections: a connect is {} ms of server work; dropped on {}{}; with every attempt reconnecting, capacity {}",
            h.name,
            trim(connect_ms),
            if drops.is_empty() {
                "a broken connection only".to_string()
            } else {
                format!("a broken connection, {}", drops.join(", "))
            },
            if c.reconnect_backoff.is_some() {
                "; reconnects back off (gRPC's connection backoff)"
            } else {
                ""
            },
            reconnecting.map_or("unlimited".into(), |c| format!("{} requests/s", trim(c))),
        ));
    }

    /// Each slow window as a fact, and a warning when it overloads the tier or pushes the
    /// service time past the callers' timeout.
    fn slow_windows(&self, m: &Model, out: &mut Lines) {
        let (i, h, mean_ms, w) = (self.i, self.h, self.mean_ms, &m.workload);
        for (k, sw) in h.server.slow_windows.iter().enumerate() {
            let (a, b) = (
                trim(sw.from.as_millis_f64() / 1000.0),
                trim(sw.to.as_millis_f64() / 1000.0),
            );
            let slow_ms = mean_ms * sw.factor;
            let slow_capacity = self
                .workers
                .filter(|_| slow_ms > 0.0)
                .map(|n| n as f64 * 1000.0 / slow_ms);
            out.facts.push(format!(
                "tier {i} {}: slow_windows[{k}] from {a} s to {b} s: work started in it is served {} times slower (mean {} ms, capacity {})",
                h.name,
                trim(sw.factor),
                trim(slow_ms),
                slow_capacity.map_or("unlimited".into(), |c| format!("{} requests/s", trim(c))),
            ));
            if w.kind == WorkloadKind::Open
                && let Some(c) = slow_capacity
                && let Some(offered) = offered_during(m, sw.from, sw.to)
                && offered > c
            {
                out.warnings.push(format!(
                    "tier {i} {}: slow_windows[{k}] serves {} times slower from {a} s to {b} s, a capacity of {} requests/s against the open workload's {} requests/s: overloaded during the window (the queue grows, timeouts and retries follow)",
                    h.name,
                    trim(sw.factor),
                    trim(c),
                    trim(offered),
                ));
            }
            // A learned timeout follows the slow window; a fixed one does not.
            if let Some(t) = h.retry.timeout.and_then(Adaptive::fixed)
                && t.as_millis_f64() >= mean_ms
                && t.as_millis_f64() < slow_ms
            {
                out.warnings.push(format!(
                    "tier {i} {}: in slow_windows[{k}] ({a} s to {b} s) the mean service time is {} ms, longer than the per-attempt timeout {t}: most attempts served in it time out",
                    h.name,
                    trim(slow_ms),
                ));
            }
        }
    }

    /// Each failure window as a fact: what fails in it, instead of `fail`, and where.
    fn failure_windows(&self, out: &mut Lines) {
        let (i, h) = (self.i, self.h);
        for (k, fw) in h.server.failure_windows.iter().enumerate() {
            let outside = match h.server.fail {
                FailMode::Never => "none".to_string(),
                FailMode::Always => "all".to_string(),
                FailMode::Probability(p) => trim(p),
            };
            let on = fw
                .replica
                .map_or("every replica".to_string(), |r| format!("replica {r}"));
            out.facts.push(format!(
                "tier {i} {}: failure_windows[{k}] from {} s to {} s: served requests fail with probability {} on {on} (outside it, fail: {outside})",
                h.name,
                trim(fw.from.as_millis_f64() / 1000.0),
                trim(fw.to.as_millis_f64() / 1000.0),
                trim(fw.probability),
            ));
        }
    }

    /// A per-attempt timeout below the mean service time, and a per-client breaker of the
    /// first tier that one burst client's calls can never open.
    fn timeout_and_breaker(&self, m: &Model, out: &mut Lines) {
        let (i, h, mean_ms) = (self.i, self.h, self.mean_ms);
        if let Some(t) = h.retry.timeout.and_then(Adaptive::fixed)
            && mean_ms > 0.0
            && t.as_millis_f64() < mean_ms
        {
            out.warnings.push(format!(
                "tier {i} {}: the per-attempt timeout {t} is shorter than the mean service time {} ms: most attempts time out",
                h.name,
                trim(mean_ms)
            ));
        }
        if let Some(w) = policy_lines::ejection_warning(h.server) {
            out.warnings.push(format!("tier {i} {}: {w}", h.name));
        }
        // Around the retries the breaker counts each intent once, whatever its attempts.
        let around = h.breaker.placement == Placement::AroundRetries;
        let calls_per_client = if around {
            1
        } else {
            u64::from(m.retry.max_attempts)
        };
        if i == 0
            && h.breaker.enabled
            && matches!(
                m.workload.kind,
                WorkloadKind::Burst | WorkloadKind::Contention
            )
            && h.breaker.scope == Scope::Client
            && u64::from(needed(h.breaker)) > calls_per_client
        {
            let calls = if around {
                "one call (placement = \"around-retries\" counts calls, not attempts)".to_string()
            } else {
                format!("at most {calls_per_client} calls (retry.max_attempts)")
            };
            out.warnings.push(format!(
                "breaker: minimum_calls = {} but one client makes {calls}: a breaker per client can never open",
                needed(h.breaker)
            ));
        }
    }
}

/// What `retry.mode = "NAME"` filled in, key by key (a key written beside it wins, so the
/// resolved policy may differ where the model says so).
fn mode_set(mode: &str) -> String {
    let Some(preset) = retrystorm_core::preset::preset(mode) else {
        return format!("retry.mode {mode:?}");
    };
    let keys: Vec<String> = preset
        .iter()
        .flat_map(|(section, t)| {
            t.as_table()
                .into_iter()
                .flatten()
                .map(move |(k, v)| format!("{section}.{k} = {v}"))
        })
        .collect();
    format!(
        "retry.mode {mode:?} set {} (keys written beside it win)",
        keys.join(", ")
    )
}

/// The highest rate the open workload offers in `[from, to)`, or `None` when no arrival can
/// fall in the window (it starts at or after the horizon, or after the expected arrival of the
/// workload's last intent). The rate is piecewise linear, so its maximum on the window is at the
/// window's ends or at a schedule point inside it.
fn offered_during(m: &Model, from: Duration, to: Duration) -> Option<f64> {
    let w = &m.workload;
    let (from, to) = (Time::ZERO + from, Time::ZERO + to.min(m.horizon));
    if from >= to || (w.intents > 0 && expected_arrivals(m, from) >= w.intents as f64) {
        return None;
    }
    let last = Time(to.0 - 1);
    let inside = w
        .schedule
        .iter()
        .map(|p| Time::ZERO + p.at)
        .filter(|&at| from < at && at < to);
    Some(
        [from, last]
            .into_iter()
            .chain(inside)
            .map(|t| w.rate_at(t))
            .fold(0.0, f64::max),
    )
}

/// The open workload's expected arrivals in `[0, t)`: the integral of its piecewise linear rate
/// (exact for the trapezoids between schedule points; a step is taken at its point).
fn expected_arrivals(m: &Model, t: Time) -> f64 {
    let w = &m.workload;
    let mut cuts: Vec<Time> = std::iter::once(Time::ZERO)
        .chain(w.schedule.iter().map(|p| Time::ZERO + p.at))
        .filter(|&a| a < t)
        .collect();
    cuts.push(t);
    cuts.windows(2)
        .filter(|s| s[1] > s[0])
        .map(|s| {
            let secs = (s[1].0 - s[0].0) as f64 / 1e9;
            (w.rate_at(s[0]) + w.rate_at(Time(s[1].0 - 1))) / 2.0 * secs
        })
        .sum()
}

/// Events simulated per second, roughly, on the machines we measure (docs/performance.md,
/// "Today's numbers": 5 to 12 M/s on the event loop): enough to say "minutes", not to promise
/// a time.
const EVENTS_PER_S: f64 = 5e6;

/// Runs that simulate at least this many events (about 10 s and more) get a note first.
const LARGE_RUN: f64 = 5e7;

/// The intents a run starts, expected: the planned ones, or an open workload's rate integrated
/// over the horizon (up to `workload.intents`).
fn expected_intents(m: &Model) -> f64 {
    let w = &m.workload;
    if w.kind == WorkloadKind::Periodic {
        // Each client's first call, then one per mean wait until the horizon.
        let span = m.horizon.0.saturating_sub(w.start.0) as f64;
        let mean_wait = w.periodic_wait(0.5).0.max(1) as f64;
        return w.clients as f64 * (1.0 + (span / mean_wait).floor());
    }
    match m.planned_intents() {
        Some(n) if m.workload.kind != WorkloadKind::Open => n as f64,
        cap => {
            let n = expected_arrivals(m, Time::ZERO + m.horizon);
            cap.map_or(n, |c| n.min(c as f64))
        }
    }
}

/// `explain`'s size line, and the note printed before a run whose size means a long wait: at
/// least one event per intent (its first attempt), up to every attempt of every tier's callers
/// at about four events each.
pub fn size(m: &Model) -> (String, Option<String>) {
    use retrystorm_report::fmt::{duration, int};
    let intents = expected_intents(m);
    let attempts: f64 = hops(m)
        .iter()
        .map(|h| f64::from(h.retry.max_attempts.max(1)))
        .product();
    let cap = m.max_events as f64;
    let least = intents.min(cap);
    let most = (intents * attempts * 4.0).min(cap);
    let fact = format!(
        "size: about {} intents, {} to {} events (max_events {})",
        int(intents.round() as u64),
        int(least.round() as u64),
        int(most.round() as u64),
        int(m.max_events)
    );
    let note = (least >= LARGE_RUN).then(|| {
        format!(
            "{}: about {} intents, so at least {} events (up to {} with every attempt); at about {} M events/s that is {} or more; --max-events N caps a run, Ctrl-C stops it and prints what was simulated so far",
            m.name,
            int(intents.round() as u64),
            int(least.round() as u64),
            int(most.round() as u64),
            EVENTS_PER_S / 1e6,
            duration(least / EVENTS_PER_S * 1000.0)
        )
    });
    (fact, note)
}

/// Prints the warnings of `explain` on stderr before a run (not with `--quiet`): those every
/// model shares once, the others once per model that has them, named; and a note for each model
/// large enough to run for a long time.
pub fn warn_models(models: &[&Model]) {
    if crate::progress::quiet() || models.is_empty() {
        return;
    }
    for m in models {
        if let (_, Some(note)) = size(m) {
            eprintln!("note: {note}");
        }
    }
    let per: Vec<Vec<String>> = models.iter().map(|m| explain_model(m).1).collect();
    let common: Vec<&String> = per[0]
        .iter()
        .filter(|w| per.iter().all(|p| p.contains(w)))
        .collect();
    let mut text = String::new();
    for w in &common {
        text.push_str(&format!("warning: {w}\n"));
    }
    for (m, ws) in models.iter().zip(&per) {
        for w in ws.iter().filter(|w| !common.contains(w)) {
            text.push_str(&format!("warning: {}: {w}\n", m.name));
        }
    }
    eprint!("{text}");
}

/// The calls a breaker must see before it may open.
fn needed(b: &BreakerConfig) -> u32 {
    match b.window_type {
        WindowType::CountBased => b.minimum_calls.min(b.window_size),
        WindowType::TimeBased => b.minimum_calls,
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
