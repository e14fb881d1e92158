//! The `retrystorm` command line: thin glue from flags to the core and the report crate.
//!
//! Exit codes (as fd's `exit_codes.rs`): 0 success, 1 an expectation failed, 2 bad input or
//! usage, 3 an output could not be written, 4 `check --baseline` compared less than its baseline
//! holds, 5 `merge` found runs missing, 130 Ctrl-C stopped the runs (their outputs written,
//! truncated).

// The floors, from the top down; a module uses only those below it (docs/architecture.md).
mod advice; // the warnings of `explain`, also printed before a run
mod args;
mod charts; // chart options from the model
mod cmd; // one file per subcommand; no command uses another
pub mod embed; // the commands as a library, for the Python package
mod emit; // writers of a run's report (table, JSON, CSV, Markdown, charts)
mod grid; // --vary as a grid's axes
mod import; // importers of real clients' retry configurations (retry.from)
mod model_args; // the model file with --set, --variant, --seed resolved
mod output; // files: outputs checked, written whole, inputs read
mod policy_lines; // each hop's policies as explain prints them
mod prepare; // the steps commands share before their runs: outputs checked, model and grid resolved
mod progress; // progress bars and notes on stderr
mod run; // the one parallel runner; run_all, replicate
mod stability; // the stability verdict in words: explain's lines, compare's column
mod sweep_file; // the sweep file as the CLI reads, locks and summarizes it
mod text; // plurals, shell quoting
mod trace; // --trace: options and the JSON Lines writer
mod verdict; // expectations over seeds: verdict lines, JUnit // the clap definition

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
    /// `merge` joined fewer runs than the sweep's grid holds (without `--partial`).
    #[error("{0}")]
    Missing(String),
}

impl CliError {
    fn code(&self) -> u8 {
        match self {
            CliError::Failed(_) => 1,
            CliError::Input(_) => 2,
            CliError::Output(_) => 3,
            CliError::Incomplete(_) => 4,
            CliError::Missing(_) => 5,
        }
    }
}

impl From<retrystorm_core::load::LoadError> for CliError {
    fn from(e: retrystorm_core::load::LoadError) -> Self {
        CliError::Input(e.to_string())
    }
}

/// The exit code of a command whose runs Ctrl-C stopped (128 + SIGINT, as a shell reports a
/// process SIGINT killed).
const INTERRUPTED: u8 = 130;

/// Runs one subcommand.
fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run(a) => cmd::run::run(a),
        Command::Compare(a) => cmd::compare::compare(a),
        Command::Check(a) => cmd::check::check(a),
        Command::Sweep(a) => cmd::sweep::sweep(a),
        Command::Merge(a) => cmd::merge::merge(a),
        Command::Report(a) => cmd::report::report(a),
        Command::Explain(a) => cmd::explain::explain(a),
        Command::Tune(a) => cmd::tune::tune(a),
        Command::Map(a) => cmd::map::map(a),
        Command::Sensitivity(a) => cmd::sensitivity::sensitivity(a),
        Command::Init(a) => cmd::init::init(a),
        Command::Completions(a) => cmd::completions::completions(a),
        Command::Schema(a) => cmd::schema::schema(a),
        Command::Import(a) => cmd::import::import(a),
        Command::Validate(a) => cmd::validate::validate(a),
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
    let result = dispatch(cli);
    if let Err(e) = &result {
        eprintln!("error: {e}");
    }
    if run::interrupted() {
        // The outputs are written (each stopped run says so on stderr and in its table).
        eprintln!(
            "error: interrupted by Ctrl-C; the outputs hold the runs as far as they got (\"truncated\": true)"
        );
        return ExitCode::from(INTERRUPTED);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => ExitCode::from(e.code()),
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
