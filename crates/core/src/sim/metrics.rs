//! Streaming metrics: per-bucket counters, time-weighted levels and a completion-time histogram.
//!
//! Nothing is stored per event: memory grows with the number of buckets (horizon / bucket) and
//! the histogram's fixed size, not with the number of events.

use crate::summary::{AttemptPeak, Percentiles, Series};
use crate::time::{Duration, Time};
use hdrhistogram::Histogram;
use std::collections::VecDeque;

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
    /// Sliding-window and per-attempt peaks, and arrivals per bucket by attempt: kept for the
    /// tier whose load the summary reports (the bottom), off elsewhere.
    windows: Option<Box<Windows>>,
}

/// Arrival series per stored bucket by attempt number are kept for attempts 1 to
/// `ATTEMPT_SERIES - 1`; later attempts are folded into the last one.
pub const ATTEMPT_SERIES: usize = 6;

/// What the bottom's load is per attempt number: arrivals, the per-bucket peak at the model's
/// bucket width and the sliding-window peak.
#[derive(Clone, Debug, Default)]
struct AttemptLoad {
    arrivals: u64,
    /// The base bucket counted in `in_bucket`.
    bucket: u64,
    in_bucket: u64,
    peak: u64,
    /// Arrivals of this attempt number in the current window.
    in_window: u64,
    peak_window: u64,
}

/// Arrivals at one time of one attempt number, retries or not: one entry of [`Windows`]'
/// window.
#[derive(Clone, Copy, Debug)]
struct Slot {
    t: u64,
    n: u64,
    attempt: u16,
    retry: bool,
}

/// The most arrivals in any half-open window `[t, t + width)` (all arrivals, retries, each
/// attempt number), kept online from arrival times that come in order (never decreasing).
///
/// The most in any window equals the most in `(t - width, t]` over the arrival times `t` (the
/// window ending just after each arrival; a window holding no arrival at its last nanosecond can
/// slide right until it does without losing one). So each arrival evicts the arrivals at or
/// before `t - width` and counts what is left: O(1) amortised per arrival. One window serves
/// every count: after the evictions at `t` each count is that of `(t - width, t]`, and a kind's
/// peak is updated only where one of its own arrives. Arrivals at one time of one kind share an
/// entry, so memory is bounded by the peak (and by the distinct times in a window).
#[derive(Clone, Debug, Default)]
struct Windows {
    width: u64,
    recent: VecDeque<Slot>,
    in_window: u64,
    retries_in_window: u64,
    peak: u64,
    peak_retries: u64,
    /// Index `a`: attempt number `a + 1`; grown to the highest attempt seen.
    attempts: Vec<AttemptLoad>,
    /// Arrivals per stored bucket, index `a` for attempt `a + 1` (the last: that and later);
    /// not kept when `by_attempt` is off (a summary-only run has no series).
    series: Vec<Vec<u32>>,
    by_attempt: bool,
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

    /// Also keeps the sliding-window peaks of width `window` and the per-attempt loads (see
    /// [`Buckets::attempt_peaks`]).
    pub fn with_windows(width: Duration, window: Duration) -> Self {
        Buckets {
            windows: Some(Box::new(Windows {
                width: window.0.max(1),
                by_attempt: true,
                ..Default::default()
            })),
            ..Buckets::new(width)
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
        if let Some(w) = &mut self.windows {
            for v in &mut w.series {
                halve(v);
            }
        }
        self.width = self.width.saturating_mul(2);
    }

    #[inline]
    fn bump(v: &mut Vec<u32>, i: usize) {
        if v.len() <= i {
            v.resize(i + 1, 0);
        }
        v[i] = v[i].saturating_add(1);
    }

    /// An arrival at the server at `t` (calls come in time order); `attempt` counts from 0
    /// (the first try).
    #[inline]
    pub fn arrival(&mut self, t: Time, retry: bool, attempt: u16) {
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
        if let Some(w) = &mut self.windows {
            w.arrival(t, retry, attempt, b, i);
        }
    }

    /// Room for attempt numbers up to `n` without growing, and whether to keep arrivals per
    /// bucket by attempt for the series (off for a summary-only run).
    pub fn prepare_windows(&mut self, n: usize, by_attempt: bool) {
        if let Some(w) = &mut self.windows {
            w.attempts.reserve(n);
            w.by_attempt = by_attempt;
            if by_attempt {
                w.series.reserve(ATTEMPT_SERIES);
            }
        }
    }

    /// `(peak arrivals, peak retries)` in any sliding window of the `with_windows` width (0, 0
    /// when not kept).
    pub fn window_peaks(&self) -> (u64, u64) {
        self.windows
            .as_ref()
            .map_or((0, 0), |w| (w.peak, w.peak_retries))
    }

    /// One entry per attempt number from 1 to the highest that arrived (empty when not kept).
    pub fn attempt_peaks(&self) -> Vec<AttemptPeak> {
        let Some(w) = &self.windows else {
            return Vec::new();
        };
        w.attempts
            .iter()
            .enumerate()
            .map(|(a, l)| AttemptPeak {
                attempt: a as u64 + 1,
                arrivals: l.arrivals,
                peak: l.peak,
                peak_window: l.peak_window,
            })
            .collect()
    }

    /// The sliding window's width (the bucket width when windows are not kept).
    pub fn window_width(&self) -> Duration {
        self.windows
            .as_ref()
            .map_or(Duration(self.base), |w| Duration(w.width))
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

impl Windows {
    /// An arrival at `t` of attempt `attempt` (from 0), in base bucket `b` and stored bucket `i`.
    #[inline]
    fn arrival(&mut self, t: Time, retry: bool, attempt: u16, b: u64, i: usize) {
        let t = t.0;
        let a = usize::from(attempt);
        if a >= self.attempts.len() {
            self.attempts.resize_with(a + 1, AttemptLoad::default);
        }
        match self.recent.back_mut() {
            Some(s) if s.t == t && s.attempt == attempt && s.retry == retry => s.n += 1,
            _ => {
                // Out of the window `(t - width, t]`: arrivals at `s` with `t - s >= width`
                // (times never decrease, so `s <= t`).
                while let Some(s) = self.recent.front() {
                    if t - s.t < self.width {
                        break;
                    }
                    self.in_window -= s.n;
                    if s.retry {
                        self.retries_in_window -= s.n;
                    }
                    self.attempts[usize::from(s.attempt)].in_window -= s.n;
                    self.recent.pop_front();
                }
                self.recent.push_back(Slot {
                    t,
                    n: 1,
                    attempt,
                    retry,
                });
            }
        }
        self.in_window += 1;
        self.peak = self.peak.max(self.in_window);
        if retry {
            self.retries_in_window += 1;
            self.peak_retries = self.peak_retries.max(self.retries_in_window);
        }
        let l = &mut self.attempts[a];
        l.arrivals += 1;
        l.in_window += 1;
        l.peak_window = l.peak_window.max(l.in_window);
        if l.bucket != b {
            l.bucket = b;
            l.in_bucket = 0;
        }
        l.in_bucket += 1;
        l.peak = l.peak.max(l.in_bucket);
        if self.by_attempt {
            let k = a.min(ATTEMPT_SERIES - 1);
            if self.series.len() <= k {
                self.series.resize_with(k + 1, Vec::new);
            }
            Buckets::bump(&mut self.series[k], i);
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
    let mut attempts = b.windows.take().map(|w| w.series).unwrap_or_default();
    for v in &mut attempts {
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
        attempts,
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
                b.arrival(Time(i * 10 + k % 10), false, 0);
            }
            if i == n / 2 {
                for _ in 0..7 {
                    b.arrival(Time(i * 10 + 9), true, 1);
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

    /// The most of `times` in any half-open window `[s, s + w)`, by brute force over every
    /// start `s` that can matter (each time, and each time minus `w - 1`).
    fn brute_window(times: &[u64], w: u64) -> u64 {
        let starts = times
            .iter()
            .flat_map(|&t| [t, t.saturating_sub(w - 1)])
            .collect::<Vec<_>>();
        starts
            .iter()
            .map(|&s| times.iter().filter(|&&t| t >= s && t - s < w).count() as u64)
            .max()
            .unwrap_or(0)
    }

    fn window_of(times: &[u64], w: u64) -> u64 {
        let mut b = Buckets::with_windows(Duration(10), Duration(w));
        for &t in times {
            b.arrival(Time(t), false, 0);
        }
        let (all, retries) = b.window_peaks();
        assert_eq!(retries, 0);
        assert_eq!(b.attempt_peaks().first().map_or(0, |a| a.peak_window), all);
        all
    }

    #[test]
    fn window_peak_counts_ties_half_open_edges_and_gaps() {
        // Ties: three at one time are three in every window holding it.
        assert_eq!(window_of(&[5, 5, 5], 1), 3);
        // Half-open: 0 and 10 are not in one window of width 10, 0 and 9 are.
        assert_eq!(window_of(&[0, 10], 10), 1);
        assert_eq!(window_of(&[0, 9], 10), 2);
        // A gap longer than the window empties it; the peak before it stays.
        assert_eq!(window_of(&[0, 1, 2, 3, 100, 200, 201], 10), 4);
        // Width 1 ns: only equal times share a window.
        assert_eq!(window_of(&[7, 7, 8, 9, 9, 9, 10], 1), 3);
        // Near the clock's end nothing wraps.
        assert_eq!(window_of(&[u64::MAX - 3, u64::MAX - 1, u64::MAX], 10), 3);
        assert_eq!(window_of(&[], 10), 0);
        // Memory is the distinct times of one window: a burst of ties is one entry.
        let mut b = Buckets::with_windows(Duration(10), Duration(10));
        for _ in 0..1000 {
            b.arrival(Time(3), false, 0);
        }
        let w = b.windows.as_ref().unwrap();
        assert_eq!((w.peak, w.recent.len()), (1000, 1));
    }

    /// Random sorted times with many ties, against the brute-force count, at widths that do and
    /// do not divide the bucket grid.
    #[test]
    fn window_peak_is_the_brute_force_count() {
        let mut x = 11u64;
        for case in 0..200 {
            let n = 1 + case % 60;
            let range = 1 + (case as u64 * 37) % 500;
            let mut times: Vec<u64> = (0..n)
                .map(|_| {
                    x = crate::rng::mix64(x);
                    x % range
                })
                .collect();
            times.sort_unstable();
            for w in [1, 2, 3, 7, 10, 64, 99, 1000] {
                assert_eq!(
                    window_of(&times, w),
                    brute_window(&times, w),
                    "w = {w}, times = {times:?}"
                );
            }
        }
    }

    /// Mixed attempt numbers sharing one window: every count is the brute force over its own
    /// arrivals, for retries and each attempt number.
    #[test]
    fn window_peaks_per_kind_are_the_brute_force_counts() {
        let mut x = 3u64;
        for case in 0..100u64 {
            let w = [1, 5, 10, 33, 250][case as usize % 5];
            let mut arr: Vec<(u64, u16)> = (0..1 + case % 80)
                .map(|_| {
                    x = crate::rng::mix64(x);
                    (x % (1 + case * 7), (x >> 40) as u16 % 4)
                })
                .collect();
            arr.sort_by_key(|a| a.0);
            let mut b = Buckets::with_windows(Duration(10), Duration(w));
            for &(t, a) in &arr {
                b.arrival(Time(t), a > 0, a);
            }
            let times = |f: &dyn Fn(u16) -> bool| -> Vec<u64> {
                arr.iter().filter(|x| f(x.1)).map(|x| x.0).collect()
            };
            let (all, retries) = b.window_peaks();
            assert_eq!(all, brute_window(&times(&|_| true), w), "{arr:?}");
            assert_eq!(retries, brute_window(&times(&|a| a > 0), w), "{arr:?}");
            for p in b.attempt_peaks() {
                let mine = times(&|a| u64::from(a) + 1 == p.attempt);
                assert_eq!(p.peak_window, brute_window(&mine, w), "{arr:?}");
                assert_eq!(p.arrivals, mine.len() as u64);
            }
        }
    }

    /// A burst straddling a bucket edge: the buckets split it, the window does not; the
    /// per-attempt counts add up and each keeps its own peaks.
    #[test]
    fn window_and_attempt_peaks_across_a_bucket_edge() {
        let mut b = Buckets::with_windows(Duration(10), Duration(10));
        for t in [5, 6, 7, 8, 9, 10, 11, 12, 13] {
            b.arrival(Time(t), false, 0);
        }
        for t in [14, 14, 25] {
            b.arrival(Time(t), true, 1);
        }
        b.arrival(Time(26), true, 3);
        assert_eq!(b.peaks(), (6, 2));
        // [5, 15) holds all nine first tries and the two retries at 14.
        assert_eq!(b.window_peaks(), (11, 2));
        let a = b.attempt_peaks();
        let row = |a: &AttemptPeak| (a.attempt, a.arrivals, a.peak, a.peak_window);
        assert_eq!(
            a.iter().map(row).collect::<Vec<_>>(),
            vec![(1, 9, 5, 9), (2, 3, 2, 2), (3, 0, 0, 0), (4, 1, 1, 1)]
        );
        assert_eq!(a.iter().map(|a| a.arrivals).sum::<u64>(), 13);
        let s = series(b, Time(30));
        assert_eq!(
            s.attempts,
            vec![vec![5, 4, 0], vec![0, 2, 1], vec![], vec![0, 0, 1]]
                .into_iter()
                .map(|mut v: Vec<u32>| {
                    v.resize(3, 0);
                    v
                })
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn attempt_series_fold_late_attempts_and_merge_with_the_buckets() {
        let mut b = Buckets::with_windows(Duration(10), Duration(10));
        for a in 0..10u16 {
            b.arrival(Time(u64::from(a)), a > 0, a);
        }
        // Past the stored buckets: neighbours merge in the attempt series too.
        b.arrival(Time(10 * MAX_STORED_BUCKETS as u64), true, 1);
        let s = series(b, Time(10 * MAX_STORED_BUCKETS as u64 + 1));
        assert_eq!(s.attempts.len(), ATTEMPT_SERIES);
        assert!(s.attempts.iter().all(|v| v.len() == s.first.len()));
        assert_eq!(
            s.attempts[ATTEMPT_SERIES - 1][0],
            10 - ATTEMPT_SERIES as u32 + 1
        );
        assert_eq!(s.attempts[1].iter().sum::<u32>(), 2);
        let total: u32 = s.attempts.iter().flatten().sum();
        let arrivals: u32 = s.first.iter().chain(&s.retries).sum();
        assert_eq!(total, arrivals);
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
