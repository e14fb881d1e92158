//! Overload policies: what servers answer under load and what clients do about it.
//!
//! One concept per module, each faithful to a published definition cited in its doc comment and
//! in `docs/policies.md`:
//!
//! - [`backoff`]: the delay before a retry: the AWS blog's formulas and the libraries' jitters.
//! - [`shedding`]: server-side shedding (CoDel at dequeue, adaptive LIFO).
//! - [`window`]: a sliding window of counts in slices (Finagle's `WindowedAdder`).
//! - [`budget`]: retry budgets: gRPC retry throttling (gRFC A6), the AWS SDK standard retry quota,
//!   Finagle's `RetryBudget`, tower's and Linkerd's retry budgets, and the SRE book's client-side
//!   adaptive throttling.
//! - [`breaker`]: a circuit breaker with resilience4j's semantics.
//! - [`ratelimit`]: a token bucket, for a server answering 429 with `Retry-After`.
//! - [`hedge`]: gRPC's hedging policy (extra copies after a delay, first success wins).
//! - [`adaptive`]: a timeout or hedging delay learned from a percentile of recent latencies
//!   (restate's adaptive timeout).
//! - [`limiter`]: client-side limits on a client's own sends (the AWS SDKs' adaptive mode).
//! - [`recovery`]: did goodput return to its pre-trigger level, and how long did it take.
//! - [`balancer`]: choosing a replica (Envoy's round robin, random and least request, Finagle's
//!   peak-EWMA power of two choices; retries and hedges to another host).
//! - [`autoscale`]: Kubernetes' Horizontal Pod Autoscaler on a tier's replicas.
//! - [`outlier`]: outlier ejection (Envoy's `outlier_detection`, gRPC's gRFC A50).
//!
//! The engine ([`crate::sim`]) owns the policy state; these types never draw random numbers
//! themselves (a caller passes a uniform draw from a keyed stream where one is needed), never read
//! a clock (the caller passes `now`), and allocate only when built.

pub mod adaptive;
pub mod autoscale;
pub mod backoff;
pub mod balancer;
pub mod breaker;
pub mod budget;
pub mod hedge;
pub mod limiter;
pub mod outlier;
pub mod ratelimit;
pub mod recovery;
pub mod shedding;
pub mod window;

use serde::{Deserialize, Serialize};

/// Who shares one instance of a budget, breaker or rate limiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// One per client process (a burst client, a closed-workload worker, or one of the open
    /// workload's `workload.processes`).
    Client,
    /// One for everybody (one process, one sidecar or proxy in front of all clients).
    Shared,
}

/// What one attempt ended in, as its client sees it. The model's `retry.retry_on` lists the
/// classes a client retries; [`Class::ClientError`] and [`Class::Overloaded`] are never retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Class {
    /// A success (2xx).
    #[serde(rename = "success")]
    Success,
    /// The per-attempt timeout fired first.
    #[serde(rename = "timeout")]
    Timeout,
    /// The connection broke (request lost with `loss_notice = "error"`, or a server crash).
    #[serde(rename = "connection")]
    Connection,
    /// 503 Service Unavailable: an outage, `fail = "always"`, a full queue or a concurrency limit.
    #[serde(rename = "503", alias = "unavailable")]
    Unavailable,
    /// 429 Too Many Requests: the rate limiter refused the request (RFC 6585 §4).
    #[serde(rename = "429", alias = "throttled")]
    Throttled,
    /// Any other 5xx: the handler failed (`server.fail`).
    #[serde(rename = "5xx", alias = "server-error")]
    ServerError,
    /// 409 Conflict: a concurrent duplicate is still in progress (`store = "record-before-409"`).
    #[serde(rename = "409", alias = "conflict")]
    Conflict,
    /// The SRE book's "overloaded; don't retry" answer: never retried.
    #[serde(rename = "overloaded")]
    Overloaded,
    /// A non-retryable 4xx (the request is wrong): never retried.
    #[serde(rename = "4xx", alias = "client-error")]
    ClientError,
}

impl Class {
    /// Every class, in a fixed order (bit `i` of a [`ClassSet`] is `ALL[i]`).
    pub const ALL: [Class; 9] = [
        Class::Success,
        Class::Timeout,
        Class::Connection,
        Class::Unavailable,
        Class::Throttled,
        Class::ServerError,
        Class::Conflict,
        Class::Overloaded,
        Class::ClientError,
    ];

    /// The classes retried by default: every failure that the engine retried before retry classes
    /// existed, plus 429 (RFC 6585 says a client may retry after `Retry-After`): [`Class::ALL`]
    /// from `Timeout` to `Conflict`.
    pub const DEFAULT_RETRYABLE: &[Class] = Self::ALL
        .split_at(Class::Conflict as usize + 1)
        .0
        .split_at(Class::Timeout as usize)
        .1;

    #[inline]
    const fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// The name a model file uses.
    pub fn name(self) -> &'static str {
        match self {
            Class::Success => "success",
            Class::Timeout => "timeout",
            Class::Connection => "connection",
            Class::Unavailable => "503",
            Class::Throttled => "429",
            Class::ServerError => "5xx",
            Class::Conflict => "409",
            Class::Overloaded => "overloaded",
            Class::ClientError => "4xx",
        }
    }

    /// Does this answer count against the server's health (breakers, gRPC throttling)? A 4xx says
    /// the request was wrong and a 409 that a duplicate is in progress: the server is fine.
    #[inline]
    pub fn is_server_failure(self) -> bool {
        !matches!(self, Class::Success | Class::ClientError | Class::Conflict)
    }

    /// Did the backend accept the request (the SRE book's `accepts`)? Rejections for overload
    /// (503, 429, overloaded) and attempts that got no answer (timeout, connection) did not.
    #[inline]
    pub fn is_accepted(self) -> bool {
        matches!(
            self,
            Class::Success | Class::ServerError | Class::Conflict | Class::ClientError
        )
    }
}

/// A set of [`Class`]es as a bit mask: the hot path tests membership with one AND.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassSet(u16);

impl ClassSet {
    pub fn of(classes: &[Class]) -> Self {
        ClassSet(classes.iter().fold(0, |m, c| m | c.bit()))
    }
    #[inline]
    pub fn contains(self, c: Class) -> bool {
        self.0 & c.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_sets_and_names() {
        let s = ClassSet::of(Class::DEFAULT_RETRYABLE);
        assert!(s.contains(Class::Timeout) && s.contains(Class::Throttled));
        assert!(s.contains(Class::Conflict) && Class::DEFAULT_RETRYABLE.len() == 6);
        assert!(!s.contains(Class::ClientError) && !s.contains(Class::Overloaded));
        assert!(!s.contains(Class::Success));
        for (i, c) in Class::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            let parsed: Class = serde_json::from_str(&format!("\"{}\"", c.name())).unwrap();
            assert_eq!(parsed, *c);
        }
        let alias: Class = serde_json::from_str("\"unavailable\"").unwrap();
        assert_eq!(alias, Class::Unavailable);
    }

    #[test]
    fn health_and_acceptance() {
        assert!(Class::Timeout.is_server_failure() && !Class::Timeout.is_accepted());
        assert!(Class::ServerError.is_server_failure() && Class::ServerError.is_accepted());
        assert!(!Class::ClientError.is_server_failure() && Class::ClientError.is_accepted());
        assert!(Class::Throttled.is_server_failure() && !Class::Throttled.is_accepted());
    }
}
