//! What flows through a caller's budget in steady state, per second: each budget's
//! [`super::Budget::retry_limit`] is worked out from it.

use crate::policy::Scope;

/// What flows through a caller's budget, per second.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    /// Calls (first tries).
    pub calls: f64,
    /// Attempts that succeed.
    pub successes: f64,
    /// How long a failed attempt takes to fail (seconds): the timeout, in the all-fail state.
    pub attempt_s: f64,
    /// Client processes (a per-client budget is one budget each).
    pub processes: f64,
}

impl Flow {
    /// The budgets a `[budget]` of `scope` makes: one per client process, or one in all.
    pub fn instances(&self, scope: Scope) -> f64 {
        match scope {
            Scope::Client => self.processes.max(1.0),
            Scope::Shared => 1.0,
        }
    }

    /// `n` per budget, over all the budgets of `scope`.
    pub fn per_budget(&self, scope: Scope, n: f64) -> f64 {
        n * self.instances(scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::budget::{BudgetConfig, BudgetKind};

    fn retry_limit(b: &BudgetConfig, f: &Flow) -> Option<(f64, String)> {
        b.kind.retry_limit(b, f)
    }

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
                retry_limit(&b, &flow(750.0, 0.0)).unwrap().0,
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
        assert_eq!(retry_limit(&b, &flow(750.0, 0.0)).unwrap().0, 160.0);
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
            assert_eq!(retry_limit(&b, &flow(750.0, 0.0)).unwrap().0, 0.0);
        }
        // A refill-less quota allows nothing even while calls succeed; AIMD earns per success.
        let no_refill = BudgetConfig {
            kind: BudgetKind::Aws,
            refill: false,
            ..BudgetConfig::default()
        };
        assert_eq!(retry_limit(&no_refill, &flow(750.0, 700.0)).unwrap().0, 0.0);
        let aimd = BudgetConfig {
            kind: BudgetKind::Aimd,
            deposit_amount: 1,
            withdraw_amount: 2,
            ..BudgetConfig::default()
        };
        assert_eq!(retry_limit(&aimd, &flow(750.0, 700.0)).unwrap().0, 350.0);
    }

    #[test]
    fn an_unset_aws_bucket_is_no_limit() {
        let b = BudgetConfig {
            kind: BudgetKind::Aws,
            bucket_set: false,
            ..BudgetConfig::default()
        };
        assert!(retry_limit(&b, &flow(750.0, 0.0)).is_none());
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
        assert_eq!(retry_limit(&b(10), &flow(750.0, 0.0)).unwrap().0, 1500.0);
        // p W = 4 s >= 3 s: the window holds more requests than retries can fill.
        assert!(
            retry_limit(&b(20), &flow(750.0, 0.0))
                .unwrap()
                .0
                .is_infinite()
        );
    }

    #[test]
    fn no_budget_no_limit() {
        assert!(retry_limit(&BudgetConfig::default(), &flow(1.0, 1.0)).is_none());
    }
}
