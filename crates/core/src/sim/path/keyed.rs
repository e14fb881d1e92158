//! A replayed trace's `key` column: rows that carry the same idempotency key are submissions of
//! one intent (a user who pressed "pay" twice, a caller above the log that retried), as the IETF
//! Idempotency-Key draft (draft-ietf-httpapi-idempotency-key-header) has a server see them.
//!
//! Two things follow. The dedupe store knows a request by its key, not by its row, so with
//! `idempotency.key = "per-intent"` a row whose key another row already committed is answered
//! from the store (`per-attempt` keys are fresh per attempt, so rows never share them). And an
//! effect is judged per key: the key's effects over all its rows make it lost, applied once or
//! duplicated, a success of any row with no effect is a phantom, and an effect with every row
//! failed is a false failure; the key is counted once its last row is finalised. Without a key
//! column every row is its own intent and nothing here runs.

use crate::model::replay::Trace;

/// Per intent of the trace (a key, or a row without one).
#[derive(Clone, Copy, Default)]
struct KeyState {
    /// Rows not yet finalised.
    left: u32,
    /// Effects of all its rows so far.
    applied: u32,
    /// The highest dedupe-store key generation a finalised row of it used.
    top: u16,
    started: bool,
    succeeded: bool,
}

/// How a finished key counts.
pub(super) struct KeyOutcome {
    pub(super) applied: u32,
    pub(super) phantom: bool,
    pub(super) false_failure: bool,
    /// The store keys `0..=top` of the intent may be forgotten now.
    pub(super) top: u16,
}

/// The keys of a replayed trace, indexed by [`crate::model::replay::TraceArrival::intent`].
#[derive(Clone)]
pub(super) struct Keyed {
    keys: Vec<KeyState>,
    /// Keys with a row started so far, and keys whose every row is finalised.
    pub(super) started: u64,
    pub(super) finished: u64,
}

impl Keyed {
    /// `None` when the trace has no key column.
    pub(super) fn of(trace: &Trace) -> Option<Keyed> {
        if trace.intents.is_empty() {
            return None;
        }
        let keys = trace
            .intents
            .iter()
            .map(|&rows| KeyState {
                left: rows,
                ..KeyState::default()
            })
            .collect();
        Some(Keyed {
            keys,
            started: 0,
            finished: 0,
        })
    }

    /// Row of key `k` starts.
    pub(super) fn start(&mut self, k: u32) {
        let s = &mut self.keys[k as usize];
        if !s.started {
            s.started = true;
            self.started += 1;
        }
    }

    /// A row of key `k` is finalised with `applied` effects of its own; the key's outcome once
    /// that was its last row.
    pub(super) fn finalise(
        &mut self,
        k: u32,
        applied: u32,
        succeeded: bool,
        top: u16,
    ) -> Option<KeyOutcome> {
        let s = &mut self.keys[k as usize];
        s.applied = s.applied.saturating_add(applied);
        s.succeeded |= succeeded;
        s.top = s.top.max(top);
        s.left -= 1;
        if s.left > 0 {
            return None;
        }
        self.finished += 1;
        Some(KeyOutcome {
            applied: s.applied,
            phantom: s.succeeded && s.applied == 0,
            false_failure: !s.succeeded && s.applied > 0,
            top: s.top,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(text: &str) -> Trace {
        Trace::parse("t.csv", text).unwrap()
    }

    #[test]
    fn rows_sharing_a_key_are_one_intent_counted_after_its_last_row() {
        let t = trace("timestamp,key\n0,a\n1,b\n2,a\n3,\n");
        let intents: Vec<u32> = t.arrivals.iter().map(|a| a.intent).collect();
        assert_eq!(intents, [0, 1, 0, 2]);
        assert_eq!(t.intents, [2, 1, 1]);
        assert_eq!(t.keys, 2);
        let mut k = Keyed::of(&t).unwrap();
        for a in &t.arrivals {
            k.start(a.intent);
        }
        assert_eq!(k.started, 3);
        // Key a: the first row applied it and failed, the second was answered from the store.
        assert!(k.finalise(0, 1, false, 0).is_none());
        let o = k.finalise(0, 0, true, 2).unwrap();
        assert_eq!(
            (o.applied, o.phantom, o.false_failure, o.top),
            (1, false, false, 2)
        );
        // Key b applied by nobody but reported a success: a phantom.
        let o = k.finalise(1, 0, true, 0).unwrap();
        assert!(o.phantom && !o.false_failure);
        // The keyless row failed after its effect: a false failure.
        let o = k.finalise(2, 1, false, 0).unwrap();
        assert!(o.false_failure && !o.phantom);
        assert_eq!(k.finished, 3);
    }

    #[test]
    fn no_key_column_no_keyed_intents() {
        assert!(Keyed::of(&trace("timestamp,class\n0,a\n1,b\n")).is_none());
        assert!(Keyed::of(&trace("timestamp,key\n0,\n1,\n")).is_none());
    }
}
