//! `tune`: which candidate settings meet every constraint and are best on the objectives, as
//! pure logic. The command line runs the simulations; this module decides which to run next.
//!
//! Every candidate's replication `r` uses the same seed (common random numbers), so candidates
//! are compared in pairs. After a first stage of `n0` replications each, the search follows
//! Kim & Nelson's KN procedure ([`kn`]) on the first objective, adding one replication to every
//! remaining contender per stage, until one feasible contender is left or the run budget is
//! spent; whatever is still undecided then is reported as open. Constraints are judged on the
//! 95% confidence interval of their metric's mean ([`feasibility`]): only a candidate whose
//! constraints are all met may eliminate others, and a candidate that violates one leaves the
//! contest. The Pareto front is taken over the feasible candidates' means ([`pareto`]).

mod conclude;
pub mod halving;
pub mod kn;
pub mod pareto;
pub mod sample;

use crate::result::expect::{Expectation, Op};
use crate::result::stats::Estimate;
use conclude::Search;

/// One objective: a summary metric to minimise or maximise.
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    pub metric: String,
    pub maximize: bool,
}

impl Objective {
    /// The value with "larger is better".
    pub fn signed(&self, x: f64) -> f64 {
        if self.maximize { x } else { -x }
    }
}

/// The indifference zone δ: differences smaller than this are not worth telling apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Indifference {
    /// A share of the first-stage best mean of the first objective (`5%`).
    Relative(f64),
    /// In the first objective's unit (`0.05`, or `20ms` for a `*_ms` metric).
    Absolute(f64),
}

/// Parses `--indifference`: `5%` or a positive number (a duration for `*_ms` metrics).
pub fn parse_indifference(s: &str, metric: &str) -> Result<Indifference, String> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => Ok(Indifference::Relative(x / 100.0)),
            _ => Err(format!("expected a positive share such as 5%, got {s:?}")),
        };
    }
    let x = match t.parse::<f64>() {
        Ok(x) => x,
        Err(_) if metric.contains("_ms") => crate::base::time::Duration::parse(t)
            .map(crate::base::time::Duration::as_millis_f64)
            .map_err(|e| format!("{s:?}: {e}"))?,
        Err(_) => return Err(format!("expected 5% or a positive number, got {s:?}")),
    };
    if x.is_finite() && x > 0.0 {
        Ok(Indifference::Absolute(x))
    } else {
        Err(format!("the indifference zone must be positive, got {s:?}"))
    }
}

/// What the search may spend and how sure it must be.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// First-stage replications per candidate (at least 2).
    pub n0: usize,
    /// Probability of a wrong selection the procedure allows (0.05 for 95%).
    pub alpha: f64,
    pub indifference: Indifference,
    /// The most runs in all.
    pub budget: u64,
    /// Successive halving before KN (`--halving ETA`), for large candidate sets.
    pub halving: Option<halving::Halving>,
}

/// A constraint's verdict from its metric's 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feasibility {
    Feasible,
    Infeasible,
    Undecided,
}

impl Feasibility {
    pub fn as_str(self) -> &'static str {
        match self {
            Feasibility::Feasible => "feasible",
            Feasibility::Infeasible => "infeasible",
            Feasibility::Undecided => "undecided",
        }
    }
}

/// Whether `mean(xs) OP bound` holds with 95% confidence (the whole interval satisfies it),
/// fails so (no point of the interval does), or is undecided. A NaN (the metric was not
/// measured in some seed, e.g. `recovery_ms` of a run that never recovered) fails.
pub fn feasibility(e: &Expectation, xs: &[f64]) -> Feasibility {
    if xs.iter().any(|x| x.is_nan()) {
        return Feasibility::Infeasible;
    }
    let est = Estimate::of(xs);
    let hw = if est.half_width.is_finite() {
        est.half_width
    } else {
        0.0
    };
    let (lo, hi) = (est.mean - hw, est.mean + hw);
    let b = e.value;
    let (yes, no) = match e.op {
        Op::Lt => (hi < b, lo >= b),
        Op::Le => (hi <= b, lo > b),
        Op::Gt => (lo > b, hi <= b),
        Op::Ge => (lo >= b, hi < b),
        Op::Eq => (lo == b && hi == b, hi < b || lo > b),
    };
    if yes {
        Feasibility::Feasible
    } else if no {
        Feasibility::Infeasible
    } else {
        Feasibility::Undecided
    }
}

/// How far a mean is from meeting the constraint, relative to the bound (0 when it meets it).
pub fn violation(e: &Expectation, mean: f64) -> f64 {
    if mean.is_nan() {
        return f64::INFINITY;
    }
    if e.op.test(mean, e.value) {
        0.0
    } else {
        (mean - e.value).abs() / e.value.abs().max(1.0)
    }
}

/// Where a candidate ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The recommended candidate.
    Best,
    /// Still in the contest when the budget ran out: not separated from the best.
    Open,
    /// Beaten on the first objective by a feasible candidate (KN).
    Eliminated,
    /// Not in the best `1/η` at a successive-halving stage ([`Outcome::halved`] says which).
    Halved,
    /// A constraint fails at 95% confidence.
    Infeasible,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Best => "best",
            Status::Open => "open",
            Status::Eliminated => "eliminated",
            Status::Halved => "halved",
            Status::Infeasible => "infeasible",
        }
    }
}

/// The result of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The metrics measured: the objectives' then the constraints' (each once).
    pub metrics: Vec<String>,
    /// `values[candidate][metric][replication]`.
    pub values: Vec<Vec<Vec<f64>>>,
    /// `feasibility[candidate][constraint]`.
    pub feasibility: Vec<Vec<Feasibility>>,
    pub status: Vec<Status>,
    pub best: Option<usize>,
    /// With no feasible candidate: the one closest to meeting the constraints.
    pub closest: Option<usize>,
    /// Feasible candidates on the Pareto front of the objectives' means, in index order.
    pub pareto: Vec<usize>,
    /// Pairs the budget left undecided: `(best or contender, other contender)`.
    pub open: Vec<(usize, usize)>,
    pub runs: u64,
    /// The successive-halving stage (from 1) that dropped each candidate, if one did.
    pub halved: Vec<Option<usize>>,
    /// δ in the first objective's unit.
    pub delta: f64,
    pub h2: f64,
}

impl Outcome {
    /// The mean and 95% interval of `metric` for candidate `c`.
    pub fn estimate(&self, c: usize, metric: &str) -> Option<Estimate> {
        let m = self.metrics.iter().position(|x| x == metric)?;
        Some(Estimate::of(&self.values[c][m]))
    }

    /// Whether every decision was made within the budget.
    pub fn resolved(&self) -> bool {
        self.open.is_empty()
    }
}

/// Runs `(candidate, replication)` pairs; one row of metric values per pair, in order.
pub type Batch<'a> = dyn FnMut(&[(usize, usize)]) -> Vec<Vec<f64>> + 'a;

/// The batch of runs a search asks for at once: the whole of one stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Successive halving's stage `s` (from 1): every contender up to `r0·η^(s−1)` seeds.
    Halving(usize),
    /// KN's first stage: every candidate's first `n0` seeds (after halving: its survivors'
    /// top-up to `n0`).
    First,
    /// A KN stage: replication `r` (from 0) of every contender left.
    Kn(usize),
}

/// [`Batch`] that may fail: runs one stage's `(candidate, replication)` pairs, or says why not
/// (the search then stops, see [`try_search`]).
pub type TryBatch<'a, E> = dyn FnMut(Stage, &[(usize, usize)]) -> Result<Vec<Vec<f64>>, E> + 'a;

/// The most replications one candidate gets.
pub const MAX_REPLICATIONS: usize = 10_000;

/// Runs the search over `k` candidates. `batch` runs the given `(candidate, replication)` pairs
/// and returns, for each, the value of every metric of [`metrics`] (NaN when absent), in the
/// order asked.
pub fn search(
    k: usize,
    objectives: &[Objective],
    constraints: &[Expectation],
    settings: &Settings,
    batch: &mut Batch<'_>,
) -> Outcome {
    let mut b =
        |_: Stage, asked: &[(usize, usize)]| Ok::<_, std::convert::Infallible>(batch(asked));
    match try_search(k, objectives, constraints, settings, &mut b) {
        Ok(o) => o,
        Err(never) => match never {},
    }
}

/// What a search over stored runs comes to ([`replay`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Replay {
    /// Every run the search asked for was stored: its outcome, the same as [`search`]'s.
    Done(Box<Outcome>),
    /// The first stage whose runs were not all stored: the stage, all its runs in the order the
    /// search asks for them, and those of them that are missing (in that order).
    Needs {
        stage: Stage,
        batch: Vec<(usize, usize)>,
        missing: Vec<(usize, usize)>,
    },
}

/// Replays the search against stored runs: `stored(c, r)` is candidate `c`'s replication `r`
/// as the metric values of [`metrics`], if it was run. The decisions are a function of the
/// values alone, so with every run stored this is [`search`]'s outcome (and budget count); runs
/// stored that the search never asks for change nothing. Otherwise it stops at the first
/// stage it cannot complete and names that stage's runs: run (some of) them, store them, replay.
pub fn replay(
    k: usize,
    objectives: &[Objective],
    constraints: &[Expectation],
    settings: &Settings,
    stored: &dyn Fn(usize, usize) -> Option<Vec<f64>>,
) -> Replay {
    let mut b = |stage: Stage, asked: &[(usize, usize)]| {
        let got: Vec<Option<Vec<f64>>> = asked.iter().map(|(c, r)| stored(*c, *r)).collect();
        if got.iter().all(Option::is_some) {
            return Ok(got.into_iter().flatten().collect());
        }
        let missing = asked
            .iter()
            .zip(&got)
            .filter(|(_, g)| g.is_none())
            .map(|(x, _)| *x)
            .collect();
        Err(Replay::Needs {
            stage,
            batch: asked.to_vec(),
            missing,
        })
    };
    match try_search(k, objectives, constraints, settings, &mut b) {
        Ok(o) => Replay::Done(Box::new(o)),
        Err(needs) => needs,
    }
}

/// [`search`] with a batch that may fail: the first error ends the search and is returned. The
/// stages are asked for in the same order, with the same runs, as by [`search`].
pub fn try_search<E>(
    k: usize,
    objectives: &[Objective],
    constraints: &[Expectation],
    settings: &Settings,
    batch: &mut TryBatch<'_, E>,
) -> Result<Outcome, E> {
    let metrics = metrics(objectives, constraints);
    let cidx: Vec<usize> = constraints
        .iter()
        .map(|e| metrics.iter().position(|m| *m == e.metric).expect("listed"))
        .collect();
    let mut search = Search {
        values: vec![vec![Vec::new(); metrics.len()]; k],
        metrics,
        cidx,
        feas: vec![Vec::new(); k],
        alive: vec![true; k],
        halved: vec![None; k],
        runs: 0,
        delta: 0.0,
        h2: 0.0,
    };
    let n0 = settings.n0.max(2);
    let primary = &objectives[0];
    let have = match &settings.halving {
        Some(h) => search.halve(h, n0, settings.budget, constraints, primary, batch)?,
        None => 0,
    };
    let n0 = n0.max(have);
    let first: Vec<(usize, usize)> = (0..k)
        .filter(|c| search.alive[*c])
        .flat_map(|c| (have..n0).map(move |r| (c, r)))
        .collect();
    search.runs += measure(batch, Stage::First, first, &mut search.values)?;
    search.screen(n0, settings, constraints, primary, batch)?;
    Ok(search.conclude(objectives, constraints))
}

impl Search {
    /// Successive halving before KN: drops the candidates that rank low on a few seeds, or
    /// are infeasible or unmeasured. The replications every survivor has.
    fn halve<E>(
        &mut self,
        h: &halving::Halving,
        n0: usize,
        budget: u64,
        constraints: &[Expectation],
        primary: &Objective,
        batch: &mut TryBatch<'_, E>,
    ) -> Result<usize, E> {
        let cidx = &self.cidx;
        let judge = |c: usize, values: &Vec<Vec<Vec<f64>>>| {
            let unmeasured = values[c][0].iter().any(|x| x.is_nan());
            let infeasible = constraints
                .iter()
                .zip(cidx)
                .any(|(e, m)| feasibility(e, &values[c][*m]) == Feasibility::Infeasible);
            !(unmeasured || infeasible)
        };
        let (spent, seeds) = h.run(
            n0,
            budget,
            &mut self.alive,
            &mut self.halved,
            &mut self.values,
            &mut |s, asked, values| measure(batch, Stage::Halving(s), asked, values),
            &judge,
            &|c, values| {
                let xs = &values[c][0];
                primary.signed(xs.iter().sum::<f64>() / xs.len() as f64)
            },
        )?;
        self.runs += spent;
        Ok(seeds)
    }

    /// KN's fully sequential screening from `n0` replications on: one more replication of
    /// every survivor at a time until one feasible candidate is left, none is, the budget is
    /// spent or [`MAX_REPLICATIONS`] is reached.
    fn screen<E>(
        &mut self,
        n0: usize,
        settings: &Settings,
        constraints: &[Expectation],
        primary: &Objective,
        batch: &mut TryBatch<'_, E>,
    ) -> Result<(), E> {
        let k = self.values.len();
        let mut r = n0;
        loop {
            judge(
                constraints,
                &self.cidx,
                &self.values,
                &mut self.feas,
                &mut self.alive,
            );
            let feasible = all_feasible(&self.feas);
            let xs: Vec<Vec<f64>> = self
                .values
                .iter()
                .map(|v| v[0].iter().map(|x| primary.signed(*x)).collect())
                .collect();
            if r == n0 {
                let contenders = self.alive.iter().filter(|a| **a).count();
                self.h2 = kn::h2(settings.alpha, contenders, n0);
                self.delta = indifference_delta(settings.indifference, &xs, &self.alive, n0);
            }
            self.alive = kn::screen(&xs, &self.alive, &feasible, self.h2, self.delta, n0, r);
            let left: Vec<usize> = (0..k).filter(|c| self.alive[*c]).collect();
            let decided = left.iter().all(|c| feasible[*c]);
            if left.is_empty() || (left.len() == 1 && decided) {
                return Ok(());
            }
            if self.runs + left.len() as u64 > settings.budget || r >= MAX_REPLICATIONS {
                return Ok(());
            }
            self.runs += measure(
                batch,
                Stage::Kn(r),
                left.iter().map(|c| (*c, r)).collect(),
                &mut self.values,
            )?;
            r += 1;
        }
    }
}

/// Runs the `asked` (candidate, replication) pairs as one batch and appends each row of
/// metrics to the candidate's values; the number of runs.
fn measure<E>(
    batch: &mut TryBatch<'_, E>,
    stage: Stage,
    asked: Vec<(usize, usize)>,
    values: &mut [Vec<Vec<f64>>],
) -> Result<u64, E> {
    if asked.is_empty() {
        return Ok(0);
    }
    let got = batch(stage, &asked)?;
    for ((c, _), row) in asked.iter().zip(got) {
        for (m, x) in row.into_iter().enumerate() {
            values[*c][m].push(x);
        }
    }
    Ok(asked.len() as u64)
}

/// Each candidate's feasibility per constraint from its values so far; a candidate infeasible
/// or with an unmeasured primary metric is no longer alive.
fn judge(
    constraints: &[Expectation],
    cidx: &[usize],
    values: &[Vec<Vec<f64>>],
    feas: &mut [Vec<Feasibility>],
    alive: &mut [bool],
) {
    for c in 0..values.len() {
        feas[c] = constraints
            .iter()
            .zip(cidx)
            .map(|(e, m)| feasibility(e, &values[c][*m]))
            .collect();
        let unmeasured = values[c][0].iter().any(|x| x.is_nan());
        if unmeasured || feas[c].contains(&Feasibility::Infeasible) {
            alive[c] = false;
        }
    }
}

/// Whether each candidate met every constraint.
fn all_feasible(feas: &[Vec<Feasibility>]) -> Vec<bool> {
    feas.iter()
        .map(|f| f.iter().all(|x| *x == Feasibility::Feasible))
        .collect()
}

/// KN's indifference zone δ after the first `n0` replications: as given, or a share of the best
/// survivor's mean, or of the first stage's spread between runs when that is larger (a best mean
/// of 0, as `--minimize failed` finds, would make δ 0 and KN unable to tell 0 from 1,712; the
/// spread is the metric's own scale); the share itself when both are 0.
fn indifference_delta(ind: Indifference, xs: &[Vec<f64>], alive: &[bool], n0: usize) -> f64 {
    match ind {
        Indifference::Absolute(d) => d,
        Indifference::Relative(p) => {
            let first = |c: usize| &xs[c][..n0];
            let mean = |c: usize| first(c).iter().sum::<f64>() / n0 as f64;
            let contenders: Vec<usize> = (0..xs.len()).filter(|c| alive[*c]).collect();
            let best = contenders
                .iter()
                .map(|&c| mean(c))
                .fold(f64::NEG_INFINITY, f64::max);
            // The standard deviation of one run, pooled over the contenders.
            let variance = |c: usize| {
                let m = mean(c);
                first(c).iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n0 - 1).max(1) as f64
            };
            let spread = (contenders.iter().map(|&c| variance(c)).sum::<f64>()
                / contenders.len().max(1) as f64)
                .sqrt();
            let d = p * best.abs().max(spread);
            if d.is_finite() && d > 0.0 { d } else { p }
        }
    }
}

fn m_of(metrics: &[String], name: &str, fallback: usize) -> usize {
    metrics.iter().position(|m| m == name).unwrap_or(fallback)
}

/// The metrics a search measures: the objectives' then the constraints', each once.
pub fn metrics(objectives: &[Objective], constraints: &[Expectation]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in objectives
        .iter()
        .map(|o| &o.metric)
        .chain(constraints.iter().map(|e| &e.metric))
    {
        if !out.contains(m) {
            out.push(m.clone());
        }
    }
    out
}

/// The settings of one candidate as TOML to paste into the model: a `[table]` per key prefix,
/// values as `--set` reads them (`"5ms"` quoted, `6` not). A key inside an array of tables
/// (`tier[0].retry.base`, `server.outages[0].to`) has no TOML header that reaches it, so it is
/// given as a `--set` flag on a comment line; the whole snippet stays valid TOML.
pub fn snippet(params: &[(String, String)]) -> String {
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    let mut flags: Vec<String> = Vec::new();
    for (k, v) in params
        .iter()
        .flat_map(|(k, v)| k.split('+').map(move |k| (k, v)))
    {
        if k.contains('[') {
            flags.push(format!(
                "# --set '{}'",
                format!("{k}={v}").replace('\'', r"'\''")
            ));
            continue;
        }
        let (table, key) = k.rsplit_once('.').unwrap_or(("", k));
        let line = format!("{key} = {}", crate::model::load::parse_value(v));
        match tables.iter_mut().find(|(t, _)| t == table) {
            Some((_, lines)) => lines.push(line),
            None => tables.push((table.to_string(), vec![line])),
        }
    }
    tables.sort_by_key(|(t, _)| !t.is_empty());
    let mut out = String::new();
    for (t, lines) in tables {
        if !t.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("[{t}]\n"));
        }
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    if !flags.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("# keys inside arrays of tables: edit them in place, or pass\n");
        for f in flags {
            out.push_str(&f);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests;
