//! `d × U[1 − r, 1 + r]` (`retry.randomization_factor` = `r`): cenkalti/backoff `exponential.go`
//! (v4 720b789, `getRandomValueFromInterval`, line 204: `min + random * (max - min + 1)`, whole
//! nanoseconds, `r = 0` draws nothing; line 29: "MaxInterval caps the RetryInterval and not the
//! randomized interval"), gRPC's connection backoff (grpc-go 4793ad0 `internal/backoff/backoff.go`
//! line 70, `backoff *= 1 + Jitter*(rand*2-1)` after capping, and line 57: the first delay is
//! `BaseDelay` unjittered: `backoff = "grpc"`), resilience4j
//! `IntervalFunction.ofExponentialRandomBackoff` (af9e7c9, the cap applied to the randomized
//! value: `cap_applies = "after-jitter"`), google-http-java-client `ExponentialBackOff` (cf8ec81,
//! cenkalti's formula in whole milliseconds).

use super::{Amount, Draw, JitterRule, Retry};
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;

/// `jitter = "proportional"`.
pub struct Proportional;

impl JitterRule for Proportional {
    const AMOUNT: Option<Amount> = Some(Amount {
        key: "randomization_factor",
        takes: "a number in 0..=1, the share of the window the delay may move either way (cenkalti/backoff: 0.5, gRPC: 0.2)",
    });

    /// In whole nanoseconds, as cenkalti draws it (`r = 0` draws nothing).
    #[inline]
    fn delay(r: &Retry, _state: u64, draw: impl Draw) -> (Duration, Option<u64>) {
        let f = r.backoff.spread.randomization_factor;
        let d = r.capped(|d| {
            if f == 0.0 {
                return d;
            }
            let delta = f * d as f64;
            let lo = Duration::from_nanos_f64(d as f64 - delta).0;
            let hi = Duration::from_nanos_f64(d as f64 + delta).0;
            draw.range_u64(lo, hi)
        });
        (d, None)
    }

    fn mean(_b: &Backoff, _n: u32, w: f64) -> f64 {
        w
    }

    fn range(b: &Backoff, w: f64, _mean: f64) -> (f64, f64) {
        let r = b.spread.randomization_factor;
        (w * (1.0 - r), w * (1.0 + r))
    }
}
