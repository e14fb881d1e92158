//! A token bucket: the rate limiter behind a server's 429 Too Many Requests (RFC 6585 §4).
//!
//! The bucket holds at most `burst` tokens and refills continuously at `rate` tokens per second;
//! a request takes one token or is refused, and the refusal says when the next token will be
//! there (the `Retry-After` a server derives from its limiter). Tokens are kept as `f64`; every
//! run does the same operations in the same order, so results stay bit-for-bit deterministic.

use super::Scope;
use crate::base::invalid::Invalid;
use crate::base::time::Rate;
use crate::base::time::{Duration, Time};
use serde::{Deserialize, Serialize};

/// What `Retry-After` a server sends with a 429 or a 503.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// No header.
    None,
    /// Always this delay.
    Fixed(Duration),
    /// Computed from the server's state (time to the next token, or to drain the queue), rounded
    /// up to whole seconds as HTTP's `Retry-After: <delay-seconds>` requires (RFC 9110 §10.2.3).
    Derived,
}

impl Serialize for RetryAfter {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RetryAfter::None => s.serialize_str("none"),
            RetryAfter::Derived => s.serialize_str("derived"),
            RetryAfter::Fixed(d) => s.serialize_str(&d.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for RetryAfter {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "none" => Ok(RetryAfter::None),
            "derived" => Ok(RetryAfter::Derived),
            _ => Duration::parse(&s).map(RetryAfter::Fixed).map_err(|e| {
                serde::de::Error::custom(format!(
                    "expected \"none\", \"derived\" or a duration like \"2s\": {e}"
                ))
            }),
        }
    }
}

/// Rounds a derived delay up to whole seconds (HTTP's delay-seconds).
pub fn whole_seconds(d: Duration) -> Duration {
    let s = 1_000_000_000;
    Duration(d.0.div_ceil(s).saturating_mul(s))
}

/// The `[server.rate_limit]` section.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RateLimitConfig {
    /// Refill rate; zero disables the limiter.
    pub rate: Rate,
    /// Bucket size: the burst a client (or everybody) may send at once.
    pub burst: u64,
    /// One bucket for the whole server, or one per client process.
    pub scope: Scope,
    /// The `Retry-After` sent with a 429.
    pub retry_after: RetryAfter,
}

impl Default for RateLimitConfig {
    fn default() -> Self {
        RateLimitConfig {
            rate: Rate(0.0),
            burst: 1,
            scope: Scope::Shared,
            retry_after: RetryAfter::Derived,
        }
    }
}

impl RateLimitConfig {
    pub fn enabled(&self) -> bool {
        self.rate.0 > 0.0
    }
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.enabled() && self.burst == 0 {
            return Err(Invalid {
                path: "server.rate_limit.burst".into(),
                message: "must be at least 1 (a bucket that holds no token refuses everything)"
                    .into(),
            });
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct TokenBucket {
    per_ns: f64,
    burst: f64,
    tokens: f64,
    last: Time,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: Rate, burst: u64) -> Self {
        TokenBucket {
            per_ns: rate.0 / 1e9,
            burst: burst as f64,
            tokens: burst as f64,
            last: Time::ZERO,
        }
    }

    fn refill(&mut self, now: Time) {
        if now > self.last {
            self.tokens =
                (self.tokens + (now.0 - self.last.0) as f64 * self.per_ns).min(self.burst);
            self.last = now;
        }
    }

    /// Takes a token, or says how long until one is available.
    #[inline]
    pub fn try_take(&mut self, now: Time) -> Result<(), Duration> {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_nanos_f64(
                ((1.0 - self.tokens) / self.per_ns).ceil(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_allows_burst_then_rate() {
        let mut b = TokenBucket::new(Rate(10.0), 3);
        let t0 = Time(0);
        for _ in 0..3 {
            assert!(b.try_take(t0).is_ok());
        }
        let wait = b.try_take(t0).unwrap_err();
        assert_eq!(wait, Duration::from_millis(100));
        assert_eq!(whole_seconds(wait), Duration::from_secs(1));
        assert!(b.try_take(Time(50_000_000)).is_err());
        assert!(b.try_take(Time(100_000_000)).is_ok());
        // A long pause refills only up to the burst.
        let t = Time(10_000_000_000);
        for _ in 0..3 {
            assert!(b.try_take(t).is_ok());
        }
        assert!(b.try_take(t).is_err());
    }

    #[test]
    fn retry_after_parses() {
        let p = |s: &str| serde_json::from_str::<RetryAfter>(&format!("\"{s}\""));
        assert_eq!(p("none").unwrap(), RetryAfter::None);
        assert_eq!(p("derived").unwrap(), RetryAfter::Derived);
        assert_eq!(p("2s").unwrap(), RetryAfter::Fixed(Duration::from_secs(2)));
        assert!(p("soon").is_err());
        assert_eq!(whole_seconds(Duration::ZERO), Duration::ZERO);
        assert_eq!(
            whole_seconds(Duration::from_millis(1001)),
            Duration::from_secs(2)
        );
    }
}
