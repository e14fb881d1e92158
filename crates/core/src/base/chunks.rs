//! A first-in-first-out list kept in fixed chunks from a shared pool: the radix heap's buckets.
//!
//! A `Vec` that grows by doubling holds up to twice its entries, and while a large bucket is
//! spread over the lower ones the old and the new vectors are all alive: a burst of 10^7 timers
//! held about twice its 229 MiB of entries (`docs/performance.md`, "Chunked buckets"). In
//! chunks of [`CHUNK`] entries a list holds at most one partly filled chunk, and a chunk emptied
//! by a spread goes back to the pool, from which the lower buckets take theirs.

use std::collections::VecDeque;

/// Entries per chunk: 24 KB of the engine's 24-byte entries.
pub(super) const CHUNK: usize = 1024;

/// Empty chunks kept for reuse: enough for a spread (each chunk emptied is taken again at once)
/// and a steady state's turnover, without keeping a finished burst's room (1.5 MB).
const POOL: usize = 64;

/// Empty chunks, each with room for exactly [`CHUNK`] entries.
pub(super) struct Pool<T> {
    free: Vec<Vec<T>>,
}

/// A copy starts with no spare room: the pool only saves allocations, and what it holds is
/// empty.
impl<T> Clone for Pool<T> {
    fn clone(&self) -> Self {
        Pool::new()
    }
}

impl<T> Pool<T> {
    pub(super) fn new() -> Self {
        Pool { free: Vec::new() }
    }

    fn take(&mut self) -> Vec<T> {
        self.free.pop().unwrap_or_else(|| Vec::with_capacity(CHUNK))
    }

    fn give(&mut self, mut chunk: Vec<T>) {
        if self.free.len() < POOL && chunk.capacity() == CHUNK {
            chunk.clear();
            self.free.push(chunk);
        }
    }

    /// Entries the pool has room for.
    #[cfg(test)]
    pub(super) fn room(&self) -> usize {
        self.free.len() * CHUNK
    }
}

/// Entries in insertion order: full chunks, then a tail that grows as a `Vec` does up to
/// [`CHUNK`] (a small list allocates as little as a `Vec`, and keeps its tail's room when
/// emptied, so a steady state does not allocate). `pop_front` reads the front with a cursor
/// and returns each full chunk to the pool once read.
#[derive(Clone)]
pub(super) struct Chunks<T> {
    full: VecDeque<Vec<T>>,
    tail: Vec<T>,
    /// Entries of the front (the first full chunk, else the tail) already popped.
    read: usize,
}

impl<T> Default for Chunks<T> {
    fn default() -> Self {
        Chunks {
            full: VecDeque::new(),
            tail: Vec::new(),
            read: 0,
        }
    }
}

impl<T: Copy> Chunks<T> {
    #[inline]
    pub(super) fn push(&mut self, x: T, pool: &mut Pool<T>) {
        if self.tail.len() == CHUNK {
            let next = pool.take();
            self.full.push_back(std::mem::replace(&mut self.tail, next));
        }
        self.tail.push(x);
    }

    /// The oldest entry not yet popped.
    #[inline]
    pub(super) fn pop_front(&mut self, pool: &mut Pool<T>) -> Option<T> {
        if let Some(front) = self.full.front() {
            let x = front[self.read];
            self.read += 1;
            if self.read == CHUNK {
                self.read = 0;
                if let Some(c) = self.full.pop_front() {
                    pool.give(c);
                }
            }
            return Some(x);
        }
        let x = *self.tail.get(self.read)?;
        self.read += 1;
        if self.read == self.tail.len() {
            // Read to the end: empty again, its room kept.
            self.read = 0;
            self.tail.clear();
        }
        Some(x)
    }

    /// Entries not yet popped.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.full.len() * CHUNK + self.tail.len() - self.read
    }

    pub(super) fn is_empty(&self) -> bool {
        self.full.is_empty() && self.tail.is_empty()
    }

    /// The entries not yet popped, in order, a slice at a time.
    pub(super) fn slices(&self) -> impl Iterator<Item = &[T]> {
        let read = self.read;
        let full = self.full.iter().map(Vec::as_slice);
        full.chain([self.tail.as_slice()])
            .enumerate()
            .map(move |(i, c)| if i == 0 { &c[read..] } else { c })
    }

    /// The entries not yet popped, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &T> {
        self.slices().flatten()
    }

    /// Hands every entry in order to `f`, returning each full chunk to the pool once read; the
    /// list is left empty, its tail's room kept.
    #[inline]
    pub(super) fn drain(&mut self, pool: &mut Pool<T>, mut f: impl FnMut(T, &mut Pool<T>)) {
        let mut skip = std::mem::take(&mut self.read);
        while let Some(c) = self.full.pop_front() {
            for &x in &c[skip..] {
                f(x, pool);
            }
            skip = 0;
            pool.give(c);
        }
        for &x in &self.tail[skip..] {
            f(x, pool);
        }
        self.tail.clear();
    }

    /// Entries the list has room for.
    #[cfg(test)]
    pub(super) fn room(&self) -> usize {
        self.full.iter().map(Vec::capacity).sum::<usize>() + self.tail.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_and_drains_in_insertion_order_across_chunks() {
        let mut pool = Pool::new();
        let mut l = Chunks::default();
        for i in 0..3 * CHUNK + 7 {
            l.push(i, &mut pool);
        }
        // The first chunk grew as a `Vec` does; the others came whole from the pool.
        assert_eq!(l.room(), 4 * CHUNK);
        for i in 0..CHUNK + 3 {
            assert_eq!(l.pop_front(&mut pool), Some(i));
        }
        // The first chunk, read, is back in the pool.
        assert_eq!(pool.room(), CHUNK);
        assert_eq!(l.iter().next(), Some(&(CHUNK + 3)));
        let mut rest = Vec::new();
        l.drain(&mut pool, |x, _| rest.push(x));
        assert_eq!(rest, (CHUNK + 3..3 * CHUNK + 7).collect::<Vec<_>>());
        assert!(l.is_empty() && l.pop_front(&mut pool).is_none());
        assert_eq!(pool.room(), 3 * CHUNK);
        assert_eq!(l.room(), CHUNK, "the tail keeps its room");
        // A small list allocates as a `Vec` does.
        let mut small = Chunks::default();
        (0..5).for_each(|i| small.push(i, &mut pool));
        assert_eq!(small.room(), 8);
    }

    #[test]
    fn the_pool_keeps_a_bounded_number_of_chunks() {
        let mut pool = Pool::new();
        let mut l = Chunks::default();
        for i in 0..(POOL + 10) * CHUNK {
            l.push(i, &mut pool);
        }
        l.drain(&mut pool, |_, _| {});
        assert_eq!(pool.room(), POOL * CHUNK);
    }
}
