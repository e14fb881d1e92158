//! The settings that change a verdict most: each candidate is applied to a copy of the model
//! and judged again, so what a lever promises is what the verdict says of the changed model.

use super::{Judgement, Verdict, judge_tiers};
use crate::base::prose::short;
use crate::model::{Model, Rate, Retry};
use crate::policy::budget::{BudgetConfig, BudgetKind};
use serde::Serialize;

/// One setting and the verdict it gives.
#[derive(Clone, Debug, Serialize)]
pub struct Lever {
    /// The key and value, as `--set` takes them (`budget.kind=grpc`).
    pub set: String,
    /// What it means, in words.
    pub what: String,
    pub verdict: Verdict,
    pub ratio: Option<f64>,
}

/// The retry policy of hop `k` in the model's own keys: its path and a way to change it.
fn hop_retry(m: &mut Model, k: usize) -> Option<(String, &mut Retry)> {
    if !m.layers.is_empty() {
        return None;
    }
    if k == 0 {
        Some(("retry".into(), &mut m.retry))
    } else {
        m.tiers
            .get_mut(k - 1)
            .map(|t| (format!("tier[{}].retry", k - 1), &mut t.retry))
    }
}

fn hop_budget(m: &mut Model, k: usize) -> Option<(String, &mut BudgetConfig)> {
    if !m.layers.is_empty() {
        return None;
    }
    if k == 0 {
        Some(("budget".into(), &mut m.budget))
    } else {
        m.tiers
            .get_mut(k - 1)
            .map(|t| (format!("tier[{}].budget", k - 1), &mut t.budget))
    }
}

fn tier_server(m: &mut Model, k: usize) -> Option<(String, &mut crate::model::Server)> {
    let bottom = if m.layers.is_empty() {
        m.tiers.len()
    } else {
        m.layers.len() - 1
    };
    if k == bottom {
        Some(("server".into(), &mut m.server))
    } else if m.layers.is_empty() {
        m.tiers
            .get_mut(k)
            .map(|t| (format!("tier[{k}].server"), &mut t.server))
    } else {
        None
    }
}

/// The candidates for the deciding tier, judged; those that improve the verdict first, the
/// lowest ratio first.
pub(super) fn levers(m: &Model, j: &Judgement) -> Vec<Lever> {
    let Some(k) = j.deciding_tier else {
        return Vec::new();
    };
    let now = j.verdict;
    let mut out = Vec::new();
    let mut try_one = |changed: Model, set: String, what: String| {
        let v = judge_tiers(&changed);
        if v.verdict < now {
            out.push(Lever {
                set,
                what,
                verdict: v.verdict,
                ratio: v.ratio,
            });
        }
    };
    let mut c = m.clone();
    if let Some((p, b)) = hop_budget(&mut c, k)
        && b.kind == BudgetKind::None
    {
        b.kind = BudgetKind::Grpc;
        let what = format!(
            "a gRPC retry budget (max_tokens {}, token_ratio {})",
            b.max_tokens, b.token_ratio
        );
        try_one(c, format!("{p}.kind=grpc"), what);
    }
    let mut c = m.clone();
    if let Some((p, s)) = tier_server(&mut c, k)
        && !s.drop_expired
    {
        s.drop_expired = true;
        try_one(
            c,
            format!("{p}.drop_expired=true"),
            "the server drops queued requests whose caller gave up".into(),
        );
    }
    out.extend(max_attempts(m, k, now));
    out.extend(workload_rate(m, now));
    out.sort_by(|a, b| {
        a.verdict
            .cmp(&b.verdict)
            .then(a.ratio.unwrap_or(0.0).total_cmp(&b.ratio.unwrap_or(0.0)))
    });
    out
}

/// The largest `max_attempts` below the current one with a better verdict.
fn max_attempts(m: &Model, k: usize, now: Verdict) -> Option<Lever> {
    let mut c = m.clone();
    let (p, r) = hop_retry(&mut c, k)?;
    let current = r.max_attempts;
    let at = |n: u32| {
        let mut c = m.clone();
        if let Some((_, r)) = hop_retry(&mut c, k) {
            r.max_attempts = n;
        }
        judge_tiers(&c)
    };
    if current <= 1 || at(1).verdict >= now {
        return None;
    }
    // The verdict worsens with attempts: the largest n that still improves it.
    let (mut good, mut bad) = (1, current);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if at(mid).verdict < now {
            good = mid;
        } else {
            bad = mid;
        }
    }
    let v = at(good);
    Some(Lever {
        set: format!("{p}.max_attempts={good}"),
        what: format!("at most {good} attempts a call (now {current})"),
        verdict: v.verdict,
        ratio: v.ratio,
    })
}

/// The largest steady open rate with a better verdict.
fn workload_rate(m: &Model, now: Verdict) -> Option<Lever> {
    if m.workload.kind != crate::model::WorkloadKind::Open {
        return None;
    }
    let at = |r: f64| {
        let mut c = m.clone();
        c.workload.rate = Rate(r);
        judge_tiers(&c)
    };
    let rate = m.workload.rate.0;
    if at(rate * 1e-6).verdict >= now {
        return None;
    }
    let (mut good, mut bad) = (rate * 1e-6, rate);
    for _ in 0..40 {
        let mid = (good + bad) / 2.0;
        if at(mid).verdict < now {
            good = mid;
        } else {
            bad = mid;
        }
    }
    // Rounded down (whole requests per second, or thousandths below 10/s) so that it holds as
    // written.
    let (shown, text) = if good >= 10.0 {
        (good.floor(), format!("{}", good.floor()))
    } else {
        let g = (good * 1000.0).floor() / 1000.0;
        (g, format!("{g}"))
    };
    let v = at(shown);
    (v.verdict < now).then(|| Lever {
        set: format!("workload.rate={text}/s"),
        what: format!("a steady load of at most {text}/s (now {}/s)", short(rate)),
        verdict: v.verdict,
        ratio: v.ratio,
    })
}
