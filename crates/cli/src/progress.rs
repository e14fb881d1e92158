//! Progress bars: shown only when stderr is a terminal (hyperfine's `get_progress_bar`).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar of `len` units, hidden when stderr is not a terminal (CI, pipes).
pub fn bar(len: u64, unit: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::new(len);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {unit} ({{per_sec}}, ETA {{eta}})"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        pb.set_style(style);
    }
    pb
}

/// A bar over simulated time (milliseconds up to the model's horizon) for one long run, hidden
/// when stderr is not a terminal.
pub fn sim_bar(horizon_ms: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(horizon_ms), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::new(horizon_ms);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:40} sim {pos}/{len} ms ({per_sec} sim ms/s, ETA {eta})",
    ) {
        pb.set_style(style);
    }
    pb
}
