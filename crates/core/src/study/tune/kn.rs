//! Kim & Nelson's fully sequential indifference-zone procedure KN (Kim, S.-H. and Nelson, B. L.,
//! 2001, "A fully sequential procedure for indifference-zone selection in simulation", ACM
//! TOMACS 11(3):251-273), with common random numbers: replication `r` of every system uses the
//! same seed, so the pairwise variances `S²_il` are of paired differences.
//!
//! Notation and constants as in the paper's §3 (larger is better; a minimised objective is
//! negated first), with `c = 1`:
//! `η = ½((2α/(k−1))^(−2/(n0−1)) − 1)`, `h² = 2cη(n0 − 1)`,
//! `S²_il = 1/(n0−1) Σ_{j≤n0} (X_ij − X_lj − (X̄_i(n0) − X̄_l(n0)))²`,
//! `W_il(r) = max(0, δ/(2cr)·(h²S²_il/δ² − r))`; system `i` is eliminated at stage `r` when
//! `X̄_i(r) < X̄_l(r) − W_il(r)` for some survivor `l`. For `r > N_il = ⌊h²S²_il/δ²⌋` the window is
//! zero: the pair is decided by its means, and equal means are a tie within the indifference
//! zone (the lower index is kept, so the outcome never depends on thread timing).

/// `h²` of KN for `k` systems, first-stage size `n0` (at least 2) and error rate `alpha`.
pub fn h2(alpha: f64, k: usize, n0: usize) -> f64 {
    if k < 2 {
        return 0.0;
    }
    let df = (n0 - 1) as f64;
    let eta = 0.5 * ((2.0 * alpha / (k as f64 - 1.0)).powf(-2.0 / df) - 1.0);
    2.0 * eta * df
}

/// `S²_il` over the first `n0` paired replications.
pub fn s2(xi: &[f64], xl: &[f64], n0: usize) -> f64 {
    let d: Vec<f64> = (0..n0).map(|j| xi[j] - xl[j]).collect();
    let m = d.iter().sum::<f64>() / n0 as f64;
    d.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n0 - 1) as f64
}

/// The continuation window `W_il(r)`.
pub fn window(h2: f64, s2: f64, delta: f64, r: usize) -> f64 {
    let r = r as f64;
    (delta / (2.0 * r) * (h2 * s2 / (delta * delta) - r)).max(0.0)
}

/// One screening step at stage `r` (every contender has at least `r` values). `xs[i]` are system
/// `i`'s values, larger is better; `alive` marks the contenders, `judges` those allowed to
/// eliminate others (feasible ones). Returns the new `alive`.
pub fn screen(
    xs: &[Vec<f64>],
    alive: &[bool],
    judges: &[bool],
    h2: f64,
    delta: f64,
    n0: usize,
    r: usize,
) -> Vec<bool> {
    let mean = |i: usize| xs[i][..r].iter().sum::<f64>() / r as f64;
    let means: Vec<f64> = (0..xs.len())
        .map(|i| if alive[i] { mean(i) } else { f64::NAN })
        .collect();
    let mut out = alive.to_vec();
    for i in 0..xs.len() {
        if !alive[i] {
            continue;
        }
        for l in 0..xs.len() {
            if l == i || !alive[l] || !judges[l] {
                continue;
            }
            let w = window(h2, s2(&xs[i], &xs[l], n0), delta, r);
            let worse = means[i] < means[l] - w;
            // Past N_il a pair with equal means is a tie: keep the lower index.
            let tie = w == 0.0 && means[i] == means[l] && l < i;
            if worse || tie {
                out[i] = false;
                break;
            }
        }
    }
    out
}

/// Whether the pair `(i, l)` is still open at stage `r`: neither has beaten the other yet.
pub fn open(xi: &[f64], xl: &[f64], h2: f64, delta: f64, n0: usize, r: usize) -> bool {
    let w = window(h2, s2(xi, xl, n0), delta, r);
    w > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h2_matches_the_formula_and_grows_with_k() {
        // k = 2, n0 = 5, alpha = 0.05: eta = ((0.1)^(-0.5) - 1) / 2 = 1.0811, h² = 8.649.
        assert!((h2(0.05, 2, 5) - 8.6491).abs() < 1e-3, "{}", h2(0.05, 2, 5));
        assert!(h2(0.05, 10, 5) > h2(0.05, 2, 5));
        assert_eq!(h2(0.05, 1, 5), 0.0);
    }

    #[test]
    fn a_clearly_better_system_eliminates_the_other() {
        let a = vec![10.0, 11.0, 9.0, 10.0, 10.5];
        let b = vec![1.0, 2.0, 0.0, 1.0, 1.5];
        let h = h2(0.05, 2, 5);
        let alive = screen(&[a, b], &[true, true], &[true, true], h, 0.5, 5, 5);
        assert_eq!(alive, vec![true, false]);
    }

    #[test]
    fn a_near_tie_stays_open() {
        let a = vec![10.0, 12.0, 8.0, 11.0, 9.0];
        let b = vec![10.1, 11.5, 8.4, 10.8, 9.3];
        let h = h2(0.05, 2, 5);
        let alive = screen(
            &[a.clone(), b.clone()],
            &[true, true],
            &[true, true],
            h,
            0.01,
            5,
            5,
        );
        assert_eq!(alive, vec![true, true]);
        assert!(open(&a, &b, h, 0.01, 5, 5));
    }

    #[test]
    fn identical_systems_are_a_tie_kept_by_index() {
        let a = vec![3.0; 5];
        let h = h2(0.05, 2, 5);
        let alive = screen(&[a.clone(), a], &[true, true], &[true, true], h, 0.1, 5, 5);
        assert_eq!(alive, vec![true, false]);
    }
}
