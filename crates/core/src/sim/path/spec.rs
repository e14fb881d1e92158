//! The request path a model describes, resolved into one list of hops and one list of tiers.
//!
//! Hop `k` is the caller at level `k` (hop 0: the clients; hop `k > 0`: the client inside tier
//! `k - 1`) with its retry policy and its network to tier `k`. The last tier is `[server]`: the
//! store and write contention live there. Three ways of writing a path give the same shape:
//!
//! - `[retry]`, `[network]`, `[budget]`, `[breaker]`, `[hedge]` and `[server]` alone: one hop to
//!   one tier.
//! - `[[tier]]` tables between the clients and `[server]`: each adds a tier (its `server`) and
//!   the hop below it (its `retry`, `network`, `budget`, `breaker`, `hedge`).
//! - `[[layer]]` tables (the layered form of `docs/layered.md`): layer 0 is the clients' retry
//!   loop, every further layer is a tier with unlimited capacity and no service time whose
//!   client retries with that layer's policy, and `[server]` is the bottom. `[budget]`,
//!   `[breaker]` and `[hedge]` act on the top layer.

use crate::model::{Layer, LayerBudget, Model, Network, Retry, Server, WorkloadKind};
use crate::policy::Scope;
use crate::policy::adaptive::Adaptive;
use crate::policy::breaker::BreakerConfig;
use crate::policy::budget::{BudgetConfig, BudgetKind};
use crate::policy::hedge::HedgeConfig;
use crate::policy::limiter::LimiterConfig;

/// A caller and its link to the tier below.
#[derive(Clone, Debug)]
pub struct Hop {
    /// The caller's name (the client, a layer, or the tier the caller runs in).
    pub name: String,
    pub retry: Retry,
    pub network: Network,
    pub budget: BudgetConfig,
    pub breaker: BreakerConfig,
    pub hedge: HedgeConfig,
    /// A client-side limiter (`[limiter]`, the clients' hop only).
    pub limiter: LimiterConfig,
}

/// A server on the path.
#[derive(Clone, Debug)]
pub struct TierSpec {
    pub name: String,
    pub server: Server,
}

/// The whole path: `hops.len() == tiers.len()`; hop `k` sends to tier `k`.
#[derive(Clone, Debug)]
pub struct PathSpec {
    pub hops: Vec<Hop>,
    pub tiers: Vec<TierSpec>,
}

impl PathSpec {
    pub fn of(m: &Model) -> PathSpec {
        let client = |name: &str, retry: Retry, network: Network, budget: BudgetConfig| Hop {
            name: name.to_string(),
            retry,
            network,
            budget,
            breaker: m.breaker.clone(),
            hedge: m.hedge.clone(),
            limiter: m.limiter.clone(),
        };
        let mut bottom = TierSpec {
            name: "server".into(),
            server: m.server.clone(),
        };
        // `workload.kind = "contention"` is a burst against a record with write contention.
        bottom.server.contention |= m.workload.kind == WorkloadKind::Contention;
        if !m.layers.is_empty() {
            let mut hops = Vec::new();
            let mut tiers = Vec::new();
            for (i, l) in m.layers.iter().enumerate() {
                let name = if l.name.is_empty() {
                    format!("layer{i}")
                } else {
                    l.name.clone()
                };
                let (retry, network) = layer_policy(l);
                if i == 0 {
                    let budget = l.budget.map_or_else(|| m.budget.clone(), layer_budget);
                    hops.push(client(&name, retry, network, budget));
                } else {
                    tiers.push(TierSpec {
                        name: name.clone(),
                        server: Server::default(),
                    });
                    hops.push(Hop {
                        name,
                        retry,
                        network,
                        budget: l.budget.map_or_else(BudgetConfig::default, layer_budget),
                        breaker: BreakerConfig::default(),
                        hedge: HedgeConfig::default(),
                        limiter: LimiterConfig::default(),
                    });
                }
            }
            tiers.push(bottom);
            return PathSpec { hops, tiers };
        }
        let mut hops = vec![client(
            "client",
            m.retry.clone(),
            m.network.clone(),
            m.budget.clone(),
        )];
        let mut tiers = Vec::new();
        for (i, t) in m.tiers.iter().enumerate() {
            let name = if t.name.is_empty() {
                format!("tier{i}")
            } else {
                t.name.clone()
            };
            tiers.push(TierSpec {
                name: name.clone(),
                server: t.server.clone(),
            });
            hops.push(Hop {
                name,
                retry: t.retry.clone(),
                network: t.network.clone(),
                budget: t.budget.clone(),
                breaker: t.breaker.clone(),
                hedge: t.hedge.clone(),
                limiter: LimiterConfig::default(),
            });
        }
        tiers.push(bottom);
        PathSpec { hops, tiers }
    }

    /// The index of the last tier (where the store is).
    pub fn bottom(&self) -> usize {
        self.tiers.len() - 1
    }
}

/// A layer's retry loop and latency as a hop's `retry` and `network`.
fn layer_policy(l: &Layer) -> (Retry, Network) {
    let retry = Retry {
        max_attempts: l.max_attempts,
        timeout: l.timeout.map(Adaptive::Fixed),
        backoff_spec: l.backoff_spec.clone(),
        ..Retry::default()
    };
    let network = Network {
        latency: l.latency,
        ..Network::default()
    };
    (retry, network)
}

/// A layer's budget as the one budget implementation: `tokens` is gRPC retry throttling and
/// `ratio` Finagle's arithmetic without its window, each shared by every call through the layer.
fn layer_budget(b: LayerBudget) -> BudgetConfig {
    match b {
        LayerBudget::Tokens {
            max_tokens,
            token_ratio,
        } => BudgetConfig {
            kind: BudgetKind::Grpc,
            scope: Scope::Shared,
            max_tokens,
            token_ratio,
            ..BudgetConfig::default()
        },
        LayerBudget::Ratio { ratio, min_retries } => BudgetConfig {
            kind: BudgetKind::Ratio,
            scope: Scope::Shared,
            percent_can_retry: ratio,
            min_retries,
            ..BudgetConfig::default()
        },
    }
}
