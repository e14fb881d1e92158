//! `retrystorm import SOURCE FILE`: the importers of [`crate::import`] as a command; what it
//! prints is loaded with the core's loader first.

use crate::args::ImportArgs;
use crate::import::{MAX_CONFIG_BYTES, Target, sections};
use crate::{error::CliError, output};

/// The `import` subcommand.
pub fn import(a: ImportArgs) -> Result<(), CliError> {
    let pick = match (a.source.as_str(), &a.method, &a.profile) {
        (_, Some(_), Some(_)) => {
            return Err(CliError::Input(
                "import: give --method (grpc) or --profile (aws), not both".into(),
            ));
        }
        ("grpc", m, None) => m.clone(),
        ("aws", None, p) => p.clone(),
        (s, Some(_), None) => {
            return Err(CliError::Input(format!(
                "import {s}: --method is for grpc service configs"
            )));
        }
        (s, None, Some(_)) => {
            return Err(CliError::Input(format!(
                "import {s}: --profile is for aws config files"
            )));
        }
        (_, None, None) => None,
    };
    let origin = a.file.display().to_string();
    let text = output::read_text(&a.file, "the configuration file", MAX_CONFIG_BYTES)?;
    let emit = sections(&a.source, &origin, &text, pick.as_deref(), Target::Model)?;
    let body = emit.render();
    // What import prints must be a model the loader accepts.
    retrystorm_core::load::load(&origin, &body, &[]).map_err(|e| {
        CliError::Input(format!(
            "{origin}: the imported model is refused: {}",
            e.message
        ))
    })?;
    let path = a.out.clone().unwrap_or_else(|| "-".into());
    let out = output::Out::new("--out", &path);
    output::check(&[out], &[("the configuration file", a.file.as_path())])?;
    output::write(output::Out::new("--out", &path), &body)?;
    for w in emit.warnings() {
        eprintln!("warning: {origin}: {w}");
    }
    Ok(())
}
