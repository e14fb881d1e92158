//! Successive halving before KN, for large candidate sets: Z. Karnin, T. Koren and O. Somekh,
//! 2013, "Almost optimal exploration in multi-armed bandits", ICML (Algorithm 1, Sequential
//! Halving), as K. Jamieson and A. Talwalkar, 2016, "Non-stochastic best arm identification and
//! hyperparameter optimization", AISTATS (Algorithm 1) use it with a reduction factor η (the
//! `eta` of Hyperband's reference code, default 3).
//!
//! Stage `s` (from 1) runs every contender on `r0·η^(s−1)` seeds in all (the same seeds for
//! every candidate: common random numbers, and the seeds of earlier stages are kept), drops the
//! ones whose constraints fail at 95% confidence or whose first objective was not measured,
//! and keeps the best `⌈m/η⌉` of the `m` others by the mean of the first objective (ties to the
//! lower index). Undecided constraints do not drop a candidate: KN decides them. Halving stops
//! when at most `η` contenders are left or the next stage (with the top-up of its survivors to
//! KN's first stage) would not fit the budget; the survivors then go to KN.

/// `values[candidate][metric][replication]`.
pub type Values = Vec<Vec<Vec<f64>>>;

/// Runs stage `s`'s `(candidate, replication)` pairs into the values; returns how many it ran,
/// or why it could not run them (the search then stops there, see [`super::try_search`]).
pub type Run<'a, E> = dyn FnMut(usize, Vec<(usize, usize)>, &mut Values) -> Result<u64, E> + 'a;

/// How to halve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Halving {
    /// The reduction factor: each stage keeps `1/η` and multiplies the seeds by `η` (at least 2).
    pub eta: usize,
    /// Seeds per candidate in stage 1 (at least 2, for a confidence interval).
    pub r0: usize,
}

impl Halving {
    /// Runs the stages. `run` runs a stage's `(candidate, replication)` pairs into `values` and
    /// returns how many it ran (an error from it ends the stages and is returned); `stays(c)` is false for a candidate that leaves the contest
    /// (infeasible, unmeasured); `score(c)` is its mean on the first objective, larger better.
    /// Marks the dropped in `alive` and `halved` (their stage); returns the runs spent and the
    /// seeds every survivor has.
    #[allow(clippy::too_many_arguments)]
    pub fn run<E>(
        &self,
        n0: usize,
        budget: u64,
        alive: &mut [bool],
        halved: &mut [Option<usize>],
        values: &mut Values,
        run: &mut Run<'_, E>,
        stays: &dyn Fn(usize, &Values) -> bool,
        score: &dyn Fn(usize, &Values) -> f64,
    ) -> Result<(u64, usize), E> {
        let eta = self.eta.max(2);
        let (mut spent, mut have, mut r) = (0u64, 0usize, self.r0.max(2));
        for stage in 1.. {
            let contenders: Vec<usize> = (0..alive.len()).filter(|c| alive[*c]).collect();
            let keep = contenders.len().div_ceil(eta);
            let cost = (contenders.len() * (r - have)) as u64;
            let topup = (keep * n0.saturating_sub(r)) as u64;
            if contenders.len() <= eta || spent + cost + topup > budget {
                break;
            }
            let asked = contenders
                .iter()
                .flat_map(|c| (have..r).map(move |j| (*c, j)))
                .collect();
            spent += run(stage, asked, values)?;
            have = r;
            let mut ranked = Vec::new();
            for c in contenders {
                if stays(c, values) {
                    ranked.push((c, score(c, values)));
                } else {
                    alive[c] = false;
                    halved[c] = Some(stage);
                }
            }
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let keep = ranked.len().div_ceil(eta);
            for (c, _) in &ranked[keep..] {
                alive[*c] = false;
                halved[*c] = Some(stage);
            }
            r = r.saturating_mul(eta).min(super::MAX_REPLICATIONS);
            if r == have {
                break;
            }
        }
        Ok((spent, have))
    }
}
