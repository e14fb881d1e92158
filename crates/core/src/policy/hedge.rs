//! Hedging: gRPC's `hedgingPolicy` (gRFC A6 "gRPC Retry Design", section "Hedging Policy").
//!
//! The first attempt goes out at once; while no answer has committed the call, another copy goes
//! out every `hedgingDelay`, up to `maxAttempts` copies in all (here `retry.max_attempts`). The
//! first success (or the first failure whose class is not in `nonFatalStatusCodes`, here
//! `retry.retry_on`) commits the call and cancels the other copies client-side: the server may
//! still be running them, and that work is wasted. A non-fatal failure sends the next copy at
//! once instead of waiting for the delay. Hedges are subject to retry throttling (gRPC's token
//! budget stops hedges as it stops retries) and to the total deadline (`retry.deadline`). When every
//! copy has failed the call fails. gRPC treats `maxAttempts` above 5 as 5 by default; this model
//! allows up to 64 copies.
//!
//! Server pushback (gRFC A6, "Pushback", `grpc/proposal` A6-client-retries.md): a Retry-After the
//! client honours holds the next copy until it has passed, and later copies resume `hedgingDelay`
//! after it; "don't retry" (here "overloaded") sends no more copies while those out may still
//! answer. The hold lives in the call's loop state (`path::call`).

use crate::base::invalid::Invalid;
use crate::policy::adaptive::Adaptive;
use serde::{Deserialize, Serialize};

/// The most copies a hedged call may send (the width of [`Pending`]).
pub const MAX_HEDGED_ATTEMPTS: u32 = 64;

/// The `[hedge]` section: when `delay` is set the client hedges instead of retrying.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HedgeConfig {
    /// gRPC's `hedgingDelay`: time between copies, fixed or learned from recent latencies
    /// ([`Adaptive`]). Absent = no hedging.
    pub delay: Option<Adaptive>,
}

impl HedgeConfig {
    pub fn enabled(&self) -> bool {
        self.delay.is_some()
    }
    pub fn validate(&self, max_attempts: u32) -> Result<(), Invalid> {
        if let Some(d) = self.delay {
            d.validate(
                "hedge.delay",
                "must be a positive duration, e.g. \"50ms\" (omit [hedge] to retry instead of hedging)",
            )?;
        }
        if self.enabled() && max_attempts > MAX_HEDGED_ATTEMPTS {
            return Err(Invalid {
                path: "retry.max_attempts".into(),
                message: format!(
                    "with hedging at most {MAX_HEDGED_ATTEMPTS} copies (gRPC's default limit is 5), got {max_attempts}"
                ),
            });
        }
        Ok(())
    }
}

/// The copies of one call still awaiting an answer, as a bit mask over attempt numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending(pub u64);

impl Pending {
    #[inline]
    pub fn insert(&mut self, attempt: u16) {
        if u32::from(attempt) < MAX_HEDGED_ATTEMPTS {
            self.0 |= 1 << attempt;
        }
    }
    #[inline]
    pub fn remove(&mut self, attempt: u16) -> bool {
        let had = self.contains(attempt);
        if had {
            self.0 &= !(1 << attempt);
        }
        had
    }
    #[inline]
    pub fn contains(self, attempt: u16) -> bool {
        u32::from(attempt) < MAX_HEDGED_ATTEMPTS && self.0 & (1 << attempt) != 0
    }
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    #[inline]
    pub fn clear(&mut self) {
        self.0 = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Duration;

    #[test]
    fn pending_mask() {
        let mut p = Pending::default();
        p.insert(0);
        p.insert(3);
        assert!(p.contains(0) && p.contains(3) && !p.contains(1));
        assert!(p.remove(0));
        assert!(!p.remove(0));
        assert!(!p.is_empty());
        p.clear();
        assert!(p.is_empty());
        p.insert(200);
        assert!(p.is_empty() && !p.contains(200));
    }

    #[test]
    fn too_many_copies_refused() {
        let h = HedgeConfig {
            delay: Some(Adaptive::Fixed(Duration::from_millis(10))),
        };
        assert!(h.validate(5).is_ok());
        assert_eq!(h.validate(65).unwrap_err().path, "retry.max_attempts");
        assert!(HedgeConfig::default().validate(1000).is_ok());
    }
}
