//! `retrystorm run MODEL`: one model (or one variant), one seed or `--seeds N` replications.

use crate::args::RunArgs;
use crate::emit::{check_column_metrics, check_outputs, emit_replicated, emit_with, is_stdout};
use crate::model_args::{base_seed, load_model, pick_variant};
use crate::run::{replicate, run_all_traced};
use crate::trace::{outputs_traced, trace_one_seed, write_trace};
use crate::{CliError, output};
use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_report as report;

pub fn run(a: RunArgs) -> Result<(), CliError> {
    check_column_metrics(&a.output)?;
    let outs = outputs_traced(&a.output, &a.trace);
    check_outputs(&outs, &a.model)?;
    let trace = trace_one_seed(&a.trace, &a.model)?;
    let scenario = load_model(&a.model)?;
    output::refuse_inputs(&outs)?;
    let file = a.model.model.display().to_string();
    let model = pick_variant(&scenario, a.variant.as_deref(), &file)?;
    let seed = base_seed(&a.model, &model);
    // From here on Ctrl-C stops the runs and the outputs hold what they simulated (exit 130).
    crate::run::ctrl_c();
    crate::advice::warn_models(&[&model]);
    if a.model.seeds > 1 {
        let rep = replicate(
            &scenario.name,
            std::slice::from_ref(&model),
            seed,
            a.model.seeds,
            a.model.jobs,
        )?;
        return emit_replicated(
            &rep,
            &a.output,
            report::ci_view(&rep),
            std::slice::from_ref(&model),
        );
    }
    let (results, logs) = run_all_traced(&[(&model, seed)], a.model.jobs, trace)?;
    let rep = RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: results,
    };
    let quiet = a.trace.trace.as_deref().is_some_and(is_stdout);
    let table = report::run_view(&rep);
    emit_with(&rep, &a.output, table, quiet, std::slice::from_ref(&model))?;
    write_trace(&a.trace, &rep.variants, &logs)
}
