//! The engine's draws along a path of three tiers (`sim/draws.rs`): every stream is keyed by the
//! intent and the attempt numbers along its path, never by event order, so a change of the top's
//! backoff moves each top attempt in time but leaves what happens below it (latencies, service
//! times, failures, the retries of the tiers' clients) the same, shifted. A traced run is the
//! untraced one.

use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::time::Duration;
use retrystorm_core::trace::{Step, TraceEvent, TraceOptions};
use retrystorm_core::{run_model, run_model_traced};

const STACK: &str = r#"
name = "three tiers"
[workload]
clients = 40
[retry]
max_attempts = 4
jitter = "full"
base = "100ms"
cap = "2s"
[network]
latency = "exp(1ms)"
[[tier]]
name = "gateway"
server = { service = "exp(1ms)" }
retry = { max_attempts = 3, base = "10ms", cap = "1s" }
network = { latency = "exp(1ms)" }
[[tier]]
name = "service"
server = { service = "exp(2ms)" }
retry = { max_attempts = 2, base = "10ms", cap = "1s" }
network = { latency = "1ms" }
[server]
service = "exp(5ms)"
fail = 0.6
"#;

fn stack() -> Model {
    load("stack.toml", STACK, &[]).unwrap().base
}

/// One row per step below or at a top attempt, timed from that attempt's send: everything but
/// the top caller's own backoff and settling, which the policy change is meant to change.
type Row = (u8, u16, Step, Option<String>, u64);

/// Each intent's top attempts, each as the rows of what it caused on the path.
fn subtrees(m: &Model) -> Vec<Vec<Vec<Row>>> {
    let opt = TraceOptions {
        intents: 40,
        outcome: None,
        max_events: 1_000_000,
    };
    let (_, log) = run_model_traced(m, 7, &mut |_| {}, opt);
    assert_eq!(log.intents.len(), 40, "every intent traced");
    log.intents
        .iter()
        .map(|events| {
            let mut attempts: Vec<Vec<Row>> = Vec::new();
            let mut t0 = 0;
            for e in events {
                let top_own = e.hop == 0
                    && matches!(
                        e.event,
                        Step::Start | Step::Backoff | Step::Settled | Step::Final
                    );
                if top_own {
                    continue;
                }
                if e.hop == 0 && e.event == Step::Send {
                    t0 = e.time_ns;
                    attempts.push(Vec::new());
                }
                let class = e.class.map(|c| format!("{c:?}"));
                let row = (e.hop, e.attempt, e.event, class, e.time_ns - t0);
                attempts.last_mut().expect("a send first").push(row);
            }
            attempts
        })
        .collect()
}

fn count(rows: &[Vec<Vec<Row>>], f: impl Fn(&Row) -> bool) -> usize {
    rows.iter().flatten().flatten().filter(|r| f(r)).count()
}

#[test]
fn a_slower_top_backoff_leaves_every_tier_below_drawing_the_same() {
    let a = stack();
    let mut b = stack();
    b.retry.base = Duration::from_millis(700);
    let (sa, sb) = (subtrees(&a), subtrees(&b));
    // The model exercises what the test is about: retries at every hop and top retries.
    for hop in 0..3u8 {
        let retries = count(&sa, |r| r.0 == hop && r.1 > 0 && r.2 == Step::Send);
        assert!(retries > 0, "hop {hop} retries");
    }
    assert_eq!(sa, sb, "the same subtrees below every top attempt");
    // And the top attempts did move: the change is not a no-op.
    let sends = |m: &Model| {
        let opt = TraceOptions {
            intents: 40,
            outcome: None,
            max_events: 1_000_000,
        };
        let (_, log) = run_model_traced(m, 7, &mut |_| {}, opt);
        log.events()
            .filter(|e| e.hop == 0 && e.event == Step::Send && e.attempt > 0)
            .map(|e| e.time_ns)
            .collect::<Vec<_>>()
    };
    assert_ne!(sends(&a), sends(&b));
}

#[test]
fn a_traced_run_of_three_tiers_is_the_untraced_run() {
    let m = stack();
    let plain = run_model(&m, 11, &mut |_| {});
    let (traced, log) = run_model_traced(&m, 11, &mut |_| {}, TraceOptions::default());
    assert_eq!(
        serde_json::to_string(&plain.summary).unwrap(),
        serde_json::to_string(&traced.summary).unwrap()
    );
    let applied: usize = log
        .events()
        .filter(|e: &&TraceEvent| e.event == Step::Applied)
        .count();
    assert_eq!(
        applied as u64, plain.summary.effects,
        "all 40 intents traced"
    );
}
