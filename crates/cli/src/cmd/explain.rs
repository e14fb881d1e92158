//! `retrystorm explain MODEL`: the resolved model's key facts and warnings ([`crate::advice`]).

use crate::advice::explain_model;
use crate::args::ExplainArgs;
use crate::error::CliError;
use crate::model_args::load_model;
use retrystorm_core::model::Model;

/// The model as JSON with its name blanked: two variants with the same value run the same.
fn without_name(m: &Model) -> serde_json::Value {
    let mut v = serde_json::to_value(m).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("name");
        o.remove("description");
    }
    v
}

/// `retrystorm explain MODEL [--variant V] [--set ...]`. A variant that resolves to the same
/// model as an earlier one is folded into one line naming it.
pub fn explain(a: ExplainArgs) -> Result<(), CliError> {
    let scenario = load_model(&a.model)?;
    let mut out = String::new();
    let mut seen: Vec<(&str, serde_json::Value)> = Vec::new();
    for m in &scenario.variants {
        let resolved = without_name(m);
        if let Some((first, _)) = seen.iter().find(|(_, v)| *v == resolved) {
            out.push_str(&format!(
                "{}\n  same as {first}: the variant changes nothing the run reads\n",
                m.name
            ));
            continue;
        }
        seen.push((m.name.as_str(), resolved));
        let (facts, warnings) = explain_model(m);
        out.push_str(&format!("{}\n", m.name));
        for f in facts {
            out.push_str(&format!("  {f}\n"));
        }
        for w in &warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
        if warnings.is_empty() {
            out.push_str("  no warnings\n");
        }
    }
    print!("{out}");
    Ok(())
}
