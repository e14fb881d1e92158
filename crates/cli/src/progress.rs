//! Progress bars: shown only when stderr is a terminal (hyperfine's `get_progress_bar`) and
//! `--quiet` is not given; and the notes on stderr that `--quiet` hides.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// `--quiet`: hide progress bars and notes.
pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// An informational line on stderr (not a warning, not an error), hidden by `--quiet`.
pub fn note(line: &str) {
    if !quiet() {
        eprintln!("{line}");
    }
}

fn hidden() -> bool {
    quiet() || !std::io::stderr().is_terminal()
}

/// A bar of `len` units, hidden when stderr is not a terminal (CI, pipes).
pub fn bar(len: u64, unit: &str) -> ProgressBar {
    if hidden() {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::new(len);
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{done}}/{{total}} {unit} ({{rate}} {unit}/s, ETA {{eta}})"
    );
    if let Ok(style) = ProgressStyle::with_template(&template) {
        pb.set_style(numbers(style));
    }
    pb
}

/// A bar over simulated time (milliseconds up to the model's horizon) for one long run, hidden
/// when stderr is not a terminal. A finite workload (`ends_early`) usually settles long before
/// its horizon, so its bar gives no ETA: one counted to the horizon said "ETA 9m" for a 15 s run.
pub fn sim_bar(horizon_ms: u64, ends_early: bool) -> ProgressBar {
    if hidden() {
        return ProgressBar::with_draw_target(Some(horizon_ms), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::new(horizon_ms);
    if let Ok(style) = ProgressStyle::with_template(sim_template(ends_early)) {
        pb.set_style(numbers(style));
    }
    pb
}

/// The simulated-time bar's template: with an ETA only when the run goes to its horizon.
fn sim_template(ends_early: bool) -> &'static str {
    if ends_early {
        "{spinner} [{elapsed_precise}] {bar:40} sim {done} ms of at most {total} ({rate} sim ms/s; it ends when every intent has settled)"
    } else {
        "{spinner} [{elapsed_precise}] {bar:40} sim {done}/{total} ms ({rate} sim ms/s, ETA {eta})"
    }
}

/// `{done}`, `{total}` and `{rate}` formatted like every other number (`35,539`, not
/// `35538.6216/s`); the template says the unit once.
fn numbers(style: ProgressStyle) -> ProgressStyle {
    use retrystorm_report::fmt;
    style
        .with_key(
            "done",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&fmt::int(s.pos()));
            },
        )
        .with_key(
            "total",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&s.len().map_or("?".into(), fmt::int));
            },
        )
        .with_key(
            "rate",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&fmt::num(s.per_sec()));
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finite_workload_s_bar_promises_no_eta() {
        assert!(!sim_template(true).contains("ETA"));
        assert!(sim_template(false).contains("ETA {eta}"));
        for ends_early in [true, false] {
            assert!(ProgressStyle::with_template(sim_template(ends_early)).is_ok());
        }
    }
}
