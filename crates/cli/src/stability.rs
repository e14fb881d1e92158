//! The stability verdict (`retrystorm_core::study::verdict`) in words: `explain`'s lines and
//! `compare --verdict`'s column.

use retrystorm_core::study::verdict::{Judgement, Verdict};

/// A ratio as `3.27x`.
fn times(r: f64) -> String {
    if r.is_finite() {
        format!("{r:.2}x")
    } else {
        "unbounded".into()
    }
}

/// `explain`'s verdict lines: the verdict with its deciding ratio and sentence, each tier's
/// terms, the trigger, and the settings that change it.
pub fn lines(j: &Judgement) -> Vec<String> {
    let mut out = Vec::new();
    match (j.verdict, j.ratio) {
        (Verdict::Unknown, _) | (_, None) => {
            out.push(format!("verdict: unknown: {}", j.why));
            return out;
        }
        (v, Some(r)) => out.push(format!("verdict: {} ({}): {}", v.name(), times(r), j.why)),
    }
    for t in &j.tiers {
        for term in &t.terms {
            out.push(format!("verdict: tier {} {}: {term}", t.tier, t.name));
        }
    }
    if let Some(t) = &j.trigger {
        out.push(format!("verdict: {}", t.why));
    }
    for l in j.levers.iter().take(2) {
        out.push(format!(
            "verdict: {} with --set {} ({}){}",
            l.verdict.name(),
            l.set,
            l.what,
            l.ratio.map_or(String::new(), |r| format!(": {}", times(r)))
        ));
    }
    out
}

/// `compare --verdict`'s cell: the verdict, its ratio, and whether the model's trigger tips it.
pub fn cell(j: &Judgement) -> String {
    let mut s = j.verdict.name().to_string();
    if let Some(r) = j.ratio {
        s.push_str(&format!(" {}", times(r)));
    }
    match j.trigger.as_ref().and_then(|t| t.tips) {
        Some(true) if j.verdict == Verdict::Vulnerable => s.push_str(", tips"),
        Some(false) if j.verdict == Verdict::Vulnerable => s.push_str(", recovers"),
        _ => {}
    }
    s
}
