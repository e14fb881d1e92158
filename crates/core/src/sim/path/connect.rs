//! The callers' connections to a tier with `server.connections`: which client holds a
//! connection to which replica, how many each replica holds, and each client's reconnect
//! backoff. The hop that sends to the tier owns them (only callers open connections): an attempt
//! on a closed connection opens one and carries a connect to the tier, whose worker pays it
//! before the request ([`super::tier`]); an answer or a timeout may close the client's
//! connections again.
//!
//! A client process holds at most one connection per replica, shared by all its requests (as
//! an HTTP/2 or gRPC channel is); below the top the calling tier is one client. A drop closes
//! the client's connections to every replica of the tier (a caller's timeout does not say which
//! replica it was waiting on).

use crate::base::time::{Duration, Time};
use crate::model::{Connections, ReconnectBackoff};
use crate::policy::Class;
use crate::sim::draws::Draws;

/// What an attempt finds on its way to replica `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Link {
    /// The client holds a connection there: the request goes as it is.
    Open,
    /// The client opens one: its request carries a connect.
    Connect,
    /// The replica holds `max_per_replica` connections: refused at once, no server work.
    Refused,
    /// The client waits out its reconnect backoff: the attempt fails at once, unsent.
    Backoff,
}

/// One client's connections to the tier.
#[derive(Clone, Copy, Debug, Default)]
struct Client {
    /// When its newest connection was opened.
    opened: Time,
    /// Some answer came back over the newest connection: its connect worked.
    proven: bool,
    /// Failed connects in a row (reset by an answer), and the reconnects they allow from.
    failures: u32,
    retry_at: Time,
}

/// What the connections did (`summary.connections[]`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ConnCounters {
    pub(super) connects: u64,
    pub(super) refused: u64,
    pub(super) deferred: u64,
    pub(super) drops: u64,
    pub(super) open: u64,
    pub(super) peak_open: u64,
}

/// The connections of every client of one hop to the tier below it.
#[derive(Clone)]
pub(super) struct Conns {
    config: Connections,
    hop: usize,
    replicas: usize,
    clients: Vec<Client>,
    /// Client `c` holds a connection to replica `r` at `c * replicas + r`.
    held: Vec<bool>,
    /// Connections each replica holds.
    per_replica: Vec<u64>,
    pub(super) n: ConnCounters,
}

impl Conns {
    pub(super) fn new(config: &Connections, hop: usize, clients: usize, replicas: usize) -> Self {
        let replicas = replicas.max(1);
        Conns {
            config: config.clone(),
            hop,
            replicas,
            clients: vec![Client::default(); clients.max(1)],
            held: vec![false; clients.max(1) * replicas],
            per_replica: vec![0; replicas],
            n: ConnCounters::default(),
        }
    }

    /// Client `client`'s attempt is about to go to replica `r` at `now`.
    pub(super) fn link(&mut self, client: u32, r: usize, now: Time) -> Link {
        let c = client as usize;
        if self.held[c * self.replicas + r] {
            return Link::Open;
        }
        if now < self.clients[c].retry_at {
            self.n.deferred += 1;
            return Link::Backoff;
        }
        if self
            .config
            .max_per_replica
            .is_some_and(|m| self.per_replica[r] >= m)
        {
            self.n.refused += 1;
            return Link::Refused;
        }
        self.held[c * self.replicas + r] = true;
        self.per_replica[r] += 1;
        self.n.connects += 1;
        self.n.open += 1;
        self.n.peak_open = self.n.peak_open.max(self.n.open);
        self.clients[c].opened = now;
        self.clients[c].proven = false;
        Link::Connect
    }

    /// A connect of client `client` was refused: a failed connect, as gRPC counts it.
    pub(super) fn refused(&mut self, client: u32, now: Time, draws: Draws) {
        self.failed_connect(client as usize, now, draws);
    }

    /// Client `client`'s attempt ended as `class` at `now` (an answer, or its timeout): the
    /// connection proved itself, or is dropped as `drop_on` says (always when it broke).
    pub(super) fn ended(&mut self, client: u32, class: Class, now: Time, draws: Draws) {
        let c = client as usize;
        let timeout = class == Class::Timeout;
        let broken = class == Class::Connection;
        let server_error = matches!(class, Class::ServerError | Class::Unavailable);
        if !timeout && !broken {
            // An answer came back over the connection: its connect worked (gRPC resets its
            // backoff once a connection is ready).
            self.clients[c].proven = true;
            self.clients[c].failures = 0;
        }
        if !(broken || self.config.drops(timeout, server_error)) {
            return;
        }
        let still_connecting = self.config.reconnect_backoff.is_some_and(|b| {
            timeout
                && !self.clients[c].proven
                && now.since(self.clients[c].opened) < b.min_connect_timeout
        });
        if still_connecting {
            // gRPC gives a connect at least `min_connect_timeout` before it gives up on it.
            return;
        }
        let row = c * self.replicas..(c + 1) * self.replicas;
        let mut closed = 0;
        for (r, held) in self.held[row].iter_mut().enumerate() {
            if *held {
                *held = false;
                self.per_replica[r] -= 1;
                closed += 1;
            }
        }
        if closed == 0 {
            return;
        }
        self.n.drops += 1;
        self.n.open -= closed;
        if !self.clients[c].proven {
            self.failed_connect(c, now, draws);
        }
    }

    /// A connect of client `c` failed: with a reconnect backoff, its next connect waits.
    fn failed_connect(&mut self, c: usize, now: Time, draws: Draws) {
        let Some(b) = self.config.reconnect_backoff else {
            return;
        };
        let cl = &mut self.clients[c];
        cl.failures = cl.failures.saturating_add(1);
        let wait = jittered(&b, cl.failures, draws, self.hop, c as u32);
        cl.retry_at = now + wait;
    }

    /// Connections held at the end of the run.
    pub(super) fn open(&self) -> u64 {
        self.n.open
    }
}

/// gRPC's wait after `failures` failed connects in a row: the base spread uniformly by
/// `jitter` either way.
fn jittered(
    b: &ReconnectBackoff,
    failures: u32,
    draws: Draws,
    hop: usize,
    client: u32,
) -> Duration {
    let base = b.base(failures).0 as f64;
    let u = draws.reconnect(hop, client, failures).uniform();
    Duration::from_nanos_f64(base * (1.0 + b.jitter * (2.0 * u - 1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dist::Dist;
    use crate::model::DropOn;

    fn conns(drop_on: Vec<DropOn>, max: Option<u64>, backoff: bool) -> Conns {
        let config = Connections {
            connect: Dist::default(),
            drop_on,
            max_per_replica: max,
            reconnect_backoff: backoff.then(ReconnectBackoff::default),
        };
        Conns::new(&config, 0, 3, 2)
    }

    #[test]
    fn a_client_connects_once_until_a_drop() {
        let mut c = conns(vec![DropOn::Timeout], None, false);
        let (t, d) = (Time::ZERO, Draws::new(1));
        assert_eq!(c.link(0, 1, t), Link::Connect);
        assert_eq!(c.link(0, 1, t), Link::Open);
        assert_eq!(c.link(0, 0, t), Link::Connect);
        c.ended(0, Class::ServerError, t, d);
        assert_eq!(c.link(0, 1, t), Link::Open);
        c.ended(0, Class::Timeout, t, d);
        assert_eq!((c.n.drops, c.open()), (1, 0));
        assert_eq!(c.link(0, 1, t), Link::Connect);
        assert_eq!(c.n.connects, 3);
    }

    #[test]
    fn a_broken_connection_always_drops() {
        let mut c = conns(Vec::new(), None, false);
        let (t, d) = (Time::ZERO, Draws::new(1));
        c.link(2, 0, t);
        c.ended(2, Class::Timeout, t, d);
        assert_eq!(c.link(2, 0, t), Link::Open);
        c.ended(2, Class::Connection, t, d);
        assert_eq!(c.link(2, 0, t), Link::Connect);
    }

    #[test]
    fn a_full_replica_refuses_a_connect() {
        let mut c = conns(Vec::new(), Some(1), false);
        let t = Time::ZERO;
        assert_eq!(c.link(0, 0, t), Link::Connect);
        assert_eq!(c.link(1, 0, t), Link::Refused);
        assert_eq!(c.link(1, 1, t), Link::Connect);
        assert_eq!(c.n.refused, 1);
    }

    #[test]
    fn failed_connects_back_off_and_an_answer_resets() {
        let mut c = conns(vec![DropOn::Timeout], None, true);
        let d = Draws::new(7);
        let t0 = Time::ZERO;
        c.link(0, 0, t0);
        // Within the minimum connect timeout a timeout leaves the connect alone.
        c.ended(0, Class::Timeout, t0 + Duration::from_secs(1), d);
        assert_eq!(c.link(0, 0, t0 + Duration::from_secs(1)), Link::Open);
        let t1 = t0 + Duration::from_secs(21);
        c.ended(0, Class::Timeout, t1, d);
        // The first failed connect waits 1 s +- 20 %.
        assert_eq!(c.link(0, 0, t1 + Duration::from_millis(790)), Link::Backoff);
        let t2 = t1 + Duration::from_millis(1210);
        assert_eq!(c.link(0, 0, t2), Link::Connect);
        c.ended(0, Class::Success, t2, d);
        c.ended(0, Class::Timeout, t2, d);
        // A proven connection's drop reconnects at once.
        assert_eq!(c.link(0, 0, t2), Link::Connect);
        assert_eq!(c.n.deferred, 1);
    }
}
