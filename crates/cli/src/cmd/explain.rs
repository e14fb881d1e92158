//! `retrystorm explain MODEL`: the resolved model's key facts and warnings ([`crate::advice`]).

use crate::CliError;
use crate::advice::explain_model;
use crate::args::ExplainArgs;
use crate::model_args::load_model;

/// `retrystorm explain MODEL [--variant V] [--set ...]`.
pub fn explain(a: ExplainArgs) -> Result<(), CliError> {
    let scenario = load_model(&a.model)?;
    let mut out = String::new();
    for m in &scenario.variants {
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
