//! Streaming metrics: per-bucket counters, time-weighted levels and a completion-time histogram.
//!
//! Nothing is stored per event: memory grows with the number of buckets (horizon / bucket) and
//! the histogram's fixed size, not with the number of events.

use crate::summary::{Percentiles, Series};
use crate::time::{Duration, Time};
use hdrhistogram::Histogram;

/// Most buckets a series keeps; past it, neighbours merge and the stored width doubles.
pub const MAX_STORED_BUCKETS: usize = 16_384;

/// Counts per time bucket, grown on demand and bounded: a run ten times longer keeps the same
/// number of stored buckets, each twice or more as wide. The peaks, which are defined at the
/// model's bucket width, are tracked as the counts stream in (events arrive in time order).
#[derive(Clone, Debug, Default)]
pub struct Buckets {
    /// The model's bucket width: peaks are per this width.
    base: u64,
    /// The stored width: `base * 2^k`.
    width: u64,
    pub first: Vec<u32>,
    pub retries: Vec<u32>,
    pub succeeded: Vec<u32>,
    queue_area: Vec<f64>,
    busy_area: Vec<f64>,
    peaks: Peaks,
}

/// Streaming per-bucket peaks at the base width.
#[derive(Clone, Copy, Debug, Default)]
struct Peaks {
    bucket: u64,
    first: u64,
    retries: u64,
    arrivals: u64,
    most_retries: u64,
}

impl Buckets {
    pub fn new(width: Duration) -> Self {
        Buckets {
            base: width.0.max(1),
            width: width.0.max(1),
            ..Default::default()
        }
    }

    /// The stored bucket for `t`, merging neighbours first when `t` is past the last one kept.
    #[inline]
    fn index(&mut self, t: Time) -> usize {
        loop {
            let i = (t.0 / self.width) as usize;
            if i < MAX_STORED_BUCKETS {
                return i;
            }
            self.merge_pairs();
        }
    }

    /// Halves the resolution: bucket `j` becomes the sum of old buckets `2j` and `2j + 1`.
    fn merge_pairs(&mut self) {
        fn halve<T: Copy + Default + std::ops::Add<Output = T>>(v: &mut Vec<T>) {
            let n = v.len().div_ceil(2);
            for j in 0..n {
                let a = v[2 * j];
                let b = v.get(2 * j + 1).copied().unwrap_or_default();
                v[j] = a + b;
            }
            v.truncate(n);
        }
        halve(&mut self.first);
        halve(&mut self.retries);
        halve(&mut self.succeeded);
        halve(&mut self.queue_area);
        halve(&mut self.busy_area);
        self.width = self.width.saturating_mul(2);
    }

    #[inline]
    fn bump(v: &mut Vec<u32>, i: usize) {
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] = v[i].saturating_add(1);
    }

    /// An arrival at the server at `t` (calls come in time order).
    #[inline]
    pub fn arrival(&mut self, t: Time, retry: bool) {
        let p = &mut self.peaks;
        let b = t.0 / self.base;
        if b != p.bucket {
            *p = Peaks {
                bucket: b,
                first: 0,
                retries: 0,
                ..*p
            };
        }
        if retry {
            p.retries += 1;
        } else {
            p.first += 1;
        }
        p.arrivals = p.arrivals.max(p.first + p.retries);
        p.most_retries = p.most_retries.max(p.retries);
        let i = self.index(t);
        Self::bump(
            if retry {
                &mut self.retries
            } else {
                &mut self.first
            },
            i,
        );
    }

    /// `(peak arrivals, peak retries)` in one bucket of the model's width.
    pub fn peaks(&self) -> (u64, u64) {
        (self.peaks.arrivals, self.peaks.most_retries)
    }

    #[inline]
    pub fn success(&mut self, t: Time) {
        let i = self.index(t);
        Self::bump(&mut self.succeeded, i);
    }

    /// Adds `level * dt` over `[from, to)` to an area series, split at bucket edges.
    fn integrate(&mut self, queue: bool, from: Time, to: Time, level: f64) {
        if level == 0.0 || to <= from {
            return;
        }
        let mut t = from.0;
        while t < to.0 {
            let i = self.index(Time(t));
            // Saturating: near the clock's limit the bucket's end is past `to`, never wrapped.
            let edge = (i as u64 + 1).saturating_mul(self.width).min(to.0);
            let area = if queue {
                &mut self.queue_area
            } else {
                &mut self.busy_area
            };
            if area.len() <= i {
                area.resize(i + 1, 0.0);
            }
            area[i] += level * (edge - t) as f64;
            t = edge;
        }
    }
}

/// Time-weighted queue length and busy workers.
#[derive(Clone, Debug, Default)]
pub struct Levels {
    last: Time,
    queue: u64,
    busy: u64,
    queue_area: f64,
    busy_area: f64,
}

impl Levels {
    /// Records that from `now` on the levels are `queue` and `busy`.
    #[inline]
    pub fn set(&mut self, b: &mut Buckets, now: Time, queue: u64, busy: u64) {
        if now > self.last {
            let dt = (now.0 - self.last.0) as f64;
            self.queue_area += self.queue as f64 * dt;
            self.busy_area += self.busy as f64 * dt;
            b.integrate(true, self.last, now, self.queue as f64);
            b.integrate(false, self.last, now, self.busy as f64);
            self.last = now;
        }
        self.queue = queue;
        self.busy = busy;
    }

    /// Time averages over `[0, end)`.
    pub fn means(&mut self, b: &mut Buckets, end: Time) -> (f64, f64) {
        let (q, w) = (self.queue, self.busy);
        self.set(b, end, q, w);
        if end.0 == 0 {
            return (0.0, 0.0);
        }
        (
            self.queue_area / end.0 as f64,
            self.busy_area / end.0 as f64,
        )
    }
}

/// Up to this many completion times are kept exactly; past it they move to the histogram.
///
/// A small run (a sweep's thousand clients) would otherwise pay more for the histogram than for
/// the simulation: 3 significant digits up to tens of seconds is about 200 KB of counts per
/// histogram, grown, zeroed and scanned in every run. Sorting a few thousand exact times gives
/// the same quantiles (each read as its histogram bucket's highest equivalent value).
const EXACT_MAX: usize = 8192;

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

/// Finishes the per-bucket series, padded to the same length.
pub fn series(mut b: Buckets, end: Time) -> Series {
    if end.0 > 0 {
        b.index(Time(end.0 - 1));
    }
    let width = b.width;
    let n = [
        b.first.len(),
        b.retries.len(),
        b.succeeded.len(),
        b.queue_area.len(),
        b.busy_area.len(),
        (end.0 / width) as usize + usize::from(end.0 % width != 0),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    for v in [&mut b.first, &mut b.retries, &mut b.succeeded] {
        v.resize(n, 0);
    }
    b.queue_area.resize(n, 0.0);
    b.busy_area.resize(n, 0.0);
    let avg = |a: &[f64]| a.iter().map(|x| (x / width as f64) as f32).collect();
    Series {
        bucket_ms: Duration(width).as_millis_f64(),
        queue_len: avg(&b.queue_area),
        busy: avg(&b.busy_area),
        first: b.first,
        retries: b.retries,
        succeeded: b.succeeded,
        tiers: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_integrate_across_buckets() {
        let mut b = Buckets::new(Duration(10));
        let mut l = Levels::default();
        l.set(&mut b, Time(5), 2, 1);
        l.set(&mut b, Time(25), 0, 0);
        let (q, w) = l.means(&mut b, Time(40));
        assert!((q - 2.0 * 20.0 / 40.0).abs() < 1e-12);
        assert!((w - 20.0 / 40.0).abs() < 1e-12);
        let s = series(b, Time(40));
        assert_eq!(s.queue_len, vec![1.0, 2.0, 1.0, 0.0]);
    }

    #[test]
    fn long_runs_keep_a_bounded_series_and_exact_peaks() {
        let mut b = Buckets::new(Duration(10));
        // 100 arrivals per bucket for 4x the stored buckets, and one burst of 7 retries.
        let n = 4 * MAX_STORED_BUCKETS as u64;
        for i in 0..n {
            for k in 0..100 {
                b.arrival(Time(i * 10 + k % 10), false);
            }
            if i == n / 2 {
                for _ in 0..7 {
                    b.arrival(Time(i * 10 + 9), true);
                }
            }
        }
        assert_eq!(b.peaks(), (107, 7));
        let s = series(b, Time(n * 10));
        assert_eq!(s.first.len(), MAX_STORED_BUCKETS);
        assert_eq!(s.bucket_ms, 40.0 / 1e6);
        assert!(s.first.iter().all(|&x| x == 400));
        assert_eq!(s.retries.iter().map(|&x| u64::from(x)).sum::<u64>(), 7);
    }

    /// `n` pseudo-random times below `range` ns, and the same recorded in a plain histogram.
    fn sample(n: usize, range: u64, seed: u64) -> (Completions, Histogram<u64>) {
        let mut c = Completions::default();
        let mut h = new_hist();
        let mut x = seed;
        for _ in 0..n {
            x = crate::rng::mix64(x);
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
                x = crate::rng::mix64(x);
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
        }
    }

    /// The failures (all without the successes) read the same whether either side is exact.
    #[test]
    fn without_is_the_same_exact_or_not() {
        let mut x = 5u64;
        let (mut all, mut ok) = (Completions::default(), Completions::default());
        for _ in 0..3000 {
            x = crate::rng::mix64(x);
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
