//! What a caller's retry policy makes of one call: how many attempts it sends when every attempt
//! fails (`max_attempts`, the deadline, the retried classes, hedging), how long those take, and
//! the rate limits that sit on top in the all-fail state (a breaker's open share, a client-side
//! limiter's floor).

use crate::base::prose::short;
use crate::policy::Class;
use crate::policy::Scope;
use crate::policy::backoff::{Backoff, BackoffKind};
use crate::policy::breaker::{BreakerConfig, Forced, Placement, WindowType};
use crate::policy::limiter::{LimiterConfig, LimiterKind};
use crate::sim::path::spec::Hop;

/// The attempts a call makes when each fails after `fail_s` seconds, and the time they take.
#[derive(Clone, Debug)]
pub(super) struct Orbit {
    /// Attempts per call, the first included.
    pub attempts: f64,
    /// Seconds from the first attempt to the last one's failure.
    pub span: f64,
    /// Why it is not `max_attempts` (a deadline, an unretried class), if it is not.
    pub cut: Option<String>,
}

/// The mean delay before retry `n` (0-based): the window and the mean of its jitter.
pub(super) fn mean_delay(b: &Backoff, n: u32) -> f64 {
    if b.kind == BackoffKind::Immediate {
        return 0.0;
    }
    let w = b.window(n).0 as f64 / 1e9;
    if b.kind == BackoffKind::Envoy {
        return w / 2.0;
    }
    if b.kind == BackoffKind::Grpc && n == 0 {
        return b.base.min(b.cap).0 as f64 / 1e9;
    }
    b.jitter.mean(b, n, w)
}

/// The range the delay before retry `n` (0-based) falls in, `(low, high)` seconds: the window
/// and its jitter's bounds (decorrelated jitter: from `base` to three times its mean before).
pub(super) fn delay_range(b: &Backoff, n: u32) -> (f64, f64) {
    let mean = mean_delay(b, n);
    if b.kind == BackoffKind::Immediate || (b.kind == BackoffKind::Grpc && n == 0) {
        return (mean, mean);
    }
    let w = b.window(n).0 as f64 / 1e9;
    if b.kind == BackoffKind::Envoy {
        return (0.0, w);
    }
    b.jitter.range(b, w, mean)
}

/// The attempts of one call that fails every attempt after `fail_s` seconds, within `limit`
/// seconds (the call's deadline or its caller's timeout when the caller cancels); `class` is
/// what the failure is seen as.
pub(super) fn orbit(hop: &Hop, class: Class, fail_s: f64, limit: Option<f64>) -> Orbit {
    let r = &hop.retry;
    if hop.hedge.enabled() {
        // Hedged copies go out every `delay` while none has answered: all of them.
        let delay = hop.hedge.delay.map_or(0.0, |d| d.ceiling().0 as f64 / 1e9);
        return Orbit {
            attempts: f64::from(r.max_attempts),
            span: delay * f64::from(r.max_attempts - 1) + fail_s,
            cut: None,
        };
    }
    if !r.retry_on.contains(&class) {
        return Orbit {
            attempts: 1.0,
            span: fail_s,
            cut: Some(format!(
                "retry_on does not list {:?}: one attempt a call",
                serde_json::to_value(class)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            )),
        };
    }
    let backoff = r.backoff();
    let mut start = 0.0;
    let mut attempts = 1;
    let mut cut = None;
    while attempts < r.max_attempts {
        let next = start + fail_s + mean_delay(&backoff, attempts - 1);
        if let Some(l) = limit
            && next >= l
        {
            cut = Some(format!(
                "{attempts} of max_attempts = {} start within {} s",
                r.max_attempts,
                short(l)
            ));
            break;
        }
        start = next;
        attempts += 1;
    }
    Orbit {
        attempts: f64::from(attempts),
        span: start + fail_s,
        cut,
    }
}

/// The attempts per second a breaker lets through when every attempt fails, out of `attempts`
/// per second of which `calls` are first tries: after it opens, `permitted_in_half_open` calls
/// per `wait_in_open` plus the time they take to fail, per breaker. None = it changes nothing.
pub(super) fn breaker_pass(
    b: &BreakerConfig,
    calls: f64,
    attempts: f64,
    fail_s: f64,
    processes: f64,
) -> Option<(f64, String)> {
    match b.forced {
        Some(Forced::Open) => return Some((0.0, "breaker forced open: nothing passes".into())),
        Some(Forced::Disabled) => return None,
        None if !b.enabled => return None,
        None => {}
    }
    let instances = match b.scope {
        Scope::Client => processes.max(1.0),
        Scope::Shared => 1.0,
    };
    let counted = if b.placement == Placement::AroundRetries {
        calls
    } else {
        attempts
    };
    // A time-based window must see minimum_calls within window_size seconds to open.
    if b.window_type == WindowType::TimeBased
        && counted / instances * f64::from(b.window_size) < f64::from(b.minimum_calls)
    {
        return Some((
            attempts,
            format!(
                "breaker never opens: fewer than minimum_calls = {} a window per breaker",
                b.minimum_calls
            ),
        ));
    }
    let wait = b.wait_in_open.0 as f64 / 1e9;
    let cycle = wait + fail_s;
    let per_call = attempts / calls.max(1e-12);
    let through = instances * f64::from(b.permitted_in_half_open) / cycle.max(1e-9);
    let through = if b.placement == Placement::AroundRetries {
        through * per_call
    } else {
        through
    };
    let pass = if b.retries_only {
        calls + through.min(attempts - calls)
    } else {
        through
    };
    Some((
        pass.min(attempts),
        format!(
            "breaker open most of the time: {} calls per {} s open and {} s half-open, {} breaker{}",
            b.permitted_in_half_open,
            short(wait),
            short(fail_s),
            instances,
            if instances == 1.0 { "" } else { "s" }
        ),
    ))
}

/// The attempts per second a client-side limiter lets out when every attempt times out after
/// `fail_s`: a concurrency limit falls to its floor, so `min_limit` in flight per limiter.
/// The AWS adaptive rate reacts to throttling only, so not to timeouts.
pub(super) fn limiter_pass(
    l: &LimiterConfig,
    fail_s: f64,
    processes: f64,
) -> Option<(f64, String)> {
    let floor = match l.kind {
        LimiterKind::None | LimiterKind::AwsAdaptive => return None,
        LimiterKind::Aimd | LimiterKind::Gradient2 => l.min_limit.max(1),
        LimiterKind::Vegas => 1,
    };
    let instances = match l.scope {
        Scope::Client => processes.max(1.0),
        Scope::Shared => 1.0,
    };
    Some((
        instances * f64::from(floor) / fail_s.max(1e-9),
        format!(
            "limiter falls to {floor} in flight per limiter, each attempt {} s",
            short(fail_s)
        ),
    ))
}

/// Attempts per call when each fails with probability `q` independently, up to `max`.
pub(super) fn healthy_per_call(q: f64, max: f64) -> f64 {
    let n = max.round() as i32;
    if q >= 1.0 {
        return max;
    }
    (1.0 - q.powi(n)) / (1.0 - q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Duration;
    use crate::policy::backoff::Jitter;

    fn backoff(jitter: Jitter) -> Backoff {
        crate::model::Retry {
            backoff_spec: crate::model::BackoffSpec {
                jitter,
                base: Duration::from_millis(100),
                ..Default::default()
            },
            ..Default::default()
        }
        .backoff()
    }

    #[test]
    fn full_jitter_waits_half_the_window() {
        assert!((mean_delay(&backoff(Jitter::Full), 0) - 0.05).abs() < 1e-12);
        assert!((mean_delay(&backoff(Jitter::Full), 2) - 0.2).abs() < 1e-12);
        assert!((mean_delay(&backoff(Jitter::None), 1) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn geometric_attempts() {
        assert_eq!(healthy_per_call(0.0, 4.0), 1.0);
        assert!((healthy_per_call(0.5, 3.0) - 1.75).abs() < 1e-12);
    }
}
