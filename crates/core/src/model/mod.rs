//! The scenario a run simulates: workload, retry policy, network, server and idempotency.
//!
//! Every field has a default, so a model file states only what it changes. Field names are a
//! contract (users' model files and `--set` flags spell them): add, never rename. The reference
//! with units, defaults and sources is `docs/model.md`. Loading from TOML (with file/line errors)
//! lives in [`crate::model::load`]; this module is the typed form and its semantic checks.

pub use crate::base::invalid::Invalid;
use crate::base::keys::{KeyTable, key};
use crate::base::time::{Duration, Time};
pub use crate::base::time::{Rate, Window};
use crate::policy::autoscale::AUTOSCALE_KEYS;
use crate::policy::backoff::{Backoff, BackoffKind, Jitter};
use crate::policy::breaker::{BREAKER_KEYS, BreakerConfig};
use crate::policy::budget::{BUDGET_KEYS, BudgetConfig};
use crate::policy::hedge::HedgeConfig;
use crate::policy::limiter::LimiterConfig;
use crate::policy::recovery::RecoveryConfig;
use crate::policy::{Class, Scope};

pub mod limits;
pub mod load;
pub mod preset;
pub mod replay;
pub mod schema;
pub mod table;
mod validate;

mod backoff;
mod connections;
mod fanout;
mod idempotency;
mod layers;
mod network;
mod replicas;
mod retry;
mod server;
mod workload;
pub use backoff::BackoffSpec;
pub use connections::*;
pub use fanout::*;
pub use idempotency::*;
pub use layers::*;
pub use limits::{
    BYTES_PER_INTENT, MAX_ATTEMPTS, MAX_INTENTS, MAX_LAYERS, MAX_POLICY_INSTANCES, MAX_REPLICAS,
    MAX_WINDOWS,
};
pub use network::*;
pub use replicas::*;
pub use retry::*;
use serde::{Deserialize, Serialize};
pub use server::*;
pub use workload::*;

/// The key tables of the sections that have one, for the test that checks them against the
/// loader, the schema and the docs (`tests/cli/model_keys.rs`).
pub const KEY_TABLES: [KeyTable; 14] = [
    WORKLOAD_KEYS,
    RETRY_KEYS,
    NETWORK_KEYS,
    SERVER_KEYS,
    OUTLIER_KEYS,
    AUTOSCALE_KEYS,
    FANOUT_KEYS,
    CONNECTIONS_KEYS,
    IDEMPOTENCY_KEYS,
    TIER_KEYS,
    LAYER_KEYS,
    BREAKER_KEYS,
    BUDGET_KEYS,
    ENGINE_KEYS,
];

/// One scenario, fully resolved (a variant is a `Model` too).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Model {
    /// Shown in tables and charts.
    pub name: String,
    pub description: String,
    /// The run's seed when the command line gives none.
    pub seed: u64,
    /// Simulated time after which the run stops, settled or not.
    pub horizon: Duration,
    /// Width of a time-series bucket (arrivals per bucket, the "peak per 10 ms").
    pub bucket: Duration,
    /// Width of the sliding window of `peak_arrivals_window`, `peak_retries_window` and each
    /// `attempt_peaks[].peak_window`: the most arrivals in any half-open `[t, t + w)`, exact over
    /// event times. None = the bucket width.
    pub peak_window: Option<Duration>,
    /// Stop after this many events (a guard against runs that cannot end).
    pub max_events: u64,
    pub workload: Workload,
    pub retry: Retry,
    pub network: Network,
    pub server: Server,
    pub idempotency: Idempotency,
    /// A layered request path (`[[layer]]` tables, top first): when non-empty the run uses the
    /// layered engine ([`crate::sim::layered`]), whose bottom is `server.fail` and `server.service`.
    #[serde(rename = "layer", skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<Layer>,
    /// The tiers between the clients and `[server]` (`[[tier]]` tables, top first): each is a
    /// server with a retrying client of the next tier in it (`docs/model.md`, "The request path").
    #[serde(rename = "tier", skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<TierConfig>,
    /// A retry budget (`docs/policies.md`): gRPC, AWS, Finagle or SRE adaptive throttling.
    pub budget: BudgetConfig,
    /// A resilience4j circuit breaker in front of every attempt.
    pub breaker: BreakerConfig,
    /// gRPC hedging instead of retrying.
    pub hedge: HedgeConfig,
    /// A client-side limiter on the clients' own sends (`docs/policies.md`, "Client-side
    /// limiters").
    pub limiter: LimiterConfig,
    /// How recovery after a trigger (spike, outage) is measured.
    pub recovery: RecoveryConfig,
    /// `[engine]`: which engine runs the model (`docs/model.md`, "Engine").
    #[serde(skip_serializing_if = "EngineConfig::is_auto")]
    pub engine: EngineConfig,
}

/// The `[engine]` section.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// `auto`: the direct path when the model's clients are independent, else the event loop;
    /// `event-loop`: always the event loop (same results, slower).
    pub path: EnginePathChoice,
}

/// `[engine]`'s keys.
pub const ENGINE_KEYS: KeyTable = KeyTable {
    section: "engine",
    schema: "EngineConfig",
    docs: &[("docs/model.md", "## `[engine]`")],
    runs: &[&[key(
        "path",
        "`\"auto\"`",
        "`\"auto\"`: the **direct path** when the model's clients are independent, else the event \
        loop; `\"event-loop\"`: always the event loop. Any other value is refused (exit 2). Both \
        give the same bytes; the direct path is faster and smaller. `--set \
        engine.path=event-loop` forces the event loop for one run (tests and benchmarks compare \
        the two this way).",
    )]],
    expanded: &[],
};

impl EngineConfig {
    pub fn is_auto(&self) -> bool {
        self.path == EnginePathChoice::Auto
    }
}

/// `engine.path`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EnginePathChoice {
    #[default]
    Auto,
    EventLoop,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            name: "model".into(),
            description: String::new(),
            seed: 1,
            horizon: Duration::from_secs(3600),
            bucket: Duration::from_millis(10),
            peak_window: None,
            max_events: 2_000_000_000,
            workload: Workload::default(),
            retry: Retry::default(),
            network: Network::default(),
            server: Server::default(),
            idempotency: Idempotency::default(),
            layers: Vec::new(),
            tiers: Vec::new(),
            budget: BudgetConfig::default(),
            breaker: BreakerConfig::default(),
            hedge: HedgeConfig::default(),
            limiter: LimiterConfig::default(),
            recovery: RecoveryConfig::default(),
            engine: EngineConfig::default(),
        }
    }
}

/// `12 GB`, `800 MB`: a size for an error message.
fn bytes(n: u128) -> String {
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1000.0 && u < UNITS.len() - 1 {
        x /= 1000.0;
        u += 1;
    }
    format!("{x:.0} {}", UNITS[u])
}

impl Model {
    /// The width of the sliding peak window: `peak_window`, or the bucket width without it.
    pub fn peak_window(&self) -> Duration {
        self.peak_window.unwrap_or(self.bucket)
    }

    /// The trigger window (a spike, an outage, a capacity drop, a slow window), if the model has
    /// one: see
    /// [`crate::policy::recovery`].
    pub fn trigger(&self) -> Option<(Time, Time)> {
        let model = self;
        if let Some(t) = model.recovery.trigger {
            return Some((Time::ZERO + t.from, Time::ZERO + t.to));
        }
        let s = &model.server;
        let faults = s
            .outages
            .iter()
            .map(|o| Window {
                from: o.from,
                to: o.to,
            })
            .chain(s.capacity_drops.iter().map(|d| Window {
                from: d.from,
                to: d.to,
            }))
            .chain(s.slow_windows.iter().map(|w| Window {
                from: w.from,
                to: w.to,
            }));
        let span = faults.fold(None, |acc: Option<(Duration, Duration)>, w| match acc {
            None => Some((w.from, w.to)),
            Some((a, b)) => Some((a.min(w.from), b.max(w.to))),
        });
        if let Some((a, b)) = span {
            return Some((Time::ZERO + a, Time::ZERO + b));
        }
        let w = &model.workload;
        if w.kind != WorkloadKind::Open {
            return None;
        }
        let base = w.rate.0;
        let from = w.schedule.iter().find(|p| p.rate.0 > base)?.at;
        let to = w
            .schedule
            .iter()
            .find(|p| p.at > from && p.rate.0 <= base)?
            .at;
        Some((Time::ZERO + from, Time::ZERO + to))
    }

    /// The number of intents a run will start, when it is known in advance.
    pub fn planned_intents(&self) -> Option<u64> {
        match self.workload.kind {
            WorkloadKind::Burst | WorkloadKind::Contention => Some(self.workload.clients),
            WorkloadKind::Closed => Some(self.workload.intents),
            WorkloadKind::Open => (self.workload.intents > 0).then_some(self.workload.intents),
            WorkloadKind::Trace => Some(self.workload.replay.arrivals.len() as u64),
            // Jittered waits make the count a draw.
            WorkloadKind::Periodic => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse() {
        assert_eq!(Rate::parse("80/s"), Ok(Rate(80.0)));
        assert_eq!(Rate::parse("5/ms"), Ok(Rate(5000.0)));
        assert_eq!(Rate::parse("120/m"), Ok(Rate(2.0)));
        assert!(Rate::parse("80").is_err());
        assert!(Rate::parse("-1/s").is_err());
        assert!(Rate::parse("nan/s").is_err());
    }

    #[test]
    fn defaults_validate() {
        Model::default().validate().unwrap();
    }

    /// The keys refused on a tier of one replica are the ones `[server]`'s table says need two.
    #[test]
    fn the_balancer_keys_are_the_server_keys_that_need_replicas() {
        let needs: Vec<&str> = SERVER_KEYS
            .keys()
            .filter(|k| k.needs == crate::base::keys::Needs::Replicas)
            .map(|k| k.name)
            .collect();
        let checked: Vec<&str> = Server::default()
            .balancer_keys()
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| *k != "replica")
            .collect();
        assert_eq!(checked, needs);
    }

    #[test]
    fn cap_below_base_is_refused() {
        let mut m = Model::default();
        m.retry.cap = Duration::from_millis(1);
        assert_eq!(m.validate().unwrap_err().path, "retry.cap");
    }
}
