//! The Retry-After rules: what a caller does with a server's `Retry-After` (or Envoy's reset
//! header), for a retry after backoff and for hedging's pushback. One struct per hop, resolved
//! from `retry.retry_after` and `retry.retry_after_cap`.

use crate::base::time::Duration;
use crate::model::{Retry, RetryAfterPolicy};

/// botocore `ExponentialBackoff._RETRY_AFTER_MAX_ADDITIONAL` (5 s), smithy's `delayFromErrorType + 5_000`.
const AWS_RETRY_AFTER_MAX_ADDITIONAL: Duration = Duration::from_secs(5);

/// Envoy `JitteredLowerBoundBackOffStrategy::nextBackOffMs` (`backoff_strategy.cc`):
/// `(random() % (min_interval >> 1)) + min_interval` ms, for a reset-header interval of `ms` > 1.
pub fn envoy_reset_delay(ms: u64, draw: u64) -> Duration {
    Duration::from_millis(draw % (ms >> 1) + ms)
}

/// A hop's handling of `Retry-After`.
#[derive(Clone, Copy, Debug)]
pub(super) struct RetryAfterRules {
    policy: RetryAfterPolicy,
    /// The longest `Retry-After` honoured (`retry.retry_after_cap`, else `retry.cap`).
    cap: Duration,
}

impl RetryAfterRules {
    pub(super) fn of(r: &Retry) -> Self {
        RetryAfterRules {
            policy: r.retry_after,
            cap: r.retry_after_cap.unwrap_or(r.cap),
        }
    }

    /// The delay before a retry whose backoff drew `delay`, when the answer carried
    /// `retry_after`: `Some` when the header is honoured (it replaces or bounds the backoff),
    /// `None` when the backoff stands. `draw` is Envoy's jitter, asked for only when used.
    #[inline]
    pub(super) fn retry_delay(
        &self,
        retry_after: Option<Duration>,
        delay: Duration,
        draw: impl FnOnce() -> u64,
    ) -> Option<Duration> {
        let ra = retry_after.filter(|_| self.policy != RetryAfterPolicy::Ignore)?;
        Some(match self.policy {
            RetryAfterPolicy::Envoy => {
                // Envoy's reset header: whole ms, used only when above 1 ms and within
                // `max_interval`; a longer one is discarded and the exponential backoff stands.
                let ms = ra.as_nanos() / 1_000_000;
                if ra > self.cap || ms <= 1 {
                    return None;
                }
                envoy_reset_delay(ms, draw())
            }
            // botocore `ExponentialBackoff.delay_amount` (2026) and smithy's
            // `StandardRetryStrategy`: the hint, kept within [t, t + 5 s].
            RetryAfterPolicy::Aws => ra.min(delay + AWS_RETRY_AFTER_MAX_ADDITIONAL).max(delay),
            // The server's Retry-After replaces the backoff (gRPC pushback, urllib3), up to a cap.
            _ => ra.min(self.cap),
        })
    }

    /// Hedging's pushback (gRFC A6): how long a retryable answer's `Retry-After` holds the next
    /// copy, when the caller honours it.
    #[inline]
    pub(super) fn pushback(
        &self,
        retry_after: Option<Duration>,
        retryable: bool,
    ) -> Option<Duration> {
        retry_after
            .filter(|_| self.policy == RetryAfterPolicy::Honour && retryable)
            .map(|ra| ra.min(self.cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(policy: RetryAfterPolicy, cap_ms: u64) -> RetryAfterRules {
        RetryAfterRules {
            policy,
            cap: Duration::from_millis(cap_ms),
        }
    }

    #[test]
    fn each_policy_turns_a_header_into_a_delay() {
        let ms = Duration::from_millis;
        let backoff = ms(100);
        let no_draw = || -> u64 { panic!("only Envoy draws") };
        let honour = rules(RetryAfterPolicy::Honour, 1000);
        assert_eq!(
            honour.retry_delay(Some(ms(300)), backoff, no_draw),
            Some(ms(300))
        );
        assert_eq!(
            honour.retry_delay(Some(ms(5000)), backoff, no_draw),
            Some(ms(1000))
        );
        assert_eq!(honour.retry_delay(None, backoff, no_draw), None);
        let ignore = rules(RetryAfterPolicy::Ignore, 1000);
        assert_eq!(ignore.retry_delay(Some(ms(300)), backoff, no_draw), None);
        // AWS: within [t, t + 5 s].
        let aws = rules(RetryAfterPolicy::Aws, 1000);
        assert_eq!(
            aws.retry_delay(Some(ms(10)), backoff, no_draw),
            Some(backoff)
        );
        assert_eq!(
            aws.retry_delay(Some(ms(9000)), backoff, no_draw),
            Some(ms(5100))
        );
        // Envoy: above 1 ms and within the cap, jittered up to half again.
        let envoy = rules(RetryAfterPolicy::Envoy, 1000);
        assert_eq!(
            envoy.retry_delay(Some(ms(400)), backoff, || 7),
            Some(ms(407))
        );
        assert_eq!(envoy.retry_delay(Some(ms(1)), backoff, no_draw), None);
        assert_eq!(envoy.retry_delay(Some(ms(2000)), backoff, no_draw), None);
        // Pushback: honoured only for a retryable answer, capped.
        assert_eq!(honour.pushback(Some(ms(5000)), true), Some(ms(1000)));
        assert_eq!(honour.pushback(Some(ms(50)), false), None);
        assert_eq!(aws.pushback(Some(ms(50)), true), None);
    }
}
