//! The typical value of the score at each time of a run, from the first stage's plain runs: what
//! `--excess` measures a run against. A score that every run raises at the same time (the queue
//! in a load spike) says little about which run is on its way to the event; its excess over the
//! typical value at that time does. Levels on the excess make the importance function depend on
//! time as well as on the state, as a time-bounded event's needs to (Cérou and Guyader 2007).

use crate::base::time::Time;

/// Time bins per horizon.
const BINS: u64 = 1000;

/// Each plain run's highest score in each of [`BINS`] bins of its horizon, and the typical
/// value per bin once every run is in.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Typical {
    /// The width of a bin, ns (at least 1).
    width: u64,
    /// Per bin: the mean of the runs' highest scores in it, rounded.
    mean: Vec<u64>,
}

/// One run's highest score per bin (`None`: the run had ended before the bin).
#[derive(Clone, Debug, Default)]
pub(super) struct Trace {
    peaks: Vec<Option<u64>>,
}

impl Trace {
    /// The score `value` at time `now` of a run of horizon `horizon`.
    pub(super) fn record(&mut self, horizon: u64, now: Time, value: u64) {
        let bin = bin_of(width(horizon), now);
        if bin >= self.peaks.len() {
            self.peaks.resize(bin + 1, None);
        }
        let p = &mut self.peaks[bin];
        *p = Some(p.map_or(value, |v| v.max(value)));
    }
}

fn width(horizon: u64) -> u64 {
    (horizon / BINS).max(1)
}

fn bin_of(width: u64, now: Time) -> usize {
    usize::try_from(now.0 / width).unwrap_or(usize::MAX)
}

impl Typical {
    /// The typical score per bin from the plain runs' traces; a bin no run reached takes the
    /// last bin's value.
    pub(super) fn of(horizon: u64, traces: &[Trace]) -> Typical {
        let bins = traces.iter().map(|t| t.peaks.len()).max().unwrap_or(0);
        let mut mean = Vec::with_capacity(bins);
        for b in 0..bins {
            let seen: Vec<u64> = traces
                .iter()
                .filter_map(|t| t.peaks.get(b).copied().flatten())
                .collect();
            let m = if seen.is_empty() {
                mean.last().copied().unwrap_or(0)
            } else {
                let sum: u128 = seen.iter().map(|&v| u128::from(v)).sum();
                let n = seen.len() as u128;
                ((sum + n / 2) / n) as u64
            };
            mean.push(m);
        }
        Typical {
            width: width(horizon),
            mean,
        }
    }

    /// How far `value` at `now` is above the typical score then (0 at or below it).
    pub(super) fn excess(&self, now: Time, value: u64) -> u64 {
        let bin = bin_of(self.width, now).min(self.mean.len().saturating_sub(1));
        value.saturating_sub(self.mean.get(bin).copied().unwrap_or(0))
    }

    /// A plain run's highest excess, from its trace.
    pub(super) fn highest_excess(&self, trace: &Trace) -> u64 {
        trace
            .peaks
            .iter()
            .enumerate()
            .filter_map(|(b, p)| p.map(|v| v.saturating_sub(self.mean[b.min(self.mean.len() - 1)])))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_excess_is_over_the_mean_of_each_bin() {
        // A horizon of 1000 ns: bins of 1 ns.
        let mut a = Trace::default();
        let mut b = Trace::default();
        for (t, v) in [(0, 2), (0, 4), (1, 10)] {
            a.record(1000, Time(t), v);
        }
        b.record(1000, Time(0), 6);
        let typ = Typical::of(1000, &[a.clone(), b.clone()]);
        // Bin 0: (4 + 6) / 2; bin 1: 10 alone (b had ended).
        assert_eq!(typ.mean, vec![5, 10]);
        assert_eq!(typ.excess(Time(0), 8), 3);
        assert_eq!(typ.excess(Time(1), 8), 0);
        // Past the last bin a run is measured against it.
        assert_eq!(typ.excess(Time(7), 12), 2);
        assert_eq!(typ.highest_excess(&a), 0);
        assert_eq!(typ.highest_excess(&b), 1);
    }
}
