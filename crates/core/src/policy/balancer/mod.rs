//! Choosing a replica for an attempt (issue 27, "Replicas behind a load balancer"): the balancers
//! as pure, deterministic state machines. No model key selects them yet; the engine wiring waits
//! for the event-loop work of issue 32.
//!
//! - **`round-robin`**: Envoy's `RoundRobinLoadBalancer` with equal weights
//!   (envoyproxy/envoy `source/extensions/load_balancing_policies/round_robin/round_robin_lb.h`,
//!   `unweightedHostPick`): `hosts[rr_index++ % hosts.len()]`, the index starting at a random
//!   `seed_` drawn when the balancer is built (`EdfLoadBalancerBase`, `seed_(random_.random())`,
//!   so that proxies do not all start on the same host). The index survives changes to the host
//!   list (an ejection) and is taken modulo the new length.
//! - **`random`**: Envoy's `RandomLoadBalancer`: `hosts[random() % hosts.len()]`.
//! - **`least-request`**: Envoy's `LeastRequestLoadBalancer` with equal weights and the default
//!   `selection_method = N_CHOICES` (`source/extensions/load_balancing_policies/least_request/
//!   least_request_lb.cc`, `unweightedHostPickNChoices`; docs "Load balancers", "Weighted least
//!   request"): `choice_count` draws (default 2) of `random() % hosts.len()`, *with* replacement;
//!   a later sample replaces the candidate only with strictly fewer active requests, so ties keep
//!   the earlier one.
//! - **`p2c-ewma`**: Finagle's `P2CPeakEwma` (twitter/finagle `finagle-core/src/main/scala/com/
//!   twitter/finagle/loadbalancer/PeakEwma.scala`, `p2c/P2CPick.scala`): two *distinct* random
//!   replicas, the one with the lower peak-EWMA cost wins (ties to the first); see [`ewma`].
//! - [`retry_host`]: Envoy's `previous_hosts` retry host predicate with
//!   `host_selection_retry_max_attempts`, for retries and hedges to another replica.
//! - [`hosts_to_use`]: Envoy's panic threshold: the replicas a pick chooses among.
//!
//! # How the engine will drive it
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
//! Draws come from one [`Stream`] per balancer, keyed `(seed, tier << 32 | client)` with a purpose
//! of its own (a new `Purpose` discriminant, added with the wiring), never from the arrival,
//! service, loss or backoff streams: two variants that differ only in their balancer still see
//! the same workload (common random numbers), and a pick never shifts another draw.

pub mod ewma;
pub mod retry_host;

#[cfg(test)]
pub(crate) mod tests;

use crate::base::invalid::{Invalid, invalid};
use crate::base::rng::Stream;
use crate::base::time::{Duration, Time};
use ewma::PeakEwma;

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

/// Which balancer, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    RoundRobin,
    Random,
    /// Envoy's least request: the best of `choice_count` random choices.
    LeastRequest {
        choice_count: u32,
    },
    /// Finagle's power of two choices over peak-EWMA cost; `decay` is its `decayTime`.
    P2cEwma {
        decay: Duration,
    },
}

impl Kind {
    /// The name the issue gives it (and a model key will use).
    pub fn name(self) -> &'static str {
        match self {
            Kind::RoundRobin => "round-robin",
            Kind::Random => "random",
            Kind::LeastRequest { .. } => "least-request",
            Kind::P2cEwma { .. } => "p2c-ewma",
        }
    }

    /// Envoy refuses `choice_count < 2` (`LeastRequest` proto, `uint32 = {gte: 2}`); Finagle's
    /// `Ema` requires `decayTime > 0`.
    pub fn validate(self, path: &str) -> Result<(), Invalid> {
        match self {
            Kind::LeastRequest { choice_count } if choice_count < 2 => Err(invalid(
                &format!("{path}.choice_count"),
                format!("must be at least 2 (Envoy's least request), got {choice_count}"),
            )),
            Kind::P2cEwma { decay } if decay == Duration::ZERO => Err(invalid(
                &format!("{path}.decay"),
                "must be a positive duration, e.g. \"10s\" (Finagle's default)",
            )),
            _ => Ok(()),
        }
    }
}

/// One balancer's state: its round-robin index and its view of each replica.
#[derive(Clone, Debug)]
pub struct Balancer {
    kind: Kind,
    rr_index: u64,
    /// Attempts sent through this balancer and not yet answered, per replica.
    active: Vec<u32>,
    /// Finagle's per-node metric; empty unless the kind is `p2c-ewma`.
    ewma: Vec<PeakEwma>,
}

impl Balancer {
    /// A balancer over `replicas` replicas, built at `now`. Round robin draws its starting index
    /// here, as Envoy's constructor does; the other kinds draw nothing.
    pub fn new(kind: Kind, replicas: u32, now: Time, draw: &mut impl Draw) -> Self {
        let rr_index = match kind {
            Kind::RoundRobin => draw.next_u64(),
            _ => 0,
        };
        let ewma = match kind {
            Kind::P2cEwma { decay } => (0..replicas).map(|_| PeakEwma::new(decay, now)).collect(),
            _ => Vec::new(),
        };
        Balancer {
            kind,
            rr_index,
            active: vec![0; replicas as usize],
            ewma,
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The attempts this balancer sent to `replica` that have not answered.
    pub fn active(&self, replica: u32) -> u32 {
        self.active[replica as usize]
    }

    /// The replica for one attempt among `hosts` (replica indices, in a stable order); `None` when
    /// `hosts` is empty. Finagle's `load` decays the EWMA as it is read, hence `&mut` and `now`.
    pub fn pick(&mut self, hosts: &[u32], draw: &mut impl Draw, now: Time) -> Option<u32> {
        let n = hosts.len() as u64;
        if n == 0 {
            return None;
        }
        let host = match self.kind {
            Kind::RoundRobin => {
                let i = self.rr_index % n;
                self.rr_index = self.rr_index.wrapping_add(1);
                hosts[i as usize]
            }
            Kind::Random => hosts[draw.below(n) as usize],
            Kind::LeastRequest { choice_count } => self.least_request(hosts, choice_count, draw),
            Kind::P2cEwma { .. } => self.p2c_ewma(hosts, draw, now),
        };
        Some(host)
    }

    /// `unweightedHostPickNChoices`: with replacement; strictly fewer active requests replaces.
    fn least_request(&self, hosts: &[u32], choice_count: u32, draw: &mut impl Draw) -> u32 {
        let n = hosts.len() as u64;
        let mut best = hosts[draw.below(n) as usize];
        for _ in 1..choice_count {
            let sampled = hosts[draw.below(n) as usize];
            if self.active(sampled) < self.active(best) {
                best = sampled;
            }
        }
        best
    }

    /// `P2CPick.pick`: `a` uniform, `b` uniform over the others (the "hole" at `a` skipped),
    /// then `if (nodeA.load <= nodeB.load) nodeA else nodeB`.
    fn p2c_ewma(&mut self, hosts: &[u32], draw: &mut impl Draw, now: Time) -> u32 {
        let n = hosts.len() as u64;
        if n == 1 {
            return hosts[0];
        }
        let a = draw.below(n);
        let mut b = draw.below(n - 1);
        if b >= a {
            b += 1;
        }
        let (a, b) = (hosts[a as usize], hosts[b as usize]);
        let load_a = self.ewma[a as usize].cost(now);
        let load_b = self.ewma[b as usize].cost(now);
        if load_a <= load_b { a } else { b }
    }

    /// An attempt went out to `replica` (the caller keeps its send time for [`finish`](Self::finish)).
    pub fn start(&mut self, replica: u32) {
        self.active[replica as usize] += 1;
        if let Some(m) = self.ewma.get_mut(replica as usize) {
            m.start();
        }
    }

    /// The attempt sent to `replica` at `sent` answered (or failed, or timed out) at `now`.
    pub fn finish(&mut self, replica: u32, sent: Time, now: Time) {
        let a = &mut self.active[replica as usize];
        *a = a.saturating_sub(1);
        if let Some(m) = self.ewma.get_mut(replica as usize) {
            m.end(sent, now);
        }
    }

    /// Finagle's cost of `replica` at `now` (`p2c-ewma` only).
    pub fn ewma_cost(&mut self, replica: u32, now: Time) -> Option<f64> {
        self.ewma.get_mut(replica as usize).map(|m| m.cost(now))
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
