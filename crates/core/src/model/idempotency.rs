//! `[idempotency]`: keys, the store that remembers them, and when an effect commits.

use crate::base::time::Duration;
use serde::{Deserialize, Serialize};

/// How the client chooses idempotency keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum KeyMode {
    None,
    /// Chosen once before the first send and reused on every retry (correct).
    PerIntent,
    /// A new key inside the retry loop: the bug the article warns about.
    PerAttempt,
}

/// The server's dedupe store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StoreMode {
    None,
    /// Key recorded before the effect; a concurrent duplicate waits and shares the result.
    RecordBefore,
    /// Key recorded before the effect; a concurrent duplicate gets 409 Conflict (IETF draft).
    /// Spelled `record-before-409` as documented; `record-before409` (the name derived from the
    /// variant before this was noticed) is still read.
    #[serde(rename = "record-before-409", alias = "record-before409")]
    RecordBefore409,
    /// Key recorded only after the effect: concurrent duplicates both run it (the article's bug).
    RecordAfter,
}

/// How the effect and the key record are committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommitMode {
    /// One transaction: a crash rolls back both.
    Atomic,
    EffectThenKey,
    KeyThenEffect,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Idempotency {
    pub key: KeyMode,
    pub store: StoreMode,
    /// How long a key is remembered; none = forever.
    pub ttl: Option<Duration>,
    pub commit: CommitMode,
    /// On a client restart, keep the key (true, the article's rule 2) or make a new one.
    pub persist_key: bool,
}

impl Default for Idempotency {
    fn default() -> Self {
        Idempotency {
            key: KeyMode::None,
            store: StoreMode::None,
            ttl: None,
            commit: CommitMode::Atomic,
            persist_key: true,
        }
    }
}
