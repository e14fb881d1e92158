//! `[network]`: latency and loss between a caller and the tier it calls.

use crate::base::dist::Dist;
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
