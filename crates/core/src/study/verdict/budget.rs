//! Each retry budget's steady-state limit: the retries per second it lets through when its
//! callers make `calls` calls and see `successes` successful attempts per second. The all-fail
//! state is `successes = 0`. Each rule is the budget's own arithmetic held at equilibrium (the
//! balance neither grows nor shrinks); `docs/verdict.md` gives the sources.

use crate::policy::Scope;
use crate::policy::budget::{AwsVersion, BudgetConfig, BudgetKind};

/// What flows through a caller's budget, per second.
#[derive(Clone, Copy, Debug)]
pub(super) struct Flow {
    /// Calls (first tries).
    pub calls: f64,
    /// Attempts that succeed.
    pub successes: f64,
    /// How long a failed attempt takes to fail (seconds): the timeout, in the all-fail state.
    pub attempt_s: f64,
    /// Client processes (a per-client budget is one budget each).
    pub processes: f64,
}

/// The retries per second the budget allows in steady state and why; none = no budget.
pub(super) fn retry_limit(b: &BudgetConfig, f: Flow) -> Option<(f64, String)> {
    let instances = match b.scope {
        Scope::Client => f.processes.max(1.0),
        Scope::Shared => 1.0,
    };
    let per = |n: f64| n * instances;
    let (limit, why) = match b.kind {
        BudgetKind::None => return None,
        BudgetKind::Grpc => (
            b.token_ratio * f.successes,
            format!(
                "a failure takes a token and a success gives back token_ratio = {}, so failures stay under {} x successes",
                b.token_ratio, b.token_ratio
            ),
        ),
        BudgetKind::Aws if !b.bucket_set => return None,
        BudgetKind::Aws if !b.refill => (
            0.0,
            "refill = false: a success gives nothing back, so the quota once spent allows no retry"
                .into(),
        ),
        BudgetKind::Aws => {
            let cost = aws_timeout_cost(b);
            (
                f.successes * f64::from(b.no_retry_increment) / f64::from(cost.max(1)),
                format!(
                    "a retry after a timeout costs {cost} of the quota and a success gives back {}",
                    b.no_retry_increment
                ),
            )
        }
        BudgetKind::Finagle => (
            per(f64::from(b.min_retries_per_sec)) + b.percent_can_retry * f.calls,
            format!(
                "min_retries_per_sec = {} per budget plus percent_can_retry = {} of the calls",
                b.min_retries_per_sec, b.percent_can_retry
            ),
        ),
        BudgetKind::Tower => (
            per(f64::from(b.min_retries_per_sec)) + b.percent_can_retry * f.successes,
            format!(
                "min_retries_per_sec = {} per budget plus percent_can_retry = {} of the successes",
                b.min_retries_per_sec, b.percent_can_retry
            ),
        ),
        BudgetKind::Linkerd => (
            per(f64::from(b.min_retries_per_sec)) + b.percent_can_retry * f.calls,
            format!(
                "min_retries_per_sec = {} per budget plus percent_can_retry = {} of the final responses",
                b.min_retries_per_sec, b.percent_can_retry
            ),
        ),
        BudgetKind::Ratio => (
            b.percent_can_retry * f.calls,
            format!("percent_can_retry = {} of the calls", b.percent_can_retry),
        ),
        BudgetKind::TokenBucket => (
            b.fill_per_call * f.calls,
            format!(
                "fill_per_call = {} tokens a call, one a retry",
                b.fill_per_call
            ),
        ),
        BudgetKind::FailureRatio => (
            (b.max_failure_rate - 1.0).max(0.0) * f.calls,
            format!(
                "no retry while failed attempts exceed max_failure_rate = {} per call (every first try fails)",
                b.max_failure_rate
            ),
        ),
        BudgetKind::Envoy => envoy(b, f, instances),
        BudgetKind::Aimd => (
            f.successes * b.deposit_amount as f64 / b.withdraw_amount.max(1) as f64,
            format!(
                "a success deposits {} tokens and a retry withdraws {}; nothing refills with time",
                b.deposit_amount, b.withdraw_amount
            ),
        ),
        BudgetKind::Adaptive => (
            // Throttling rejects first tries too: sends stay under k x accepts, so retries can
            // be no more than what the accepts leave over the calls.
            (b.k * f.successes - f.calls).max(0.0),
            format!(
                "attempts sent stay under k = {} x accepted ones (first tries included)",
                b.k
            ),
        ),
    };
    Some((limit.max(0.0), why))
}

/// What a retry after a timeout costs from an AWS quota, by the published rule in use.
fn aws_timeout_cost(b: &BudgetConfig) -> u32 {
    match b.version {
        AwsVersion::Classic | AwsVersion::Js => b.timeout_cost,
        AwsVersion::V2026 => b.retry_cost_v2,
    }
}

/// Envoy's retry concurrency: retries in progress under `max(min, percent x active)` (or
/// `max_retries`); one lasts `attempt_s`, so the rate is that over the attempt time.
fn envoy(b: &BudgetConfig, f: Flow, instances: f64) -> (f64, String) {
    let t = f.attempt_s.max(1e-9);
    match (b.budget_percent, b.min_retry_concurrency) {
        (None, None) => (
            instances * f64::from(b.max_retries) / t,
            format!(
                "max_retries = {} retries in progress, each {} s",
                b.max_retries,
                super::short(t)
            ),
        ),
        (p, m) if b.budget_interval.is_some_and(|d| d.0 > 0) => {
            envoy_windowed(p, m, b, f, instances)
        }
        (p, m) => {
            let p = p.unwrap_or(20.0) / 100.0;
            let floor = instances * f64::from(m.unwrap_or(3)) / t;
            // Retries in progress r * t <= p * (calls + r) * t, so r <= p / (1 - p) * calls.
            let share = if p < 1.0 {
                p / (1.0 - p) * f.calls
            } else {
                f64::INFINITY
            };
            (
                floor.max(share),
                format!(
                    "retries in progress under budget_percent = {} % of the active requests (at least {})",
                    p * 100.0,
                    m.unwrap_or(3)
                ),
            )
        }
    }
}

/// Envoy's budget over `budget_interval` W: retries in progress r x t stay under
/// `max(min, p x requests started over W)`, and every attempt starts a request, so r x t <=
/// p x (calls + r) x W at most (the window counts 0.9 to 1.0 of W): r <= p W calls / (t - p W)
/// while p W < t, else no bound from the share.
fn envoy_windowed(
    p: Option<f64>,
    m: Option<u32>,
    b: &BudgetConfig,
    f: Flow,
    instances: f64,
) -> (f64, String) {
    let t = f.attempt_s.max(1e-9);
    let w = b.budget_interval.map_or(0.0, |d| d.0 as f64 / 1e9);
    let p = p.unwrap_or(20.0) / 100.0;
    let floor = instances * f64::from(m.unwrap_or(3)) / t;
    let share = if p * w < t {
        p * w * f.calls / (t - p * w)
    } else {
        f64::INFINITY
    };
    (
        floor.max(share),
        format!(
            "retries in progress under budget_percent = {} % of the requests started over budget_interval = {} s (at least {}), each retry lasting {} s",
            p * 100.0,
            super::short(w),
            m.unwrap_or(3),
            super::short(t)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(calls: f64, successes: f64) -> Flow {
        Flow {
            calls,
            successes,
            attempt_s: 3.0,
            processes: 20.0,
        }
    }

    #[test]
    fn token_budgets_allow_nothing_when_every_call_fails() {
        for kind in [BudgetKind::Grpc, BudgetKind::Aws, BudgetKind::Adaptive] {
            let b = BudgetConfig {
                kind,
                ..BudgetConfig::default()
            };
            assert_eq!(
                retry_limit(&b, flow(750.0, 0.0)).unwrap().0,
                0.0,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn finagle_allows_its_floor_and_share_of_calls() {
        let b = BudgetConfig {
            kind: BudgetKind::Finagle,
            scope: Scope::Shared,
            ..BudgetConfig::default()
        };
        // 10/s + 20 % of 750 calls/s.
        assert_eq!(retry_limit(&b, flow(750.0, 0.0)).unwrap().0, 160.0);
    }

    #[test]
    fn aimd_and_a_quota_without_refill_allow_nothing_when_every_call_fails() {
        for b in [
            BudgetConfig {
                kind: BudgetKind::Aimd,
                ..BudgetConfig::default()
            },
            BudgetConfig {
                kind: BudgetKind::Aws,
                refill: false,
                ..BudgetConfig::default()
            },
        ] {
            assert_eq!(retry_limit(&b, flow(750.0, 0.0)).unwrap().0, 0.0);
        }
        // A refill-less quota allows nothing even while calls succeed; AIMD earns per success.
        let no_refill = BudgetConfig {
            kind: BudgetKind::Aws,
            refill: false,
            ..BudgetConfig::default()
        };
        assert_eq!(retry_limit(&no_refill, flow(750.0, 700.0)).unwrap().0, 0.0);
        let aimd = BudgetConfig {
            kind: BudgetKind::Aimd,
            deposit_amount: 1,
            withdraw_amount: 2,
            ..BudgetConfig::default()
        };
        assert_eq!(retry_limit(&aimd, flow(750.0, 700.0)).unwrap().0, 350.0);
    }

    #[test]
    fn an_unset_aws_bucket_is_no_limit() {
        let b = BudgetConfig {
            kind: BudgetKind::Aws,
            bucket_set: false,
            ..BudgetConfig::default()
        };
        assert!(retry_limit(&b, flow(750.0, 0.0)).is_none());
    }

    #[test]
    fn envoys_window_bounds_retries_by_the_requests_it_counts() {
        let b = |interval_s: u64| BudgetConfig {
            kind: BudgetKind::Envoy,
            scope: Scope::Shared,
            budget_percent: Some(20.0),
            min_retry_concurrency: Some(0),
            budget_interval: Some(crate::base::time::Duration::from_secs(interval_s)),
            ..BudgetConfig::default()
        };
        // p W = 0.2 x 10 s = 2 s < t = 3 s: r <= 2 x 750 / (3 - 2) = 1500/s.
        assert_eq!(retry_limit(&b(10), flow(750.0, 0.0)).unwrap().0, 1500.0);
        // p W = 4 s >= 3 s: the window holds more requests than retries can fill.
        assert!(
            retry_limit(&b(20), flow(750.0, 0.0))
                .unwrap()
                .0
                .is_infinite()
        );
    }

    #[test]
    fn no_budget_no_limit() {
        assert!(retry_limit(&BudgetConfig::default(), flow(1.0, 1.0)).is_none());
    }
}
