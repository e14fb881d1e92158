//! `--trace`: the event history of a few intents as JSON Lines. The schema of a line,
//! the outcome filter really returning intents applied twice, the bounds, the same bytes across
//! runs, and results unchanged by tracing.

use super::outputs::HERD;
use super::util::{out, rs};
use serde_json::Value;
use std::path::Path;

const THREE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models/three-clients.toml");

fn run_ok(args: &[&str]) -> (String, String) {
    let o = rs().args(args).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(o.status.success(), "{args:?} failed: {err}");
    (out, err)
}

fn lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// Each intent's events, by (variant, intent), in file order.
fn by_intent(events: &[Value]) -> Vec<((String, u64), Vec<&Value>)> {
    let mut out: Vec<((String, u64), Vec<&Value>)> = Vec::new();
    for e in events {
        let k = (
            e["variant"].as_str().unwrap().to_string(),
            e["intent"].as_u64().unwrap(),
        );
        match out.last_mut() {
            Some((last, v)) if *last == k => v.push(e),
            _ => {
                assert!(
                    out.iter().all(|(seen, _)| *seen != k),
                    "{k:?}'s events are not together"
                );
                out.push((k, vec![e]));
            }
        }
    }
    out
}

#[test]
fn every_line_has_the_documented_fields() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.jsonl");
    let ps = p.to_str().unwrap();
    run_ok(&["compare", THREE, "--trace", ps, "--trace-intents", "5"]);
    let events = lines(&p);
    assert!(!events.is_empty());
    let steps = [
        "start",
        "send",
        "request_lost",
        "arrive",
        "serve",
        "applied",
        "dropped",
        "respond",
        "response_lost",
        "result",
        "late_reply",
        "backoff",
        "settled",
        "final",
    ];
    for e in &events {
        let o = e.as_object().unwrap();
        for k in ["variant", "time_ns", "intent", "hop", "attempt", "event"] {
            assert!(o.contains_key(k), "{e} has no {k}");
        }
        let step = e["event"].as_str().unwrap();
        assert!(steps.contains(&step), "{step}");
        if ["respond", "result", "settled"].contains(&step) {
            assert!(e["class"].is_string(), "{e}");
        }
        if step == "backoff" {
            assert!(e["delay_ns"].is_u64(), "{e}");
        }
        if step == "final" {
            assert!(e["applied"].is_u64() && e["outcome"].is_string(), "{e}");
        }
    }
    let intents = by_intent(&events);
    // Five intents per variant, the lowest ids, each from its start to its end in time order.
    let mut variants: Vec<&str> = events
        .iter()
        .map(|e| e["variant"].as_str().unwrap())
        .collect();
    variants.dedup();
    assert!(variants.len() > 2, "{variants:?}");
    assert_eq!(intents.len(), 5 * variants.len());
    for ((_, id), evs) in &intents {
        assert!(*id < 5);
        assert_eq!(evs[0]["event"], "start");
        assert_eq!(evs.last().unwrap()["event"], "final");
        let times: Vec<u64> = evs.iter().map(|e| e["time_ns"].as_u64().unwrap()).collect();
        assert!(times.is_sorted(), "{times:?}");
    }
}

#[test]
fn the_duplicated_filter_returns_intents_applied_twice() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("dup.jsonl");
    let ps = p.to_str().unwrap();
    run_ok(&[
        "run",
        THREE,
        "--variant",
        "retry-no-key",
        "--trace",
        ps,
        "--trace-outcome",
        "duplicated",
        "--trace-intents",
        "3",
    ]);
    let events = lines(&p);
    let intents = by_intent(&events);
    assert_eq!(intents.len(), 3);
    for (k, evs) in &intents {
        let applied = evs.iter().filter(|e| e["event"] == "applied").count();
        assert!(applied >= 2, "{k:?} applied {applied} times");
        let last = evs.last().unwrap();
        assert_eq!(last["outcome"], "duplicated");
        assert_eq!(last["applied"].as_u64(), Some(applied as u64));
        // Applied twice because a retry went out while the first attempt was still served.
        assert!(
            evs.iter()
                .any(|e| e["event"] == "send" && e["attempt"] != 0)
        );
    }
    // The variant with a key never duplicates: nothing to keep.
    let q = d.path().join("none.jsonl");
    let qs = q.to_str().unwrap();
    let (_, err) = run_ok(&[
        "run",
        THREE,
        "--variant",
        "retry-same-key",
        "--trace",
        qs,
        "--trace-outcome",
        "duplicated",
    ]);
    assert_eq!(std::fs::read_to_string(&q).unwrap(), "");
    assert!(err.contains("no intent"), "{err}");
}

#[test]
fn the_bounds_are_respected() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("b.jsonl");
    let ps = p.to_str().unwrap();
    let (_, err) = run_ok(&[
        "run",
        HERD,
        "--variant",
        "full",
        "--trace",
        ps,
        "--trace-intents",
        "1000",
        "--trace-max-events",
        "50",
    ]);
    let events = lines(&p);
    assert!(events.len() <= 50, "{} events", events.len());
    // Whole intents only: each one starts and ends.
    for (_, evs) in by_intent(&events) {
        assert_eq!(evs[0]["event"], "start");
        assert_eq!(evs.last().unwrap()["event"], "final");
    }
    assert!(err.contains("--trace-max-events"), "{err}");
    let o = rs()
        .args(["run", HERD, "--trace", ps, "--trace-max-events", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = rs()
        .args(["run", HERD, "--trace", ps, "--trace-outcome", "twice"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("duplicated"), "{err}");
}

#[test]
fn the_event_bound_holds_over_every_variant_traced() {
    // --trace-max-events is per variant; over compare's variants it may not exceed the flag's
    // maximum in all (5,000,000, about 0.9 GB), refused before anything runs.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.jsonl");
    let o = rs()
        .args(["compare", HERD, "--trace"])
        .arg(&p)
        .args(["--trace-max-events", "5000000"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--trace-max-events 5000000: 4 variants could hold 20000000 events in all; at most 5000000 (each variant holds its own): give at most 1250000"),
        "{err}"
    );
    assert!(!p.exists());
    // One variant may hold them all.
    let (code, _, err) = out(rs()
        .args(["run", HERD, "--variant", "full", "--trace"])
        .arg(&p)
        .args(["--trace-max-events", "5000000", "-q"]));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn traces_are_the_same_bytes_across_runs_and_leave_results_alone() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.jsonl"), d.path().join("b.jsonl"));
    let (ja, jb) = (d.path().join("a.json"), d.path().join("b.json"));
    let args = |t: &Path, j: &Path| {
        vec![
            "compare".to_string(),
            THREE.to_string(),
            "--trace".into(),
            t.display().to_string(),
            "--trace-outcome".into(),
            "false-failure".into(),
            "--json".into(),
            j.display().to_string(),
        ]
    };
    rs().args(args(&a, &ja)).assert().success();
    rs().args(args(&b, &jb))
        .arg("--jobs")
        .arg("1")
        .assert()
        .success();
    let ta = std::fs::read(&a).unwrap();
    assert!(!ta.is_empty());
    assert_eq!(ta, std::fs::read(&b).unwrap());
    let plain = d.path().join("plain.json");
    run_ok(&["compare", THREE, "--json", plain.to_str().unwrap()]);
    assert_eq!(std::fs::read(&ja).unwrap(), std::fs::read(&plain).unwrap());
    assert_eq!(std::fs::read(&jb).unwrap(), std::fs::read(&plain).unwrap());
}
