//! A stable sort of one calendar bucket by time, without allocating per bucket.
//!
//! Every entry of a bucket shares the bits of its time above the bucket's width, so only the
//! low `bits` bits order them: a least-significant-digit radix sort takes `bits / 8` or so
//! passes of counting and scattering, each stable, so entries of one time keep their insertion
//! order (which is how the queue pops ties first-in-first-out). The scratch buffer belongs to
//! the caller and keeps its room from bucket to bucket; `std`'s stable sort would allocate its
//! merge buffer for every bucket of more than a few hundred entries (`tests/alloc_free.rs`).

/// At most this many entries are sorted by `sort_by_key` (stable; for so few entries its
/// scratch is on the stack, no allocation): fewer moves than the radix passes' two reads and a
/// write of every entry plus their counts.
const SMALL: usize = 64;
/// The widest digit of a pass (256 counters).
const DIGIT_BITS: u32 = 8;

/// Sorts `v` stably by the low `bits` bits of each entry's time (`.0`), using `scratch` as the
/// other buffer of the passes. The higher bits must be equal across `v`.
pub fn sort_low_bits<E: Copy>(v: &mut Vec<(u64, E)>, scratch: &mut Vec<(u64, E)>, bits: u32) {
    let n = v.len();
    if n <= SMALL {
        v.sort_by_key(|e| e.0);
        return;
    }
    if v.windows(2).all(|w| w[0].0 <= w[1].0) {
        return;
    }
    let bits = bits.min(64);
    let passes = bits.div_ceil(DIGIT_BITS);
    let width = bits.div_ceil(passes.max(1));
    scratch.clear();
    scratch.extend_from_slice(v);
    // After each pass the sorted entries are in `scratch`; swapping makes them `v` again.
    for pass in 0..passes {
        let shift = pass * width;
        let digit = |t: u64| ((t >> shift) & ((1u64 << width) - 1)) as usize;
        let mut starts = [0usize; 1 << DIGIT_BITS];
        for e in v.iter() {
            starts[digit(e.0)] += 1;
        }
        if starts.contains(&n) {
            continue; // one digit for all: this pass would move nothing
        }
        let mut sum = 0;
        for s in starts.iter_mut() {
            let c = *s;
            *s = sum;
            sum += c;
        }
        for &e in v.iter() {
            let d = digit(e.0);
            scratch[starts[d]] = e;
            starts[d] += 1;
        }
        std::mem::swap(v, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Purpose, Stream};

    /// Against `sort_by_key` (stable) on entries tagged with their insertion order: ties from
    /// narrow ranges, every width from 0 to 40 bits, sizes on both sides of [`SMALL`], already
    /// sorted and reversed inputs, and a shared high part that must not matter.
    #[test]
    fn matches_std_stable_sort() {
        let mut s = Stream::new(11, 0, Purpose::Start, 0);
        let mut scratch = Vec::new();
        for bits in 0..=40u32 {
            for n in [0usize, 1, 5, SMALL, SMALL + 1, 300, 5000] {
                for shape in 0..4 {
                    let high = 0xabcd_u64 << 44;
                    let range = match shape {
                        0 => 3,
                        _ => 1u64 << bits,
                    };
                    let mut v: Vec<(u64, u32)> = (0..n as u32)
                        .map(|i| (high | (s.range_u64(0, range.max(1)) & ((1 << bits) - 1)), i))
                        .collect();
                    match shape {
                        2 => v.sort_by_key(|e| e.0),
                        3 => v.sort_by_key(|e| std::cmp::Reverse(e.0)),
                        _ => {}
                    }
                    let mut want = v.clone();
                    want.sort_by_key(|e| e.0);
                    sort_low_bits(&mut v, &mut scratch, bits);
                    assert_eq!(v, want, "bits {bits}, n {n}, shape {shape}");
                }
            }
        }
    }
}
