//! `retrystorm rare` end to end on an M/M/1 queue at load 0.5: the same bytes on one thread or
//! two, the refusal below the floor (exit 1, with the reason), and bad `--event`/`--score`
//! naming what is allowed (exit 2).

use super::util::{out, rs, write};

/// An M/M/1 queue at load 0.5.
const MM1: &str = include_str!("../fixtures/mm1.toml");

fn rare(dir: &std::path::Path, flags: &[&str]) -> (i32, String, String) {
    let m = write(dir, "mm1.toml", MM1);
    out(rs().arg("rare").arg(&m).args(flags))
}

#[test]
fn one_job_and_two_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--event", "queue >= 7", "--until-empty", "--seeds", "3"];
    let (code, one, err) = rare(dir.path(), &[&flags[..], &["--jobs", "1"]].concat());
    assert_eq!(code, 0, "{err}");
    let (_, two, _) = rare(dir.path(), &[&flags[..], &["--jobs", "2"]].concat());
    assert_eq!(one, two);
    assert!(one.contains("over 3 independent seeds"), "{one}");
    assert!(one.contains("queue >= 2"), "{one}");
    let (_, json, _) = rare(dir.path(), &[&flags[..], &["--json", "-"]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["interval"], "seeds");
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    let p = v["probability"].as_f64().unwrap();
    assert!(v["low"].as_f64().unwrap() < p && p < v["high"].as_f64().unwrap());
}

#[test]
fn a_stage_below_the_floor_is_refused_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--event",
        "queue >= 7",
        "--until-empty",
        "--particles",
        "20",
    ];
    let (code, stdout, err) = rare(dir.path(), &flags);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        err.starts_with("error: rare: no estimate: seed 1: "),
        "{err}"
    );
    assert!(err.contains("below the floor"), "{err}");
    // A pilot refused says it was the pilot.
    let (code, _, err) = rare(dir.path(), &[&flags[..], &["--fixed-levels"]].concat());
    assert_eq!(code, 1);
    assert!(
        err.starts_with("error: rare: no estimate: the pilot run that places the levels: seed 1: "),
        "{err}"
    );
}

#[test]
fn bad_events_and_scores_name_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = rare(dir.path(), &["--event", "depth >= 3"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        "error: --event depth >= 3: no score `depth`: expected `SCORE >= N` with SCORE one of queue, in_flight, orbit, attempts and N a whole number of at least 1, or `recovered == false`"
    );
    let (code, _, err) = rare(dir.path(), &["--event", "queue >= 3", "--score", "depth"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        "error: --score depth: no score `depth`; one of queue, in_flight, orbit, attempts"
    );
    let (code, _, err) = rare(
        dir.path(),
        &["--event", "recovered == false", "--until-empty"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("does not go with --until-empty"), "{err}");
}

#[test]
fn an_event_every_run_reaches_says_brute_force_is_not_needed() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, err) = rare(dir.path(), &["--event", "queue >= 1", "--seeds", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("probability: 1.000e0"), "{stdout}");
    assert!(
        stdout.contains("brute force: not needed: every run reaches the event"),
        "{stdout}"
    );
}

/// Open arrivals at 400/s on one worker (exp 1 ms), 8 ms timeouts and up to three attempts
/// sent at once: a queue that now and then grows long enough for its callers to retry.
const RETRYING: &str = r#"name = "retrying"
horizon = "500ms"
[workload]
kind = "open"
rate = "400/s"
[retry]
max_attempts = 3
timeout = "8ms"
backoff = "immediate"
jitter = "none"
[server]
capacity = 1
service = "exp(1ms)"
"#;

fn rare_retrying(dir: &std::path::Path, flags: &[&str]) -> (i32, String, String) {
    let m = write(dir, "retrying.toml", RETRYING);
    out(rs().arg("rare").arg(&m).args(flags))
}

#[test]
fn the_orbit_as_event_and_score_gives_the_same_bytes_on_one_job_and_two() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--event", "orbit >= 6", "--seeds", "3"];
    let (code, one, err) = rare_retrying(dir.path(), &[&flags[..], &["--jobs", "1"]].concat());
    assert_eq!(code, 0, "{err}");
    let (_, two, _) = rare_retrying(dir.path(), &[&flags[..], &["--jobs", "2"]].concat());
    assert_eq!(one, two);
    assert!(one.contains("score: orbit\n"), "{one}");
    assert!(one.contains("orbit >= "), "{one}");
    let (_, again, _) = rare_retrying(dir.path(), &[&flags[..], &["--jobs", "2"]].concat());
    assert_eq!(again, one, "the same seed twice");
}

#[test]
fn excess_and_score_from_are_shown_and_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--event",
        "orbit >= 6",
        "--score",
        "queue",
        "--excess",
        "--score-from",
        "100ms",
        "--seeds",
        "3",
    ];
    let (code, one, err) = rare_retrying(dir.path(), &[&flags[..], &["--jobs", "1"]].concat());
    assert_eq!(code, 0, "{err}");
    let (_, two, _) = rare_retrying(dir.path(), &[&flags[..], &["--jobs", "2"]].concat());
    assert_eq!(one, two);
    assert!(
        one.contains("score: queue, its excess over the typical value at each time, from 100 ms"),
        "{one}"
    );
    assert!(one.contains("queue excess >= "), "{one}");
    let (_, json, _) = rare_retrying(dir.path(), &[&flags[..], &["--json", "-"]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["excess"], true);
    assert_eq!(v["score_from_ms"], 100.0);
    let (code, _, err) = rare_retrying(
        dir.path(),
        &["--event", "orbit >= 6", "--score-from", "soon"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--score-from soon: "), "{err}");
}

#[test]
fn attempts_per_second_is_a_score() {
    let dir = tempfile::tempdir().unwrap();
    // 400 intents a second: every run sends 50 attempts within a second.
    let (code, stdout, err) =
        rare_retrying(dir.path(), &["--event", "attempts >= 50", "--seeds", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("probability: 1.000e0"), "{stdout}");
}

#[test]
fn fixed_levels_come_from_a_pilot_and_give_the_same_bytes_on_one_job_and_two() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--event",
        "queue >= 7",
        "--until-empty",
        "--seeds",
        "3",
        "--fixed-levels",
    ];
    let (code, one, err) = rare(dir.path(), &[&flags[..], &["--jobs", "1"]].concat());
    assert_eq!(code, 0, "{err}");
    let (_, two, _) = rare(dir.path(), &[&flags[..], &["--jobs", "2"]].concat());
    assert_eq!(one, two);
    assert!(
        one.contains("levels: fixed by a pilot run of seed 1 ("),
        "{one}"
    );
    let (_, json, _) = rare(dir.path(), &[&flags[..], &["--json", "-"]].concat());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["fixed_levels"], true);
    let levels = v["pilot"]["levels"].as_array().unwrap().clone();
    assert!(!levels.is_empty());
    // Every seed splits at the pilot's levels; the pilot's events are in the total.
    for r in v["runs"].as_array().unwrap() {
        let used: Vec<serde_json::Value> = r["stages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| !s["level"].is_null())
            .map(|s| s["level"].clone())
            .collect();
        assert_eq!(used, levels);
    }
    let per_seed: u64 = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["events"].as_u64().unwrap())
        .sum();
    assert_eq!(
        v["events"].as_u64().unwrap(),
        per_seed + v["pilot"]["events"].as_u64().unwrap()
    );
    // Without the flag the JSON has no pilot.
    let (_, plain, _) = rare(
        dir.path(),
        &["--event", "queue >= 7", "--until-empty", "--json", "-"],
    );
    assert!(!plain.contains("pilot"), "{plain}");
}

/// `rare` on the M/M/1 queue, run in `dir` (so shard files are named relative to it).
fn rare_in(dir: &std::path::Path, flags: &[&str]) -> (i32, String, String) {
    write(dir, "mm1.toml", MM1);
    out(rs().current_dir(dir).args(["rare", "mm1.toml"]).args(flags))
}

#[test]
fn shards_merged_give_the_bytes_of_one_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let flags = [
        "--event",
        "queue >= 7",
        "--until-empty",
        "--seeds",
        "4",
        "--fixed-levels",
    ];
    let (code, table, err) = rare_in(d, &flags);
    assert_eq!(code, 0, "{err}");
    let (_, json, _) = rare_in(d, &[&flags[..], &["--json", "-"]].concat());
    for i in 1..=3 {
        let (shard, out) = (format!("{i}/3"), format!("s{i}.jsonl"));
        let (code, said, err) = rare_in(
            d,
            &[&flags[..], &["--shard", &shard, "--out", &out]].concat(),
        );
        assert_eq!(code, 0, "{err}");
        assert!(said.contains(&format!("rare shard {i}/3")), "{said}");
    }
    // Shard 3/3 (the third seed, run 2) left out: named, and nothing estimated.
    let (code, _, err) = out(rs().current_dir(d).args([
        "merge",
        "s1.jsonl",
        "s2.jsonl",
        "-o",
        "part.jsonl",
        "--partial",
    ]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = out(rs().current_dir(d).args(["rare", "part.jsonl"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("3 of 4 runs present; 1 missing: runs 2"),
        "{err}"
    );
    assert!(err.contains("merge every shard"), "{err}");
    let (code, _, err) = out(rs()
        .current_dir(d)
        .args(["merge", "s3.jsonl", "s1.jsonl", "s2.jsonl", "-o", "m.jsonl"]));
    assert_eq!(code, 0, "{err}");
    let (_, merged_table, _) = out(rs().current_dir(d).args(["rare", "m.jsonl"]));
    assert_eq!(merged_table, table);
    let (_, merged_json, _) = out(rs().current_dir(d).args(["rare", "m.jsonl", "--json", "-"]));
    assert_eq!(merged_json, json);
    // The file fixes the study: a flag that would change it is refused.
    let (code, _, err) = out(rs()
        .current_dir(d)
        .args(["rare", "m.jsonl", "--particles", "50"]));
    assert_eq!(code, 2);
    assert!(err.contains("m.jsonl is a sweep file: its header fixes the model, the study and the seeds, so --particles cannot apply"), "{err}");
    // A rare study's file is not a sweep of plain runs, nor the other way round.
    let (code, _, err) = out(rs().current_dir(d).args(["report", "m.jsonl"]));
    assert_eq!(code, 2);
    assert!(err.contains("m.jsonl:1: a `rare` study's file"), "{err}");
}

#[test]
fn shards_of_other_studies_are_not_merged_and_a_shard_needs_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = ["--event", "queue >= 7", "--until-empty", "--seeds", "2"];
    let (code, _, err) = rare_in(d, &[&base[..], &["--shard", "1/2"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("give --out SHARD.jsonl"), "{err}");
    let (code, _, err) = rare_in(
        d,
        &[&base[..], &["--shard", "3/3", "--out", "x.jsonl"]].concat(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("the study has 2 seeds, so this shard would have none"),
        "{err}"
    );
    rare_in(
        d,
        &[&base[..], &["--shard", "1/2", "--out", "a.jsonl"]].concat(),
    );
    let other = ["--event", "queue >= 6", "--until-empty", "--seeds", "2"];
    rare_in(
        d,
        &[&other[..], &["--shard", "2/2", "--out", "b.jsonl"]].concat(),
    );
    let (code, _, err) = out(rs()
        .current_dir(d)
        .args(["merge", "a.jsonl", "b.jsonl", "-o", "m.jsonl"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("b.jsonl is not a shard of the same sweep as a.jsonl (its rare study differs"),
        "{err}"
    );
    let (code, _, err) = out(rs().current_dir(d).args(["rare", "m.jsonl"]));
    assert_ne!(code, 0, "{err}");
    // No --event for a model: said what to give.
    let (code, _, err) = rare_in(d, &["--seeds", "2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--event is needed"), "{err}");
}
