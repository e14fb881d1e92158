//! `retrystorm check`: run a model's expectations over one or more seeds.

mod baseline;

use crate::args::CheckArgs;
use crate::model_args::{base_seed, load_model};
use crate::text::plural;
use crate::verdict::{evaluate, expectations, junit, render, verdict};
use crate::{CliError, output, progress};
use retrystorm_core::stats;
use std::fmt::Write as _;

pub fn check(a: CheckArgs) -> Result<(), CliError> {
    if let Some(p) = &a.junit {
        let mut inputs = vec![("the model file", a.model.model.as_path())];
        if let Some(b) = &a.baseline {
            inputs.push(("the --baseline file", b.as_path()));
        }
        output::check(&[output::Out::new("--junit", p)], &inputs)?;
    }
    let scenario = load_model(&a.model)?;
    if let Some(p) = &a.junit {
        output::refuse_inputs(&[output::Out::new("--junit", p)])?;
    }
    let file = a.model.model.display().to_string();
    let exps = expectations(&scenario, &file, &a.expects)?;
    crate::advice::warn_models(&scenario.variants.iter().collect::<Vec<_>>());
    if let Some(path) = &a.baseline {
        return baseline::check(&a, &scenario, path, &exps);
    }
    if exps.is_empty() {
        return Err(CliError::Input(format!(
            "{file}: no expectations; add [[expect]] tables to the model or pass --expect 'METRIC OP VALUE'"
        )));
    }
    let base = base_seed(&a.model, &scenario.base);
    let seeds = stats::replication_seeds(base, a.model.seeds);
    let results = evaluate(&scenario, &a.model, &exps, &seeds)?;
    let quiet = progress::quiet();
    let mut text = String::new();
    if !quiet {
        let _ = writeln!(
            text,
            "{} ({} from {base})",
            scenario.name,
            plural(seeds.len() as u64, "seed")
        );
    }
    text.push_str(&render(&results, quiet));
    output::print(&text)?;
    if let Some(p) = &a.junit {
        output::write(
            output::Out::new("--junit", p),
            &junit(&scenario.name, &results),
        )?;
    }
    let (failed, line) = verdict(&exps, &results);
    if failed > 0 {
        return Err(CliError::Failed(line));
    }
    output::print(&format!("{line}\n"))?;
    Ok(())
}
