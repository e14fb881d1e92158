//! The textbook queues of `validate`, built in with no retries: M/M/1, M/M/c (Erlang C) and
//! M/D/1, each against its closed form for the mean wait; `open_model` and `mean_wait_of` are the
//! model and the case the replica experiments build on too.

use super::experiment::{Case, Experiment, Reference, Value, case};

use Reference::Exact;
use Value::Metric;

/// A model of open Poisson arrivals with no retries, `rest` after its `[server]` line: the
/// server's keys and any variants.
pub(super) fn open_model(name: &str, horizon: &str, rate: &str, rest: &str) -> String {
    format!(
        "name = \"{name}\"\nhorizon = \"{horizon}\"\nbucket = \"1s\"\n\
         [workload]\nkind = \"open\"\nrate = \"{rate}\"\n\
         [retry]\nmax_attempts = 1\n\
         [server]\n{rest}"
    )
}

/// An open Poisson queue with no retries: `c` workers, `service` per request.
fn queue(rate: &str, c: u32, service: &str, horizon: &str) -> String {
    let server = format!("capacity = {c}\nservice = \"{service}\"\n");
    open_model("queue", horizon, rate, &server)
}

/// Erlang C: the chance an arrival waits in M/M/c with offered load `a` (in workers).
fn erlang_c(c: u32, a: f64) -> f64 {
    let rho = a / f64::from(c);
    let (mut term, mut sum) = (1.0, 0.0);
    for k in 0..c {
        sum += term;
        term *= a / f64::from(k + 1);
    }
    let last = term / (1.0 - rho);
    last / (sum + last)
}

/// A queue built in, with no retries, against its closed form (too slow for `--quick`).
fn queueing(
    id: &'static str,
    title: &'static str,
    model: fn() -> String,
    seeds: u32,
    cases: Vec<Case>,
) -> Experiment {
    Experiment {
        id,
        title,
        model,
        file: "(built in)",
        sets: &[],
        seeds,
        quick: false,
        cases,
    }
}

/// The mean wait in the queue against its closed form `ms`.
fn mean_wait(ms: f64) -> Case {
    mean_wait_of("queue", ms)
}

/// `variant`'s mean wait in the queue against its closed form `ms`.
pub(super) fn mean_wait_of(variant: &'static str, ms: f64) -> Case {
    case(
        variant,
        "mean wait in queue (ms)",
        Metric("mean_wait_ms"),
        Exact(ms),
    )
}

/// The experiment `mm1` (docs/validation.md).
pub(super) fn mm1() -> Experiment {
    queueing(
        "mm1",
        "M/M/1, rho = 0.5 (lambda 500/s, exp(1ms) service)",
        || queue("500/s", 1, "exp(1ms)", "600s"),
        8,
        vec![
            mean_wait(1.0).from("M/M/1: Wq = rho / (mu - lambda)"),
            case(
                "queue",
                "mean queue length",
                Metric("mean_queue_len"),
                Exact(0.5),
            )
            .from("M/M/1: Lq = rho^2 / (1 - rho)"),
        ],
    )
}

/// The experiment `mm4` (docs/validation.md).
pub(super) fn mm4() -> Experiment {
    // M/M/4 at rho = 0.75: lambda 3000/s, mu 1000/s.
    let wq = erlang_c(4, 3.0) / (4000.0 - 3000.0) * 1000.0;
    queueing(
        "mm4",
        "M/M/4, rho = 0.75 (lambda 3000/s, exp(1ms) service)",
        || queue("3000/s", 4, "exp(1ms)", "400s"),
        16,
        vec![mean_wait(wq).from("M/M/c: Wq = C(c, a) / (c mu - lambda), Erlang C")],
    )
}

/// The experiment `md1` (docs/validation.md).
pub(super) fn md1() -> Experiment {
    queueing(
        "md1",
        "M/D/1, rho = 0.6 (lambda 600/s, 1 ms service)",
        || queue("600/s", 1, "1ms", "600s"),
        8,
        vec![mean_wait(0.75).from("Pollaczek-Khinchine: Wq = rho / (2 mu (1 - rho))")],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erlang_c_matches_the_textbook() {
        // M/M/2 with a = 1: C = 1/3 (Kleinrock vol. 1, or by hand: (a^2/2!)/(1-rho) over the sum).
        assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
        assert!((erlang_c(1, 0.5) - 0.5).abs() < 1e-12);
    }
}
