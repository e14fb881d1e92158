//! Which points of the `--vary` grid a search tries: every point when the grid is small, else a
//! Latin hypercube (McKay, Beckman and Conover 1979) drawn from a keyed stream.
//!
//! For `n` samples over axes of `m_a` values each, axis `a` gets its own permutation `π_a` of
//! `0..n` (Fisher-Yates, stream `(seed, a, Tune, 0)`) and sample `i` takes value index
//! `⌊(π_a(i) + u) · m_a / n⌋` with `u` uniform from stream `(seed, a, Tune, 1)`: every axis's
//! range is cut into `n` equal strata and each stratum is used once. Points that coincide on a
//! discrete grid are kept once. The result is sorted by grid point, so it never depends on the
//! order of anything but the seed.

use crate::base::rng::{Purpose, Stream};
use crate::study::sweep::Grid;

/// How the candidates were chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    Grid,
    LatinHypercube,
}

impl Sampling {
    pub fn as_str(self) -> &'static str {
        match self {
            Sampling::Grid => "grid",
            Sampling::LatinHypercube => "latin-hypercube",
        }
    }
}

/// The grid points to try: all of them when there are at most `max`, else `max` Latin
/// hypercube samples (fewer when some coincide).
pub fn candidates(grid: &Grid, max: u64, seed: u64) -> (Sampling, Vec<u64>) {
    let points = grid.checked_points().unwrap_or(u64::MAX);
    if points <= max {
        return (Sampling::Grid, (0..points).collect());
    }
    let n = max as usize;
    let mut coords: Vec<Vec<usize>> = vec![Vec::with_capacity(grid.axes.len()); n];
    for (a, axis) in grid.axes.iter().enumerate() {
        let mut perm: Vec<usize> = (0..n).collect();
        let mut shuffle = Stream::new(seed, a as u64, Purpose::Tune, 0);
        for i in (1..n).rev() {
            let j = shuffle.range_u64(0, i as u64) as usize;
            perm.swap(i, j);
        }
        let mut jitter = Stream::new(seed, a as u64, Purpose::Tune, 1);
        let m = axis.values.len();
        for (i, c) in coords.iter_mut().enumerate() {
            let x = (perm[i] as f64 + jitter.uniform()) * m as f64 / n as f64;
            c.push((x as usize).min(m - 1));
        }
    }
    let mut out: Vec<u64> = coords
        .iter()
        .map(|c| {
            c.iter()
                .zip(&grid.axes)
                .fold(0u64, |p, (i, a)| p * a.values.len() as u64 + *i as u64)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    (Sampling::LatinHypercube, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::sweep::Axis;

    fn grid(sizes: &[usize]) -> Grid {
        Grid {
            axes: sizes
                .iter()
                .enumerate()
                .map(|(k, n)| Axis {
                    key: format!("k{k}"),
                    values: (0..*n).map(|i| i.to_string()).collect(),
                })
                .collect(),
            variants: vec!["v".into()],
            seeds: vec![1],
        }
    }

    #[test]
    fn small_grids_are_tried_whole() {
        let (s, c) = candidates(&grid(&[3, 4]), 50, 1);
        assert_eq!(s, Sampling::Grid);
        assert_eq!(c, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn a_latin_hypercube_covers_every_stratum_and_is_seeded() {
        let g = grid(&[100, 100]);
        let (s, c) = candidates(&g, 10, 7);
        assert_eq!(s, Sampling::LatinHypercube);
        assert_eq!(c.len(), 10);
        for axis in 0..2 {
            let mut strata: Vec<usize> = c.iter().map(|p| g.coords(*p)[axis] / 10).collect();
            strata.sort_unstable();
            assert_eq!(strata, (0..10).collect::<Vec<_>>(), "axis {axis}");
        }
        assert_eq!(candidates(&g, 10, 7).1, c);
        assert_ne!(candidates(&g, 10, 8).1, c);
    }
}
