//! `--trace PATH`: the event history of a few intents as JSON Lines (`docs/output.md`, "Traces").
//! The core records ([`retrystorm_core::trace`]); this writes one line per event, variant by
//! variant, each intent's events together.

use crate::args::TraceArgs;
use retrystorm_core::trace::{OutcomeFilter, TraceEvent, TraceLog, TraceOptions};
use serde::Serialize;

/// The names `--trace-outcome` takes.
pub const OUTCOMES: [&str; 7] = {
    let mut names = [""; 7];
    let mut i = 0;
    while i < 7 {
        names[i] = OutcomeFilter::ALL[i].0;
        i += 1;
    }
    names
};

/// What to trace, when `--trace` is given.
pub fn options(a: &TraceArgs) -> Option<TraceOptions> {
    a.trace.as_ref()?;
    Some(TraceOptions {
        intents: a.trace_intents,
        // clap only lets the names of [`OUTCOMES`] through.
        outcome: a.trace_outcome.as_deref().and_then(OutcomeFilter::parse),
        max_events: a.trace_max_events,
    })
}

#[derive(Serialize)]
struct Line<'a> {
    variant: &'a str,
    #[serde(flatten)]
    event: &'a TraceEvent,
}

/// The JSON Lines of every variant's trace.
pub fn render(traces: &[(&str, &TraceLog)]) -> String {
    let mut out = String::new();
    for (variant, log) in traces {
        for event in log.events() {
            let line = Line { variant, event };
            out.push_str(&serde_json::to_string(&line).expect("a trace line always serializes"));
            out.push('\n');
        }
    }
    out
}

/// Says on stderr what a trace could not keep: intents dropped at `--trace-max-events`, or no
/// intent that ended in the `--trace-outcome` asked for.
pub fn warn(a: &TraceArgs, traces: &[(&str, &TraceLog)]) {
    for (variant, log) in traces {
        if log.dropped > 0 {
            eprintln!(
                "warning: --trace: {variant}: {} intents not written, over --trace-max-events {}",
                log.dropped, a.trace_max_events
            );
        }
        if log.intents.is_empty()
            && let Some(o) = &a.trace_outcome
        {
            eprintln!("note: --trace: {variant}: no intent ended {o}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrystorm_core::time::Time;
    use retrystorm_core::trace::Step;

    #[test]
    fn a_line_is_the_variant_then_the_event() {
        let log = TraceLog {
            intents: vec![vec![TraceEvent::new(Time(5), 3, 0, 1, Step::Send)]],
            dropped: 0,
        };
        assert_eq!(
            render(&[("full", &log)]),
            "{\"variant\":\"full\",\"time_ns\":5,\"intent\":3,\"hop\":0,\"attempt\":1,\"event\":\"send\"}\n"
        );
    }

    #[test]
    fn the_outcome_names_are_the_filters() {
        for n in OUTCOMES {
            assert!(OutcomeFilter::parse(n).is_some(), "{n}");
        }
    }
}
