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

/// A trajectory from its points (level indices), `moved` read off the steps.
fn traj(points: &[&[usize]]) -> Trajectory {
    let points: Vec<Vec<usize>> = points.iter().map(|p| p.to_vec()).collect();
    let moved = points
        .windows(2)
        .map(|w| (0..w[0].len()).find(|a| w[0][*a] != w[1][*a]).unwrap())
        .collect();
    Trajectory { points, moved }
}

/// SALib's fixture (`tests/sample/morris/test_morris_strategies.py`, `setup_input`), from
/// Saltelli et al. 2008, "Global Sensitivity Analysis: The Primer", exercise 3a of chapter 3,
/// p. 134: six trajectories of two factors of four levels (SALib writes level `i` as `i / 3`).
fn primer() -> Vec<Trajectory> {
    vec![
        traj(&[&[0, 1], &[0, 3], &[2, 3]]),
        traj(&[&[0, 1], &[2, 1], &[2, 3]]),
        traj(&[&[2, 0], &[2, 2], &[0, 2]]),
        traj(&[&[1, 3], &[3, 3], &[3, 1]]),
        traj(&[&[1, 3], &[1, 1], &[3, 1]]),
        traj(&[&[1, 2], &[1, 0], &[3, 0]]),
    ]
}

#[test]
fn the_distance_of_two_trajectories_sums_every_pair_of_points() {
    // (0,0) (1,0) (1,1) against (0,1) (0,0) (1,0) on the unit square: the nine distances are
    // 1, 0, 1; √2, 1, 0; 1, √2, 1.
    let a = traj(&[&[0, 0], &[1, 0], &[1, 1]]);
    let b = traj(&[&[0, 1], &[0, 0], &[1, 0]]);
    let d = distance(&[2, 2], &a, &b);
    assert!((d - (5.0 + 2.0 * 2f64.sqrt())).abs() < 1e-12, "{d}");
    assert_eq!(distance(&[2, 2], &b, &a), d);
    // Levels on [0, 1]: of three levels, 0 and 1 are 0.5 apart. |0-1| + |0-.5| + |.5-1| + 0.
    let (c, e) = (traj(&[&[0], &[1]]), traj(&[&[2], &[1]]));
    assert!((distance(&[3], &c, &e) - 2.0).abs() < 1e-12);
    // The same trajectory is at 0 (SALib), though its points are not.
    assert_eq!(distance(&[2, 2], &a, &a.clone()), 0.0);
}

#[test]
fn salibs_primer_fixture_gives_its_distances_and_choice() {
    // SALib's `test_compute_distance_matrix_local` (to 1e-2) and `test_sum_distances`.
    let expected = [
        [0.0, 5.50, 6.18, 6.89, 6.18, 7.52],
        [5.50, 0.0, 5.31, 6.18, 5.31, 5.99],
        [6.18, 5.31, 0.0, 6.57, 5.41, 5.52],
        [6.89, 6.18, 6.57, 0.0, 5.50, 7.31],
        [6.18, 5.31, 5.41, 5.5, 0.0, 5.77],
        [7.52, 5.99, 5.52, 7.31, 5.77, 0.0],
    ];
    let trajs = primer();
    let d = distances(&[4, 4], &trajs);
    for (row, want) in d.iter().zip(expected) {
        for (x, w) in row.iter().zip(want) {
            assert!((x - w).abs() <= 0.01 * w + 1e-9, "{x} against {w}");
        }
    }
    assert!((spread(&d, &[1, 3, 2]) - 10.47).abs() < 0.01);
    // `test_combo_from_find_most_distant` and `test_combo_from_locally_optimal_method`:
    // trajectories 1, 3, 4 and 6 of the Primer, spread 16.410 (`test_scores_...`, the 8th of
    // the C(6, 4) = 15 sets; 16.4099 by the same sum worked in full precision).
    assert_eq!(brute_force(&d, 4), [0, 2, 3, 5]);
    assert_eq!(local(&d, 4), [0, 2, 3, 5]);
    assert!((spread(&d, &[0, 2, 3, 5]) - 16.4099).abs() < 1e-4);
}

#[test]
fn brute_force_finds_the_known_optimum() {
    // Points on a line at 0, 1, 2, 3 and 10: the two farthest are the ends; of three,
    // {0, 1, 10} has 1 + 100 + 81 = 182 against 168 for {0, 2, 10} and 158 for {0, 3, 10}.
    let x = [0.0, 1.0, 2.0, 3.0, 10.0];
    let d: Vec<Vec<f64>> = x
        .iter()
        .map(|a| x.iter().map(|b| f64::abs(a - b)).collect())
        .collect();
    assert_eq!(brute_force(&d, 2), [0, 4]);
    assert_eq!(brute_force(&d, 3), [0, 1, 4]);
    assert!((spread(&d, &[0, 1, 4]) - 182f64.sqrt()).abs() < 1e-12);
    // Equal spreads: the first set in lexicographic order.
    let flat = vec![vec![1.0; 4]; 4];
    assert_eq!(brute_force(&flat, 2), [0, 1]);
    // Against every subset of 12 seeded trajectories, by bitmask.
    let levels = [4, 3, 2];
    let d = distances(&levels, &trajectories(&levels, 12, 5));
    let best = (0u32..1 << 12)
        .filter(|b| b.count_ones() == 4)
        .map(|b| (0..12).filter(|i| b >> i & 1 == 1).collect::<Vec<usize>>())
        .map(|s| spread(&d, &s))
        .fold(0.0, f64::max);
    assert!((spread(&d, &brute_force(&d, 4)) - best).abs() < 1e-9);
}

#[test]
fn the_local_method_beats_random_sets_on_a_seeded_case() {
    let levels = [4, 4, 3, 2];
    let (m, r) = (80, 12);
    let d = distances(&levels, &trajectories(&levels, m, 21));
    let chosen = local(&d, r);
    assert_eq!(chosen.len(), r);
    assert!(chosen.windows(2).all(|w| w[0] < w[1]));
    let best = spread(&d, &chosen);
    let mut draw = Stream::new(1, 0, Purpose::Tune, 99);
    for _ in 0..200 {
        let mut pool: Vec<usize> = (0..m).collect();
        for i in 0..r {
            let j = draw.range_u64(i as u64, (m - 1) as u64) as usize;
            pool.swap(i, j);
        }
        assert!(spread(&d, &pool[..r]) <= best);
    }
    // And the design built on it: brute force when small, local when not.
    let small = campolongo(&levels, 3, 20, 21);
    assert_eq!(small.selection, Selection::BruteForce);
    assert!(small.spread >= small.spread_first);
    let big = campolongo(&levels, r, m, 21);
    assert_eq!(big.selection, Selection::Local);
    assert_eq!(big.chosen, chosen);
    assert!((big.spread - best).abs() < 1e-12 && big.spread > big.spread_first);
    let all = trajectories(&levels, m, 21);
    for (t, i) in big.trajectories.iter().zip(&big.chosen) {
        assert_eq!(*t, all[*i]);
    }
    // Candidates 0..r are the trajectories drawn without --candidates.
    assert_eq!(all[..r], trajectories(&levels, r, 21)[..]);
    assert_eq!(campolongo(&levels, r, m, 21), big);
}

/// SALib's `find_local_maximum` written out as it reads, recomputing every spread in full.
fn salib_local(d: &[Vec<f64>], r: usize) -> Vec<usize> {
    let m = d.len();
    let first_max = |sets: &[Vec<usize>]| {
        let mut best = 0;
        for (i, s) in sets.iter().enumerate() {
            if spread(d, s) > spread(d, &sets[best]) {
                best = i;
            }
        }
        sets[best].clone()
    };
    let mut totals = Vec::new();
    for i in 1..r {
        let rows: Vec<Vec<usize>> = (0..m)
            .map(|row| {
                let mut o: Vec<usize> = (0..m).filter(|c| *c != row).collect();
                o.sort_by(|a, b| d[row][*b].total_cmp(&d[row][*a]).then(a.cmp(b)));
                let mut set = o[..i].to_vec();
                set.push(row);
                set
            })
            .collect();
        let mut set = first_max(&rows);
        while set.len() < r {
            let grown: Vec<Vec<usize>> = (0..m)
                .filter(|c| !set.contains(c))
                .map(|c| [set.clone(), vec![c]].concat())
                .collect();
            set = first_max(&grown);
        }
        totals.push(set);
    }
    let mut set = first_max(&totals);
    set.sort_unstable();
    set
}

#[test]
fn the_local_method_is_salibs_step_by_step() {
    // Seeded distance matrices, and seeded trajectories: the same sets as the plain reading
    // of SALib's code (the fast version keeps running sums instead of recomputing).
    let mut draw = Stream::new(3, 0, Purpose::Tune, 98);
    let mut differs_from_brute = 0;
    for _ in 0..40 {
        let m = 12;
        let mut d = vec![vec![0.0; m]; m];
        for (i, j) in (0..m).flat_map(|i| (i + 1..m).map(move |j| (i, j))) {
            let x = 1.0 + 9.0 * draw.uniform();
            d[i][j] = x;
            d[j][i] = x;
        }
        for r in [2, 4, 6] {
            let fast = local(&d, r);
            assert_eq!(fast, salib_local(&d, r));
            let exact = brute_force(&d, r);
            assert!(spread(&d, &fast) <= spread(&d, &exact) + 1e-9);
            differs_from_brute += usize::from(fast != exact);
        }
    }
    // Local is a heuristic: on some of these it misses the global maximum.
    assert!(differs_from_brute > 0);
    let levels = [4, 3, 2];
    let d = distances(&levels, &trajectories(&levels, 30, 8));
    assert_eq!(local(&d, 7), salib_local(&d, 7));
}

#[test]
fn combinations_count_and_saturate() {
    assert_eq!(combinations(6, 4), Some(15));
    assert_eq!(combinations(100, 4), Some(3_921_225));
    assert_eq!(combinations(5, 0), Some(1));
    assert_eq!(combinations(3, 4), Some(0));
    assert_eq!(combinations(1000, 500), None);
}

#[test]
fn the_bootstrap_interval_on_mu_star() {
    assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-9);
    // No effect, or effects of one size: every resample has the same mean.
    assert_eq!(mu_star_conf(&[0.0; 10], 7, 0), 0.0);
    assert_eq!(mu_star_conf(&[1.0, -1.0, 1.0], 7, 0), 0.0);
    assert!(mu_star_conf(&[2.0], 7, 0).is_nan() && mu_star_conf(&[], 7, 0).is_nan());
    // Effects 0 and 2: a resample's mean is 0, 1 or 2 with chances 1/4, 1/2, 1/4, so its sd
    // is √0.5 and the half-width 1.96 √0.5 = 1.386, to the bootstrap's own noise.
    let c = mu_star_conf(&[0.0, 2.0], 7, 0);
    assert!((c - 1.386).abs() < 0.1, "{c}");
    assert_eq!(c, mu_star_conf(&[0.0, 2.0], 7, 0));
    assert_ne!(c, mu_star_conf(&[0.0, 2.0], 8, 0));
    assert_ne!(c, mu_star_conf(&[0.0, 2.0], 7, 1));
}

#[test]
fn the_interval_shrinks_as_trajectories_grow() {
    // y = x0 x1 + x2: x0's effect is x1, so it varies from trajectory to trajectory; x2's is
    // always 1, x3 has none.
    let levels = [4, 4, 2, 3];
    let conf = |r: usize| {
        let trajs = trajectories(&levels, r, 4);
        let f = |p: &Vec<usize>| {
            let x = |a: usize| p[a] as f64 / (levels[a] - 1) as f64;
            x(0) * x(1) + x(2)
        };
        let y: Vec<Vec<f64>> = trajs
            .iter()
            .map(|t| t.points.iter().map(f).collect())
            .collect();
        mu_star_confs(&elementary_effects(&levels, &trajs, &y), 4)
    };
    let (few, many) = (conf(10), conf(400));
    assert!(few[0] > 0.05 && many[0] < few[0] / 2.0, "{few:?} {many:?}");
    assert!(few[2] < 1e-12 && many[2] < 1e-12);
    assert_eq!((few[3], many[3]), (0.0, 0.0));
}
