//! `retrystorm completions SHELL`: the shell completion script, from the clap definition.

use crate::args::{Cli, CompletionsArgs};
use crate::{error::CliError, output};

pub fn completions(a: CompletionsArgs) -> Result<(), CliError> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "retrystorm", &mut buf);
    let text = String::from_utf8(buf)
        .map_err(|e| CliError::Output(format!("completions: not UTF-8: {e}")))?;
    output::print(&text)
}
