//! The clients' attempts over the last second: first tries, retries and hedged copies sent at
//! the top, counted in tenths of a second. A retry storm shows here first (the attempts per
//! second climb past the intents per second); a study reads it after every event
//! ([`crate::sim::path::gauge`]). Counting an attempt is an increment, and a division when the
//! clock has moved into a new tenth.

use crate::base::time::Time;

/// The width of one slot.
const SLOT_NS: u64 = 100_000_000;
/// Slots in the window: one second.
const SLOTS: usize = 10;

/// Attempts sent in each of the last [`SLOTS`] tenths of a second.
#[derive(Clone, Debug, Default)]
pub(in crate::sim::path) struct Pace {
    /// Attempts in each slot, the slot of time `t` at `(t / SLOT_NS) % SLOTS`.
    counts: [u64; SLOTS],
    /// The slot number (`t / SLOT_NS`) the latest attempt fell in.
    latest: u64,
}

impl Pace {
    /// An attempt is sent at `now`.
    #[inline(always)]
    pub(super) fn count(&mut self, now: Time) {
        let slot = self.roll(now);
        self.counts[slot] += 1;
    }

    /// Moves the window on to `now`'s slot, emptying the slots it passes; that slot's index.
    fn roll(&mut self, now: Time) -> usize {
        let slot = now.0 / SLOT_NS;
        if slot != self.latest {
            let gone = (slot - self.latest).min(SLOTS as u64);
            for k in 1..=gone {
                self.counts[((self.latest + k) % SLOTS as u64) as usize] = 0;
            }
            self.latest = slot;
        }
        (slot % SLOTS as u64) as usize
    }

    /// Attempts sent in the second up to `now` (to the tenth).
    pub(in crate::sim::path) fn per_second(&self, now: Time) -> u64 {
        let slot = now.0 / SLOT_NS;
        let stale = slot.saturating_sub(self.latest);
        if stale >= SLOTS as u64 {
            return 0;
        }
        // Slots of the window the clock has moved past since the latest attempt are empty.
        (0..SLOTS as u64 - stale)
            .map(|k| self.counts[((self.latest + SLOTS as u64 - k) % SLOTS as u64) as usize])
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }

    #[test]
    fn the_window_holds_the_last_second() {
        let mut p = Pace::default();
        for ms in [0, 50, 150, 950] {
            p.count(at_ms(ms));
        }
        assert_eq!(p.per_second(at_ms(990)), 4);
        // At 1.05 s the slot of 0..100 ms has left the window.
        assert_eq!(p.per_second(at_ms(1050)), 2);
        p.count(at_ms(1060));
        assert_eq!(p.per_second(at_ms(1060)), 3);
        assert_eq!(p.per_second(at_ms(1960)), 1);
        assert_eq!(p.per_second(at_ms(2100)), 0);
        p.count(at_ms(5000));
        assert_eq!(p.per_second(at_ms(5000)), 1);
    }
}
