//! `[server]` and a tier's `server`.

use super::replicas::same_replica;
use super::*;

/// `[server]` or a tier's `server`, under `p`.
pub(super) fn validate_server(p: &str, s: &Server) -> Result<(), Invalid> {
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
    if let Some(f) = &s.fanout {
        f.validate(&at("fanout"))?;
    }
    if let Some(c) = &s.connections {
        c.validate(&at("connections"))?;
    }
    validate_window_counts(p, s)?;
    validate_outages(p, s)?;
    if s.concurrency_limit.0 == Some(0) {
        return Err(invalid(
            &at("concurrency_limit"),
            "must be at least 1 (or \"unlimited\")",
        ));
    }
    non_negative(&at("slowdown"), s.slowdown)?;
    probability(&at("client_error"), s.client_error)?;
    s.shedding.validate(&at("shedding"))?;
    validate_capacity_drops(p, s)?;
    validate_slow_windows(p, s)?;
    super::replicas::validate_replicas(p, s)?;
    if p == "server" {
        s.rate_limit.validate()?;
    }
    if s.fail == FailMode::Always {
        validate_inert_when_always(p, s)?;
    }
    Ok(())
}

/// Each list of time windows holds at most [`MAX_WINDOWS`]: every pair is checked for overlap,
/// so loading time grows with the square of the count.
fn validate_window_counts(p: &str, s: &Server) -> Result<(), Invalid> {
    for (key, n) in [
        ("outages", s.outages.len()),
        ("capacity_drops", s.capacity_drops.len()),
        ("slow_windows", s.slow_windows.len()),
    ] {
        if n > MAX_WINDOWS {
            return Err(invalid(
                &format!("{p}.{key}"),
                format!(
                    "{n} windows; at most {MAX_WINDOWS} per list (each pair is checked for overlap): merge adjacent windows"
                ),
            ));
        }
    }
    Ok(())
}

/// `outages`: each ends after it starts, and overlapping ones answer alike.
fn validate_outages(p: &str, s: &Server) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.{f}");
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
        if let Some(later) = s.outages[i + 1..].iter().position(|e| {
            e.from < o.to
                && o.from < e.to
                && e.answer != o.answer
                && same_replica(e.replica, o.replica)
        }) {
            return Err(invalid(
                &at(&format!("outages[{}]", i + 1 + later)),
                "a hanging outage must not overlap a 503 outage (which answer would win?)",
            ));
        }
    }
    Ok(())
}

/// `capacity_drops`: each ends after it starts and none overlap. A drop to 0 workers is a
/// stop-the-world pause: nothing starts, the queue waits.
fn validate_capacity_drops(p: &str, s: &Server) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.{f}");
    for (i, d) in s.capacity_drops.iter().enumerate() {
        if d.to <= d.from {
            return Err(invalid(
                &at(&format!("capacity_drops[{i}].to")),
                format!("must be after `from` ({})", d.from),
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
            .position(|e| e.from < d.to && d.from < e.to && same_replica(e.replica, d.replica))
        {
            return Err(invalid(
                &at(&format!("capacity_drops[{}]", i + 1 + later)),
                "capacity drops must not overlap",
            ));
        }
    }
    Ok(())
}

/// `slow_windows`: each ends after it starts, slows by a factor >= 1, and none overlap.
fn validate_slow_windows(p: &str, s: &Server) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.{f}");
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
            .position(|e| e.from < w.to && w.from < e.to && same_replica(e.replica, w.replica))
        {
            return Err(invalid(
                &at(&format!("slow_windows[{}]", i + 1 + later)),
                format!(
                    "slow windows must not overlap (it overlaps {p}.slow_windows[{i}]: which factor would win?)"
                ),
            ));
        }
    }
    Ok(())
}

/// With `fail = "always"` every request is answered 503 before a worker sees it: the keys
/// that shape the work would be ignored.
fn validate_inert_when_always(p: &str, s: &Server) -> Result<(), Invalid> {
    let at = |f: &str| format!("{p}.{f}");
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
        ("fanout", s.fanout.is_some()),
        ("connections", s.connections.is_some()),
    ];
    if let Some((field, _)) = inert.iter().find(|(_, set)| *set) {
        return Err(invalid(
            &at(field),
            format!(
                "has no effect: {p}.fail = \"always\" answers every request with 503 before a worker sees it (set {p}.fail to a probability or \"never\")"
            ),
        ));
    }
    Ok(())
}
