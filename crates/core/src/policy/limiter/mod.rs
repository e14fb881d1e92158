//! Client-side limiters: what a client does to its own sending rate, before any attempt goes out.
//!
//! - **AWS SDK adaptive retry mode** (`kind = "aws-adaptive"`; botocore `retries/adaptive.py`
//!   `ClientRateLimiter` and `RateClocker`, `retries/throttling.py` `CubicCalculator`,
//!   `retries/bucket.py` `TokenBucket`). Every response (any outcome) is clocked into a measured
//!   send rate: an EWMA (`_DEFAULT_SMOOTHING = 0.8`) of the responses counted per half-second
//!   bucket (`_TIME_BUCKET_RANGE = 0.5`). A throttling error sets CUBIC's `w_max` to the measured
//!   rate (or, once the limiter is on, the smaller of it and the bucket's rate), `k =
//!   (w_max (1 - beta) / C)^(1/3)` and the new rate to `w_max * beta` (`_SCALE_CONSTANT = 0.4`,
//!   `_BETA = 0.7`); any other response sets it to `C (t - last_fail - k)^3 + w_max`. The token
//!   bucket's fill rate becomes `min(new_rate, 2 * measured)` (`_MAX_RATE_ADJUST_SCALE = 2.0`),
//!   floored at `_MIN_RATE = 0.5` per second; its capacity is that rate (at least 1). The
//!   bucket only gates sends after the first throttling error (`_enabled`); from then on a send
//!   *waits* for a token (`TokenBucket.acquire(block=True)`), which in simulation delays the
//!   attempt by simulated time. The standard retry quota and backoff apply underneath, as in
//!   botocore (`retry.mode = "aws-adaptive"` sets both).
//!
//! - **Netflix concurrency-limits AIMD** (`kind = "aimd"`; Netflix/concurrency-limits
//!   `concurrency-limits-core/.../limit/AIMDLimit.java` at commit 784c960, with `SimpleLimiter`
//!   / `AbstractLimiter`): at most `limit` attempts in flight; one beyond it is rejected in the
//!   client (`SimpleLimiter.tryAcquire` returns empty). Each outcome is a sample: a drop (or an
//!   RTT above `timeout`) sets `limit = (int)(limit * backoffRatio)`; otherwise, when `inflight *
//!   2 >= limit`, `limit + 1`; then clamped to `[minLimit, maxLimit]`. Builder defaults:
//!   `initialLimit = 20`, `minLimit = 20`, `maxLimit = 200`, `backoffRatio = 0.9`, `timeout = 5 s`.
//!
//! - **Netflix concurrency-limits Gradient2** (`kind = "gradient2"`; `limit/Gradient2Limit.java`
//!   at commit 78a74b9, behind the same `SimpleLimiter`): the sample's RTT is the short RTT; the
//!   long RTT is an `ExpAvgMeasurement(longWindow = 600, warmup 10)` of them (the plain mean of
//!   the first 10, then an EWMA with factor `2 / (600 + 1)`), cut by 0.95 whenever it is more than
//!   twice the short RTT. Below half the limit in flight nothing changes; otherwise `gradient =
//!   clamp(rttTolerance * long / short, 0.5, 1)`, `new = limit * gradient + queueSize`, smoothed
//!   as `limit * (1 - smoothing) + new * smoothing` and clamped to `[minLimit, maxConcurrency]`.
//!   Drops are ignored (the Java never reads `didDrop`). Builder defaults: `initialLimit = 20`,
//!   `minLimit = 20`, `maxConcurrency = 200`, `smoothing = 0.2`, `queueSize = 4`,
//!   `rttTolerance = 1.5`.
//!
//! - **Netflix concurrency-limits Vegas** (`kind = "vegas"`; `limit/VegasLimit.java` at commit
//!   78a74b9): `rtt_noload` is the smallest RTT seen, re-probed (set to the current RTT) once
//!   `probeCount >= jitter * probeMultiplier * limit`, `jitter` uniform in [0.5, 1) drawn anew at
//!   each probe (the Java's `ThreadLocalRandom`; here the stream `(seed, limiter, Probe)`). Else
//!   `queue = ceil(limit * (1 - rtt_noload / rtt))`, and with `L = log10root(limit)` (`max(1,
//!   (int) log10)`, `Log10RootIntFunction`): a drop sets `limit - L`; below half the limit in
//!   flight nothing changes; `queue <= L` gives `limit + 6 L` (beta); `queue < 3 L` (alpha)
//!   `limit + L`; `queue > 6 L` `limit - L`; then clamped to `[1, maxConcurrency]` and smoothed
//!   (`smoothing = 1.0`: none). Builder defaults: `initialLimit = 20`, `maxConcurrency = 1000`,
//!   `probeMultiplier = 30`.
//!
//! The Java takes RTTs in nanoseconds, as here; an RTT of 0 counts as 1 ns (Vegas rejects a 0
//! and Gradient2 would divide by it).
//!
//! The limiter never reads a clock or draws: the caller passes `now`. Times are converted to
//! seconds as `f64`, the unit botocore computes in.

pub mod aimd;
pub mod aws;
mod config;
pub mod gradient2;
mod simple;
#[cfg(test)]
mod tests;
pub mod vegas;

pub use aimd::Aimd;
pub use aws::AwsAdaptive;
pub use config::*;
pub use gradient2::Gradient2;
pub use simple::{Algorithm, Simple};
pub use vegas::Vegas;

use crate::base::invalid::Invalid;
use crate::base::rng::Stream;
use crate::base::time::{Duration, Time};
use crate::policy::Class;
use serde::{Deserialize, Serialize};

fn secs(t: Time) -> f64 {
    t.0 as f64 / 1e9
}

/// What a limiter says about a send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Send now.
    Go,
    /// No token yet: ask again after this long.
    Wait(Duration),
    /// Refused: the call fails in the client.
    Reject,
}

/// An RTT in nanoseconds as the Java sees it, at least 1.
fn rtt_ns(rtt: Duration) -> u64 {
    rtt.0.max(1)
}

/// What every client-side limiter does, one instance per scope: asked before each attempt goes
/// out, told how each one ended.
pub trait Limiter: Clone + std::fmt::Debug {
    /// The `[limiter]` keys it reads besides `kind` and `scope` (a key no kind in use reads is
    /// refused, and `explain` prints these).
    const KEYS: &'static [&'static str];

    /// Whether it counts attempts in flight and needs their RTTs (the engine times them).
    const CONCURRENCY: bool;

    /// `limiter.smoothing` when the model leaves it out: its source's default weight.
    const DEFAULT_SMOOTHING: f64 = 0.8;

    /// `limiter.max_limit` when the model leaves it out (`maxLimit` / `maxConcurrency`).
    const DEFAULT_MAX_LIMIT: u32 = 200;

    /// The limiter a `[limiter]` section of this kind describes, built at `start`. `stream` is
    /// this instance's own random stream (drawn only by a limiter that needs it).
    fn new(c: &LimiterConfig, start: Time, stream: Stream) -> Self;

    /// The ranges its source accepts for its keys.
    fn validate(_c: &LimiterConfig) -> Result<(), Invalid> {
        Ok(())
    }

    /// Before an attempt goes out.
    fn acquire(&mut self, now: Time) -> Admit;

    /// The client learnt how an attempt that took `rtt` ended in `class`. The in-flight count
    /// of the sample is the one when the outcome arrives.
    fn on_outcome(&mut self, now: Time, class: Class, rtt: Duration);

    /// Draws from `stream` from now on (a forked run's branch); a limiter that draws nothing
    /// keeps nothing to re-key.
    fn rekey(&mut self, _stream: Stream) {}
}

/// Every limiter, once: `Variant = "kind name" => its type`, with the doc line the schema shows.
/// `none` is no limiter at all: no instance is built.
macro_rules! limiters {
    ($($(#[$doc:meta])* $kind:ident = $name:literal => $ty:ty,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum LimiterKind {
            /// No client-side limiter.
            #[serde(rename = "none")]
            None,
            $($(#[$doc])* #[serde(rename = $name)] $kind,)*
        }

        impl LimiterKind {
            /// Every kind with a limiter, in the order of the list.
            pub const LIMITERS: &[LimiterKind] = &[$(LimiterKind::$kind,)*];

            /// The name written in a model file.
            pub fn name(self) -> &'static str {
                match self {
                    LimiterKind::None => "none",
                    $(LimiterKind::$kind => $name,)*
                }
            }

            /// See [`Limiter::KEYS`] (none for `none`).
            pub fn keys(self) -> &'static [&'static str] {
                match self {
                    LimiterKind::None => &[],
                    $(LimiterKind::$kind => <$ty as Limiter>::KEYS,)*
                }
            }

            /// See [`Limiter::CONCURRENCY`].
            pub fn is_concurrency(self) -> bool {
                match self {
                    LimiterKind::None => false,
                    $(LimiterKind::$kind => <$ty as Limiter>::CONCURRENCY,)*
                }
            }

            /// See [`Limiter::DEFAULT_SMOOTHING`] (botocore's 0.8 for `none`, which reads none).
            pub fn default_smoothing(self) -> f64 {
                match self {
                    LimiterKind::None => 0.8,
                    $(LimiterKind::$kind => <$ty as Limiter>::DEFAULT_SMOOTHING,)*
                }
            }

            /// See [`Limiter::DEFAULT_MAX_LIMIT`] (200 for `none`, which reads none).
            pub fn default_max_limit(self) -> u32 {
                match self {
                    LimiterKind::None => 200,
                    $(LimiterKind::$kind => <$ty as Limiter>::DEFAULT_MAX_LIMIT,)*
                }
            }

            pub(super) fn validate(self, c: &LimiterConfig) -> Result<(), Invalid> {
                match self {
                    LimiterKind::None => Ok(()),
                    $(LimiterKind::$kind => <$ty as Limiter>::validate(c),)*
                }
            }
        }

        /// One limiter instance, of the configured kind.
        #[derive(Clone, Debug)]
        pub enum LimiterState {
            $($kind($ty),)*
        }

        impl LimiterState {
            /// `None` when the kind is `none`. See [`Limiter::new`].
            pub fn new(c: &LimiterConfig, start: Time, stream: Stream) -> Option<Self> {
                match c.kind {
                    LimiterKind::None => None,
                    $(LimiterKind::$kind => Some(LimiterState::$kind(<$ty as Limiter>::new(c, start, stream))),)*
                }
            }

            /// [`Limiter::acquire`].
            #[inline]
            pub fn acquire(&mut self, now: Time) -> Admit {
                match self { $(LimiterState::$kind(l) => Limiter::acquire(l, now),)* }
            }

            /// [`Limiter::on_outcome`].
            #[inline]
            pub fn on_outcome(&mut self, now: Time, class: Class, rtt: Duration) {
                match self { $(LimiterState::$kind(l) => Limiter::on_outcome(l, now, class, rtt),)* }
            }

            /// [`Limiter::rekey`].
            pub fn rekey(&mut self, stream: Stream) {
                match self { $(LimiterState::$kind(l) => Limiter::rekey(l, stream),)* }
            }
        }
    };
}

limiters! {
    /// botocore's adaptive retry mode: a CUBIC-controlled token bucket, on after the first
    /// throttle; a send waits for a token.
    AwsAdaptive = "aws-adaptive" => AwsAdaptive,
    /// Netflix concurrency-limits' `AIMDLimit` behind a `SimpleLimiter`: attempts beyond the
    /// limit in flight are rejected in the client.
    Aimd = "aimd" => Simple<Aimd>,
    /// Netflix concurrency-limits' `Gradient2Limit`: the limit follows the ratio of a long-term
    /// RTT average to the latest RTT; beyond it, rejected.
    Gradient2 = "gradient2" => Simple<Gradient2>,
    /// Netflix concurrency-limits' `VegasLimit`: the limit follows the queue estimated from the
    /// smallest RTT seen; beyond it, rejected.
    Vegas = "vegas" => Simple<Vegas>,
}
