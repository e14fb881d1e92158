//! "Will it tip?": a model's stability verdict, from the resolved model alone (no run).
//!
//! A system is metastable when a trigger (a spike, an outage, a slow window) can push it into a
//! state that sustains itself after the trigger is gone: requests time out, their retries add
//! load, and the load keeps them timing out (Bronson et al., HotOS'21; Huang et al., OSDI'22).
//! For each tier this module finds two states: the *healthy* one, the lowest fixed point of the
//! attempts the callers send against the share of replies that come after the timeout, and the
//! *all-fail* one, where every call fails and every retry loop above the tier and at it sends
//! what its policies allow (`max_attempts`, deadlines, budgets' steady-state limits, breakers,
//! limiters). Against the load the tier serves within the timeout, a tier is
//!
//! - [`Verdict::Overloaded`] when it has no healthy state,
//! - [`Verdict::Vulnerable`] when the all-fail state brings at least that load (it sustains
//!   itself, so a trigger can tip the tier into it),
//! - [`Verdict::Stable`] otherwise, or when no all-fail state can last (the tier drops work
//!   whose caller gave up, refuses at once instead of queueing past the timeout, ...).
//!
//! The model's verdict is its worst tier's. [`judge`] also names the settings that change it
//! most ([`levers`]) and, for a one-tier path with a trigger, whether that trigger tips it
//! ([`trigger`]: a fluid model of the queue and the retries over time, not a simulation).
//! `docs/verdict.md` gives each policy's contribution, the sources and the limits.
//!
//! It sits at the study floor: it reads the model and the path it resolves to
//! ([`crate::sim::path::spec::PathSpec`]), and does no I/O.

mod attempts;
pub mod chain;
pub mod levers;
mod queueing;
mod tiers;
pub mod trigger;

use crate::model::{Model, WorkloadKind};
use crate::sim::path::spec::PathSpec;
use serde::Serialize;

pub use levers::Lever;
pub use trigger::TriggerOutcome;

/// What the analysis says of a tier or a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The all-fail state cannot sustain itself: the tier recovers from any trigger.
    Stable,
    /// A trigger can tip it into an all-fail state that sustains itself.
    Vulnerable,
    /// Over capacity while healthy.
    Overloaded,
    /// Not judged (the reason says why).
    Unknown,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Stable => "stable",
            Verdict::Vulnerable => "vulnerable",
            Verdict::Overloaded => "overloaded",
            Verdict::Unknown => "unknown",
        }
    }

    /// Whether it is a finding (vulnerable or overloaded).
    pub fn is_finding(self) -> bool {
        matches!(self, Verdict::Vulnerable | Verdict::Overloaded)
    }
}

/// One tier's verdict and the numbers behind it (rates per second).
#[derive(Clone, Debug, Serialize)]
pub struct TierVerdict {
    /// The tier's index on the path (0 = the one the clients call).
    pub tier: usize,
    pub name: String,
    pub verdict: Verdict,
    /// Requests per second it serves with the mean reply within its callers' timeout; none =
    /// unlimited.
    pub capacity_per_s: Option<f64>,
    /// Attempts per second arriving in the healthy state; none = there is none.
    pub healthy_per_s: Option<f64>,
    /// Attempts per second arriving when every call fails.
    pub all_fail_per_s: f64,
    /// The deciding ratio: the all-fail load over capacity (overloaded: the healthy load at
    /// capacity over capacity; stable with no all-fail state: the healthy load over capacity).
    pub ratio: f64,
    /// The model table that decides it (`retry`, `tier[0].retry`, `server`, ...).
    pub table: String,
    /// The verdict in one sentence.
    pub why: String,
    /// What each part of the model contributed, one line each.
    pub terms: Vec<String>,
}

/// A model's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Judgement {
    pub verdict: Verdict,
    /// The deciding tier's ratio (none when unknown).
    pub ratio: Option<f64>,
    /// The tier that decides it.
    pub deciding_tier: Option<usize>,
    /// One sentence: the deciding tier's, or why the model cannot be judged.
    pub why: String,
    pub tiers: Vec<TierVerdict>,
    /// The settings that change the verdict most, best first.
    pub levers: Vec<Lever>,
    /// What the model's own trigger does, when it has one and it can be followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<TriggerOutcome>,
}

impl Judgement {
    fn unknown(why: String) -> Judgement {
        Judgement {
            verdict: Verdict::Unknown,
            ratio: None,
            deciding_tier: None,
            why,
            tiers: Vec::new(),
            levers: Vec::new(),
            trigger: None,
        }
    }

    /// The deciding tier's verdict.
    pub fn deciding(&self) -> Option<&TierVerdict> {
        self.tiers.get(self.deciding_tier?)
    }
}

/// Why a model cannot be judged, if it cannot.
fn unjudgeable(m: &Model) -> Option<String> {
    let w = &m.workload;
    match w.kind {
        WorkloadKind::Trace => Some(format!(
            "a trace workload ({} arrivals) has no steady arrival rate: the verdict needs one",
            w.replay.arrivals.len()
        )),
        WorkloadKind::Burst | WorkloadKind::Contention => Some(format!(
            "a {} of {} clients settles and ends: there is no steady load for a state to sustain itself on",
            if w.kind == WorkloadKind::Burst {
                "burst"
            } else {
                "contention run"
            },
            w.clients
        )),
        WorkloadKind::Periodic => Some(format!(
            "{} periodic clients arrive in waves, one per period: the verdict needs a steady arrival rate",
            w.clients
        )),
        WorkloadKind::Open if w.rate.0 <= 0.0 => Some(
            "the open workload's steady rate (workload.rate) is 0: nothing arrives to judge".into(),
        ),
        _ => connections_unjudgeable(m),
    }
}

/// A tier with `server.connections` has a capacity that depends on how many attempts reconnect,
/// which no closed form here follows: the verdict declines rather than judge the wrong capacity.
fn connections_unjudgeable(m: &Model) -> Option<String> {
    let path = PathSpec::of(m);
    let t = path.tiers.iter().find(|t| t.server.connections.is_some())?;
    Some(format!(
        "tier {} has server.connections: its capacity falls as attempts reconnect (each connect is server work), which the verdict does not model; run the model to see it",
        t.name
    ))
}

/// The verdict of one resolved model, its tiers, levers and trigger.
pub fn judge(m: &Model) -> Judgement {
    let mut j = judge_brief(m);
    if j.verdict.is_finding() {
        j.levers = levers::levers(m, &j);
    }
    j
}

/// The verdict and what the model's own trigger does, without the levers (which judge the
/// model many times over): what each cell of `map --verdict` needs.
pub fn judge_brief(m: &Model) -> Judgement {
    let mut j = judge_tiers(m);
    j.trigger = trigger::follow(m, &j);
    j
}

/// The verdict without levers or trigger (what the levers re-judge).
pub(crate) fn judge_tiers(m: &Model) -> Judgement {
    if let Some(why) = unjudgeable(m) {
        return Judgement::unknown(why);
    }
    let path = PathSpec::of(m);
    let mut judge = tiers::Judge {
        m,
        path: &path,
        healthy_calls: vec![tiers::healthy_client_calls(m, &path)],
    };
    let tiers: Vec<TierVerdict> = (0..path.tiers.len()).map(|k| judge.tier(k)).collect();
    // The worst verdict decides; among equals the highest ratio.
    let deciding = tiers
        .iter()
        .enumerate()
        .max_by(|(_, a), (_, b)| a.verdict.cmp(&b.verdict).then(a.ratio.total_cmp(&b.ratio)))
        .map(|(i, _)| i);
    let d = deciding.map(|i| &tiers[i]);
    Judgement {
        verdict: d.map_or(Verdict::Unknown, |t| t.verdict),
        ratio: d.map(|t| t.ratio),
        deciding_tier: deciding,
        why: d.map_or_else(String::new, |t| {
            format!("tier {} {}: {}", t.tier, t.name, t.why)
        }),
        tiers,
        levers: Vec::new(),
        trigger: None,
    }
}
