//! Choosing a replica for an attempt (`server.balancer`, `docs/replicas.md`): the balancers as
//! pure, deterministic state machines. Every balancer implements [`Pick`], one file each, and the
//! list of balancers is written once, in [`balancers!`] below (it makes the `server.balancer`
//! names, [`BalancerKind`], and the one-line dispatch of [`Algorithm`]).
//!
//! - [`round_robin`]: Envoy's round robin.
//! - [`random`]: Envoy's random.
//! - [`least_request`]: Envoy's least request, the best of `choice_count` random choices.
//! - [`p2c_ewma`]: Finagle's power of two choices over peak-EWMA cost ([`ewma`]).
//! - [`retry_host`]: Envoy's `previous_hosts` retry host predicate with
//!   `host_selection_retry_max_attempts`, for retries and hedges to another replica.
//! - [`hosts_to_use`]: Envoy's panic threshold: the replicas a pick chooses among.
//!
//! # How the engine drives it
//!
//! One [`Balancer`] per (tier, calling client) when the balancer is per client, one per tier when
//! it is shared (one sidecar or proxy in front of every client). It keeps its own view of the
//! replicas, as one proxy sees them: the attempts it sent that have not answered (Envoy's
//! `rq_active`, Finagle's `pending`) and Finagle's latency EWMA. The engine calls
//! [`Balancer::pick`] (or [`retry_host::choose`] for a retry or hedge) with the replicas the
//! attempt may go to ([`hosts_to_use`]: those not ejected by [`crate::policy::outlier`], or all of
//! them in panic), [`Balancer::start`] when the attempt is sent and [`Balancer::finish`] when its
//! answer, error or timeout comes back (Finagle ends its metric on failures too).
//!
//! Draws come from one [`Stream`] per balancer (`sim/draws.rs`, `Draws::balancer`), never from the
//! arrival, service, loss or backoff streams: two variants that differ only in their balancer
//! still see the same workload (common random numbers), and a pick never shifts another draw.

pub mod ewma;
pub mod least_request;
pub mod p2c_ewma;
pub mod random;
pub mod retry_host;
pub mod round_robin;

#[cfg(test)]
pub(crate) mod tests;

use crate::base::invalid::Invalid;
use crate::base::rng::Stream;
use crate::base::time::{Duration, Time};
use serde::{Deserialize, Serialize};

/// A source of uniform 64-bit draws: the engine passes its keyed [`Stream`], tests a script. The
/// balancers reduce a draw with `% n` as Envoy does (`random_.random() % hosts.size()`); the bias
/// is below `n / 2^64`.
pub trait Draw {
    fn next_u64(&mut self) -> u64;

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

impl Draw for Stream {
    fn next_u64(&mut self) -> u64 {
        Stream::next_u64(self)
    }
}

/// Envoy's `choice_count` default (`least_request_lb.h`, `PROTOBUF_GET_WRAPPED_OR_DEFAULT(...,
/// choice_count, 2)`).
pub const DEFAULT_CHOICE_COUNT: u32 = 2;
/// Finagle's `Balancers.p2cPeakEwma(decayTime = 10.seconds)`.
pub const DEFAULT_DECAY: Duration = Duration::from_secs(10);
/// Envoy's `healthy_panic_threshold` default: 50 %.
pub const DEFAULT_PANIC_THRESHOLD_PERCENT: u32 = 50;

/// The settings the balancers read, resolved from the `[server]` keys (their defaults when unset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// `server.choice_count`: least request's random choices.
    pub choice_count: u32,
    /// `server.ewma_decay`: Finagle's `decayTime`.
    pub decay: Duration,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            choice_count: DEFAULT_CHOICE_COUNT,
            decay: DEFAULT_DECAY,
        }
    }
}

/// What every balancer does: choose a replica for an attempt, and hear when one goes out and
/// when it comes back. The attempts in flight per replica ([`Balancer::active`]) are kept for
/// all of them.
pub trait Pick: Clone + std::fmt::Debug {
    /// The `[server]` keys only this balancer reads, each with what it does for the balancer
    /// (the message when it is set for another: `only balancer = "least-request" draws several
    /// choices`).
    const KEYS: &'static [(&'static str, &'static str)] = &[];

    /// A balancer over `replicas` replicas, built at `now` (it may draw its starting state).
    fn new(p: &Params, replicas: u32, now: Time, draw: &mut impl Draw) -> Self;

    /// The ranges its source accepts for its settings, under `path` (the `[server]` table).
    fn validate(_p: &Params, _path: &str) -> Result<(), Invalid> {
        Ok(())
    }

    /// What `explain` adds after the balancer's name (` (best of 2 random choices)`), if any.
    fn describe(_p: &Params) -> Option<String> {
        None
    }

    /// The replica among `hosts` (not empty, replica indices in a stable order); `active[r]`
    /// is the attempts in flight to replica `r`.
    fn pick(&mut self, hosts: &[u32], active: &[u32], draw: &mut impl Draw, now: Time) -> u32;

    /// An attempt went out to `replica`.
    #[inline]
    fn start(&mut self, _replica: u32) {}

    /// The attempt sent to `replica` at `sent` answered (or failed, or timed out) at `now`.
    #[inline]
    fn finish(&mut self, _replica: u32, _sent: Time, _now: Time) {}
}

/// Every balancer, once: `Variant = "name" => its type`, with the doc line the schema shows.
macro_rules! balancers {
    ($($(#[$doc:meta])* $kind:ident = $name:literal => $ty:ty,)*) => {
        /// `server.balancer`: how a caller chooses the replica for an attempt.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum BalancerKind {
            $($(#[$doc])* #[serde(rename = $name)] $kind,)*
        }

        impl BalancerKind {
            /// The name written in a model file.
            pub fn name(self) -> &'static str {
                match self { $(BalancerKind::$kind => $name,)* }
            }

            /// The balancer that reads `key` alone, with what the key does ([`Pick::KEYS`]).
            pub fn reader_of(key: &str) -> Option<(BalancerKind, &'static str)> {
                let readers = [$((BalancerKind::$kind, <$ty as Pick>::KEYS),)*];
                readers.into_iter().find_map(|(kind, keys)| {
                    keys.iter().find(|(k, _)| *k == key).map(|(_, what)| (kind, *what))
                })
            }

            /// See [`Pick::validate`].
            pub fn validate(self, p: &Params, path: &str) -> Result<(), Invalid> {
                match self { $(BalancerKind::$kind => <$ty as Pick>::validate(p, path),)* }
            }

            /// See [`Pick::describe`].
            pub fn describe(self, p: &Params) -> Option<String> {
                match self { $(BalancerKind::$kind => <$ty as Pick>::describe(p),)* }
            }
        }

        /// One balancer's algorithm state, of the configured kind.
        #[derive(Clone, Debug)]
        pub enum Algorithm {
            $($kind($ty),)*
        }

        impl Algorithm {
            fn new(kind: BalancerKind, p: &Params, replicas: u32, now: Time, draw: &mut impl Draw) -> Self {
                match kind { $(BalancerKind::$kind => Algorithm::$kind(<$ty as Pick>::new(p, replicas, now, draw)),)* }
            }

            #[inline]
            fn pick(&mut self, hosts: &[u32], active: &[u32], draw: &mut impl Draw, now: Time) -> u32 {
                match self { $(Algorithm::$kind(a) => Pick::pick(a, hosts, active, draw, now),)* }
            }

            #[inline]
            fn start(&mut self, replica: u32) {
                match self { $(Algorithm::$kind(a) => Pick::start(a, replica),)* }
            }

            #[inline]
            fn finish(&mut self, replica: u32, sent: Time, now: Time) {
                match self { $(Algorithm::$kind(a) => Pick::finish(a, replica, sent, now),)* }
            }
        }
    };
}

balancers! {
    /// Envoy's round robin (the default `lb_policy`).
    RoundRobin = "round-robin" => round_robin::RoundRobin,
    /// Envoy's random.
    Random = "random" => random::Random,
    /// Envoy's least request: the better of `choice_count` random choices.
    LeastRequest = "least-request" => least_request::LeastRequest,
    /// Finagle's power of two choices over peak-EWMA latency.
    P2cEwma = "p2c-ewma" => p2c_ewma::P2cEwma,
}

/// One balancer's state: its algorithm's and its view of each replica.
#[derive(Clone, Debug)]
pub struct Balancer {
    kind: BalancerKind,
    algorithm: Algorithm,
    /// Attempts sent through this balancer and not yet answered, per replica.
    active: Vec<u32>,
}

impl Balancer {
    /// A balancer over `replicas` replicas, built at `now`. Round robin draws its starting index
    /// here, as Envoy's constructor does; the other kinds draw nothing.
    pub fn new(
        kind: BalancerKind,
        p: &Params,
        replicas: u32,
        now: Time,
        draw: &mut impl Draw,
    ) -> Self {
        Balancer {
            kind,
            algorithm: Algorithm::new(kind, p, replicas, now, draw),
            active: vec![0; replicas as usize],
        }
    }

    pub fn kind(&self) -> BalancerKind {
        self.kind
    }

    /// The attempts this balancer sent to `replica` that have not answered.
    pub fn active(&self, replica: u32) -> u32 {
        self.active[replica as usize]
    }

    /// The replica for one attempt among `hosts` (replica indices, in a stable order); `None` when
    /// `hosts` is empty. Finagle's `load` decays the EWMA as it is read, hence `&mut` and `now`.
    pub fn pick(&mut self, hosts: &[u32], draw: &mut impl Draw, now: Time) -> Option<u32> {
        if hosts.is_empty() {
            return None;
        }
        Some(self.algorithm.pick(hosts, &self.active, draw, now))
    }

    /// An attempt went out to `replica` (the caller keeps its send time for [`finish`](Self::finish)).
    pub fn start(&mut self, replica: u32) {
        self.active[replica as usize] += 1;
        self.algorithm.start(replica);
    }

    /// The attempt sent to `replica` at `sent` answered (or failed, or timed out) at `now`.
    pub fn finish(&mut self, replica: u32, sent: Time, now: Time) {
        let a = &mut self.active[replica as usize];
        *a = a.saturating_sub(1);
        self.algorithm.finish(replica, sent, now);
    }

    /// Finagle's cost of `replica` at `now` (`p2c-ewma` only).
    pub fn ewma_cost(&mut self, replica: u32, now: Time) -> Option<f64> {
        match &mut self.algorithm {
            Algorithm::P2cEwma(p) => p.cost(replica, now),
            _ => None,
        }
    }
}

/// Envoy's panic threshold (`LoadBalancerBase::isHostSetInPanic`): the pick chooses among the
/// replicas not ejected, unless fewer than `panic_threshold_percent` % of them are left
/// (`100 * healthy / total < threshold`), when it chooses among all of them. Writes the replica
/// indices into `out` (cleared first, reused by the caller so the hot path does not allocate) and
/// returns whether the tier is in panic.
pub fn hosts_to_use(
    replicas: u32,
    ejected: impl Fn(u32) -> bool,
    panic_threshold_percent: u32,
    out: &mut Vec<u32>,
) -> bool {
    out.clear();
    out.extend((0..replicas).filter(|&r| !ejected(r)));
    let healthy_percent = if replicas == 0 {
        0.0
    } else {
        100.0 * out.len() as f64 / f64::from(replicas)
    };
    let panic = healthy_percent < f64::from(panic_threshold_percent.min(100));
    if panic {
        out.clear();
        out.extend(0..replicas);
    }
    panic
}
