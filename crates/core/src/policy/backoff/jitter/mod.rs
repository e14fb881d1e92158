//! How randomness spreads a backoff's delay: one file per jitter, each implementing
//! [`JitterRule`], and the list of jitters written once in [`jitters!`] below (it makes the
//! `jitter` names, [`Jitter`], and the one-line dispatch). The event loop and the direct path
//! both draw their delays through [`crate::policy::backoff::Backoff::next_delay`], which ends here.

mod absolute;
mod additive;
mod decorrelated;
mod equal;
mod full;
mod none;
mod polly;
mod proportional;

use super::{Backoff, CapApplies};
use crate::base::rng::Stream;
use crate::base::time::Duration;
use serde::{Deserialize, Serialize};
use std::borrow::BorrowMut;

/// One retry's backoff as a jitter sees it: the policy, the retry's number and its window.
#[derive(Clone, Copy, Debug)]
pub struct Retry<'a> {
    pub backoff: &'a Backoff,
    /// Retries made so far (0 before the first retry).
    pub n: u32,
    /// The capped window in ns, when the caller has it already (the direct path's table).
    pub tabled: Option<u64>,
}

impl Retry<'_> {
    /// The window `d`: `min(cap, base * multiplier^(n + first_exponent))` for an exponential
    /// backoff, in ns.
    #[inline(always)]
    pub fn window(&self) -> u64 {
        match self.tabled {
            Some(w) => w,
            None => self.backoff.window(self.n).0,
        }
    }

    /// `jitter(window)` with the cap where `spread.cap_applies` puts it: on the window (the
    /// jitter may pass it) or on the jittered delay.
    #[inline]
    pub fn capped(&self, jitter: impl FnOnce(u64) -> u64) -> Duration {
        let b = self.backoff;
        match b.spread.cap_applies {
            CapApplies::BeforeJitter => Duration(jitter(self.window())),
            CapApplies::AfterJitter => Duration(jitter(b.raw_window(self.n).0).min(b.cap.0)),
        }
    }
}

/// A retry's one draw, from a stream made when first needed (`|| stream`), so that a jitter that
/// draws nothing costs no stream.
pub trait Draw {
    /// `U[lo, hi)` in whole numbers.
    fn range_u64(self, lo: u64, hi: u64) -> u64;
    /// `U[0, 1)`.
    fn uniform(self) -> f64;
}

impl<S: BorrowMut<Stream>, F: FnOnce() -> S> Draw for F {
    #[inline(always)]
    fn range_u64(self, lo: u64, hi: u64) -> u64 {
        self().borrow_mut().range_u64(lo, hi)
    }

    #[inline(always)]
    fn uniform(self) -> f64 {
        self().borrow_mut().uniform()
    }
}

/// The model key that sizes a jitter, and what it takes (the message when it is missing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Amount {
    pub key: &'static str,
    pub takes: &'static str,
}

/// What every jitter does: the delay before one retry.
pub trait JitterRule {
    /// The key that sizes this jitter, if it has one.
    const AMOUNT: Option<Amount> = None;

    /// Whether the delay depends on the previous retry's: the caller keeps `state` for it.
    const CARRIES_STATE: bool = false;

    /// The delay before retry `r.n` and the state to carry to the next retry (`None`: the caller
    /// carries the delay itself). `state` is [`super::NO_STATE`] before the first retry, else
    /// what the previous retry carried. Draws at most once, from `draw`.
    fn delay(r: &Retry, state: u64, draw: impl Draw) -> (Duration, Option<u64>);

    /// The mean delay in seconds before retry `n` of `b`, whose window is `w` seconds: what the
    /// verdict's arithmetic takes the delay to be.
    fn mean(b: &Backoff, n: u32, w: f64) -> f64;

    /// The seconds `(low, high)` the delay before a retry falls between, given its window `w`
    /// and its [`JitterRule::mean`].
    fn range(b: &Backoff, w: f64, mean: f64) -> (f64, f64);
}

/// Every jitter, once: `Variant = "name" => its type`, with the doc line the schema shows.
macro_rules! jitters {
    ($($(#[$doc:meta])* $kind:ident = $name:literal => $ty:ty,)*) => {
        /// How randomness spreads the delay.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum Jitter {
            $($(#[$doc])* #[serde(rename = $name)] $kind,)*
        }

        impl Jitter {
            /// Every jitter, in the order of the list.
            pub const ALL: &[Jitter] = &[$(Jitter::$kind,)*];

            /// The name written in a model file.
            pub fn name(self) -> &'static str {
                match self { $(Jitter::$kind => $name,)* }
            }

            /// See [`JitterRule::AMOUNT`].
            pub fn amount(self) -> Option<Amount> {
                match self { $(Jitter::$kind => <$ty as JitterRule>::AMOUNT,)* }
            }

            /// See [`JitterRule::CARRIES_STATE`].
            pub fn carries_state(self) -> bool {
                match self { $(Jitter::$kind => <$ty as JitterRule>::CARRIES_STATE,)* }
            }

            /// See [`JitterRule::delay`]. Always inlined: the engine draws a delay per retry, and
            /// the formula must cost what it did when it was written in place.
            #[inline(always)]
            pub fn delay(self, r: &Retry, state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
                match self { $(Jitter::$kind => <$ty as JitterRule>::delay(r, state, draw),)* }
            }

            /// See [`JitterRule::mean`].
            pub fn mean(self, b: &Backoff, n: u32, w: f64) -> f64 {
                match self { $(Jitter::$kind => <$ty as JitterRule>::mean(b, n, w),)* }
            }

            /// See [`JitterRule::range`].
            pub fn range(self, b: &Backoff, w: f64, mean: f64) -> (f64, f64) {
                match self { $(Jitter::$kind => <$ty as JitterRule>::range(b, w, mean),)* }
            }
        }
    };
}

jitters! {
    /// The window itself: `d`.
    None = "none" => none::NoJitter,
    /// `U(0, d)`.
    Full = "full" => full::Full,
    /// `d/2 + U(0, d/2)`.
    Equal = "equal" => equal::Equal,
    /// `min(cap, U(base, 3 * previous))`.
    Decorrelated = "decorrelated" => decorrelated::Decorrelated,
    /// Polly v8 `UseJitter = true`: ±25 % for constant and linear, decorrelated jitter V2 for
    /// exponential.
    Polly = "polly" => polly::Polly,
    /// `d × U[1 − r, 1 + r]`, `r` = `retry.randomization_factor` (cenkalti/backoff, gRPC,
    /// resilience4j, google-http-java-client).
    Proportional = "proportional" => proportional::Proportional,
    /// `d + U[0, f × d)`, `f` = `retry.jitter_factor` (Kubernetes `wait.Backoff`, Spring Retry).
    Additive = "additive" => additive::Additive,
    /// `d + U[0, J)`, `J` = `retry.jitter_max` (tenacity `wait_exponential_jitter`).
    Absolute = "absolute" => absolute::Absolute,
}
