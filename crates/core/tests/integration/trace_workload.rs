//! `workload.kind = "trace"`: arrivals replayed from a parsed trace, at `speed`, deterministic.

use retrystorm_core::load::{LoadError, Override, load, load_resolved};
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::Summary;

/// A model replaying `trace` (the text of `t.csv`), with `sets`.
fn model(base: &str, trace: &'static str, sets: &[&str]) -> Result<Model, LoadError> {
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let resolve = move |r: &str| match r {
        "trace:t.csv" => Ok(trace.to_string()),
        _ => Err(format!("no file {r}")),
    };
    load_resolved("dir/m.toml", base, &sets, &resolve).map(|s| s.base)
}

/// [`BASE`] over `trace`, keyed per intent with the dedupe store `store`, and the sets `more`.
fn keyed(store: &str, trace: &'static str, more: &[&str]) -> Model {
    let store = format!("idempotency.store=\"{store}\"");
    let mut sets = vec![r#"idempotency.key="per-intent""#, store.as_str()];
    sets.extend(more);
    model(BASE, trace, &sets).unwrap()
}

fn run(m: &Model) -> Summary {
    run_model(m, 1, &mut |_| {}).summary
}

const BASE: &str = r#"
[workload]
kind = "trace"
trace = "t.csv"
[server]
capacity = 1
service = "100ms"
"#;

/// Epoch seconds as an access log has them: offsets 0, 50 ms, 2.25 s.
const THREE: &str = "timestamp\n1764806410\n1764806410.05\n1764806412.25\n";

#[test]
fn arrivals_come_at_the_traces_times() {
    let s = run(&model(BASE, THREE, &[]).unwrap());
    assert_eq!((s.intents, s.succeeded, s.arrivals), (3, 3, 3));
    // The last arrival is 2.25 s after the first; the second waited 50 ms for the worker.
    assert_eq!(s.last_arrival_ms, 2250.0);
    assert!((s.tiers[0].mean_wait_ms - 50.0 / 3.0).abs() < 1e-9, "{s:?}");
    assert_eq!(s.completion_ms.max, 150.0);
    assert!(!s.truncated);
}

#[test]
fn speed_divides_the_offsets() {
    let s = run(&model(BASE, THREE, &["workload.speed=2.0"]).unwrap());
    assert_eq!(s.last_arrival_ms, 1125.0);
    // 25 ms apart now: the second waits 75 ms.
    assert!((s.tiers[0].mean_wait_ms - 75.0 / 3.0).abs() < 1e-9, "{s:?}");
    let slow = run(&model(BASE, THREE, &["workload.speed=0.5"]).unwrap());
    assert_eq!(slow.last_arrival_ms, 4500.0);
}

#[test]
fn a_replay_is_the_same_every_run_and_rows_are_replayed_in_time_order() {
    let trace = "timestamp,class\n3.5,a\n0.25,b\n1.0,a\n1.0,b\n2.0,c\n";
    let sets = ["server.fail=0.3", "retry.max_attempts=3"];
    let a = run(&model(BASE, trace, &sets).unwrap());
    let b = run(&model(BASE, trace, &sets).unwrap());
    assert_eq!(a, b);
    assert_eq!(a.intents, 5);
    // Offsets from 0.25 s: the last row in time is 3.5 s, 3.25 s after the first.
    assert!(a.last_arrival_ms >= 3250.0, "{}", a.last_arrival_ms);
}

#[test]
fn each_class_is_a_client_process() {
    // Four requests at once: a per-client limiter of one token lets one per process through.
    let limited = [
        "server.rate_limit.rate=1/s",
        "server.rate_limit.burst=1",
        r#"server.rate_limit.scope="client""#,
        "retry.max_attempts=1",
    ];
    let classes = "timestamp,class\n0,a\n0,a\n0,b\n0,b\n";
    let s = run(&model(BASE, classes, &limited).unwrap());
    assert_eq!((s.rate_limited, s.succeeded), (2, 2));
    // Without a class column the arrivals go round-robin over `processes`.
    let bare = "timestamp\n0\n0\n0\n0\n";
    let one = run(&model(BASE, bare, &limited).unwrap());
    assert_eq!(one.rate_limited, 3);
    let mut four = limited.to_vec();
    four.push("workload.processes=4");
    assert_eq!(run(&model(BASE, bare, &four).unwrap()).rate_limited, 0);
}

#[test]
fn bad_traces_and_keys_are_refused_with_their_place() {
    let e = model(BASE, "timestamp\n1\nlater\n", &[]).unwrap_err();
    assert_eq!(
        (e.origin.as_str(), e.line, e.column),
        ("dir/t.csv", Some(3), Some(1))
    );
    let e = model(BASE, "timestamp,host\n1,a\n", &[]).unwrap_err();
    assert_eq!(
        (e.line, e.column, e.field.as_deref()),
        (Some(1), Some(11), Some("host"))
    );
    let e = model(BASE, THREE, &["workload.speed=0"]).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("workload.speed"));
    let e = model(BASE, THREE, &[r#"workload.trace="other.csv""#]).unwrap_err();
    assert!(
        e.to_string()
            .contains("workload.trace: no file trace:other.csv"),
        "{e}"
    );
    let e = model(&BASE.replace("trace = \"t.csv\"\n", ""), THREE, &[]).unwrap_err();
    assert!(e.to_string().contains("needs the file of arrivals"), "{e}");
    let e = model(
        "[workload]\nkind = \"open\"\ntrace = \"t.csv\"\n",
        THREE,
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("has no effect"), "{e}");
    // The plain loader reads no files.
    let e = load("m.toml", BASE, &[]).unwrap_err();
    assert!(e.to_string().contains("reads no files"), "{e}");
}

/// The same payment submitted twice, 2 s apart (a user who pressed "pay" again), and a second
/// payment once: the trace's `key` column says which rows are one intent.
const RESUBMITTED: &str = "timestamp,key\n0,pay-1\n0.5,pay-2\n2,pay-1\n";

#[test]
fn rows_sharing_a_key_are_one_intent_the_dedupe_store_answers_the_second() {
    let s = run(&keyed("record-before", RESUBMITTED, &[]));
    // Three rows, two intents: pay-1's second row is answered from the store.
    assert_eq!((s.intents, s.keys, s.succeeded), (3, 2, 3), "{s:?}");
    assert_eq!((s.effects, s.replayed), (2, 1), "{s:?}");
    assert_eq!(
        (s.applied_once, s.duplicated, s.lost, s.phantom),
        (2, 0, 0, 0)
    );
    // Without the store both rows of pay-1 run its effect: that key is applied twice.
    let bare = run(&model(BASE, RESUBMITTED, &[]).unwrap());
    assert_eq!((bare.effects, bare.replayed), (3, 0), "{bare:?}");
    assert_eq!((bare.keys, bare.applied_once, bare.duplicated), (2, 1, 1));
    // A fresh key per attempt never matches another row's: the store cannot help.
    let per_attempt = [
        r#"idempotency.key="per-attempt""#,
        r#"idempotency.store="record-before""#,
    ];
    let s = run(&model(BASE, RESUBMITTED, &per_attempt).unwrap());
    assert_eq!((s.effects, s.duplicated, s.replayed), (3, 1, 0), "{s:?}");
}

#[test]
fn concurrent_rows_of_one_key_wait_or_get_409_as_the_store_mode_says() {
    // pay-1 twice at once: the second arrives while the first is in service (100 ms) on the
    // other worker.
    let trace = "timestamp,key\n0,pay-1\n0.01,pay-1\n";
    let s = run(&keyed("record-before", trace, &["server.capacity=2"]));
    assert_eq!(
        (s.keys, s.effects, s.applied_once, s.succeeded),
        (1, 1, 1, 2),
        "{s:?}"
    );
    let conflict = [
        "server.capacity=2",
        "retry.max_attempts=3",
        r#"retry.base="200ms""#,
    ];
    let s = run(&keyed("record-before-409", trace, &conflict));
    // The duplicate is refused with 409, retries after the first committed, and is replayed.
    assert_eq!((s.conflicts, s.replayed, s.effects), (1, 1, 1), "{s:?}");
    assert_eq!((s.applied_once, s.duplicated), (1, 0));
    // record-after: the key is written only after the effect, so the concurrent duplicate
    // runs it again (the article's bug), now across rows of the log.
    let s = run(&keyed("record-after", trace, &["server.capacity=2"]));
    assert_eq!((s.effects, s.duplicated), (2, 1), "{s:?}");
}

#[test]
fn keyed_classes_add_up_to_the_keys_and_distinct_keys_change_nothing() {
    let rows = "timestamp,key\n0,a\n0.02,b\n0.04,a\n0.06,c\n0.08,a\n0.1,\n0.12,b\n";
    let sets = [
        "server.fail=0.3",
        "retry.max_attempts=3",
        "network.response_loss=0.2",
        r#"retry.timeout="300ms""#,
    ];
    let s = run(&keyed("record-before", rows, &sets));
    assert_eq!((s.intents, s.keys), (7, 4));
    assert_eq!(
        s.lost + s.applied_once + s.duplicated + s.outcome_pending,
        s.keys
    );
    // Every key distinct: each row its own intent, the same run as without the column.
    let distinct = "timestamp,key\n0,a\n0.02,b\n0.04,c\n0.06,d\n";
    let plain = "timestamp\n0\n0.02\n0.04\n0.06\n";
    let mut k = run(&keyed("record-before", distinct, &sets));
    let p = run(&keyed("record-before", plain, &sets));
    assert_eq!(k.keys, 4);
    k.keys = 0;
    assert_eq!(k, p);
}
