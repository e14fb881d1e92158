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
//!
//! **Spread-out trajectories** ([`campolongo`], `--candidates M`): Campolongo, Cariboni and
//! Saltelli 2007 draw `M > R` candidate trajectories and keep the `R` that cover the input space
//! best. The distance of two trajectories is the sum, over every pair of a point of one and a
//! point of the other, of their Euclidean distance on the `[0, 1]` level scale ([`distance`];
//! 0 for two identical trajectories, as SALib's `compute_distance`); a set's spread is
//! `sqrt(Σ_{i<j} d(i, j)²)` ([`spread`]), and the chosen set maximises it. The `M` candidates
//! are the first `M` trajectories of the streams above, so candidates `0..R` are exactly the
//! trajectories drawn without `--candidates`. The maximum is found as SALib does
//! (`src/SALib/sample/morris/brute.py` and `local.py`): by brute force over the `C(M, R)` sets
//! when that is cheap ([`brute_force`]: `R ≤ 10` and `C(M, R) ≤ 10⁶`), else by the local
//! optimisation of M. V. Ruano, J. Ribes, A. Seco and J. Ferrer 2012 ("An improved sampling
//! strategy based on trajectory design for application of the Morris method to systems with many
//! input factors", Environmental Modelling & Software 37:103-109) ([`local`]), which is not
//! guaranteed to find the global maximum. No randomness is involved in the choice; ties go to
//! the lower index.
//!
//! **A confidence interval on `μ*`** ([`mu_star_conf`]), as SALib's `analyze/morris.py`
//! (`_compute_mu_star_confidence`): the `n` effects of a factor are resampled with replacement
//! [`RESAMPLES`] times, each resample's mean absolute value taken, and the half-width is
//! `Φ⁻¹(0.5 + level / 2) × sd(resampled means, ddof = 1)` at level [`CONF_LEVEL`]. The draws
//! come from the keyed stream `(seed, factor, Tune, 4)`. Below two effects it is NaN (SALib gives
//! 0 for one effect; one effect says nothing of its spread, as `σ`).

use crate::base::rng::{Purpose, Stream};
use crate::result::stats;

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
    measures(&elementary_effects(levels, trajs, y))
}

/// The finite elementary effects of every factor, in trajectory order.
pub fn elementary_effects(levels: &[usize], trajs: &[Trajectory], y: &[Vec<f64>]) -> Vec<Vec<f64>> {
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
    ee
}

/// Morris's measures of each factor from its elementary effects.
pub fn measures(ee: &[Vec<f64>]) -> Vec<Factor> {
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

/// Bootstrap resamples of the `μ*` confidence interval (SALib's `num_resamples`, 1000 in its
/// documentation and command line).
pub const RESAMPLES: usize = 1000;

/// The level of the `μ*` confidence interval (SALib's `conf_level`).
pub const CONF_LEVEL: f64 = 0.95;

/// The stream index of the bootstrap draws under `Purpose::Tune` (0 and 1 are `tune`'s Latin
/// hypercube, 2 and 3 the trajectories above).
const BOOTSTRAP_STREAM: u64 = 4;

/// The half-width of the [`CONF_LEVEL`] bootstrap interval on `μ*` of factor `factor` from its
/// effects `ee` (SALib's `_compute_mu_star_confidence`): [`RESAMPLES`] resamples of `ee` with
/// replacement, drawn from the stream `(seed, factor, Tune, 4)`; `Φ⁻¹(0.5 + level / 2)` times the
/// sample standard deviation (`ddof = 1`) of their mean absolute values. NaN below two effects.
pub fn mu_star_conf(ee: &[f64], seed: u64, factor: usize) -> f64 {
    let n = ee.len();
    if n < 2 {
        return f64::NAN;
    }
    let mut draw = Stream::new(seed, factor as u64, Purpose::Tune, BOOTSTRAP_STREAM);
    let means: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let s: f64 = (0..n)
                .map(|_| ee[draw.range_u64(0, n as u64 - 1) as usize].abs())
                .sum();
            s / n as f64
        })
        .collect();
    normal_quantile(0.5 + CONF_LEVEL / 2.0) * stats::sample_sd(&means)
}

/// [`mu_star_conf`] of every factor (factor `a` on its own stream).
pub fn mu_star_confs(ee: &[Vec<f64>], seed: u64) -> Vec<f64> {
    ee.iter()
        .enumerate()
        .map(|(a, e)| mu_star_conf(e, seed, a))
        .collect()
}

/// The standard normal's `p` quantile (`scipy.stats.norm.ppf`), from `statrs`.
fn normal_quantile(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::new(0.0, 1.0)
        .map(|d| d.inverse_cdf(p))
        .unwrap_or(f64::NAN)
}

/// The distance of two trajectories (Campolongo et al. 2007): the sum over every pair of a point
/// of `a` and a point of `b` of their Euclidean distance, each factor on its `[0, 1]` level
/// scale; 0 when the two are the same trajectory (SALib's `compute_distance`).
pub fn distance(levels: &[usize], a: &Trajectory, b: &Trajectory) -> f64 {
    if a.points == b.points {
        return 0.0;
    }
    let unit = |p: &Vec<usize>| -> Vec<f64> {
        p.iter()
            .zip(levels)
            .map(|(i, m)| *i as f64 / (*m as f64 - 1.0))
            .collect()
    };
    let (pa, pb): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (
        a.points.iter().map(unit).collect(),
        b.points.iter().map(unit).collect(),
    );
    let mut d = 0.0;
    for p in &pa {
        for q in &pb {
            let s: f64 = p.iter().zip(q).map(|(x, y)| (x - y) * (x - y)).sum();
            d += s.sqrt();
        }
    }
    d
}

/// The symmetric matrix of [`distance`] between every two trajectories (zero diagonal).
pub fn distances(levels: &[usize], trajs: &[Trajectory]) -> Vec<Vec<f64>> {
    let n = trajs.len();
    let mut d = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in i + 1..n {
            let x = distance(levels, &trajs[i], &trajs[j]);
            d[i][j] = x;
            d[j][i] = x;
        }
    }
    d
}

/// The spread of a set of trajectories: `sqrt(Σ_{i<j} d(i, j)²)` over its pairs (SALib's
/// `sum_distances`), what Campolongo's selection maximises.
pub fn spread(d: &[Vec<f64>], set: &[usize]) -> f64 {
    let mut s = 0.0;
    for (x, i) in set.iter().enumerate() {
        for j in &set[x + 1..] {
            s += d[*i][*j] * d[*i][*j];
        }
    }
    s.sqrt()
}

/// `C(m, r)`, or `None` past `u64`.
pub fn combinations(m: usize, r: usize) -> Option<u64> {
    if r > m {
        return Some(0);
    }
    let r = r.min(m - r);
    let mut c: u128 = 1;
    for i in 0..r {
        // c * (m - i) / (i + 1) is C(m, i + 1): exact at every step.
        c = c * (m - i) as u128 / (i + 1) as u128;
        if c > u128::from(u64::MAX) {
            return None;
        }
    }
    Some(c as u64)
}

/// The most candidates `--candidates` may draw (Campolongo et al. used 500 to 1000); the
/// distance matrix and [`local`] grow as its square.
pub const MAX_CANDIDATES: usize = 1000;

/// Brute force is used up to this many trajectories kept (SALib refuses its brute force above 10)
pub const BRUTE_FORCE_MAX_R: usize = 10;

/// ... and up to this many sets `C(M, R)` to score.
pub const BRUTE_FORCE_MAX_SETS: u64 = 1_000_000;

/// The `r` of the `d.len()` trajectories of greatest [`spread`], by scoring every set (SALib's
/// `BruteForce`): sorted indices; of equal spreads, the first set in lexicographic order (SALib's
/// `argmax`). `r` must be at most `d.len()`.
pub fn brute_force(d: &[Vec<f64>], r: usize) -> Vec<usize> {
    fn go(
        d: &[Vec<f64>],
        r: usize,
        start: usize,
        cur: &mut Vec<usize>,
        sum: f64,
        best: &mut (f64, Vec<usize>),
    ) {
        if cur.len() == r {
            if sum > best.0 {
                *best = (sum, cur.clone());
            }
            return;
        }
        for c in start..=d.len() - (r - cur.len()) {
            let add: f64 = cur.iter().map(|s| d[*s][c] * d[*s][c]).sum();
            cur.push(c);
            go(d, r, c + 1, cur, sum + add, best);
            cur.pop();
        }
    }
    let mut best = (f64::NEG_INFINITY, Vec::new());
    go(d, r, 0, &mut Vec::with_capacity(r), 0.0, &mut best);
    best.1
}

/// The `r` trajectories (`2 ≤ r < d.len()`) by Ruano et al. 2012's local optimisation, as SALib's
/// `LocalOptimisation.find_local_maximum`: for each `i` in `1..r`, every trajectory with the `i`
/// farthest from it seeds a set, the seed of greatest spread is kept and grown one trajectory at
/// a time, each time by the one that gives the greatest spread, up to `r`; of the `r − 1` sets,
/// the one of greatest spread. Sorted indices. Ties go to the lower index (SALib's `argsort` leaves
/// them unspecified), and a row's own trajectory is never among its farthest (SALib's could be,
/// with duplicates at distance 0).
pub fn local(d: &[Vec<f64>], r: usize) -> Vec<usize> {
    let m = d.len();
    let sq = |a: usize, b: usize| d[a][b] * d[a][b];
    // Each row's other trajectories, farthest first.
    let far: Vec<Vec<usize>> = (0..m)
        .map(|row| {
            let mut o: Vec<usize> = (0..m).filter(|c| *c != row).collect();
            o.sort_by(|a, b| d[row][*b].total_cmp(&d[row][*a]).then(a.cmp(b)));
            o
        })
        .collect();
    // seeds[row]: the row and its i farthest, with their sum of squared distances.
    let mut seeds: Vec<(Vec<usize>, f64)> = (0..m).map(|row| (vec![row], 0.0)).collect();
    let mut best: Option<(Vec<usize>, f64)> = None;
    for i in 1..r {
        for (row, (set, ss)) in seeds.iter_mut().enumerate() {
            let c = far[row][i - 1];
            *ss += set.iter().map(|s| sq(*s, c)).sum::<f64>();
            set.push(c);
        }
        let mut top = 0;
        for row in 1..m {
            if seeds[row].1 > seeds[top].1 {
                top = row;
            }
        }
        let (mut set, mut ss) = seeds[top].clone();
        let mut inside = vec![false; m];
        for s in &set {
            inside[*s] = true;
        }
        let mut acc: Vec<f64> = (0..m)
            .map(|c| set.iter().map(|s| sq(*s, c)).sum())
            .collect();
        while set.len() < r {
            let mut pick: Option<usize> = None;
            for c in (0..m).filter(|c| !inside[*c]) {
                if pick.is_none_or(|p| ss + acc[c] > ss + acc[p]) {
                    pick = Some(c);
                }
            }
            let c = pick.expect("r < m leaves a candidate outside");
            ss += acc[c];
            set.push(c);
            inside[c] = true;
            for (x, a) in acc.iter_mut().enumerate() {
                *a += sq(x, c);
            }
        }
        if best.as_ref().is_none_or(|b| ss > b.1) {
            best = Some((set, ss));
        }
    }
    let mut set = best.map(|b| b.0).unwrap_or_default();
    set.sort_unstable();
    set
}

/// How [`campolongo`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    BruteForce,
    Local,
}

impl Selection {
    /// The name in the JSON and the table: `brute-force` or `local` (Ruano et al. 2012).
    pub fn name(self) -> &'static str {
        match self {
            Selection::BruteForce => "brute-force",
            Selection::Local => "local",
        }
    }
}

/// `r` trajectories chosen among `candidates` by Campolongo's spread.
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    /// The trajectories kept, in candidate order.
    pub trajectories: Vec<Trajectory>,
    /// Their indices among the candidates (sorted).
    pub chosen: Vec<usize>,
    pub selection: Selection,
    /// The [`spread`] of the trajectories kept.
    pub spread: f64,
    /// The [`spread`] of candidates `0..r`: the trajectories drawn without `--candidates`.
    pub spread_first: f64,
}

/// Campolongo et al. 2007's design: `candidates` trajectories ([`trajectories`], the same seed),
/// of which the `r` of greatest [`spread`] are kept, by [`brute_force`] when `r` ≤
/// [`BRUTE_FORCE_MAX_R`] and `C(candidates, r)` ≤ [`BRUTE_FORCE_MAX_SETS`], else by [`local`].
/// Needs `2 ≤ r < candidates` (the caller checks).
pub fn campolongo(levels: &[usize], r: usize, candidates: usize, seed: u64) -> Design {
    let all = trajectories(levels, candidates, seed);
    let d = distances(levels, &all);
    let brute = r <= BRUTE_FORCE_MAX_R
        && combinations(candidates, r).is_some_and(|c| c <= BRUTE_FORCE_MAX_SETS);
    let (chosen, selection) = if brute {
        (brute_force(&d, r), Selection::BruteForce)
    } else {
        (local(&d, r), Selection::Local)
    };
    let first: Vec<usize> = (0..r).collect();
    Design {
        trajectories: chosen.iter().map(|i| all[*i].clone()).collect(),
        spread: spread(&d, &chosen),
        spread_first: spread(&d, &first),
        chosen,
        selection,
    }
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
mod tests;
