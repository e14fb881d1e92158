//! `[[layer]]` and `[[tier]]`: the request path above the bottom `[server]`.

use super::backoff::{BACKOFF_KEYS, BackoffSpec, Found, Next, Section, deserialize_section, set};
use super::*;
use crate::base::dist::Dist;
use crate::base::keys::{KeyTable, key};
use crate::base::time::Duration;
use crate::policy::backoff::Backoff;
use crate::policy::breaker::BreakerConfig;
use crate::policy::budget::BudgetConfig;
use crate::policy::hedge::HedgeConfig;
use serde::{Deserialize, Deserializer, Serialize};

/// One layer of a layered request path (`[[layer]]`): a caller with its own retry policy that
/// sends each attempt to the layer below it (the last layer sends to the bottom, `[server]`).
/// Semantics and the closed form are in `docs/layered.md`.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(default)]
#[schemars(deny_unknown_fields)]
pub struct Layer {
    /// Shown in the per-layer report (`layer{i}` when empty).
    pub name: String,
    /// Attempts per call this layer receives, the first try included (1 = never retry).
    pub max_attempts: u32,
    /// Per-attempt timeout; none = wait for the layer below however long it takes. A timed-out
    /// attempt is not cancelled below: its work goes on, orphaned.
    pub timeout: Option<Duration>,
    /// One-way latency to the layer below, each direction.
    pub latency: Dist,
    /// `backoff`, `jitter`, `base`, `cap`, `multiplier`, `first_exponent` and the jitter sizes,
    /// as `[retry]`'s, written among the keys above and below.
    #[serde(flatten)]
    pub backoff_spec: BackoffSpec,
    /// A retry budget shared by every call through this layer; none = only `max_attempts` limits.
    pub budget: Option<LayerBudget>,
}

impl Default for Layer {
    fn default() -> Self {
        let r = Retry::default();
        Layer {
            name: String::new(),
            max_attempts: r.max_attempts,
            timeout: None,
            latency: Dist::default(),
            backoff_spec: r.backoff_spec,
            budget: None,
        }
    }
}

impl Layer {
    /// The engine's backoff for this layer's retries.
    pub fn backoff(&self) -> Backoff {
        self.backoff_spec.backoff()
    }
}

/// `[[layer]]`'s keys.
pub const LAYER_KEYS: KeyTable = KeyTable {
    section: "layer",
    schema: "Layer",
    docs: &[("docs/layered.md", "### `[[layer]]` fields")],
    runs: &[
        &[
            key("name", "`layer{i}`", "shown in the per-layer report"),
            key(
                "max_attempts",
                "3",
                "attempts per call, the first included (1 = never retry); 1..=10000",
            ),
            key(
                "timeout",
                "none",
                "per-attempt timeout; none = wait however long it takes",
            ),
            key(
                "latency",
                "`0`",
                "one-way latency to the layer below, each direction (a distribution)",
            ),
        ],
        &BACKOFF_KEYS,
        &[key(
            "budget",
            "none",
            "a retry budget shared by every call through the layer (below)",
        )],
    ],
    expanded: &[],
};

impl Section for Layer {
    const NAME: &'static str = "Layer";
    const KEYS: &'static [&'static str] = &LAYER_KEYS.names::<{ LAYER_KEYS.count() }>();

    fn read<'de, N: Next<'de>>(&mut self, key: &str, n: &mut N) -> Result<Found, N::Error> {
        Ok(match key {
            "name" => set(n, &mut self.name)?,
            "max_attempts" => set(n, &mut self.max_attempts)?,
            "timeout" => set(n, &mut self.timeout)?,
            "latency" => set(n, &mut self.latency)?,
            "budget" => set(n, &mut self.budget)?,
            _ => return self.backoff_spec.read(key, n),
        })
    }
}

impl<'de> Deserialize<'de> for Layer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_section(d)
    }
}

/// One `[[tier]]` of the request path: a server (`server`, every key of `[server]`) and the
/// client inside it that calls the next tier down (`retry`, `network`, `budget`, `breaker`,
/// `hedge`, every key of the top-level sections of the same names). The last tier is `[server]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TierConfig {
    /// Shown in the per-tier report (`tier{i}` when empty).
    pub name: String,
    pub server: Server,
    pub retry: Retry,
    pub network: Network,
    pub budget: BudgetConfig,
    pub breaker: BreakerConfig,
    pub hedge: HedgeConfig,
}

/// `[[tier]]`'s keys: the sections a tier holds, each with the keys of its top-level namesake.
pub const TIER_KEYS: KeyTable = KeyTable {
    section: "tier",
    schema: "TierConfig",
    docs: &[("docs/model.md", "## The request path")],
    runs: &[&[
        key(
            "name",
            "`\"tier{i}\"`",
            "shown in `summary.tiers[]` and `summary.layered.layers[]`",
        ),
        key(
            "server",
            "as `[server]`",
            "every key of `[server]` except `contention`: workers, queue, service time, failures, \
            outages, capacity drops, slow windows, shedding, rate limit, crashes, `drop_expired`",
        ),
        key(
            "retry",
            "as `[retry]`",
            "the retry policy of this tier's client towards the next tier: attempts, per-attempt \
            timeout, deadline, backoff and jitter, retry classes, Retry-After, `cancel`, `mode` \
            (fills this tier's `retry` and `budget`)",
        ),
        key(
            "network",
            "as `[network]`",
            "the hop to the next tier: latency, request and response loss",
        ),
        key(
            "budget",
            "off",
            "as `[budget]`, for this tier's client (one instance per tier: `scope` has nothing to \
            split)",
        ),
        key(
            "breaker",
            "off",
            "as `[breaker]`, for this tier's client (one instance per tier: `scope` has nothing to \
            split)",
        ),
        key("hedge", "off", "as `[hedge]`, for this tier's client"),
    ]],
    expanded: &[],
};

// A `[[layer]]`'s budget (`layer.budget`). Not to be confused with the `[budget]` section
// (`BudgetConfig`) or a running budget (`policy::budget::BudgetState`). The doc comment below
// is the schema's description: keep it as it is.
/// A retry budget: a limit on retries shared by all calls through one layer, written
/// `budget = { kind = "tokens", max_tokens = 10, token_ratio = 0.1 }` or
/// `budget = { kind = "ratio", ratio = 0.1, min_retries = 10 }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
#[schemars(rename = "Budget")]
pub enum LayerBudget {
    /// gRPC retry throttling (gRFC A6, "Client-side retry throttling"): a token count starts at
    /// `max_tokens`; each failed attempt takes 1, each success gives back `token_ratio` (up to
    /// `max_tokens`); a retry is allowed only while the count is above `max_tokens / 2`.
    Tokens { max_tokens: f64, token_ratio: f64 },
    /// Finagle's `RetryBudget` (percentCanRetry, minRetriesPerSec; also the Google SRE book's
    /// per-client retry budget, chapter "Handling Overload"), without Finagle's time window: each
    /// call received deposits `ratio` retries, each retry withdraws one, and `min_retries` is the
    /// starting balance. So retries <= `min_retries + ratio * calls`.
    Ratio {
        ratio: f64,
        #[serde(default)]
        min_retries: u64,
    },
}
