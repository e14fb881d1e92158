//! The `retrystorm` command line: thin glue from flags to the core and the report crate.
//!
//! Exit codes (as fd's `exit_codes.rs`): 0 success, 1 an expectation failed, 2 bad input or
//! usage, 3 an output could not be written, 4 `check --baseline` compared less than its baseline
//! holds.

mod args;
mod baseline;
mod charts;
mod check;
mod commands;
mod explain;
mod html;
mod import;
mod init;
mod map;
mod output;
mod progress;
mod schema;
mod sensitivity;
mod sweep;
mod trace;
mod tune;
mod validate;

use args::{Cli, Command};
use std::process::ExitCode;

/// Why a command stopped; maps to the exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad model file, flag or value.
    #[error("{0}")]
    Input(String),
    /// An output file could not be written.
    #[error("{0}")]
    Output(String),
    /// One or more expectations did not hold (already reported).
    #[error("{0}")]
    Failed(String),
    /// `check --baseline` compared less than the baseline holds (or nothing): no verdict.
    #[error("{0}")]
    Incomplete(String),
}

impl CliError {
    fn code(&self) -> u8 {
        match self {
            CliError::Failed(_) => 1,
            CliError::Input(_) => 2,
            CliError::Output(_) => 3,
            CliError::Incomplete(_) => 4,
        }
    }
}

impl From<retrystorm_core::load::LoadError> for CliError {
    fn from(e: retrystorm_core::load::LoadError) -> Self {
        CliError::Input(e.to_string())
    }
}

/// Runs one subcommand.
fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run(a) => commands::run(a),
        Command::Compare(a) => commands::compare(a),
        Command::Check(a) => check::check(a),
        Command::Sweep(a) => sweep::sweep(a),
        Command::Merge(a) => sweep::merge(a),
        Command::Report(a) => html::report(a),
        Command::Explain(a) => explain::explain(a),
        Command::Tune(a) => tune::tune(a),
        Command::Map(a) => map::map(a),
        Command::Sensitivity(a) => sensitivity::sensitivity(a),
        Command::Init(a) => init::init(a),
        Command::Completions(a) => init::completions(a),
        Command::Schema(a) => schema::schema(a),
        Command::Import(a) => import::import(a),
        Command::Validate(a) => validate::validate(a),
    }
}

/// Entry point of the `retrystorm` binary.
pub fn main() -> ExitCode {
    use clap::Parser;
    // A write past the file-size limit (`ulimit -f`) then fails with EFBIG, reported as exit 3
    // with the temporary file removed, instead of killing the process mid-write.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN, before any thread is started.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = args::Cli::parse();
    progress::set_quiet(cli.quiet);
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.code())
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        crate::args::Cli::command().debug_assert();
    }
}
