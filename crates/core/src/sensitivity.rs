//! `sensitivity`: which `--vary` parameters move a metric, by Morris's elementary effects
//! (M. D. Morris 1991, "Factorial sampling plans for preliminary computational experiments",
//! Technometrics 33(2):161-174), ranked by `μ*`, the mean absolute effect of F. Campolongo,
//! J. Cariboni and A. Saltelli 2007 ("An effective screening design for sensitivity analysis of
//! large models", Environmental Modelling & Software 22(10):1509-1518).
//!
//! Each axis of `m` values is a factor with `m` levels, placed evenly on `[0, 1]` (level `i` at
//! `i / (m - 1)`, whatever the values' spacing). A trajectory starts at a random grid point and
//! moves each factor once, in a random order, by `⌊m / 2⌋` levels (Morris's `Δ = p / (2(p − 1))`
//! for an even `p`, as SALib's `sample/morris` and `analyze/morris.py` use), up or down, whichever
//! stays on the grid (a coin when both do). The elementary effect of the factor moved is
//! `(y(x') − y(x)) / (x'_a − x_a)`; over `R` trajectories, `μ` is their mean, `μ*` the mean of
//! their absolute values and `σ` their sample standard deviation (`ddof = 1`, as SALib). A large
//! `μ*` means the factor matters; a large `σ` against it, that it acts through interactions or
//! non-linearly.
//!
//! The trajectories come from the keyed stream `(seed, trajectory, Tune, 2)` (start) and
//! `(seed, trajectory, Tune, 3)` (order and directions), so the same flags give the same
//! points. `y` at a point is the metric's mean over the same seeds for every point (common random
//! numbers): a parameter that changes nothing has effects of exactly 0.

use crate::rng::{Purpose, Stream};
use crate::stats;

/// One trajectory: `k + 1` grid points (a level index per factor), each differing from the one
/// before in the factor `moved[i]` only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trajectory {
    pub points: Vec<Vec<usize>>,
    pub moved: Vec<usize>,
}

/// The most trajectories one analysis may ask for.
pub const MAX_TRAJECTORIES: usize = 10_000;

/// The jump on a factor of `m` levels: `⌊m / 2⌋` levels (at least 1).
pub fn jump(m: usize) -> usize {
    (m / 2).max(1)
}

/// `r` trajectories over factors of `levels[a]` levels each (every one at least 2).
pub fn trajectories(levels: &[usize], r: usize, seed: u64) -> Vec<Trajectory> {
    (0..r)
        .map(|t| {
            let mut start = Stream::new(seed, t as u64, Purpose::Tune, 2);
            let mut walk = Stream::new(seed, t as u64, Purpose::Tune, 3);
            let mut x: Vec<usize> = levels
                .iter()
                .map(|m| start.range_u64(0, *m as u64 - 1) as usize)
                .collect();
            let mut order: Vec<usize> = (0..levels.len()).collect();
            for i in (1..order.len()).rev() {
                let j = walk.range_u64(0, i as u64) as usize;
                order.swap(i, j);
            }
            let mut points = vec![x.clone()];
            for a in &order {
                let (m, d) = (levels[*a], jump(levels[*a]));
                let up = x[*a] + d < m;
                let down = x[*a] >= d;
                x[*a] = if up && (!down || walk.bernoulli(0.5)) {
                    x[*a] + d
                } else {
                    x[*a] - d
                };
                points.push(x.clone());
            }
            Trajectory {
                points,
                moved: order,
            }
        })
        .collect()
}

/// Morris's measures of one factor.
#[derive(Clone, Debug, PartialEq)]
pub struct Factor {
    /// Mean elementary effect (signed).
    pub mu: f64,
    /// Mean absolute elementary effect (Campolongo et al. 2007): the ranking measure.
    pub mu_star: f64,
    /// Sample standard deviation of the elementary effects (NaN with fewer than 2).
    pub sigma: f64,
    /// Effects measured; a step whose `y` is NaN (the metric absent in a run) gives none.
    pub effects: usize,
}

/// The measures of every factor from the trajectories and `y[t][i]`, the metric at point `i` of
/// trajectory `t`.
pub fn effects(levels: &[usize], trajs: &[Trajectory], y: &[Vec<f64>]) -> Vec<Factor> {
    let mut ee: Vec<Vec<f64>> = vec![Vec::new(); levels.len()];
    for (t, ys) in trajs.iter().zip(y) {
        for (i, a) in t.moved.iter().enumerate() {
            let dx =
                (t.points[i + 1][*a] as f64 - t.points[i][*a] as f64) / (levels[*a] as f64 - 1.0);
            let e = (ys[i + 1] - ys[i]) / dx;
            if e.is_finite() {
                ee[*a].push(e);
            }
        }
    }
    ee.iter()
        .map(|e| {
            let abs: Vec<f64> = e.iter().map(|x| x.abs()).collect();
            Factor {
                mu: stats::mean(e),
                mu_star: stats::mean(&abs),
                sigma: if e.len() > 1 {
                    stats::sample_sd(e)
                } else {
                    f64::NAN
                },
                effects: e.len(),
            }
        })
        .collect()
}

/// The factors by decreasing `μ*` (a factor without effects last; ties in `--vary` order).
pub fn ranking(factors: &[Factor]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..factors.len()).collect();
    let key = |i: usize| {
        let m = factors[i].mu_star;
        if m.is_nan() { f64::NEG_INFINITY } else { m }
    };
    order.sort_by(|a, b| key(*b).total_cmp(&key(*a)).then(a.cmp(b)));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trajectory_moves_each_factor_once_by_the_jump() {
        let levels = [4, 2, 5, 3];
        for t in trajectories(&levels, 50, 9) {
            assert_eq!(t.points.len(), levels.len() + 1);
            let mut moved = t.moved.clone();
            moved.sort_unstable();
            assert_eq!(moved, [0, 1, 2, 3]);
            for (i, a) in t.moved.iter().enumerate() {
                for (b, m) in levels.iter().enumerate() {
                    let (p, q) = (t.points[i][b], t.points[i + 1][b]);
                    assert!(q < *m);
                    if b == *a {
                        assert_eq!(p.abs_diff(q), jump(*m));
                    } else {
                        assert_eq!(p, q);
                    }
                }
            }
        }
        assert_eq!(trajectories(&levels, 5, 9), trajectories(&levels, 5, 9));
        assert_ne!(trajectories(&levels, 5, 9), trajectories(&levels, 5, 10));
    }

    #[test]
    fn a_linear_function_has_its_slopes_as_effects() {
        // y = 3 x0 - 1 x1 + 0 x2 on the unit cube: μ = slope, μ* = |slope|, σ = 0.
        let levels = [4, 3, 6];
        let trajs = trajectories(&levels, 20, 1);
        let f = |p: &Vec<usize>| {
            let x = |a: usize| p[a] as f64 / (levels[a] - 1) as f64;
            3.0 * x(0) - x(1)
        };
        let y: Vec<Vec<f64>> = trajs
            .iter()
            .map(|t| t.points.iter().map(f).collect())
            .collect();
        let fs = effects(&levels, &trajs, &y);
        assert!((fs[0].mu - 3.0).abs() < 1e-9 && (fs[0].mu_star - 3.0).abs() < 1e-9);
        assert!((fs[1].mu + 1.0).abs() < 1e-9 && (fs[1].mu_star - 1.0).abs() < 1e-9);
        assert!(fs[0].sigma < 1e-9 && fs[2].mu_star == 0.0);
        assert_eq!(fs[0].effects, 20);
        assert_eq!(ranking(&fs), [0, 1, 2]);
    }

    #[test]
    fn a_missing_value_drops_its_effects_only() {
        let levels = [2, 2];
        let trajs = trajectories(&levels, 1, 3);
        let mut y = vec![vec![0.0, 1.0, 2.0]];
        y[0][2] = f64::NAN;
        let fs = effects(&levels, &trajs, &y);
        assert_eq!(fs[trajs[0].moved[0]].effects, 1);
        assert_eq!(fs[trajs[0].moved[1]].effects, 0);
        assert_eq!(ranking(&fs)[1], trajs[0].moved[1]);
    }
}
