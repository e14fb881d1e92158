//! `server.fanout`: a tier that answers a request by calling the next tier K times (a
//! scatter-gather, "The Tail at Scale", Dean and Barroso, CACM 2013) and waits for all of the
//! calls, the first, or a quorum.

use crate::base::invalid::{Invalid, invalid};
use crate::base::keys::{KeyTable, key};
use serde::{Deserialize, Serialize};

/// The most calls one fan-out sends: each is a retry loop of its own, so a run holds up to this
/// many per request in service at the fan-out tier.
pub const MAX_FANOUT: u32 = 10_000;

/// A tier's fan-out (`server.fanout`): after its own work the tier's client sends `k` calls to
/// the next tier, each with the tier's `retry` policy, and the tier answers when `wait` is met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fanout {
    /// Calls sent to the next tier per request (1..=10000).
    pub k: u32,
    /// When the tier answers: "all" (every call succeeded), "first" (one did) or
    /// `{ quorum = m }` (m of them did). It answers a failure as soon as the rule cannot be met.
    #[serde(default)]
    pub wait: Wait,
    /// What a retry of the caller re-sends: "all" (every call again, as most code does) or
    /// "missing" (only the calls that had not succeeded when the previous attempt answered).
    #[serde(default)]
    pub resend: Resend,
    /// Cancel the calls still running once the tier has answered: they make no more attempts
    /// and their requests still queued or on the way are dropped before service.
    #[serde(default)]
    pub cancel: bool,
}

/// How many of a fan-out's calls must succeed.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Wait {
    /// Every call.
    #[default]
    All,
    /// Any one call.
    First,
    /// `m` of the calls.
    Quorum(u32),
}

/// What a retry of the caller re-sends.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Resend {
    /// Every call again.
    #[default]
    All,
    /// Only the calls that had not succeeded when the previous attempt was answered.
    Missing,
}

/// `server.fanout`'s keys.
pub const FANOUT_KEYS: KeyTable = KeyTable {
    section: "server.fanout",
    schema: "Fanout",
    docs: &[("docs/model.md", "### Fan-out")],
    runs: &[&[
        key(
            "k",
            "required",
            "calls sent to the next tier per request, 1..=10000, spread over its replicas by \
            the balancer; each is a retry loop with the tier's `retry` policy",
        ),
        key(
            "wait",
            "`\"all\"`",
            "when the tier answers: `\"all\"` (every call succeeded), `\"first\"` (one did) or \
            `{ quorum = m }` (m of them did, 1..=k); it answers a failure as soon as the rule can \
            no longer be met",
        ),
        key(
            "resend",
            "`\"all\"`",
            "what a retry of the caller re-sends: `\"all\"` (every call again, as most code \
            does) or `\"missing\"` (only the calls that had not succeeded when the previous \
            attempt was answered; the rule waits for the rest)",
        ),
        key(
            "cancel",
            "`false`",
            "once the tier has answered, cancel the calls still running: no more attempts, their \
            requests still queued or on the way dropped before service; a request already in \
            service runs to its end (wasted work)",
        ),
    ]],
    expanded: &[],
};

impl Fanout {
    /// The successes the tier waits for.
    pub fn needed(&self) -> u32 {
        match self.wait {
            Wait::All => self.k,
            Wait::First => 1,
            Wait::Quorum(m) => m,
        }
    }

    /// `k` and the quorum in range, under the field path `p` (`tier[0].server.fanout`).
    pub(crate) fn validate(&self, p: &str) -> Result<(), Invalid> {
        if self.k == 0 {
            return Err(invalid(
                &format!("{p}.k"),
                format!("must be at least 1 (calls per request, 1..={MAX_FANOUT})"),
            ));
        }
        if self.k > MAX_FANOUT {
            return Err(invalid(
                &format!("{p}.k"),
                format!("at most {MAX_FANOUT} calls per request, got {}", self.k),
            ));
        }
        if let Wait::Quorum(m) = self.wait
            && (m == 0 || m > self.k)
        {
            return Err(invalid(
                &format!("{p}.wait.quorum"),
                format!(
                    "must be between 1 and k ({}): the successes out of k calls, got {m}",
                    self.k
                ),
            ));
        }
        Ok(())
    }
}
