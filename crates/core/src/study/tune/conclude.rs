//! The verdict of a search, once it has stopped measuring: the best candidate (or the one
//! closest to feasible), each candidate's status, the pairs still open, and the Pareto front
//! over the objectives.

use super::*;

/// Where a search stopped: every measurement and what the screening decided.
pub(super) struct Search {
    pub(super) metrics: Vec<String>,
    /// For each constraint, its metric's index in `metrics`.
    pub(super) cidx: Vec<usize>,
    pub(super) values: Vec<Vec<Vec<f64>>>,
    pub(super) feas: Vec<Vec<Feasibility>>,
    pub(super) alive: Vec<bool>,
    pub(super) halved: Vec<Option<usize>>,
    pub(super) runs: u64,
    pub(super) delta: f64,
    pub(super) h2: f64,
}

impl Search {
    fn mean(&self, c: usize, m: usize) -> f64 {
        crate::result::stats::mean(&self.values[c][m])
    }

    /// Among `candidates`, the best by the primary objective's mean (the first on a tie).
    fn best_of(
        &self,
        primary: &Objective,
        candidates: impl Iterator<Item = usize>,
    ) -> Option<usize> {
        candidates.fold(None, |b: Option<usize>, c| match b {
            Some(b) if primary.signed(self.mean(b, 0)) >= primary.signed(self.mean(c, 0)) => {
                Some(b)
            }
            _ => Some(c),
        })
    }

    /// Each candidate's status, given the best.
    fn statuses(&self, best: Option<usize>) -> Vec<Status> {
        (0..self.values.len())
            .map(|c| {
                if Some(c) == best {
                    Status::Best
                } else if self.alive[c] {
                    Status::Open
                } else if self.feas[c].contains(&Feasibility::Infeasible)
                    || self.values[c][0].iter().any(|x| x.is_nan())
                {
                    Status::Infeasible
                } else if self.halved[c].is_some() {
                    Status::Halved
                } else {
                    Status::Eliminated
                }
            })
            .collect()
    }

    /// The pairs still undecided: the head (the best, else the first survivor) against each
    /// other survivor, and against itself when it is not the best.
    fn open(&self, best: Option<usize>) -> Vec<(usize, usize)> {
        let k = self.values.len();
        match best.or_else(|| (0..k).find(|c| self.alive[*c])) {
            Some(h) => (0..k)
                .filter(|c| *c != h && self.alive[*c])
                .map(|c| (h, c))
                .chain((Some(h) != best).then_some((h, h)))
                .collect(),
            None => Vec::new(),
        }
    }

    /// With no feasible candidate, the one whose means violate the constraints least.
    fn closest(&self, feasible: &[bool], constraints: &[Expectation]) -> Option<usize> {
        if feasible.iter().any(|f| *f) {
            return None;
        }
        (0..self.values.len())
            .map(|c| {
                let v: f64 = constraints
                    .iter()
                    .zip(&self.cidx)
                    .map(|(e, m)| violation(e, self.mean(c, *m)))
                    .sum();
                (c, v)
            })
            .fold(None, |b: Option<(usize, f64)>, (c, v)| match b {
                Some((_, bv)) if bv <= v => b,
                _ => Some((c, v)),
            })
            .map(|(c, _)| c)
    }

    /// The Pareto front over the objectives' means, of the feasible candidates with all their
    /// seeds (one dropped by halving has too few to stand on it).
    fn front(&self, feasible: &[bool], objectives: &[Objective]) -> Vec<usize> {
        let feasible_idx: Vec<usize> = (0..self.values.len())
            .filter(|c| feasible[*c] && self.halved[*c].is_none())
            .collect();
        let points: Vec<Vec<f64>> = feasible_idx
            .iter()
            .map(|c| {
                objectives
                    .iter()
                    .enumerate()
                    .map(|(m, o)| o.signed(self.mean(*c, m_of(&self.metrics, &o.metric, m))))
                    .collect()
            })
            .collect();
        pareto::front(&points)
            .into_iter()
            .map(|i| feasible_idx[i])
            .collect()
    }

    /// The outcome: the best feasible survivor, moved within the indifference zone to the front
    /// when another candidate dominates it on the other objectives.
    pub(super) fn conclude(self, objectives: &[Objective], constraints: &[Expectation]) -> Outcome {
        let k = self.values.len();
        let primary = &objectives[0];
        let feasible = all_feasible(&self.feas);
        let mut best = self.best_of(primary, (0..k).filter(|c| self.alive[*c] && feasible[*c]));
        let mut status = self.statuses(best);
        let open = self.open(best);
        let closest = self.closest(&feasible, constraints);
        let pareto = self.front(&feasible, objectives);
        // Within the indifference zone of the first objective KN may keep a candidate that another
        // dominates on the rest: recommend the best front candidate inside that zone instead (when
        // every decision was made).
        if let Some(b) = best.filter(|b| open.is_empty() && !pareto.contains(b)) {
            let zone = |c: &usize| {
                primary.signed(self.mean(b, 0)) - primary.signed(self.mean(*c, 0)) <= self.delta
            };
            if let Some(p) = self.best_of(primary, pareto.iter().copied().filter(zone)) {
                status[b] = Status::Eliminated;
                status[p] = Status::Best;
                best = Some(p);
            }
        }
        Outcome {
            metrics: self.metrics,
            values: self.values,
            feasibility: self.feas,
            status,
            best,
            closest,
            pareto,
            open,
            runs: self.runs,
            halved: self.halved,
            delta: self.delta,
            h2: self.h2,
        }
    }
}
