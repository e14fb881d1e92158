//! Counts per time bucket at the model's bucket width, bounded in memory, with their peaks.

use super::replicas::{MAX_REPLICA_SERIES, ReplicaCounts, ReplicaEvent};
use super::windows::{ATTEMPT_SERIES, SortedWindow, Windows, bump, bump_by};
use crate::base::time::{Duration, Time};
use crate::result::summary::{AttemptPeak, Series};

/// Most buckets a series keeps; past it, neighbours merge and the stored width doubles.
pub const MAX_STORED_BUCKETS: usize = 16_384;

/// The time-weighted series a [`Buckets`] integrates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Area {
    Queue,
    Busy,
    Level,
}

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
    /// A level over time (see [`Buckets::keep_level`]): the serving replicas of an autoscaled
    /// tier, or a learned duration in ms on buckets of its own.
    level_area: Option<Vec<f64>>,
    peaks: Peaks,
    /// Sliding-window and per-attempt peaks, and arrivals per bucket by attempt: kept for the
    /// tier whose load the summary reports (the bottom), off elsewhere.
    pub(super) windows: Option<Box<Windows>>,
    /// The stored bucket of the last [`Buckets::index`] and its times `[lo, hi)`: times come in
    /// order, so most calls fall in it and need no division (empty until the first call, and
    /// emptied when the stored width doubles).
    at: Cached,
    /// The base bucket `peaks.bucket` covers `[lo, hi)` (empty until the first arrival).
    peak_at: Cached,
    /// Each replica's series on a replicated tier (see [`Buckets::keep_replicas`]).
    pub(super) replicas: Vec<ReplicaCounts>,
}

/// A bucket and the times `[lo, hi)` it covers.
#[derive(Clone, Copy, Debug, Default)]
struct Cached {
    lo: u64,
    hi: u64,
    index: u64,
}

impl Cached {
    /// The bucket of width `width` holding `t`: from the cache when `t` is in it, else by
    /// division (and cached).
    #[inline]
    fn of(&mut self, t: u64, width: u64) -> u64 {
        if t >= self.lo && t < self.hi {
            return self.index;
        }
        let b = t / width;
        let lo = b * width;
        *self = Cached {
            lo,
            hi: lo.saturating_add(width),
            index: b,
        };
        b
    }
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

impl Peaks {
    /// `n` arrivals in peak bucket `b` (buckets come in time order: a new one starts from 0).
    #[inline(always)]
    fn count(&mut self, b: u64, retry: bool, n: u64) {
        if b != self.bucket {
            *self = Peaks {
                bucket: b,
                first: 0,
                retries: 0,
                ..*self
            };
        }
        if retry {
            self.retries += n;
        } else {
            self.first += n;
        }
        self.arrivals = self.arrivals.max(self.first + self.retries);
        self.most_retries = self.most_retries.max(self.retries);
    }
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
    pub(super) fn index(&mut self, t: Time) -> usize {
        loop {
            let i = self.at.of(t.0, self.width) as usize;
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
        if let Some(a) = &mut self.level_area {
            halve(a);
        }
        if let Some(w) = &mut self.windows {
            for v in &mut w.series {
                halve(v);
            }
        }
        for r in &mut self.replicas {
            r.halve(halve);
        }
        self.width = self.width.saturating_mul(2);
        self.at = Cached::default();
    }

    /// An arrival at the server at `t` (calls come in time order); `attempt` counts from 0
    /// (the first try).
    #[inline]
    pub fn arrival(&mut self, t: Time, retry: bool, attempt: u16) {
        let b = self.peak_at.of(t.0, self.base);
        self.peaks.count(b, retry, 1);
        let i = self.index(t);
        bump(
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

    /// `n` arrivals at one instant `t`, as `n` calls of [`Buckets::arrival`] would count them
    /// (the direct path's burst: every first try at the burst's start in one call).
    pub fn arrivals(&mut self, t: Time, retry: bool, attempt: u16, n: u64) {
        if n == 0 {
            return;
        }
        let b = self.peak_at.of(t.0, self.base);
        self.peaks.count(b, retry, n);
        let i = self.index(t);
        let v = if retry {
            &mut self.retries
        } else {
            &mut self.first
        };
        bump_by(v, i, n);
        if let Some(w) = &mut self.windows {
            w.arrivals(t, retry, attempt, b, i, n);
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

    /// From now on the sliding-window peaks are counted by the caller, who sets them with
    /// [`Buckets::set_window_peaks`] (the direct path, which holds its arrivals sorted).
    pub fn count_windows_elsewhere(&mut self) {
        if let Some(w) = &mut self.windows {
            w.counted_elsewhere = true;
        }
    }

    /// The sliding-window peaks counted by the caller (see
    /// [`Buckets::count_windows_elsewhere`]) over the same arrivals as fed here.
    pub fn set_window_peaks(&mut self, sorted: &SortedWindow) {
        if let Some(w) = &mut self.windows {
            let (peak, peak_retries, attempts) = sorted.peaks();
            w.peak = peak;
            w.peak_retries = peak_retries;
            for (l, p) in w.attempts.iter_mut().zip(attempts) {
                l.peak_window = p;
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

    /// The model's bucket width, at which the peaks are counted.
    pub fn base_width(&self) -> Duration {
        Duration(self.base)
    }

    /// `(peak arrivals, peak retries)` in one bucket of the model's width.
    pub fn peaks(&self) -> (u64, u64) {
        (self.peaks.arrivals, self.peaks.most_retries)
    }

    #[inline]
    pub fn success(&mut self, t: Time) {
        let i = self.index(t);
        bump(&mut self.succeeded, i);
    }

    /// Adds `level * dt` over `[from, to)` to an area series, split at bucket edges. Inlined
    /// where it runs (twice an event, from `Levels::set`), so `which` is a constant there.
    #[inline]
    pub(super) fn integrate(&mut self, which: Area, from: Time, to: Time, level: f64) {
        if level == 0.0 || to <= from {
            return;
        }
        let mut t = from.0;
        while t < to.0 {
            let i = self.index(Time(t));
            // Saturating: near the clock's limit the bucket's end is past `to`, never wrapped.
            let edge = (i as u64 + 1).saturating_mul(self.width).min(to.0);
            let area = match which {
                Area::Queue => &mut self.queue_area,
                Area::Busy => &mut self.busy_area,
                Area::Level => self.level_area.get_or_insert_with(Vec::new),
            };
            if area.len() <= i {
                area.resize(i + 1, 0.0);
            }
            area[i] += level * (edge - t) as f64;
            t = edge;
        }
    }

    /// Keeps per-replica series for `replicas` replicas (none beyond [`MAX_REPLICA_SERIES`]).
    pub fn keep_replicas(&mut self, replicas: u32) {
        if (2..=MAX_REPLICA_SERIES).contains(&replicas) {
            self.replicas = vec![ReplicaCounts::default(); replicas as usize];
        }
    }

    /// Keeps the series of a level: an autoscaled tier's serving replicas, or a learned
    /// duration's value ([`level_series`]).
    pub fn keep_level(&mut self) {
        self.level_area = Some(Vec::new());
    }

    /// The level was `x` over `[from, to)` (nothing when the series is not kept).
    pub fn level(&mut self, from: Time, to: Time, x: f64) {
        if self.level_area.is_some() {
            self.integrate(Area::Level, from, to, x);
        }
    }

    /// Counts `what` at replica `r` at `t` (nothing when replica series are not kept).
    #[inline]
    pub fn replica(&mut self, t: Time, r: usize, what: ReplicaEvent) {
        if self.replicas.is_empty() {
            return;
        }
        let i = self.index(t);
        self.replicas[r].count(i, what);
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
    let mut ready = b.level_area.take();
    if let Some(a) = &mut ready {
        a.resize(n, 0.0);
    }
    let replicas = std::mem::take(&mut b.replicas)
        .into_iter()
        .enumerate()
        .map(|(r, c)| c.finish(r, n))
        .collect();
    let avg = |a: &[f64]| a.iter().map(|x| (x / width as f64) as f32).collect();
    Series {
        bucket_ms: Duration(width).as_millis_f64(),
        queue_len: avg(&b.queue_area),
        busy: avg(&b.busy_area),
        ready_replicas: ready.as_deref().map(avg).unwrap_or_default(),
        learned_timeout_ms: Vec::new(),
        learned_hedge_delay_ms: Vec::new(),
        first: b.first,
        retries: b.retries,
        succeeded: b.succeeded,
        tiers: Vec::new(),
        replicas,
        attempts,
    }
}

/// The level kept with [`Buckets::keep_level`], time-averaged per bucket up to `end`, on buckets
/// that keep nothing else (a learned duration's).
pub fn level_series(b: Buckets, end: Time) -> Vec<f32> {
    series(b, end).ready_replicas
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::metrics::Levels;

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
}
