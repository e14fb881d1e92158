//! `server.connections`: what a connection to a tier costs. A client process holds a
//! connection to each replica it calls; a timeout or an error answer may drop it, and the next
//! attempt on a closed connection pays a connect (a TLS handshake, authentication) in server work
//! before its request: the reconnect storm, where reconnects eat the capacity the requests need.
//! gRPC's connection backoff (grpc/grpc `doc/connection-backoff.md`) spaces the reconnects of a
//! client apart, separately from the request retry backoff.

use crate::base::dist::Dist;
use crate::base::invalid::{Invalid, invalid, non_negative, positive};
use crate::base::keys::{KeyTable, key};
use crate::base::time::Duration;
use serde::{Deserialize, Serialize};

/// A tier's connection cost (`server.connections`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Connections {
    /// The server work of opening a connection, drawn per connect: it occupies a worker before
    /// the request that opened the connection is served.
    pub connect: Dist,
    /// What closes a client's connections to the tier besides a broken connection (which always
    /// does): `"timeout"`, `"5xx"`, `"answer"` (every answer: no keep-alive).
    #[serde(default)]
    pub drop_on: Vec<DropOn>,
    /// Connections one replica holds at once; a connect beyond it is refused (a connection
    /// error without server work). Absent: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_replica: Option<u64>,
    /// gRPC's connection backoff: after a connect that failed, a client waits before it
    /// connects again; absent, it reconnects with its next attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_backoff: Option<ReconnectBackoff>,
}

/// What besides a broken connection drops it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum DropOn {
    /// The attempt timed out: the client closes the connection (an HTTP/1.1 client can cancel
    /// a request no other way).
    #[serde(rename = "timeout")]
    Timeout,
    /// A 500 or 503 answer: the client assumes a bad connection or host.
    #[serde(rename = "5xx")]
    ServerError,
    /// Every answer: no keep-alive, a connection per request.
    #[serde(rename = "answer")]
    Answer,
}

/// gRPC's connection backoff, with its published defaults (`reconnect_backoff = {}`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ReconnectBackoff {
    /// The wait after the first failed connect (gRPC's `INITIAL_BACKOFF`, 1 s).
    pub initial: Duration,
    /// The factor per further failed connect (`MULTIPLIER`, 1.6).
    pub multiplier: f64,
    /// The wait is spread uniformly by this share either way (`JITTER`, 0.2).
    pub jitter: f64,
    /// The longest wait (`MAX_BACKOFF`, 120 s).
    pub max: Duration,
    /// A connect younger than this is not dropped by a timeout (`MIN_CONNECT_TIMEOUT`, 20 s).
    pub min_connect_timeout: Duration,
}

impl Default for ReconnectBackoff {
    fn default() -> Self {
        ReconnectBackoff {
            initial: Duration::from_secs(1),
            multiplier: 1.6,
            jitter: 0.2,
            max: Duration::from_secs(120),
            min_connect_timeout: Duration::from_secs(20),
        }
    }
}

/// `server.connections`' keys.
pub const CONNECTIONS_KEYS: KeyTable = KeyTable {
    section: "server.connections",
    schema: "Connections",
    docs: &[("docs/model.md", "### Connections")],
    runs: &[&[
        key(
            "connect",
            "required",
            "the server work of a connect (a TLS handshake, authentication), a service time \
            distribution: a worker spends it before the request that opened the connection",
        ),
        key(
            "drop_on",
            "`[]`",
            "what closes a client's connections to the tier besides a broken connection (which \
            always does): `\"timeout\"`, `\"5xx\"` (a 500 or 503), `\"answer\"` (every answer: no \
            keep-alive)",
        ),
        key(
            "max_per_replica",
            "none",
            "connections one replica holds at once; a connect beyond it is refused at once (a \
            connection error, no server work)",
        ),
        key(
            "reconnect_backoff",
            "none",
            "gRPC's connection backoff: `{}` for its defaults (`initial = \"1s\"`, `multiplier = \
            1.6`, `jitter = 0.2`, `max = \"120s\"`, `min_connect_timeout = \"20s\"`): after a \
            failed connect the client fails its attempts at once until the wait is over",
        ),
    ]],
    expanded: &[],
};

impl Connections {
    /// Whether an attempt that ended as `class` closes the client's connections (a broken
    /// connection always does).
    pub fn drops(&self, timeout: bool, server_error: bool) -> bool {
        self.drop_on.iter().any(|d| match d {
            DropOn::Timeout => timeout,
            DropOn::ServerError => server_error,
            DropOn::Answer => !timeout,
        })
    }

    /// The ranges, under the field path `p` (`server.connections`).
    pub(crate) fn validate(&self, p: &str) -> Result<(), Invalid> {
        if self.max_per_replica == Some(0) {
            return Err(invalid(
                &format!("{p}.max_per_replica"),
                "must be at least 1 (leave it out for no cap)",
            ));
        }
        for (i, d) in self.drop_on.iter().enumerate() {
            if self.drop_on[..i].contains(d) {
                return Err(invalid(
                    &format!("{p}.drop_on"),
                    "lists a reason twice; each of \"timeout\", \"5xx\", \"answer\" at most once",
                ));
            }
        }
        if let Some(b) = &self.reconnect_backoff {
            let at = |f: &str| format!("{p}.reconnect_backoff.{f}");
            if b.multiplier < 1.0 || !b.multiplier.is_finite() {
                return Err(invalid(
                    &at("multiplier"),
                    format!("must be at least 1 (gRPC's is 1.6), got {}", b.multiplier),
                ));
            }
            non_negative(&at("jitter"), b.jitter)?;
            if b.jitter >= 1.0 {
                return Err(invalid(
                    &at("jitter"),
                    format!("must be below 1 (gRPC's is 0.2), got {}", b.jitter),
                ));
            }
            positive(&at("initial"), b.initial.0 as f64)?;
            if b.max < b.initial {
                return Err(invalid(
                    &at("max"),
                    format!("must be at least initial ({}), got {}", b.initial, b.max),
                ));
            }
        }
        Ok(())
    }
}

impl ReconnectBackoff {
    /// The wait after `failures` failed connects in a row (1 = the first), before jitter:
    /// `initial × multiplier^(failures - 1)`, at most `max`.
    pub fn base(&self, failures: u32) -> Duration {
        let n = failures.saturating_sub(1).min(1_000) as i32;
        let ns = self.initial.0 as f64 * self.multiplier.powi(n);
        Duration::from_nanos_f64(ns.min(self.max.0 as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_grows_by_the_multiplier_up_to_max() {
        let b = ReconnectBackoff::default();
        assert_eq!(b.base(1), Duration::from_secs(1));
        assert_eq!(b.base(2), Duration::from_millis(1600));
        assert_eq!(b.base(3), Duration::from_millis(2560));
        assert_eq!(b.base(40), Duration::from_secs(120));
    }

    #[test]
    fn what_drops_a_connection() {
        let mut c = Connections {
            connect: Dist::default(),
            drop_on: vec![DropOn::Timeout],
            max_per_replica: None,
            reconnect_backoff: None,
        };
        assert!(c.drops(true, false));
        assert!(!c.drops(false, true));
        c.drop_on = vec![DropOn::ServerError];
        assert!(!c.drops(true, false) && c.drops(false, true));
        c.drop_on = vec![DropOn::Answer];
        assert!(c.drops(false, false) && !c.drops(true, false));
    }
}
