//! The last tier's record keeping: the dedupe store of idempotency keys (the IETF
//! Idempotency-Key draft and the article's three store modes) and the versioned record of write
//! contention (the AWS Architecture Blog's optimistic-concurrency model).
//!
//! The store is a hash map used only for lookups, never iterated, so its order cannot leak into
//! results.

use super::call::{Call, by_kind};
use super::tier::{Outcome, Request};
use super::{Event, PathSim};
use crate::base::time::Time;
use crate::model::{Idempotency, KeyMode, StoreMode};
use crate::sim::draws::Round;
use std::collections::HashMap;

enum KeyState {
    /// The key's first request is being served; duplicates wait here (record-before).
    InProgress { waiters: Vec<Request> },
    /// A committed outcome, at `at`.
    Done { at: Time },
}

/// A deterministic hasher for the dedupe store (lookups only; the store is never iterated).
#[derive(Default)]
struct MixHasher(u64);

impl std::hash::Hasher for MixHasher {
    fn finish(&self) -> u64 {
        crate::base::rng::mix64(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// Keys by `(intent << 16) | key` (see `store_key`), the record's version, and emptied waiter lists for reuse.
#[derive(Default)]
pub(crate) struct Store {
    keys: HashMap<u64, KeyState, std::hash::BuildHasherDefault<MixHasher>>,
    waiter_lists: Vec<Vec<Request>>,
    /// Write contention: commits so far.
    version: u32,
}

impl Store {
    pub(super) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
    /// Forgets the keys `0..=top` of intent `id` once it is finalised.
    pub(super) fn forget(&mut self, id: u64, top: u16) {
        for k in 0..=top {
            self.keys.remove(&((id << 16) | u64::from(k)));
        }
    }
    pub(super) fn recycle(&mut self, waiters: Vec<Request>) {
        if waiters.capacity() > 0 {
            self.waiter_lists.push(waiters);
        }
    }
}

/// What the store says about a request's key before the handler runs.
pub(super) enum Lookup {
    /// A new key (recorded as in progress unless the store records after): serve it.
    Serve,
    /// Committed before: answer with its result without running.
    Replay,
    /// In progress, and the store answers duplicates 409.
    Conflict,
    /// In progress: the duplicate waits for the first request's result.
    Parked,
}

impl Store {
    /// The handler looks key `k` up before running: a committed key (unless its `ttl` passed)
    /// replays its result, one in progress answers 409 or parks the duplicate `req`, a new one
    /// is recorded (except record-after).
    pub(super) fn lookup(&mut self, now: Time, k: u64, req: Request, idem: &Idempotency) -> Lookup {
        let keys = &mut self.keys;
        let expired = match (keys.get(&k), idem.ttl) {
            (Some(KeyState::Done { at }), Some(ttl)) => now >= *at + ttl,
            _ => false,
        };
        if expired {
            keys.remove(&k);
        }
        match keys.get_mut(&k) {
            Some(KeyState::Done { .. }) => Lookup::Replay,
            Some(KeyState::InProgress { .. }) if idem.store == StoreMode::RecordBefore409 => {
                Lookup::Conflict
            }
            Some(KeyState::InProgress { waiters }) => {
                waiters.push(req);
                Lookup::Parked
            }
            None => {
                if idem.store != StoreMode::RecordAfter {
                    // Waiter lists are reused, so a duplicate that waits allocates nothing.
                    let waiters = self.waiter_lists.pop().unwrap_or_default();
                    keys.insert(k, KeyState::InProgress { waiters });
                }
                Lookup::Serve
            }
        }
    }

    /// The handler of key `k` finished: records the key when it committed (or forgets it after
    /// a transient failure, so the next retry runs again) and hands back the duplicates that
    /// waited on it.
    pub(super) fn commit(&mut self, now: Time, k: u64, key_recorded: bool) -> Vec<Request> {
        let keys = &mut self.keys;
        let mut waiters = Vec::new();
        if let Some(KeyState::InProgress { waiters: w }) = keys.get_mut(&k) {
            waiters = std::mem::take(w);
        }
        if key_recorded {
            keys.insert(k, KeyState::Done { at: now });
        } else if matches!(keys.get(&k), Some(KeyState::InProgress { .. })) {
            keys.remove(&k);
        }
        waiters
    }

    /// Write contention: commits a write that read `version`, if the record is still at it.
    pub(super) fn commit_write(&mut self, version: u32) -> bool {
        let ok = version == self.version;
        if ok {
            self.version += 1;
        }
        ok
    }
}

impl PathSim<'_> {
    #[inline]
    pub(super) fn store_enabled(&self) -> bool {
        self.model.idempotency.store != StoreMode::None
    }

    /// Keys by `(intent << 16) | key`: the intent is the request's own, or with a trace's key
    /// column and per-intent keys the trace key's ([`super::keyed`]), shared by its rows.
    #[inline]
    fn store_key<C: Call>(&self, req: &Request) -> u64 {
        let id = self.calls.get::<C>(req.call).id();
        let owner = match &self.keyed {
            Some(_) if self.model.idempotency.key == KeyMode::PerIntent => {
                u64::from(self.model.workload.replay.arrivals[id as usize].intent)
            }
            _ => id,
        };
        (owner << 16) | u64::from(req.key)
    }

    /// The store's answer to `req` at tier `t` before it is served; whether it goes on to a
    /// worker.
    pub(super) fn store_admits<C: Call>(&mut self, now: Time, t: usize, req: Request) -> bool {
        let k = self.store_key::<C>(&req);
        match self.store.lookup(now, k, req, &self.model.idempotency) {
            Lookup::Serve => true,
            Lookup::Parked => false,
            Lookup::Replay => {
                self.c.replayed += 1;
                self.respond::<C>(now, t, req, Outcome::Ok, None);
                false
            }
            Lookup::Conflict => {
                self.c.conflicts += 1;
                self.respond::<C>(now, t, req, Outcome::Conflict, None);
                false
            }
        }
    }

    /// The handler of `req` finished: the duplicates that waited on its key.
    pub(super) fn store_commit<C: Call>(
        &mut self,
        now: Time,
        req: &Request,
        key_recorded: bool,
    ) -> Vec<Request> {
        let k = self.store_key::<C>(req);
        self.store.commit(now, k, key_recorded)
    }

    /// Write contention: the read of an attempt reaches the record and takes its version; the
    /// answer travels back and the write follows (two round trips, as in the AWS blog's
    /// simulator, whose record answers at once).
    pub(super) fn read<C: Call>(&mut self, now: Time, mut req: Request, r: usize) {
        req.version = self.store.version;
        let t = self.bottom;
        let net = &self.spec.hops[t].network;
        let (back, out) = (net.response_latency(), net.request_latency());
        let k = self.calls.get::<C>(req.call).key(req.attempt);
        let mut at = now;
        if !back.is_zero() {
            at = at + back.sample(&mut self.draws.response_latency(k, Round::Read));
        }
        if !out.is_zero() {
            at = at + out.sample(&mut self.draws.request_latency(k, Round::Write));
        }
        if at == now {
            return self.write_arrive(now, req, r);
        }
        self.queue.push(
            at,
            Event::WriteArrive {
                call: req.call,
                attempt: req.attempt,
                key: req.key,
                version: req.version,
                replica: r as u16,
            },
        );
    }

    /// The write reaches the last tier, which admits and serves it like any request.
    pub(super) fn write_arrive(&mut self, now: Time, req: Request, r: usize) {
        let bottom = self.bottom;
        by_kind!(req.call, C => self.admit_request::<C>(now, bottom, r, req));
    }
}
