//! Netflix concurrency-limits' `SimpleLimiter`: the attempts in flight held to the limit that a
//! limit algorithm (`AIMDLimit`, `Gradient2Limit`, `VegasLimit`) moves with every sample. The
//! algorithms differ; the counting in front of them is this one.

use super::*;

/// A limit algorithm (the Java's `Limit`, `AbstractLimit`): the limit, moved by every sample.
/// What it shares with [`Limiter`] means the same here.
pub trait Algorithm: Clone + std::fmt::Debug {
    /// See [`Limiter::KEYS`].
    const KEYS: &'static [&'static str];

    /// See [`Limiter::DEFAULT_SMOOTHING`].
    const DEFAULT_SMOOTHING: f64 = 0.8;

    /// See [`Limiter::DEFAULT_MAX_LIMIT`].
    const DEFAULT_MAX_LIMIT: u32 = 200;

    /// The algorithm a `[limiter]` section describes; `stream` for one that draws.
    fn new(c: &LimiterConfig, stream: Stream) -> Self;

    /// See [`Limiter::validate`].
    fn validate(c: &LimiterConfig) -> Result<(), Invalid>;

    /// `getLimit()`.
    fn limit(&self) -> u32;

    /// `_update(startTime, rtt, inflight, didDrop)`: one attempt ended after `rtt` with
    /// `inflight` in flight, itself included.
    fn sample(&mut self, rtt: Duration, inflight: u32, dropped: bool);

    /// See [`Limiter::rekey`].
    fn rekey(&mut self, _stream: Stream) {}
}

/// `SimpleLimiter` in front of the algorithm `L`: an attempt beyond its limit in flight is
/// rejected in the client.
#[derive(Clone, Debug)]
pub struct Simple<L> {
    pub algorithm: L,
    pub(super) inflight: u32,
}

impl<L: Algorithm> Limiter for Simple<L> {
    const KEYS: &'static [&'static str] = L::KEYS;
    const CONCURRENCY: bool = true;
    const DEFAULT_SMOOTHING: f64 = L::DEFAULT_SMOOTHING;
    const DEFAULT_MAX_LIMIT: u32 = L::DEFAULT_MAX_LIMIT;

    fn new(c: &LimiterConfig, _start: Time, stream: Stream) -> Self {
        Simple {
            algorithm: L::new(c, stream),
            inflight: 0,
        }
    }

    fn validate(c: &LimiterConfig) -> Result<(), Invalid> {
        L::validate(c)
    }

    /// `tryAcquire`: refused when `inflight >= limit`.
    #[inline]
    fn acquire(&mut self, _now: Time) -> Admit {
        if self.inflight >= self.algorithm.limit() {
            return Admit::Reject;
        }
        self.inflight += 1;
        Admit::Go
    }

    /// A drop for an answer the backend did not accept (503, 429, overloaded, timeout,
    /// connection: `onDropped`), a sample otherwise (`onSuccess`); then the attempt leaves.
    #[inline]
    fn on_outcome(&mut self, _now: Time, class: Class, rtt: Duration) {
        self.algorithm
            .sample(rtt, self.inflight, !class.is_accepted());
        self.inflight = self.inflight.saturating_sub(1);
    }

    fn rekey(&mut self, stream: Stream) {
        self.algorithm.rekey(stream);
    }
}
