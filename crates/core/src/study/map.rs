//! `map`: the vulnerable region of a model, as pure logic. Two `--vary` axes make a grid of
//! cells; every cell is run on the same seeds (common random numbers), and its verdict is the
//! share of runs that recover within a time `T` of the trigger's end (`recovery_ms`,
//! [`crate::policy::recovery`]) and the median time to recover, a run that never recovers
//! counting as "never" (longer than any time). [`adaptive`] spends the seeds where a cell's
//! verdict is unclear.

pub mod adaptive;

/// What one cell's runs did.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Runs in the cell (one per seed).
    pub runs: usize,
    /// Runs that recovered within `T`.
    pub recovered: usize,
    /// The median time to recover over every run, never-recovered runs counted as longer than
    /// any; `None` ("never") when at least half did not recover.
    pub median_ms: Option<f64>,
}

impl Cell {
    /// The verdict of a cell from each run's `recovery_ms` (`None`: it never recovered) and the
    /// limit `T` in milliseconds (`None`: any time before the horizon counts).
    pub fn of(recovery_ms: &[Option<f64>], within_ms: Option<f64>) -> Cell {
        let limit = within_ms.unwrap_or(f64::INFINITY);
        let recovered = recovery_ms
            .iter()
            .filter(|r| r.is_some_and(|x| x <= limit))
            .count();
        // Never (and later than T) sorts last; the median is the middle one, or the mean of the
        // middle two.
        let mut times: Vec<f64> = recovery_ms
            .iter()
            .map(|r| r.filter(|x| *x <= limit).unwrap_or(f64::INFINITY))
            .collect();
        times.sort_by(f64::total_cmp);
        let n = times.len();
        let median = match n {
            0 => f64::INFINITY,
            _ if n % 2 == 1 => times[n / 2],
            _ => (times[n / 2 - 1] + times[n / 2]) / 2.0,
        };
        Cell {
            runs: n,
            recovered,
            median_ms: median.is_finite().then_some(median),
        }
    }

    /// The share of runs that did not recover within `T` (0 when the cell has no runs).
    pub fn share_down(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            (self.runs - self.recovered) as f64 / self.runs as f64
        }
    }

    /// The verdict in words: `recovers` (every run), `stays down` (none), or `mixed`.
    pub fn verdict(&self) -> &'static str {
        match self.recovered {
            r if r == self.runs => "recovers",
            0 => "stays down",
            _ => "mixed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_counts_recoveries_within_the_limit() {
        let c = Cell::of(
            &[Some(100.0), Some(5000.0), None, Some(200.0)],
            Some(1000.0),
        );
        assert_eq!((c.runs, c.recovered), (4, 2));
        assert_eq!(c.share_down(), 0.5);
        // 100, 200, never, never: at least half are "never".
        assert_eq!(c.median_ms, None);
        assert_eq!(c.verdict(), "mixed");
        let c = Cell::of(&[Some(100.0), Some(5000.0), None], None);
        assert_eq!((c.recovered, c.median_ms), (2, Some(5000.0)));
        let c = Cell::of(&[Some(300.0), Some(100.0)], None);
        assert_eq!((c.median_ms, c.verdict()), (Some(200.0), "recovers"));
        let c = Cell::of(&[None, None], Some(10.0));
        assert_eq!((c.share_down(), c.verdict()), (1.0, "stays down"));
    }
}
