//! `[retry]` (the top level's and a tier's) and the backoff keys `[[layer]]` shares with it.

use super::*;

/// The backoff fields shared by `[retry]`, `[[layer]]` and `[tier.retry]`, under `prefix`.
pub(super) fn validate_backoff(prefix: &str, b: &Backoff) -> Result<(), Invalid> {
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
pub(super) fn validate_sizing(prefix: &str, z: &BackoffSpec) -> Result<(), Invalid> {
    // The sizes written (unset ones are not serialized).
    let written = serde_json::to_value(z).unwrap_or_default();
    for &kind in Jitter::ALL {
        let Some(amount) = kind.amount() else {
            continue;
        };
        let (key, set) = (amount.key, written.get(amount.key).is_some());
        if set && z.jitter != kind {
            return Err(invalid(
                &format!("{prefix}.{key}"),
                format!(
                    "has no effect: it sizes jitter = \"{}\" and this policy's jitter is \"{}\" (set it beside the jitter that uses it, in the same variant)",
                    kind.name(),
                    z.jitter.name()
                ),
            ));
        }
        if !set && z.jitter == kind {
            return Err(invalid(
                &format!("{prefix}.jitter"),
                format!(
                    "jitter = \"{}\" needs {prefix}.{key}: {}",
                    kind.name(),
                    amount.takes
                ),
            ));
        }
    }
    if z.cap_applies.is_some() && z.jitter.amount().is_none() {
        return Err(invalid(
            &format!("{prefix}.cap_applies"),
            format!(
                "has no effect: only jitter = {} can pass the cap, and this policy's jitter is \"{}\"",
                sized_jitters(),
                z.jitter.name()
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
    match z.jitter_factor {
        Some(f) => non_negative(&format!("{prefix}.jitter_factor"), f),
        None => Ok(()),
    }
}

/// The jitters with a size, as the messages list them: `"proportional", "additive" or "absolute"`.
fn sized_jitters() -> String {
    let names: Vec<String> = Jitter::ALL
        .iter()
        .filter(|j| j.amount().is_some())
        .map(|j| format!("\"{}\"", j.name()))
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// `[retry]` or a tier's `retry`, under `p`.
pub(super) fn validate_retry(p: &str, r: &Retry) -> Result<(), Invalid> {
    validate_attempts(&format!("{p}.max_attempts"), r.max_attempts)?;
    if let Some(t) = r.timeout {
        t.validate(
            &format!("{p}.timeout"),
            "must be a positive duration (omit it to wait forever)",
        )?;
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
