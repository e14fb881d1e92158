//! `--trace PATH`: the event history of a few intents as JSON Lines (`docs/output.md`, "Traces").
//! The core records ([`retrystorm_core::trace`]); this writes one line per event, variant by
//! variant, each intent's events together.

use crate::args::{ModelArgs, OutputArgs, TraceArgs};
use crate::emit::outputs;
use crate::error::CliError;
use crate::output;
use retrystorm_core::summary::VariantResult;
use retrystorm_core::trace::{OutcomeFilter, TraceEvent, TraceLog, TraceOptions};
use serde::Serialize;

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

/// The outputs of `run`/`compare` with `--trace`.
pub fn outputs_traced<'a>(o: &'a OutputArgs, t: &'a TraceArgs) -> Vec<output::Out<'a>> {
    let mut v = outputs(o);
    if let Some(p) = &t.trace {
        v.push(output::Out::new("--trace", p));
    }
    v
}

/// Refuses `--trace` with `--seeds N`: a trace follows one run.
pub fn trace_one_seed(t: &TraceArgs, m: &ModelArgs) -> Result<Option<TraceOptions>, CliError> {
    let opt = options(t);
    if opt.is_some() && m.seeds > 1 {
        return Err(CliError::Input(format!(
            "--trace: a trace follows one run, not {} replications; drop --seeds (or pick one with --seed)",
            m.seeds
        )));
    }
    Ok(opt)
}

/// Writes the trace of every run (named by variant) and says what it left out.
pub fn write_trace(
    t: &TraceArgs,
    results: &[VariantResult],
    logs: &[TraceLog],
) -> Result<(), CliError> {
    let Some(p) = &t.trace else { return Ok(()) };
    let traces: Vec<(&str, &TraceLog)> =
        results.iter().map(|r| r.name.as_str()).zip(logs).collect();
    output::write(output::Out::new("--trace", p), &render(&traces))?;
    warn(t, &traces);
    Ok(())
}

/// The most events `--trace` may hold in all, over every variant it traces: the flag's own
/// maximum, so that many variants cannot multiply it. An event held and written takes about
/// 180 bytes (`docs/performance.md`, "Memory bounds"): about 0.9 GB in all.
pub const MAX_TRACE_EVENTS_TOTAL: u64 = 5_000_000;

/// Refuses `--trace-max-events N` (per variant) when `runs` variants of it could hold more than
/// [`MAX_TRACE_EVENTS_TOTAL`] events in all, before anything runs.
pub fn check_total(t: &TraceArgs, runs: usize) -> Result<(), CliError> {
    let total = t.trace_max_events.saturating_mul(runs as u64);
    if t.trace.is_none() || total <= MAX_TRACE_EVENTS_TOTAL {
        return Ok(());
    }
    Err(CliError::Input(format!(
        "--trace-max-events {}: {runs} variants could hold {total} events in all; at most {MAX_TRACE_EVENTS_TOTAL} (each variant holds its own): give at most {}, or trace fewer variants (--variant on run)",
        t.trace_max_events,
        MAX_TRACE_EVENTS_TOTAL / runs as u64
    )))
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
        for n in crate::args::OUTCOMES {
            assert!(OutcomeFilter::parse(n).is_some(), "{n}");
        }
    }
}
