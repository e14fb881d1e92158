//! The retry orbit: intents whose client is past its first attempt (backing off to retry, or
//! waiting on a retry or a hedged copy) and has not settled. The metastability literature's
//! orbit (the retry queue of Metafor's model) is what feeds a retry storm: each intent in it
//! brings load back. Kept as one count for a study that reads it after every event
//! ([`crate::sim::path::gauge`]), with a bit per top-call slot so that an intent leaves the
//! orbit exactly once, however it settles.

/// The intents in the orbit, by top-call slot.
#[derive(Clone, Debug, Default)]
pub(in crate::sim::path) struct Orbit {
    /// One bit per top-call slot: the intent in it is in the orbit.
    marked: Vec<u64>,
    pub(in crate::sim::path) count: u64,
}

impl Orbit {
    /// The intent in `slot` enters the orbit (if it is not in it already).
    pub(super) fn enter(&mut self, slot: usize) {
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        if word >= self.marked.len() {
            self.marked.resize(word + 1, 0);
        }
        if self.marked[word] & bit == 0 {
            self.marked[word] |= bit;
            self.count += 1;
        }
    }

    /// The intent in `slot` has settled: it leaves the orbit if it was in it.
    #[inline(always)]
    pub(super) fn leave(&mut self, slot: usize) {
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        if let Some(w) = self.marked.get_mut(word)
            && *w & bit != 0
        {
            *w &= !bit;
            self.count -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_enters_once_and_leaves_once() {
        let mut o = Orbit::default();
        o.enter(3);
        o.enter(3);
        o.enter(130);
        assert_eq!(o.count, 2);
        o.leave(3);
        o.leave(3);
        o.leave(7);
        assert_eq!(o.count, 1);
        o.leave(130);
        assert_eq!(o.count, 0);
    }
}
