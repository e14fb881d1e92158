//! SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format) for the stability verdict:
//! one result per vulnerable or overloaded variant, at the line of the table that decides it,
//! the numbers as properties. GitHub code scanning reads it (`docs/ci.md`).

use retrystorm_core::study::verdict::{Judgement, Verdict};
use serde_json::{Value, json};

/// One finding: a variant's verdict and where its deciding table is written.
pub struct Finding<'a> {
    pub variant: &'a str,
    pub judgement: &'a Judgement,
    /// 1-based line of the deciding table in the model file; none = the file's first line.
    pub line: Option<usize>,
}

/// The two rules, in the order their `ruleIndex` counts.
const RULES: [(Verdict, &str, &str, &str); 2] = [
    (
        Verdict::Vulnerable,
        "vulnerable",
        "A trigger can tip this retry policy into a retry storm that sustains itself",
        "When every call fails, the retries this policy sends bring at least as much load as the tier serves within its timeout: a spike, an outage or a slow window can push it into a state that lasts after the trigger is gone (metastable failure).",
    ),
    (
        Verdict::Overloaded,
        "overloaded",
        "The tier is over capacity while healthy",
        "The steady load and the retries of replies that come after the timeout need more than the tier serves: it has no healthy state.",
    ),
];

fn rule(v: Verdict) -> Option<(usize, &'static str)> {
    RULES.iter().position(|r| r.0 == v).map(|i| (i, RULES[i].1))
}

/// The SARIF log of `findings` in the model file `uri` (as given on the command line).
pub fn sarif(uri: &str, version: &str, findings: &[Finding]) -> String {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(v, id, short, full)| {
            json!({
                "id": id,
                "name": if *v == Verdict::Vulnerable { "MetastableRetryStorm" } else { "OverloadedTier" },
                "shortDescription": { "text": short },
                "fullDescription": { "text": full },
                "defaultConfiguration": { "level": if *v == Verdict::Vulnerable { "warning" } else { "error" } },
            })
        })
        .collect();
    let uri = uri.replace('\\', "/");
    let uri = uri.strip_prefix("./").unwrap_or(&uri);
    let results: Vec<Value> = findings.iter().filter_map(|f| result(uri, f)).collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "retrystorm",
                "version": version,
                "rules": rules,
            }},
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

fn result(uri: &str, f: &Finding) -> Option<Value> {
    let j = f.judgement;
    let (index, id) = rule(j.verdict)?;
    let tier = j.deciding()?;
    let mut properties = json!({
        "variant": f.variant,
        "verdict": j.verdict.name(),
        "ratio": tier.ratio,
        "tier": tier.tier,
        "tierName": tier.name,
        "table": tier.table,
        "capacityPerSecond": tier.capacity_per_s,
        "healthyPerSecond": tier.healthy_per_s,
        "allFailPerSecond": tier.all_fail_per_s,
        "levers": j.levers.iter().map(|l| json!({ "set": l.set, "verdict": l.verdict.name(), "ratio": l.ratio })).collect::<Vec<_>>(),
    });
    if let (Some(t), Some(o)) = (&j.trigger, properties.as_object_mut()) {
        o.insert("triggerTips".into(), json!(t.tips));
    }
    let fix = j.levers.first().map_or(String::new(), |l| {
        format!(" `--set {}` makes it {}.", l.set, l.verdict.name())
    });
    Some(json!({
        "ruleId": id,
        "ruleIndex": index,
        "level": if j.verdict == Verdict::Vulnerable { "warning" } else { "error" },
        "message": { "text": format!("{}: {} ({:.2}x): {}.{fix}", f.variant, j.verdict.name(), tier.ratio, j.why) },
        "locations": [{ "physicalLocation": {
            "artifactLocation": { "uri": uri },
            "region": { "startLine": f.line.unwrap_or(1) },
        }}],
        "properties": properties,
    }))
}
