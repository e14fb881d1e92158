//! The handle an event carries to its call, and the key a request carries to the store.

/// A request with no idempotency key.
pub(super) const NO_KEY: u16 = u16::MAX;
const INNER: u32 = 1 << 31;

/// A call: a top call's slot, or an inner call's slot with the high bit set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallRef(pub(super) u32);

impl CallRef {
    #[inline]
    pub(super) fn top(slot: u32) -> Self {
        CallRef(slot)
    }
    #[inline]
    pub(super) fn inner(slot: u32) -> Self {
        CallRef(slot | INNER)
    }
    #[inline(always)]
    pub(super) fn is_inner(self) -> bool {
        self.0 & INNER != 0
    }
    #[inline(always)]
    pub(super) fn slot(self) -> usize {
        (self.0 & !INNER) as usize
    }
}
