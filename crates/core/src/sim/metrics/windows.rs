//! The most arrivals in any sliding window, and the bottom's load per attempt number.

use crate::base::time::Time;
use std::collections::VecDeque;

/// Arrival series per stored bucket by attempt number are kept for attempts 1 to
/// `ATTEMPT_SERIES - 1`; later attempts are folded into the last one.
pub const ATTEMPT_SERIES: usize = 6;

/// What the bottom's load is per attempt number: arrivals, the per-bucket peak at the model's
/// bucket width and the sliding-window peak.
#[derive(Clone, Debug, Default)]
pub(super) struct AttemptLoad {
    pub(super) arrivals: u64,
    /// The base bucket counted in `in_bucket`.
    pub(super) bucket: u64,
    pub(super) in_bucket: u64,
    pub(super) peak: u64,
    /// Arrivals of this attempt number in the current window.
    pub(super) in_window: u64,
    pub(super) peak_window: u64,
}

/// Arrivals at one time of one attempt number, retries or not: one entry of [`Windows`]'
/// window.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    pub(super) t: u64,
    pub(super) n: u64,
    pub(super) attempt: u16,
    pub(super) retry: bool,
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
/// entry however they interleave with other kinds ([`Windows::at_now`]), so memory is the
/// distinct (time, kind) pairs in one window, never the arrivals: 10^9 attempts at one instant
/// from 100,000 clients of 10,000 attempts each are 10,000 entries, not 10^9.
#[derive(Clone, Debug, Default)]
pub(super) struct Windows {
    pub(super) width: u64,
    pub(super) recent: VecDeque<Slot>,
    /// Entries popped from the front of `recent` so far: entry number `n` is `recent[n - popped]`.
    pub(super) popped: u64,
    /// Per kind (`2 * attempt + retry`), the time of its latest entry and that entry's number:
    /// an arrival of a kind that already has an entry at its time joins it.
    pub(super) at_now: Vec<(u64, u64)>,
    pub(super) in_window: u64,
    pub(super) retries_in_window: u64,
    pub(super) peak: u64,
    pub(super) peak_retries: u64,
    /// Index `a`: attempt number `a + 1`; grown to the highest attempt seen.
    pub(super) attempts: Vec<AttemptLoad>,
    /// Arrivals per stored bucket, index `a` for attempt `a + 1` (the last: that and later);
    /// not kept when `by_attempt` is off (a summary-only run has no series).
    pub(super) series: Vec<Vec<u32>>,
    pub(super) by_attempt: bool,
    /// The sliding-window peaks are counted by the caller ([`SortedWindow`]) and set at the
    /// end ([`crate::sim::metrics::Buckets::set_window_peaks`]): arrivals skip the window here.
    pub(super) counted_elsewhere: bool,
}

impl Windows {
    /// An arrival at `t` of attempt `attempt` (from 0), in base bucket `b` and stored bucket `i`.
    #[inline]
    pub(super) fn arrival(&mut self, t: Time, retry: bool, attempt: u16, b: u64, i: usize) {
        self.arrivals(t, retry, attempt, b, i, 1);
    }

    /// `n` (at least 1) arrivals at one time `t`: as `n` calls of [`Windows::arrival`].
    #[inline]
    pub(super) fn arrivals(
        &mut self,
        t: Time,
        retry: bool,
        attempt: u16,
        b: u64,
        i: usize,
        n: u64,
    ) {
        let a = usize::from(attempt);
        if a >= self.attempts.len() {
            self.attempts.resize_with(a + 1, AttemptLoad::default);
        }
        if !self.counted_elsewhere {
            self.window(t.0, retry, attempt, n);
        }
        let l = &mut self.attempts[a];
        l.arrivals += n;
        if l.bucket != b {
            l.bucket = b;
            l.in_bucket = 0;
        }
        l.in_bucket += n;
        l.peak = l.peak.max(l.in_bucket);
        if self.by_attempt {
            let k = a.min(ATTEMPT_SERIES - 1);
            if self.series.len() <= k {
                self.series.resize_with(k + 1, Vec::new);
            }
            bump_by(&mut self.series[k], i, n);
        }
    }

    /// The sliding-window counts and peaks for `n` arrivals at `t`.
    #[inline]
    fn window(&mut self, t: u64, retry: bool, attempt: u16, n: u64) {
        match self.recent.back_mut() {
            Some(s) if s.t == t && s.attempt == attempt && s.retry == retry => s.n += n,
            _ => {
                // Out of the window `(t - width, t]`: arrivals at `s` with `t - s >= width`
                // (times never decrease, so `s <= t`; entries at `t` itself stay).
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
                    self.popped += 1;
                }
                let kind = 2 * usize::from(attempt) + usize::from(retry);
                if kind >= self.at_now.len() {
                    self.at_now.resize(kind + 1, (0, u64::MAX));
                }
                let (at, entry) = self.at_now[kind];
                if at == t && entry != u64::MAX {
                    self.recent[(entry - self.popped) as usize].n += n;
                } else {
                    self.at_now[kind] = (t, self.popped + self.recent.len() as u64);
                    self.recent.push_back(Slot {
                        t,
                        n,
                        attempt,
                        retry,
                    });
                }
            }
        }
        self.in_window += n;
        self.peak = self.peak.max(self.in_window);
        if retry {
            self.retries_in_window += n;
            self.peak_retries = self.peak_retries.max(self.retries_in_window);
        }
        let l = &mut self.attempts[usize::from(attempt)];
        l.in_window += n;
        l.peak_window = l.peak_window.max(l.in_window);
    }
}

/// The sliding-window peaks of [`Windows`] counted by a caller that holds its arrivals sorted by
/// time: it calls [`SortedWindow::enter`] for each arrival in time order, and before that
/// [`SortedWindow::leave`] for each earlier arrival at `s` with `t - s >= width` (two pointers
/// over the same sorted arrivals: no copy of them is kept here). The peaks are those of
/// [`Windows`] for the same arrivals (`tests::sorted_window_is_the_deque_s`).
#[derive(Clone, Debug, Default)]
pub struct SortedWindow {
    width: u64,
    all: u64,
    retries: u64,
    peak: u64,
    peak_retries: u64,
    /// Index `a`: attempt number `a + 1`, `(in window, peak)`.
    attempts: Vec<(u64, u64)>,
}

impl SortedWindow {
    /// A window of `width` ns (at least 1), as [`crate::sim::metrics::Buckets::with_windows`]'.
    pub fn new(width: u64) -> Self {
        SortedWindow {
            width: width.max(1),
            ..Default::default()
        }
    }

    pub fn width(&self) -> u64 {
        self.width
    }

    /// `n` arrivals of attempt `attempt` (from 0) enter the window.
    #[inline]
    pub fn enter(&mut self, retry: bool, attempt: u16, n: u64) {
        let a = usize::from(attempt);
        if a >= self.attempts.len() {
            self.attempts.resize(a + 1, (0, 0));
        }
        self.all += n;
        self.peak = self.peak.max(self.all);
        if retry {
            self.retries += n;
            self.peak_retries = self.peak_retries.max(self.retries);
        }
        let l = &mut self.attempts[a];
        l.0 += n;
        l.1 = l.1.max(l.0);
    }

    /// `n` arrivals that entered earlier leave the window.
    #[inline]
    pub fn leave(&mut self, retry: bool, attempt: u16, n: u64) {
        self.all -= n;
        if retry {
            self.retries -= n;
        }
        self.attempts[usize::from(attempt)].0 -= n;
    }

    /// `(peak, peak of retries, peak per attempt number)`.
    pub(super) fn peaks(&self) -> (u64, u64, impl Iterator<Item = u64> + '_) {
        (
            self.peak,
            self.peak_retries,
            self.attempts.iter().map(|l| l.1),
        )
    }
}

/// Counts one more in bucket `i` of a series, growing it as needed.
#[inline]
pub(super) fn bump(v: &mut Vec<u32>, i: usize) {
    bump_by(v, i, 1);
}

/// Counts `n` more in bucket `i` of a series (saturating), growing it as needed.
#[inline]
pub(super) fn bump_by(v: &mut Vec<u32>, i: usize, n: u64) {
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] = v[i].saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::time::Duration;
    use crate::result::summary::AttemptPeak;
    use crate::sim::metrics::{Buckets, MAX_STORED_BUCKETS, series};

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

    /// Memory does not grow with arrivals: the window keeps one entry per distinct (time, kind)
    /// inside it. Clients whose attempts all arrive at one instant, client after client (an
    /// immediate retry after an instant rejection), are one entry per attempt number however
    /// many clients there are; a stream past the window keeps only the window's times.
    #[test]
    fn the_window_keeps_distinct_times_and_kinds_not_arrivals() {
        for clients in [100u64, 1000] {
            let mut b = Buckets::with_windows(Duration(10), Duration(1_000));
            for _ in 0..clients {
                for a in 0..1000u16 {
                    b.arrival(Time(5), a > 0, a);
                }
            }
            assert_eq!(b.windows.as_ref().unwrap().recent.len(), 1000);
            assert_eq!(b.window_peaks(), (clients * 1000, clients * 999));
            assert!(b.attempt_peaks().iter().all(|a| a.peak_window == clients));
        }
        let mut b = Buckets::with_windows(Duration(10), Duration(1_000));
        let mut most = 0;
        for t in 0..1_000_000u64 {
            b.arrival(Time(t), t % 3 > 0, (t % 3) as u16);
            most = most.max(b.windows.as_ref().unwrap().recent.len());
        }
        assert_eq!(most, 1000);
        assert_eq!(b.window_peaks(), (1000, 667));
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
                    x = crate::base::rng::mix64(x);
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
                    x = crate::base::rng::mix64(x);
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

    /// Two pointers over sorted arrivals ([`SortedWindow`], as the direct path counts them) give
    /// the deque's peaks: all, retries and each attempt number, with ties and bulk groups.
    #[test]
    fn sorted_window_is_the_deque_s() {
        let mut x = 5u64;
        for case in 0..100u64 {
            let w = [1, 4, 10, 33, 250][case as usize % 5];
            let mut arr: Vec<(u64, u16, u64)> = (0..1 + case % 70)
                .map(|_| {
                    x = crate::base::rng::mix64(x);
                    (x % (1 + case * 5), (x >> 40) as u16 % 5, 1 + (x >> 20) % 3)
                })
                .collect();
            arr.sort_by_key(|a| a.0);
            let mut deque = Buckets::with_windows(Duration(10), Duration(w));
            let mut counted = Buckets::with_windows(Duration(10), Duration(w));
            counted.count_windows_elsewhere();
            let mut sorted = SortedWindow::new(w);
            let mut trail = 0;
            for (k, &(t, a, n)) in arr.iter().enumerate() {
                while t - arr[trail].0 >= w {
                    let (_, a, n) = arr[trail];
                    sorted.leave(a > 0, a, n);
                    trail += 1;
                }
                assert!(trail <= k);
                deque.arrivals(Time(t), a > 0, a, n);
                counted.arrivals(Time(t), a > 0, a, n);
                sorted.enter(a > 0, a, n);
            }
            counted.set_window_peaks(&sorted);
            assert_eq!(counted.window_peaks(), deque.window_peaks(), "{arr:?}");
            assert_eq!(counted.attempt_peaks(), deque.attempt_peaks(), "{arr:?}");
            assert_eq!(counted.peaks(), deque.peaks());
        }
    }

    #[test]
    fn bulk_arrivals_count_as_that_many_single_ones() {
        // (time, retry, attempt, how many): a burst, ties behind other kinds, a bucket edge.
        let groups = [
            (0u64, false, 0u16, 1000u64),
            (3, true, 1, 7),
            (3, true, 1, 2),
            (9, false, 0, 5),
            (10, true, 2, 40),
            (25, true, 1, 1),
        ];
        let mut one = Buckets::with_windows(Duration(10), Duration(10));
        let mut bulk = Buckets::with_windows(Duration(10), Duration(10));
        for &(t, retry, a, n) in &groups {
            for _ in 0..n {
                one.arrival(Time(t), retry, a);
            }
            bulk.arrivals(Time(t), retry, a, n);
        }
        bulk.arrivals(Time(26), true, 1, 0);
        assert_eq!(bulk.peaks(), one.peaks());
        assert_eq!(bulk.peaks(), (1014, 40));
        assert_eq!(bulk.window_peaks(), one.window_peaks());
        assert_eq!(bulk.attempt_peaks(), one.attempt_peaks());
        let (a, b) = (series(one, Time(30)), series(bulk, Time(30)));
        assert_eq!(a.first, b.first);
        assert_eq!(a.retries, b.retries);
        assert_eq!(a.attempts, b.attempts);
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
}
