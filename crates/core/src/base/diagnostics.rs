//! A refused input, located: the one-line `file:line:col: field: message` every front end
//! prints, and the "did you mean" that goes with an unknown word.

use std::fmt;

/// A refused input. `Display` gives the one-line form `file:line:col: field: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file path, or the flag (`--set retry.base=5`).
    pub origin: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Dotted field path, when the error is about one field.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for LoadError {}

/// The allowed word closest to `got` by edit distance, when it is close enough to be a typo.
pub fn closest<'a>(got: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        // Optimal string alignment (strsim): an adjacent transposition is one edit, so `retyr`
        // is one typo away from `retry`.
        .map(|a| (strsim::osa_distance(got, a), *a))
        .filter(|(d, a)| *d <= (a.len().max(got.len()) / 3).max(1))
        .min()
        .map(|(_, a)| a)
}
