//! `[network]`: latency and loss between a caller and the tier it calls.

use crate::base::dist::Dist;
use crate::base::keys::{KeyTable, key};
use serde::{Deserialize, Serialize};

/// How a client learns that its request was lost before reaching the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LossNotice {
    /// At once, as a connection error (the article's `throw` before `fetch`).
    Error,
    /// Only when its per-attempt timeout fires.
    Timeout,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Network {
    /// One-way latency, both directions, unless a direction is given on its own.
    pub latency: Dist,
    pub request_latency: Option<Dist>,
    pub response_latency: Option<Dist>,
    /// Probability a request never reaches the server.
    pub request_loss: f64,
    pub loss_notice: LossNotice,
    /// Probability a reply never reaches the client (the effect ran).
    pub response_loss: f64,
}

/// `[network]`'s keys (also a `[[tier]]`'s `network`).
pub const NETWORK_KEYS: KeyTable = KeyTable {
    section: "network",
    schema: "Network",
    docs: &[("docs/model.md", "## `[network]`")],
    runs: &[&[
        key(
            "latency",
            "`\"0\"`",
            "one-way latency distribution, both directions",
        ),
        key(
            "request_latency",
            "`latency`",
            "the request direction's latency distribution, instead of `latency`",
        ),
        key(
            "response_latency",
            "`latency`",
            "the response direction's latency distribution, instead of `latency`",
        ),
        key(
            "request_loss",
            "`0`",
            "probability a request never reaches the server",
        ),
        key(
            "loss_notice",
            "`\"timeout\"`",
            "how the client learns of a lost request: `error` (at once, as a connection error: the \
            article's `throw` before `fetch`) or `timeout`",
        ),
        key(
            "response_loss",
            "`0`",
            "probability a reply never reaches the client (the effect ran)",
        ),
    ]],
    expanded: &[],
};

impl Default for Network {
    fn default() -> Self {
        Network {
            latency: Dist::default(),
            request_latency: None,
            response_latency: None,
            request_loss: 0.0,
            loss_notice: LossNotice::Timeout,
            response_loss: 0.0,
        }
    }
}

impl Network {
    pub fn request_latency(&self) -> Dist {
        self.request_latency.unwrap_or(self.latency)
    }
    pub fn response_latency(&self) -> Dist {
        self.response_latency.unwrap_or(self.latency)
    }
}
