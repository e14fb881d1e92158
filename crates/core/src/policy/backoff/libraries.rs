//! The jitters the libraries ship, each on the window `d` (the module above lists the sources):
//! `proportional` (cenkalti, gRPC, resilience4j), `additive` (Kubernetes, Spring), `absolute`
//! (tenacity), with the cap before or after the jitter (`cap_applies`), and Polly's
//! `DecorrelatedJitterBackoffV2`.

use super::{Backoff, CapApplies};
use crate::base::rng::Stream;
use crate::base::time::Duration;

impl Backoff {
    /// `jitter(window)` for retry `n`, with the cap where `spread.cap_applies` puts it: on the
    /// window (the jitter may pass it) or on the jittered delay.
    fn capped(&self, n: u32, jitter: impl FnOnce(u64) -> u64) -> Duration {
        match self.spread.cap_applies {
            CapApplies::BeforeJitter => Duration(jitter(self.window(n).0)),
            CapApplies::AfterJitter => Duration(jitter(self.raw_window(n).0).min(self.cap.0)),
        }
    }

    /// `d × U[1 − r, 1 + r]` in whole nanoseconds, as cenkalti draws it (`r = 0` draws nothing).
    pub(super) fn proportional(&self, n: u32, s: &mut Stream) -> Duration {
        let r = self.spread.randomization_factor;
        self.capped(n, |d| {
            if r == 0.0 {
                return d;
            }
            let delta = r * d as f64;
            let lo = Duration::from_nanos_f64(d as f64 - delta).0;
            let hi = Duration::from_nanos_f64(d as f64 + delta).0;
            s.range_u64(lo, hi)
        })
    }

    /// `d + U[0, f × d)`, drawn as equal jitter draws its half (`range_u64(0, w)`), so that
    /// `f = 1` is equal jitter with twice the base and cap, draw for draw.
    pub(super) fn additive(&self, n: u32, s: &mut Stream) -> Duration {
        let f = self.spread.jitter_factor;
        self.capped(n, |d| match Duration::from_nanos_f64(f * d as f64).0 {
            0 => d,
            w => d.saturating_add(s.range_u64(0, w)),
        })
    }

    /// `d + U[0, J)`.
    pub(super) fn absolute(&self, n: u32, s: &mut Stream) -> Duration {
        let j = self.spread.jitter_max.0;
        self.capped(n, |d| match j {
            0 => d,
            j => d.saturating_add(s.range_u64(0, j)),
        })
    }

    /// Polly's `DecorrelatedJitterBackoffV2` for retry `n` (Polly's `attempt`), given the carried
    /// `prev` and a uniform `u`: the delay (capped at `cap`) and the new `prev`.
    pub fn polly_v2(&self, n: u32, prev: f64, u: f64) -> (Duration, f64) {
        const P_FACTOR: f64 = 4.0;
        const RP_SCALING: f64 = 1.0 / 1.4;
        const TICK: u64 = 100; // ns in a .NET tick
        let t = f64::from(n) + u;
        let next = 2f64.powf(t) * (P_FACTOR * t).sqrt().tanh();
        if !next.is_finite() {
            return (self.cap, next);
        }
        let ticks = ((next - prev) * RP_SCALING * (self.base.0 / TICK) as f64).min(9.2e18) as u64;
        (Duration(ticks.saturating_mul(TICK)).min(self.cap), next)
    }
}
