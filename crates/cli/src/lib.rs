//! The `retrystorm` command line: thin glue from flags to the core and the report crate.
//!
//! Exit codes (as fd's `exit_codes.rs`): 0 success, 1 an expectation failed, 2 bad input or
//! usage, 3 an output could not be written, 4 `check --baseline` compared less than its baseline
//! holds, 5 `merge` found runs missing, 130 Ctrl-C stopped the runs (their outputs written,
//! truncated).

// The modules, each on a floor that uses only the floors below it (docs/architecture.md, "The
// CLI's floors"); no import circle between files (tests/structure.rs).
mod advice; // the warnings of `explain`, also printed before a run
mod args; // the clap definition
mod chain_view; // the Markov chain of a one-tier model in words: explain's lines and JSON fields
mod charts; // chart options from the model
mod cmd; // one file per subcommand; no command uses another
pub mod embed; // the commands as a library, for the Python package
mod emit; // writers of a run's report (table, JSON, CSV, Markdown, charts)
mod error; // CliError: why a command stopped, and its exit code
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
mod verdict; // expectations over seeds: verdict lines, JUnit

use args::{Cli, Command};
use std::process::ExitCode;

// For users of the library (the Python package); inside this crate it is `crate::error::CliError`.
pub use error::CliError;

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
        Command::Rare(a) => cmd::rare::rare(a),
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
