//! `retrystorm map` end to end on a model where the answer is known: open load near capacity,
//! a load spike, 3 s timeouts, retries at once (`models/metastable-spike.toml`, cut to 40 s).
//! A 0.1 s spike is harmless whatever the clients do; after a 2 s spike clients without
//! retries recover and clients with three immediate retries keep the server down.

use super::util::{bin, in_temp, out, racing, rs};
use std::path::{Path, PathBuf};

const MODEL: &str = r#"name = "spike"
seed = 1
horizon = "40s"
bucket = "100ms"
[workload]
kind = "open"
rate = "750/s"
processes = 20
schedule = [{ at = "10s", rate = "2500/s" }, { at = "12s", rate = "750/s" }]
[retry]
max_attempts = 4
timeout = "3s"
backoff = "immediate"
[server]
capacity = 10
service = "exp(10ms)"
slowdown = 0.01
[network]
latency = "1ms"
"#;

/// [`MODEL`] in a temporary folder: the folder and the model's path.
fn model() -> (tempfile::TempDir, PathBuf) {
    in_temp("spike.toml", MODEL)
}

fn retrystorm(args: &[&str]) -> (i32, String, String) {
    out(rs().args(args))
}

const AXES: [&str; 4] = [
    "--vary",
    "workload.schedule[1].at=10100ms,12s",
    "--vary",
    "retry.max_attempts=1,4",
];

/// `retrystorm map FILE ARGS...`.
fn map_file(file: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["map", file.to_str().unwrap()];
    all.extend(args);
    retrystorm(&all)
}

/// [`map_file`] over [`AXES`] with three seeds, recovery within 10 s.
fn map(m: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = AXES.to_vec();
    args.extend(["--seeds", "3", "--within", "10s"]);
    args.extend(extra);
    map_file(m, &args)
}

#[test]
fn only_the_long_spike_with_immediate_retries_stays_down() {
    let (_dir, m) = model();
    let (code, out, err) = map(&m, &["--json", "-"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kind"], "map");
    assert_eq!(v["within_ms"], 10000.0);
    let cells = v["cells"].as_array().unwrap();
    let verdicts: Vec<(&str, &str, &str)> = cells
        .iter()
        .map(|c| {
            (
                c["x"].as_str().unwrap(),
                c["y"].as_str().unwrap(),
                c["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("10100ms", "1", "recovers"),
            ("10100ms", "4", "recovers"),
            ("12s", "1", "recovers"),
            ("12s", "4", "stays down"),
        ],
        "{out}"
    );
    assert_eq!(cells[3]["share_down"], 1.0);
    assert_eq!(cells[3]["median_recovery_ms"], serde_json::Value::Null);
    assert!(cells[2]["median_recovery_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(cells[0]["runs"], 3);
    // The table says the same.
    let (_, table, _) = map(&m, &[]);
    assert!(
        table.contains("1 of 4 cells stay down in every run"),
        "{table}"
    );
    assert!(table.contains("never"), "{table}");
}

#[test]
fn the_map_is_the_same_for_any_thread_count_and_from_merged_shards() {
    let (dir, m) = model();
    let svg = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (a, b) = (svg("a.svg"), svg("b.svg"));
    let (code, one, err) = map(&m, &["--jobs", "1", "--json", "-", "--svg", &a]);
    assert_eq!(code, 0, "{err}");
    let (_, two, _) = map(&m, &["--jobs", "2", "--json", "-", "--svg", &b]);
    assert_eq!(one, two);
    let chart = std::fs::read_to_string(&a).unwrap();
    assert_eq!(chart, std::fs::read_to_string(&b).unwrap());
    assert!(chart.contains("100.0%") && chart.contains("stay down"));

    let s1 = dir.path().join("s1.jsonl");
    let s2 = dir.path().join("s2.jsonl");
    let all = dir.path().join("all.jsonl");
    for (i, s) in [("1/2", &s1), ("2/2", &s2)] {
        let (code, out, err) = map(&m, &["--shard", i, "--out", s.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("retrystorm merge"), "{out}");
    }
    // One shard alone is not a map.
    let (code, _, err) = map_file(&s1, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("merge every shard"), "{err}");
    let (code, _, err) = retrystorm(&[
        "merge",
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        "-o",
        all.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, merged, err) = map_file(&all, &["--within", "10s", "--json", "-"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merged, one);
    // A sweep file fixes the axes.
    let (code, _, err) = map_file(&all, &["--vary", "retry.base=1ms,2ms"]);
    assert_eq!(code, 2);
    assert!(err.contains("is a sweep file"), "{err}");
}

#[test]
fn another_metric_is_mapped_by_its_mean() {
    let (_dir, m) = model();
    let mut args = AXES.to_vec();
    args.extend(["--metric", "amplification", "--json", "-"]);
    let (code, out, err) = map_file(&m, &args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cells = v["cells"].as_array().unwrap();
    // One attempt per intent is amplification 1 exactly.
    assert_eq!(cells[0]["mean"], 1.0);
    assert!(cells[3]["mean"].as_f64().unwrap() > 2.0, "{out}");
}

#[test]
fn bad_axes_and_models_without_a_trigger_exit_2() {
    let (dir, m) = model();
    // Two axes that are fine in themselves; `then` adds what is wrong after them.
    const RETRY_AXES: [&str; 4] = [
        "--vary",
        "retry.max_attempts=1,4",
        "--vary",
        "retry.base=1ms,2ms",
    ];
    let then = |extra: &[&'static str]| [&RETRY_AXES[..], extra].concat();
    for (args, says) in [
        (vec!["--vary", "retry.max_attempts=1,4"], "two --vary axes"),
        (then(&["--vary", "retry.cap=1s,2s"]), "got 3"),
        (
            vec!["--vary", "retry.max_attempts", "--vary", "retry.base=1ms"],
            "KEY=RANGE_OR_LIST",
        ),
        (
            vec![
                "--vary",
                "retry.max_atempts=1,2",
                "--vary",
                "retry.base=1ms,2ms",
            ],
            "max_atempts",
        ),
        (then(&["--within", "soon"]), "--within soon"),
        (
            then(&["--metric", "amplification", "--within", "1s"]),
            "--within",
        ),
        (then(&["--shard", "1/2"]), "--out"),
        (then(&["--metric", "p99"]), "did you mean"),
        (
            vec![
                "--vary",
                "retry.max_attempts=1..101:1",
                "--vary",
                "retry.base=1ms..101ms:1ms",
            ],
            "a map of 10201 cells",
        ),
    ] {
        let (code, out, err) = map_file(&m, &args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let calm = dir.path().join("calm.toml");
    std::fs::write(&calm, MODEL.replace("schedule = [", "# schedule = [")).unwrap();
    let (code, _, err) = map_file(&calm, &RETRY_AXES);
    assert_eq!(code, 2);
    assert!(err.contains("has none"), "{err}");
}

#[test]
fn two_shards_given_one_out_write_it_once() {
    // Claimed before the runs (created exclusively and locked), as `tune --shard --out`: of two
    // shards started at once with one --out, one writes and the other exits 2, so no shard is
    // silently lost.
    let (dir, m) = model();
    let o = dir.path().join("o.jsonl");
    let shards = ["1/2", "2/2"].map(|i| {
        let mut c = std::process::Command::new(bin());
        c.args(["map", m.to_str().unwrap()]).args(AXES);
        c.args(["--seeds", "3", "--within", "10s", "--shard", i, "--out"]);
        c.arg(&o);
        c
    });
    let refusals = [
        "the file exists; a shard's runs go to a new file",
        "another command is writing this file",
    ];
    assert_eq!(racing(shards, &refusals), 1);
    // The file a shard wrote is kept: a rerun is refused and leaves it as it was.
    let before = std::fs::read(&o).unwrap();
    let (code, _, err) = map(&m, &["--shard", "1/2", "--out", o.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--out"), "{err}");
    assert_eq!(std::fs::read(&o).unwrap(), before);
}
