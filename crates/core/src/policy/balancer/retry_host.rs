//! Retries and hedges to another replica: Envoy's `envoy.retry_host_predicates.previous_hosts`
//! with the route's `host_selection_retry_max_attempts`.
//!
//! - The predicate (envoyproxy/envoy `source/extensions/retry/host/previous_hosts/
//!   previous_hosts.h`, `PreviousHostsRetryPredicate`) remembers every host an attempt of the
//!   request went to (`onHostAttempted`, called for the first try too) and rejects a candidate
//!   that is among them (`shouldSelectAnotherHost`).
//! - The router consults it only on a retry (`source/common/router/router.h`,
//!   `shouldSelectAnotherHost`: `if (!is_retry_) return false`); a hedge Envoy sends is a retry
//!   to the router (`doRetry`), so a hedge avoids the hosts already tried in the same way.
//! - The balancer is asked up to `host_selection_retry_max_attempts + 1` times
//!   (`LoadBalancerBase::chooseHost` in `source/common/upstream/load_balancer_impl.cc`): it stops
//!   at the first host the predicate accepts, and "if we didn't find anything, return the last
//!   host", rejected or not. The route's value defaults to 1 (`RetryPolicyImpl`,
//!   `host_selection_attempts_{1}`; the `RetryPolicy` proto: "If unspecified, this will default
//!   to retrying once"), so by default two picks.
//!
//! A retry among five replicas, one of them the failed one, with random balancing: the retry lands
//! on it again with probability `(1/5)^(N+1)` instead of `1/5`.

use super::{Balancer, Draw};
use crate::base::time::Time;

/// The route's default `host_selection_retry_max_attempts`.
pub const DEFAULT_HOST_SELECTION_RETRY_MAX_ATTEMPTS: u32 = 1;

/// The hosts one request's attempts went to (the predicate's `attempted_hosts_`). The engine keeps
/// one per request in flight and [`clear`](PreviousHosts::clear)s it for reuse.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreviousHosts {
    attempted: Vec<u32>,
}

impl PreviousHosts {
    /// `onHostAttempted`: an attempt of this request went to `replica`.
    pub fn attempted(&mut self, replica: u32) {
        self.attempted.push(replica);
    }

    /// `shouldSelectAnotherHost`: was `replica` tried before?
    pub fn rejects(&self, replica: u32) -> bool {
        self.attempted.contains(&replica)
    }

    pub fn clear(&mut self) {
        self.attempted.clear();
    }
}

/// Which attempt of a request is being placed, as the router tells the balancer.
#[derive(Clone, Copy, Debug)]
pub enum Attempt<'a> {
    /// The first try: the predicate is not consulted.
    First,
    /// A retry or a hedge, with the request's predicate and the route's
    /// `host_selection_retry_max_attempts`.
    Retry {
        previous: &'a PreviousHosts,
        max_attempts: u32,
    },
}

/// `chooseHost`: the replica for `attempt` among `hosts`, re-asking the balancer while the
/// predicate rejects its pick, at most `max_attempts` more times; then the last pick stands.
/// `None` only when `hosts` is empty. The caller records the result with
/// [`PreviousHosts::attempted`] and [`Balancer::start`].
pub fn choose(
    balancer: &mut Balancer,
    hosts: &[u32],
    attempt: Attempt,
    draw: &mut impl Draw,
    now: Time,
) -> Option<u32> {
    let (previous, extra) = match attempt {
        Attempt::First => return balancer.pick(hosts, draw, now),
        Attempt::Retry {
            previous,
            max_attempts,
        } => (previous, max_attempts),
    };
    let mut host = None;
    for _ in 0..=extra {
        host = balancer.pick(hosts, draw, now);
        match host {
            Some(h) if previous.rejects(h) => continue,
            _ => return host,
        }
    }
    host
}
