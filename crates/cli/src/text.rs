//! Words for messages: plurals (shell quoting is the report crate's `fmt::shell_word`).

/// `1 run`, `2 runs`.
pub fn plural(n: u64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
