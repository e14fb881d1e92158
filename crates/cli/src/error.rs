//! Why a command stopped, and the exit code each reason maps to.

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
    /// The process exit code this error ends the command with.
    pub(crate) fn code(&self) -> u8 {
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
