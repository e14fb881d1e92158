//! `[idempotency]`: keys, the store that remembers them, and when an effect commits.

use crate::base::keys::{KeyTable, key};
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

/// `[idempotency]`'s keys.
pub const IDEMPOTENCY_KEYS: KeyTable = KeyTable {
    section: "idempotency",
    schema: "Idempotency",
    docs: &[("docs/model.md", "## `[idempotency]`")],
    runs: &[&[
        key(
            "key",
            "`\"none\"`",
            "`none`, `per-intent` (chosen once before the first send, reused: correct), \
            `per-attempt` (a new key inside the retry loop: the bug)",
        ),
        key(
            "store",
            "`\"none\"`",
            "`none`; `record-before` (key recorded before the effect; a concurrent duplicate waits \
            and shares the result, as the article's server); `record-before-409` (a concurrent \
            duplicate gets 409 Conflict, as the IETF Idempotency-Key draft proposes, and \
            retries); `record-after` (key recorded after the effect: the article's bug)",
        ),
        key(
            "ttl",
            "none",
            "how long a key is remembered; a retry after expiry runs the effect again",
        ),
        key(
            "commit",
            "`\"atomic\"`",
            "how the effect and the key record commit: `atomic` (one transaction: a crash rolls \
            back both, as the article's SQLite example), `effect-then-key`, `key-then-effect`",
        ),
        key(
            "persist_key",
            "`true`",
            "on a client restart keep the key (the article's rule 2) or make a new one",
        ),
    ]],
    expanded: &[],
};

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
