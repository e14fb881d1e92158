//! Statistics over replications: mean, sample standard deviation and the Student-t 95%
//! confidence interval of the mean, the Wilson interval of a share, and how replication seeds are
//! derived. The lowest module of `result`: it knows nothing of a summary.
//!
//! Replication `i` (from 0) of a run with base seed `s` uses seed `s + i` (wrapping). The engine
//! mixes every seed through splitmix64 before use ([`crate::base::rng::Stream::new`]), so consecutive
//! seeds give independent streams, and a failing replication is reproduced by `--seed s+i`.

use serde::{Deserialize, Serialize};

/// The seeds of `n` replications starting at `base`: `base, base + 1, ...` (wrapping).
pub fn replication_seeds(base: u64, n: u32) -> Vec<u64> {
    (0..u64::from(n)).map(|i| base.wrapping_add(i)).collect()
}

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    // Kahan-free but order-fixed: the same inputs always give the same bits.
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (divisor `n - 1`); NaN below two values.
pub fn sample_sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

/// The standard normal's 0.975 quantile (the Wilson interval's z), to 6 decimals.
const Z975: f64 = 1.959_964;

/// The two-sided `level` critical value of Student's t with `df` degrees of freedom (the
/// `(1 + level) / 2` quantile: 12.706 for level 0.95 and df 1), from `statrs`'s inverse CDF;
/// it replaced a 4-decimal table with interpolation past df 30. Infinity for `df == 0` or a
/// level outside (0, 1).
pub fn t_quantile(level: f64, df: usize) -> f64 {
    if df == 0 || !(level > 0.0 && level < 1.0) {
        return f64::INFINITY;
    }
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df as f64)
        .map(|t| t.inverse_cdf((1.0 + level) / 2.0))
        .unwrap_or(f64::INFINITY)
}

/// The 0.975 quantile of Student's t (the 95% interval's): [`t_quantile`] at level 0.95.
pub fn t975(df: usize) -> f64 {
    t_quantile(0.95, df)
}

/// A mean with the half-width of its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    /// `t(0.975, n-1) * sd / sqrt(n)`; NaN with fewer than two values.
    pub half_width: f64,
    pub n: usize,
}

impl Estimate {
    pub fn of(xs: &[f64]) -> Estimate {
        let n = xs.len();
        let half_width = if n < 2 {
            f64::NAN
        } else {
            t975(n - 1) * sample_sd(xs) / (n as f64).sqrt()
        };
        Estimate {
            mean: mean(xs),
            half_width,
            n,
        }
    }

    /// `(low, high)` of the 95% interval.
    pub fn interval(&self) -> (f64, f64) {
        (self.mean - self.half_width, self.mean + self.half_width)
    }
}

/// How many of `n` runs had some yes/no property (goodput recovered after the trigger), with the
/// Wilson score 95% interval (Wilson, "Probable inference, the law of succession, and
/// statistical inference", JASA 22, 1927): unlike the normal approximation it stays inside
/// [0, 1] and is not empty at 0 of n or n of n, which is where a collapse study's shares sit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub count: u32,
    pub n: u32,
    /// `count / n`.
    pub share: f64,
    pub low: f64,
    pub high: f64,
}

impl Share {
    pub fn of(count: u32, n: u32) -> Share {
        let (low, high) = wilson(count, n);
        Share {
            count,
            n,
            share: if n == 0 {
                f64::NAN
            } else {
                f64::from(count) / f64::from(n)
            },
            low,
            high,
        }
    }
}

/// The Wilson score 95% interval of `count` successes in `n` trials; NaN for `n = 0`.
pub fn wilson(count: u32, n: u32) -> (f64, f64) {
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let (k, n) = (f64::from(count.min(n)), f64::from(n));
    let p = k / n;
    let z = Z975;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 of n and n of n the bound is exactly 0 or 1 (the formula gives it up to rounding).
    let low = if k == 0.0 { 0.0 } else { centre - half };
    let high = if k == n { 1.0 } else { centre + half };
    (low.max(0.0), high.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sd_ci() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), 5.0);
        assert!((sample_sd(&xs) - 2.138_089_935).abs() < 1e-9);
        let e = Estimate::of(&xs);
        // t(0.975, 7) = 2.3646
        assert!((e.half_width - 2.364_624 * 2.138_089_935 / 8f64.sqrt()).abs() < 1e-6);
        assert!(Estimate::of(&[3.0]).half_width.is_nan());
        assert!(mean(&[]).is_nan());
    }

    #[test]
    fn t_quantiles() {
        // Published tables (NIST/SEMATECH e-Handbook 1.3.6.7.2), to their 3 decimals.
        assert!((t975(1) - 12.706).abs() < 5e-4);
        assert!((t975(4) - 2.776).abs() < 5e-4);
        assert!((t975(30) - 2.042).abs() < 5e-4);
        assert!((t_quantile(0.99, 10) - 3.169).abs() < 5e-4);
        assert!((t_quantile(0.90, 5) - 2.015).abs() < 5e-4);
        assert_eq!(t_quantile(1.0, 5), f64::INFINITY);
        assert!((t975(50) - 2.0086).abs() < 1e-3);
        assert!((t975(100) - 1.9840).abs() < 1e-3);
        assert!((t975(1000) - 1.9623).abs() < 1e-3);
        assert!((t975(1_000_000) - Z975).abs() < 1e-3);
        let mut prev = t975(1);
        for df in 2..2000 {
            assert!(t975(df) <= prev, "t975 must decrease, df {df}");
            prev = t975(df);
        }
    }

    #[test]
    fn wilson_intervals() {
        // Reference values from the closed form (e.g. R's `prop.test(7, 10, correct = FALSE)`
        // gives 0.3968 .. 0.8922).
        let (lo, hi) = wilson(7, 10);
        assert!(
            (lo - 0.3968).abs() < 1e-4 && (hi - 0.8922).abs() < 1e-4,
            "{lo} {hi}"
        );
        // 0 of 10 and 10 of 10 are not empty intervals.
        let (lo, hi) = wilson(0, 10);
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 1e-4, "{hi}");
        let (lo, hi) = wilson(10, 10);
        assert!((lo - 0.7225).abs() < 1e-4 && hi == 1.0, "{lo}");
        assert!(wilson(0, 0).0.is_nan());
        assert_eq!(Share::of(3, 4).share, 0.75);
    }

    #[test]
    fn seeds_are_consecutive() {
        assert_eq!(replication_seeds(42, 3), vec![42, 43, 44]);
        assert_eq!(replication_seeds(u64::MAX, 2), vec![u64::MAX, 0]);
    }
}
