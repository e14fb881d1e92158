//! Completion times of settled intents and their quantiles.

use crate::base::time::Duration;
use crate::result::summary::Percentiles;
use hdrhistogram::Histogram;

/// Up to this many completion times are kept exactly; past it they move to the histogram.
///
/// A small run (a sweep's thousand clients) would otherwise pay more for the histogram than for
/// the simulation: 3 significant digits up to tens of seconds is about 200 KB of counts per
/// histogram, grown, zeroed and scanned in every run. Sorting a few thousand exact times gives
/// the same quantiles (each read as its histogram bucket's highest equivalent value).
const EXACT_MAX: usize = 8192;

/// Up to this many quantiles of the exact times are selected one by one, more by one sort.
const SELECT_MAX: usize = 8;

/// Exact times at or below this are kept exactly; larger ones go to the histogram at once, which
/// saturates what it cannot track (the exact path has no such limit to mirror).
const EXACT_LIMIT: u64 = 1 << 62;

/// Completion times of settled intents: exact while few, an HDR histogram (3 significant
/// digits) past [`EXACT_MAX`]. Every quantile reads the same either way.
#[derive(Clone, Debug, Default)]
pub struct Completions {
    exact: Vec<u64>,
    hist: Option<Histogram<u64>>,
    sum: u128,
    max: u64,
}

fn new_hist() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is valid")
}

fn record_into(h: &mut Histogram<u64>, v: u64) {
    if h.record(v).is_err() {
        h.saturating_record(v);
    }
}

/// `Histogram::highest_equivalent` of a histogram with 3 significant digits and a lowest
/// discernible value of 1: the top of `v`'s bucket. 2048 sub-buckets (the power of two above
/// 2 * 10^3), so bucket `b` holds values of `11 + b` bits at a step of `2^b`.
#[inline]
fn highest_equivalent(v: u64) -> u64 {
    if v == u64::MAX {
        return v;
    }
    let b = 53 - (v | 2047).leading_zeros();
    ((v >> b) << b).saturating_add(1 << b) - 1
}

impl Completions {
    #[inline]
    pub fn record(&mut self, d: Duration) {
        match &mut self.hist {
            Some(h) => record_into(h, d.0),
            None if self.exact.len() < EXACT_MAX && d.0 <= EXACT_LIMIT => self.exact.push(d.0),
            None => {
                let mut h = self.histogram();
                record_into(&mut h, d.0);
                self.exact = Vec::new();
                self.hist = Some(h);
            }
        }
        self.sum += u128::from(d.0);
        self.max = self.max.max(d.0);
    }

    pub fn count(&self) -> u64 {
        self.hist
            .as_ref()
            .map_or(self.exact.len() as u64, Histogram::len)
    }

    /// The times as a histogram (a copy when it already is one).
    fn histogram(&self) -> Histogram<u64> {
        match &self.hist {
            Some(h) => h.clone(),
            None => {
                let mut h = new_hist();
                for &v in &self.exact {
                    record_into(&mut h, v);
                }
                h
            }
        }
    }

    /// The times recorded here and not in `part` (a subset of them): the failures are every
    /// completion without the successes. Exact per histogram bucket; the maximum is that of the
    /// remaining buckets, never above this one's.
    pub fn without(&self, part: &Completions) -> Completions {
        let mut hist = self.histogram();
        if hist.subtract(part.histogram()).is_err() {
            return Completions::default();
        }
        let max = if hist.is_empty() {
            0
        } else {
            hist.max().min(self.max)
        };
        Completions {
            exact: Vec::new(),
            hist: Some(hist),
            sum: self.sum.saturating_sub(part.sum),
            max,
        }
    }

    /// The values at ascending quantiles `qs` (each in (0, 1]), in milliseconds: exactly
    /// `Histogram::value_at_quantile` for each (the highest value equivalent to the bucket where
    /// the count reaches `max(1, ceil(q * n))`), never above the true maximum. One pass over the
    /// histogram's buckets, or one sort of the exact times, for all of them: the CDF asks for 200.
    fn ms_at(&self, qs: &[f64]) -> Vec<f64> {
        let total = self.count();
        let target = |q: f64| ((q.min(1.0) * total as f64).ceil() as u64).max(1);
        let ms = |v: u64| Duration(v.min(self.max)).as_millis_f64();
        let mut out = Vec::with_capacity(qs.len());
        match &self.hist {
            // A summary's four quantiles: each the k-th smallest time, selected in the part
            // above the previous one (no full sort).
            None if qs.len() <= SELECT_MAX => {
                let mut times = self.exact.clone();
                let mut from = 0;
                for &q in qs {
                    let k = target(q) as usize - 1;
                    if k >= times.len() {
                        break;
                    }
                    let k = k.max(from);
                    let (_, &mut v, _) = times[from..].select_nth_unstable(k - from);
                    out.push(ms(highest_equivalent(v)));
                    from = k;
                }
            }
            None => {
                let mut sorted = self.exact.clone();
                sorted.sort_unstable();
                for &q in qs {
                    match sorted.get(target(q) as usize - 1) {
                        Some(&v) => out.push(ms(highest_equivalent(v))),
                        None => break,
                    }
                }
            }
            Some(hist) => {
                let mut next = qs.iter().peekable();
                let mut seen = 0u64;
                for v in hist.iter_recorded() {
                    seen += v.count_since_last_iteration();
                    while let Some(&&q) = next.peek() {
                        if seen < target(q) {
                            break;
                        }
                        out.push(ms(v.value_iterated_to()));
                        next.next();
                    }
                }
            }
        }
        // Quantiles past the last recorded value (cannot happen for q <= 1) read as the max.
        out.resize(qs.len(), Duration(self.max).as_millis_f64());
        out
    }

    pub fn percentiles(&self) -> Percentiles {
        let n = self.count();
        if n == 0 {
            return Percentiles::default();
        }
        let q = self.ms_at(&[0.5, 0.9, 0.99, 0.999]);
        Percentiles {
            p50: q[0],
            p90: q[1],
            p99: q[2],
            p999: q[3],
            max: Duration(self.max).as_millis_f64(),
            mean: (self.sum / u128::from(n)) as f64 / 1e6,
        }
    }

    /// `(ms, fraction <= ms)` at 200 quantiles, for CDF charts.
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        if self.count() == 0 {
            return Vec::new();
        }
        let qs: Vec<f64> = (1..=200).map(|i| i as f64 / 200.0).collect();
        self.ms_at(&qs).into_iter().zip(qs).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` pseudo-random times below `range` ns, and the same recorded in a plain histogram.
    fn sample(n: usize, range: u64, seed: u64) -> (Completions, Histogram<u64>) {
        let mut c = Completions::default();
        let mut h = new_hist();
        let mut x = seed;
        for _ in 0..n {
            x = crate::base::rng::mix64(x);
            c.record(Duration(x % range));
            record_into(&mut h, x % range);
        }
        (c, h)
    }

    #[test]
    fn highest_equivalent_is_hdrhistograms() {
        let h = new_hist();
        let mut x = 99u64;
        for bits in 0..64 {
            for _ in 0..200 {
                x = crate::base::rng::mix64(x);
                let v = x >> bits;
                assert_eq!(highest_equivalent(v), h.highest_equivalent(v), "v = {v}");
            }
        }
        for v in [0, 1, 2047, 2048, 4095, 4096, u64::MAX - 1, u64::MAX] {
            assert_eq!(highest_equivalent(v), h.highest_equivalent(v), "v = {v}");
        }
    }

    /// Exact times (few) and the histogram (many) give `value_at_quantile` at every quantile.
    #[test]
    fn quantiles_match_hdrhistogram_exact_or_not() {
        let qs: Vec<f64> = (1..=200).map(|i| i as f64 / 200.0).chain([0.999]).collect();
        let mut sorted = qs.clone();
        sorted.sort_by(f64::total_cmp);
        for (n, range, exact) in [
            (1, 1_000, true),
            (7, 3_000, true),
            (5000, 7_000_000_000, true),
            (EXACT_MAX, 40_000_000_000, true),
            (EXACT_MAX + 1, 40_000_000_000, false),
            (30_000, 7_000_000_000, false),
        ] {
            let (c, h) = sample(n, range, n as u64);
            assert_eq!(c.hist.is_none(), exact, "n = {n}");
            assert_eq!(c.count(), h.len());
            for (q, got) in sorted.iter().zip(c.ms_at(&sorted)) {
                let want = Duration(h.value_at_quantile(*q).min(c.max)).as_millis_f64();
                assert_eq!(got, want, "n = {n}, q = {q}");
            }
            // A few quantiles (a summary's, selected without a sort), repeated ones too.
            let few = [0.001, 0.5, 0.5, 0.9, 0.99, 0.999, 1.0];
            for (q, got) in few.iter().zip(c.ms_at(&few)) {
                let want = Duration(h.value_at_quantile(*q).min(c.max)).as_millis_f64();
                assert_eq!(got, want, "n = {n}, q = {q}");
            }
        }
    }

    /// The failures (all without the successes) read the same whether either side is exact.
    #[test]
    fn without_is_the_same_exact_or_not() {
        let mut x = 5u64;
        let (mut all, mut ok) = (Completions::default(), Completions::default());
        for _ in 0..3000 {
            x = crate::base::rng::mix64(x);
            let d = Duration(x % 9_000_000_000);
            all.record(d);
            if x % 3 == 0 {
                ok.record(d);
            }
        }
        // `all`/`ok` stay exact; the same times in a histogram must give the same failures.
        let hist = |c: &Completions| Completions {
            exact: Vec::new(),
            hist: Some(c.histogram()),
            ..c.clone()
        };
        assert!(all.hist.is_none() && ok.hist.is_none());
        let a = all.without(&ok);
        let b = hist(&all).without(&hist(&ok));
        assert_eq!(a.cdf(), b.cdf());
        assert_eq!(a.percentiles(), b.percentiles());
        assert_eq!(a.count(), all.count() - ok.count());
    }

    #[test]
    fn percentiles_of_known_values() {
        let mut c = Completions::default();
        for ms in 1..=1000u64 {
            c.record(Duration::from_millis(ms));
        }
        let p = c.percentiles();
        assert!((p.p50 - 500.0).abs() < 1.0, "{p:?}");
        assert!((p.p99 - 990.0).abs() < 1.0, "{p:?}");
        assert_eq!(p.max, 1000.0);
        assert!((p.mean - 500.5).abs() < 1e-9);
    }
}
