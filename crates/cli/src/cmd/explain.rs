//! `retrystorm explain MODEL`: the resolved model's key facts, warnings ([`crate::advice`]) and
//! stability verdict ([`crate::stability`]), as text, `--json` and SARIF (`--sarif`).

use crate::advice::explain_model;
use crate::args::{ExplainArgs, FailOn};
use crate::error::CliError;
use crate::model_args::{Resolved, pick_variant};
use crate::prepare::study_outputs;
use crate::{chain_view, output, stability};
use retrystorm_core::model::Model;
use retrystorm_core::study::verdict::chain::{self, ChainError, ChainReport};
use retrystorm_core::study::verdict::{Judgement, judge};
use serde_json::json;

/// The model as JSON with its name blanked: two variants with the same value run the same.
fn without_name(m: &Model) -> serde_json::Value {
    let mut v = serde_json::to_value(m).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("name");
        o.remove("description");
    }
    v
}

/// One variant explained: its facts, warnings and verdict, or the earlier variant it equals.
struct Explained<'m> {
    model: &'m Model,
    /// Its index among the file's `[[variant]]` tables (a file without any has the base alone).
    index: Option<usize>,
    same_as: Option<String>,
    facts: Vec<String>,
    warnings: Vec<String>,
    judgement: Option<Judgement>,
    /// The one-tier Markov chain, solved or refused (none for a folded variant).
    chain: Option<Result<ChainReport, ChainError>>,
}

/// `retrystorm explain MODEL [--variant V] [--set ...] [--json PATH] [--sarif PATH]`. A variant
/// that resolves to the same model as an earlier one is folded into one line naming it.
pub fn explain(a: ExplainArgs) -> Result<(), CliError> {
    refuse_run_flags(&a)?;
    let outs = study_outputs(&[("--json", &a.json), ("--sarif", &a.sarif)], &a.model)?;
    let model = Resolved::read(&a.model)?;
    let scenario = &model.scenario;
    let only = match &a.variant {
        Some(v) => Some(pick_variant(scenario, Some(v), &model.origin)?.name),
        None => None,
    };
    let mut seen: Vec<(&str, serde_json::Value)> = Vec::new();
    let mut all = Vec::new();
    for (i, m) in scenario.variants.iter().enumerate() {
        if only.as_ref().is_some_and(|o| *o != m.name) {
            continue;
        }
        let index = Some(i);
        let resolved = without_name(m);
        if let Some((first, _)) = seen.iter().find(|(_, v)| *v == resolved) {
            all.push(Explained {
                model: m,
                index,
                same_as: Some(first.to_string()),
                facts: Vec::new(),
                warnings: Vec::new(),
                judgement: None,
                chain: None,
            });
            continue;
        }
        seen.push((m.name.as_str(), resolved));
        let (facts, warnings) = explain_model(m);
        all.push(Explained {
            model: m,
            index,
            same_as: None,
            facts,
            warnings,
            judgement: Some(judge(m)),
            chain: Some(chain::solve(m)),
        });
    }
    let json_to_stdout = a.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if !json_to_stdout {
        output::print(&text(&all))?;
    }
    for o in &outs {
        let body = match o.flag {
            "--json" => json_text(&model.origin, &all),
            _ => sarif_text(&model, &all),
        };
        output::write(*o, &body)?;
    }
    fail_on(a.fail_on, &all)
}

/// `--seeds` and `--jobs` (shared with the commands that run) are refused: explain runs
/// nothing, so they would change nothing it says.
fn refuse_run_flags(a: &ExplainArgs) -> Result<(), CliError> {
    let given = if a.model.seeds != 1 {
        Some(format!("--seeds {}", a.model.seeds))
    } else {
        a.model.jobs.map(|j| format!("--jobs {j}"))
    };
    match given {
        Some(flag) => Err(CliError::Input(format!(
            "{flag}: explain runs no simulation, so replications and threads change nothing it says; drop it (`retrystorm run --seeds N` runs them)"
        ))),
        None => Ok(()),
    }
}

/// The text view: each variant's facts, verdict and warnings.
fn text(all: &[Explained]) -> String {
    let mut out = String::new();
    for e in all {
        out.push_str(&format!("{}\n", e.model.name));
        if let Some(first) = &e.same_as {
            out.push_str(&format!(
                "  same as {first}: the variant changes nothing the run reads\n"
            ));
            continue;
        }
        for f in &e.facts {
            out.push_str(&format!("  {f}\n"));
        }
        let finding = e.judgement.as_ref().is_some_and(|j| j.verdict.is_finding());
        if let Some(j) = &e.judgement {
            for l in stability::lines(j) {
                out.push_str(&format!("  {l}\n"));
            }
        }
        for l in e.chain.iter().flat_map(chain_view::lines) {
            out.push_str(&format!("  {l}\n"));
        }
        for w in &e.warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
        if e.warnings.is_empty() && !finding {
            out.push_str("  no warnings\n");
        }
    }
    out
}

/// `--json`: every variant's facts, warnings and verdict (`docs/output.md`, "explain --json").
fn json_text(origin: &str, all: &[Explained]) -> String {
    let variants: Vec<serde_json::Value> = all
        .iter()
        .map(|e| match &e.same_as {
            Some(first) => json!({ "name": e.model.name, "same_as": first }),
            None => {
                let mut v = json!({
                    "name": e.model.name,
                    "facts": e.facts,
                    "warnings": e.warnings,
                    "verdict": e.judgement,
                });
                if let (Some(o), Some(c)) = (v.as_object_mut(), &e.chain) {
                    chain_view::fields(c, o);
                }
                v
            }
        })
        .collect();
    let doc = json!({ "file": origin, "variants": variants });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// `--sarif`: one result per variant whose verdict is a finding, at the line of the table that
/// decides it.
fn sarif_text(model: &Resolved, all: &[Explained]) -> String {
    let findings: Vec<retrystorm_report::sarif::Finding> = all
        .iter()
        .filter_map(|e| {
            let j = e.judgement.as_ref()?;
            let tier = j.deciding().filter(|_| j.verdict.is_finding())?;
            Some(retrystorm_report::sarif::Finding {
                variant: &e.model.name,
                judgement: j,
                line: retrystorm_core::load::key_line(&model.text, e.index, &tier.table),
            })
        })
        .collect();
    retrystorm_report::sarif::sarif(&model.origin, env!("CARGO_PKG_VERSION"), &findings)
}

/// `--fail-on`: exit 1 when a variant's verdict is at least as bad as asked.
fn fail_on(level: Option<FailOn>, all: &[Explained]) -> Result<(), CliError> {
    let Some(level) = level else {
        return Ok(());
    };
    let bad: Vec<String> = all
        .iter()
        .filter_map(|e| {
            let j = e.judgement.as_ref()?;
            let hit = match level {
                FailOn::Vulnerable => j.verdict.is_finding(),
                FailOn::Overloaded => {
                    j.verdict == retrystorm_core::study::verdict::Verdict::Overloaded
                }
            };
            hit.then(|| format!("{} ({})", e.model.name, j.verdict.name()))
        })
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    Err(CliError::Failed(format!(
        "--fail-on {}: {}",
        level.name(),
        bad.join(", ")
    )))
}
