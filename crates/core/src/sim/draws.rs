//! Every random stream of a run, derived from its seed in this one place.
//!
//! A stream is keyed by `(seed, entity, purpose, index)` ([`crate::base::rng::Stream::new`]); this
//! module chooses the entity and the index for each draw the engine makes, so that every
//! component asks for a draw by name and none picks its own keys:
//!
//! | draw | entity | purpose | index |
//! |---|---|---|---|
//! | [`Draws::arrivals`] (one stream for the run) | 0 | `Arrivals` | 0 |
//! | [`Draws::start`] (a burst client's offset) | client | `Start` | 0 |
//! | [`Draws::limiter_probe`] | `hop << 32 \| instance` | `LimiterProbe` | 0 |
//! | [`Draws::balancer`], [`Draws::outlier`] | `hop << 32 \| instance` | `Balancer`, `Outlier` | 0 |
//! | [`Draws::think`] | worker | `Think` | intents started so far |
//! | [`Draws::tick`] (a periodic client's phase and waits) | client | `Tick` | `start << 32 \| call` |
//! | [`Draws::reconnect`] (a reconnect backoff's jitter) | `hop << 32 \| client` | `Reconnect` | the client's failed connects so far |
//! | per attempt: service, connect, failure, crash, client error, losses, adaptive throttling (`Shed`), backoff, Retry-After, restart | intent id | its purpose | [`AttemptKey::index`] |
//! | per attempt: request and response latency | intent id | `RequestLatency`, `ResponseLatency` | the index, or with write contention `2 * index` (read) and `2 * index + 1` (write) |
//! | [`Draws::backoff_of`] (the direct path's backoff, from [`Draws::intent_key`]) | intent id | `Backoff` | the attempt number |
//!
//! A forked run ([`Draws::branch`]) keys every stream it asks for from then on by its branch
//! too: the seed in the table above becomes `mix64(seed ^ mix64(branch))`; branch 0 is the
//! seed itself.
//!
//! The index of an attempt is its number at the top and, below the top, a hash of the attempt
//! numbers along its path ([`child_path`]): the same attempt of the same intent draws the same
//! whatever a policy did elsewhere (common random numbers), and a path of one tier draws as a
//! plain attempt number. The calls of a fan-out (`server.fanout`) are told apart by
//! [`leaf_path`]: call 0 keys as the one call a tier without fan-out makes, call `i` by a hash of
//! that key and `i`.

use crate::base::rng::{EntityKey, Purpose, Stream, mix64};

/// The key of the call that attempt `attempt` of the call keyed `path` creates below (the top
/// call's key is 0).
#[inline]
pub(crate) fn child_path(path: u64, attempt: u16) -> u64 {
    mix64(path ^ (u64::from(attempt) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The key of call `leaf` of a fan-out whose one call would be keyed `path` (call 0 is that call
/// itself, so a fan-out's first call draws as the tier's call without fan-out).
#[inline]
pub(crate) fn leaf_path(path: u64, leaf: u32) -> u64 {
    if leaf == 0 {
        return path;
    }
    mix64(path ^ u64::from(leaf).wrapping_mul(0xd1b5_4a32_d192_ed03))
}

/// Which attempt a draw is for: its intent and its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AttemptKey {
    pub(crate) intent: u64,
    pub(crate) index: u64,
}

impl AttemptKey {
    /// Attempt `attempt` of the top call (the clients' retry loop) of `intent`.
    #[inline(always)]
    pub(crate) fn top(intent: u64, attempt: u16) -> Self {
        AttemptKey {
            intent,
            index: u64::from(attempt),
        }
    }

    /// Attempt `attempt` of an inner call keyed `path` (see [`child_path`]) of `intent`.
    #[inline(always)]
    pub(crate) fn below(intent: u64, path: u64, attempt: u16) -> Self {
        AttemptKey {
            intent,
            index: child_path(path, attempt),
        }
    }
}

/// Which crossing of a hop's network a latency is for: one round trip, or under write
/// contention the read's and then the write's (two round trips, drawn apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    Only,
    Read,
    Write,
}

impl Round {
    #[inline(always)]
    fn index(self, k: AttemptKey) -> u64 {
        match self {
            Round::Only => k.index,
            Round::Read => k.index.wrapping_mul(2),
            Round::Write => k.index.wrapping_mul(2).wrapping_add(1),
        }
    }
}

/// A run's seed: every stream of the run comes from it through the functions below.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Draws {
    seed: u64,
}

impl Draws {
    pub(crate) fn new(seed: u64) -> Self {
        Draws { seed }
    }

    /// The draws of branch `branch` of a run forked from these ([`crate::sim::path::PathSim::fork`]):
    /// every stream asked for from here on is keyed by the branch as well, so two branches
    /// diverge and one branch is the same every time. Branch 0 is these draws themselves: a
    /// fork that never diverges goes on exactly as the run it was copied from.
    pub(crate) fn branch(self, branch: u64) -> Self {
        if branch == 0 {
            return self;
        }
        Draws {
            seed: mix64(self.seed ^ mix64(branch)),
        }
    }

    /// The open workload's arrival process: one stream read in order for the whole run.
    pub(crate) fn arrivals(self) -> Stream {
        Stream::new(self.seed, 0, Purpose::Arrivals, 0)
    }

    /// The start offset of burst client `client` within the spread.
    pub(crate) fn start(self, client: u64) -> Stream {
        Stream::new(self.seed, client, Purpose::Start, 0)
    }

    /// The probe jitter of limiter instance `instance` at hop `hop`.
    pub(crate) fn limiter_probe(self, hop: usize, instance: u64) -> Stream {
        // Entity: the hop in the high half, the instance in the low.
        Stream::new(
            self.seed,
            (hop as u64) << 32 | instance,
            Purpose::LimiterProbe,
            0,
        )
    }

    /// The picks of balancer instance `instance` at hop `hop` (`server.replicas`).
    pub(crate) fn balancer(self, hop: usize, instance: u64) -> Stream {
        Stream::new(
            self.seed,
            (hop as u64) << 32 | instance,
            Purpose::Balancer,
            0,
        )
    }

    /// The rolls of the outlier detector beside balancer instance `instance` at hop `hop`.
    pub(crate) fn outlier(self, hop: usize, instance: u64) -> Stream {
        Stream::new(
            self.seed,
            (hop as u64) << 32 | instance,
            Purpose::Outlier,
            0,
        )
    }

    /// A closed-workload worker's think time after `intents` intents have started.
    pub(crate) fn think(self, worker: u32, intents: u64) -> Stream {
        Stream::new(self.seed, u64::from(worker), Purpose::Think, intents)
    }

    /// Periodic client `client`'s draw for call `call` since its start number `start` (0 at
    /// the run's start, then one per restart): call 0's is its phase, each later one its wait.
    pub(crate) fn tick(self, client: u32, start: u32, call: u32) -> Stream {
        let index = u64::from(start) << 32 | u64::from(call);
        Stream::new(self.seed, u64::from(client), Purpose::Tick, index)
    }

    /// The jitter of client `client`'s reconnect backoff at hop `hop` after its `failures`-th
    /// failed connect.
    pub(crate) fn reconnect(self, hop: usize, client: u32, failures: u32) -> Stream {
        Stream::new(
            self.seed,
            (hop as u64) << 32 | u64::from(client),
            Purpose::Reconnect,
            u64::from(failures),
        )
    }

    #[inline(always)]
    fn attempt(self, k: AttemptKey, purpose: Purpose) -> Stream {
        Stream::new(self.seed, k.intent, purpose, k.index)
    }

    /// The service time of the attempt at the tier that serves it.
    #[inline]
    pub(crate) fn service(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::Service)
    }

    /// The server work of the connect the attempt opens (`server.connections`).
    #[inline]
    pub(crate) fn connect(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::Connect)
    }

    /// Whether the handler fails (`fail` a probability).
    #[inline]
    pub(crate) fn failure(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::Failure)
    }
    #[inline]
    pub(crate) fn crash(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::Crash)
    }
    #[inline]
    pub(crate) fn client_error(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::ClientError)
    }
    #[inline]
    pub(crate) fn request_loss(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::RequestLoss)
    }
    #[inline]
    pub(crate) fn response_loss(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::ResponseLoss)
    }
    /// The adaptive-throttling coin of a send (the SRE book's client-side throttling).
    #[inline]
    pub(crate) fn throttle(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::Shed)
    }
    /// The backoff before the retry that follows attempt `k`.
    #[inline]
    pub(crate) fn backoff(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::Backoff)
    }
    /// The part of intent `intent`'s keys that depends on `(seed, intent)` only: computed once
    /// by a path that draws many times for one intent (the direct path).
    #[inline]
    pub(crate) fn intent_key(self, intent: u64) -> EntityKey {
        EntityKey::new(self.seed, intent)
    }
    /// [`Draws::backoff`] of the top call's attempt `index`, from the intent's
    /// [`Draws::intent_key`]: the same stream, two mixes fewer.
    #[inline]
    pub(crate) fn backoff_of(self, key: EntityKey, index: u64) -> Stream {
        Stream::of_entity(key, Purpose::Backoff, index)
    }
    /// The jitter Envoy adds to a server's reset header.
    #[inline]
    pub(crate) fn retry_after(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::RetryAfter)
    }
    /// Whether the client restarts (and so loses its idempotency key) before the retry.
    #[inline]
    pub(crate) fn restart(self, k: AttemptKey) -> Stream {
        self.attempt(k, Purpose::Restart)
    }
    /// The request's latency on its way to the tier.
    #[inline]
    pub(crate) fn request_latency(self, k: AttemptKey, round: Round) -> Stream {
        Stream::new(self.seed, k.intent, Purpose::RequestLatency, round.index(k))
    }
    /// The answer's latency on its way back.
    #[inline]
    pub(crate) fn response_latency(self, k: AttemptKey, round: Round) -> Stream {
        Stream::new(
            self.seed,
            k.intent,
            Purpose::ResponseLatency,
            round.index(k),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(mut s: Stream) -> u64 {
        s.next_u64()
    }

    /// The keys of the table above, spelled out: a change of any of them changes every result
    /// of every model, and must fail here first.
    #[test]
    fn every_draw_has_the_documented_key() {
        let (seed, d) = (42, Draws::new(42));
        let s = |entity, purpose, index| first(Stream::new(seed, entity, purpose, index));
        assert_eq!(first(d.arrivals()), s(0, Purpose::Arrivals, 0));
        assert_eq!(first(d.start(7)), s(7, Purpose::Start, 0));
        assert_eq!(
            first(d.reconnect(1, 9, 4)),
            s(1 << 32 | 9, Purpose::Reconnect, 4)
        );
        assert_eq!(
            first(d.limiter_probe(2, 3)),
            s(2 << 32 | 3, Purpose::LimiterProbe, 0)
        );
        assert_eq!(first(d.think(5, 11)), s(5, Purpose::Think, 11));
        let top = AttemptKey::top(17, 2);
        assert_eq!(top.index, 2);
        let below = AttemptKey::below(17, child_path(0, 1), 2);
        assert_eq!(below.index, child_path(child_path(0, 1), 2));
        for k in [top, below] {
            let i = k.index;
            let per = [
                (d.service(k), Purpose::Service),
                (d.connect(k), Purpose::Connect),
                (d.failure(k), Purpose::Failure),
                (d.crash(k), Purpose::Crash),
                (d.client_error(k), Purpose::ClientError),
                (d.request_loss(k), Purpose::RequestLoss),
                (d.response_loss(k), Purpose::ResponseLoss),
                (d.throttle(k), Purpose::Shed),
                (d.backoff(k), Purpose::Backoff),
                (d.retry_after(k), Purpose::RetryAfter),
                (d.restart(k), Purpose::Restart),
            ];
            for (stream, purpose) in per {
                assert_eq!(first(stream), s(17, purpose, i), "{purpose:?}");
            }
            let keyed = d.backoff_of(d.intent_key(17), i);
            assert_eq!(first(keyed), s(17, Purpose::Backoff, i));
            let (out, back) = (Purpose::RequestLatency, Purpose::ResponseLatency);
            assert_eq!(first(d.request_latency(k, Round::Only)), s(17, out, i));
            assert_eq!(first(d.response_latency(k, Round::Only)), s(17, back, i));
            assert_eq!(
                first(d.request_latency(k, Round::Read)),
                s(17, out, i.wrapping_mul(2))
            );
            assert_eq!(
                first(d.response_latency(k, Round::Read)),
                s(17, back, i.wrapping_mul(2))
            );
            let w = i.wrapping_mul(2).wrapping_add(1);
            assert_eq!(first(d.request_latency(k, Round::Write)), s(17, out, w));
            assert_eq!(first(d.response_latency(k, Round::Write)), s(17, back, w));
        }
    }

    /// Branch 0 keeps every key; another branch changes every stream, and the same branch
    /// gives the same streams.
    #[test]
    fn a_branch_rekeys_every_stream() {
        let (d, k) = (Draws::new(42), AttemptKey::top(17, 2));
        assert_eq!(first(d.branch(0).service(k)), first(d.service(k)));
        assert_eq!(first(d.branch(0).arrivals()), first(d.arrivals()));
        assert_ne!(first(d.branch(1).service(k)), first(d.service(k)));
        assert_ne!(first(d.branch(1).service(k)), first(d.branch(2).service(k)));
        assert_eq!(first(d.branch(3).backoff(k)), first(d.branch(3).backoff(k)));
        let s = |seed, p| first(Stream::new(seed, 17, p, 2));
        assert_eq!(
            first(d.branch(5).service(k)),
            s(mix64(42 ^ mix64(5)), Purpose::Service)
        );
    }

    /// A path of one tier draws by plain attempt numbers; the path below depends on every
    /// attempt number above it.
    #[test]
    fn attempt_indices_along_a_path() {
        assert_eq!(
            AttemptKey::top(3, 4),
            AttemptKey {
                intent: 3,
                index: 4
            }
        );
        let a = child_path(child_path(0, 0), 1);
        let b = child_path(child_path(0, 1), 0);
        assert_ne!(a, b);
        assert_ne!(child_path(0, 0), child_path(0, 1));
    }
}
