//! `retrystorm run MODEL`: one model (or one variant), one seed or `--seeds N` replications.

use crate::args::RunArgs;
use crate::model_args::{base_seed, pick_variant};
use crate::prepare::{self, Views};
use crate::{error::CliError, output};
use retrystorm_report as report;

pub fn run(a: RunArgs) -> Result<(), CliError> {
    let p = prepare::traced(&a.output, &a.trace, &a.model)?;
    output::refuse_inputs(&p.outs)?;
    let file = a.model.model.display().to_string();
    let model = pick_variant(&p.model.scenario, a.variant.as_deref(), &file)?;
    let seed = base_seed(&a.model, &model);
    let views = Views {
        one: report::run_view,
        many: report::ci_view,
    };
    p.run_and_emit(std::slice::from_ref(&model), seed, views)
}
