//! The last tier's record keeping: the dedupe store of idempotency keys (the IETF
//! Idempotency-Key draft and the article's three store modes) and the versioned record of write
//! contention (the AWS Architecture Blog's optimistic-concurrency model).
//!
//! The store is a hash map used only for lookups, never iterated, so its order cannot leak into
//! results.

use super::tier::{Outcome, Request, Served};
use super::{Cx, Event};
use crate::base::time::Time;
use crate::model::{CommitMode, CrashPoint, Idempotency, Server, StoreMode};
use crate::sim::draws::{AttemptKey, Round};
use std::collections::HashMap;

#[derive(Clone)]
enum KeyState {
    /// The key's first request is being served; duplicates wait here (record-before).
    InProgress { waiters: Vec<Request> },
    /// A committed outcome, at `at`.
    Done { at: Time },
}

/// A deterministic hasher for the dedupe store (lookups only; the store is never iterated).
#[derive(Clone, Default)]
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

/// Keys by `(intent << 16) | key` (see [`Store::key`]), the record's version, and emptied waiter lists for reuse.
#[derive(Clone, Default)]
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
    #[inline]
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

/// What a request served at the last tier did to the record: whether it had its effect,
/// whether its key's result is recorded, and what the tier answers.
pub(super) struct Effect {
    pub(super) applied: bool,
    pub(super) key_recorded: bool,
    pub(super) outcome: Outcome,
}

impl Store {
    /// The store's key of `key` for the intent that owns it (the request's own, or a trace
    /// key's, [`super::keyed`]): `(owner << 16) | key`.
    #[inline]
    pub(super) fn key(owner: u64, key: u16) -> u64 {
        (owner << 16) | u64::from(key)
    }

    /// The effect of a request the last tier (`s`) served, `sv` saying how its handler ended:
    /// a crash leaves the effect and the key as `commit` orders them, a write whose read is out
    /// of date is refused (409).
    pub(super) fn effect(&mut self, commit: CommitMode, s: &Server, sv: &Served) -> Effect {
        let (applied, key_recorded, outcome) = if sv.failed {
            (false, false, Outcome::Error)
        } else if sv.client_error {
            // The request is refused as wrong: no effect, and not stored as the key's result.
            (false, false, Outcome::ClientError)
        } else if sv.crashed {
            let (e, k) = match (commit, s.crash_point) {
                (CommitMode::Atomic, _) => (false, false),
                (CommitMode::EffectThenKey, CrashPoint::AfterEffect) => (true, false),
                (CommitMode::KeyThenEffect, CrashPoint::AfterKey) => (false, true),
                (_, _) => (true, true),
            };
            (e, k, Outcome::ConnError)
        } else if s.contention && !self.commit_write(sv.req.version) {
            // The record's version moved since the read: the write is refused.
            (false, false, Outcome::Conflict)
        } else {
            (true, true, Outcome::Ok)
        };
        Effect {
            applied,
            key_recorded,
            outcome,
        }
    }

    /// Write contention: the read of an attempt (drawn from `k`) reaches the record and takes
    /// its version; the answer travels back and the write follows (two round trips, as in the
    /// AWS blog's simulator, whose record answers at once). The write, if it reaches the last
    /// tier now; else its `WriteArrive` is scheduled.
    pub(super) fn read(
        &self,
        cx: &mut Cx,
        mut req: Request,
        r: usize,
        k: AttemptKey,
    ) -> Option<Request> {
        req.version = self.version;
        let now = cx.now;
        let net = &cx.spec.hops[cx.bottom].network;
        let (back, out) = (net.response_latency(), net.request_latency());
        let mut at = now;
        if !back.is_zero() {
            at = at + back.sample(&mut cx.draws.response_latency(k, Round::Read));
        }
        if !out.is_zero() {
            at = at + out.sample(&mut cx.draws.request_latency(k, Round::Write));
        }
        if at == now {
            return Some(req);
        }
        cx.queue.push(
            at,
            Event::WriteArrive {
                call: req.call,
                attempt: req.attempt,
                key: req.key,
                version: req.version,
                replica: r as u16,
            },
        );
        None
    }
}
