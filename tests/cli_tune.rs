//! `retrystorm tune` end to end on a small model where the answers are known.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

const MODEL: &str = r#"horizon = "20s"
[workload]
kind = "open"
rate = "200/s"
[retry]
max_attempts = 3
timeout = "1s"
backoff = "exponential"
jitter = "full"
base = "10ms"
[server]
capacity = 4
service = "exp(5ms)"
fail = 0.3
"#;

fn model(dir: &Path) -> PathBuf {
    let p = dir.join("t.toml");
    std::fs::write(&p, MODEL).unwrap();
    p
}

fn tune(m: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::cargo_bin("retrystorm")
        .unwrap()
        .arg("tune")
        .arg(m)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_best_by_construction_is_recommended_with_a_snippet() {
    // Every retry is extra load: one attempt has amplification 1, the least possible.
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (code, out, err) = tune(
        &m,
        &[
            "--vary",
            "retry.max_attempts=1,2,3,4",
            "--minimize",
            "amplification",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("recommended: #1 retry.max_attempts=1"),
        "{out}"
    );
    assert!(
        out.contains("every decision made at 95% confidence"),
        "{out}"
    );
    assert!(out.contains("[retry]\nmax_attempts = 1\n"), "{out}");
}

#[test]
fn a_near_tie_is_reported_open_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let args = [
        "--vary",
        "retry.base=10ms,10100us",
        "--minimize",
        "completion_ms.p99",
        "--indifference",
        "0.001",
        "--budget",
        "40",
        "--json",
        "-",
    ];
    let (code, out, err) = tune(&m, &args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["resolved"], false, "{out}");
    assert_eq!(v["open"], serde_json::json!([[1, 2]]), "{out}");
    assert!(v["runs"].as_u64().unwrap() <= 40);
}

#[test]
fn an_unmeetable_constraint_exits_1_naming_the_closest() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (code, out, err) = tune(
        &m,
        &[
            "--vary",
            "retry.max_attempts=1,2,3,4",
            "--minimize",
            "amplification",
            "--constraint",
            "failed < 1",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("closest: #4 retry.max_attempts=4"), "{out}");
    assert!(err.contains("no candidate meets every constraint"), "{err}");
}

#[test]
fn bad_names_are_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (code, _, err) = tune(&m, &["--vary", "retry.base=1ms,2ms", "--minimize", "p99"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `completion_ms.p99`"), "{err}");
    let (code, _, err) = tune(
        &m,
        &[
            "--vary",
            "retry.base=1ms,2ms",
            "--minimize",
            "amplification",
            "--constraint",
            "dupes == 0",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("unknown metric `dupes`"), "{err}");
    let (code, _, err) = tune(&m, &["--vary", "retry.base=1ms,2ms"]);
    assert_eq!(code, 2);
    assert!(err.contains("needs an objective"), "{err}");
}

#[test]
fn results_and_pareto_chart_are_the_same_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let run = |jobs: &str, svg: &Path| {
        let svg = svg.to_str().unwrap().to_string();
        let (code, out, err) = tune(
            &m,
            &[
                "--vary",
                "retry.max_attempts=1..6:1",
                "--vary",
                "retry.base=5ms..200ms:5ms",
                "--candidates",
                "8",
                "--minimize",
                "amplification",
                "--maximize",
                "goodput_per_s",
                "--budget",
                "80",
                "--jobs",
                jobs,
                "--json",
                "-",
                "--svg",
                &svg,
            ],
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    let (a, b) = (dir.path().join("a.svg"), dir.path().join("b.svg"));
    let one = run("1", &a);
    assert_eq!(one, run("2", &b));
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["sampling"], "latin-hypercube");
    assert!(!v["pareto"].as_array().unwrap().is_empty());
    let svg = std::fs::read_to_string(&a).unwrap();
    assert_eq!(svg, std::fs::read_to_string(&b).unwrap());
    assert!(svg.contains("Pareto front"), "{svg:.200}");
}

fn sensitivity(m: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::cargo_bin("retrystorm")
        .unwrap()
        .arg("sensitivity")
        .arg(m)
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn sensitivity_ranks_the_parameter_that_plainly_dominates_first() {
    // max_attempts multiplies the load of failing requests; the backoff cap is never reached
    // (base 10 ms, at most 3 retries), so on common seeds it changes nothing at all.
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let svg = dir.path().join("bars.svg");
    let args = [
        "--vary",
        "retry.cap=10s,20s,30s,40s",
        "--vary",
        "retry.max_attempts=1..4:1",
        "--metric",
        "amplification",
        "--trajectories",
        "6",
        "--seeds",
        "2",
        "--json",
        "-",
        "--svg",
        svg.to_str().unwrap(),
    ];
    let (code, out, err) = sensitivity(&m, &args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let p = v["parameters"].as_array().unwrap();
    assert_eq!(p[0]["key"], "retry.max_attempts", "{out}");
    assert!(p[0]["mu_star"].as_f64().unwrap() > 0.3, "{out}");
    assert_eq!(p[1]["key"], "retry.cap");
    assert_eq!(p[1]["mu_star"].as_f64().unwrap(), 0.0, "{out}");
    assert_eq!(p[0]["effects"], 6);
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("retry.max_attempts") && chart.contains("μ*"));
    // The same bytes on one thread, and a table without --json.
    let mut one: Vec<&str> = args.to_vec();
    one.extend(["--jobs", "1"]);
    let svg1 = dir.path().join("bars1.svg");
    let n = one.len();
    one[n - 3] = svg1.to_str().unwrap();
    assert_eq!(sensitivity(&m, &one).1, out);
    assert_eq!(std::fs::read_to_string(&svg1).unwrap(), chart);
    let (code, table, _) = sensitivity(&m, &args[..10]);
    assert_eq!(code, 0);
    let first = table.lines().find(|l| l.starts_with("1 ")).unwrap_or("");
    assert!(first.contains("retry.max_attempts"), "{table}");
}

#[test]
fn sensitivity_refuses_a_parameter_without_two_levels() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (code, _, err) = sensitivity(
        &m,
        &["--vary", "retry.base=10ms", "--metric", "amplification"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("at least two values"), "{err}");
    let (code, _, err) = sensitivity(&m, &["--metric", "amplification"]);
    assert_eq!(code, 2);
    assert!(err.contains("--vary"), "{err}");
    let (code, _, err) = sensitivity(&m, &["--vary", "retry.base=1ms,2ms", "--metric", "p99"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean"), "{err}");
}

#[test]
fn a_sharded_first_stage_merged_gives_the_unsharded_search() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let search = [
        "--vary",
        "retry.max_attempts=1,2,3",
        "--vary",
        "retry.base=10ms,50ms",
        "--minimize",
        "amplification",
        "--first-stage",
        "3",
    ];
    let with = |extra: &[&str]| {
        let mut v: Vec<&str> = search.to_vec();
        v.extend(extra);
        tune(&m, &v)
    };
    let (code, whole, err) = with(&["--json", "-"]);
    assert_eq!(code, 0, "{err}");
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (s1, s2, all) = (p("s1.jsonl"), p("s2.jsonl"), p("all.jsonl"));
    for (i, s) in [("1/2", &s1), ("2/2", &s2)] {
        let (code, out, err) = with(&["--shard", i, "--out", s]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("--first-stage-from"), "{out}");
    }
    // One shard alone is refused, naming what is missing.
    let (code, _, err) = with(&["--first-stage-from", &s1]);
    assert_eq!(code, 2);
    assert!(
        err.contains("9 runs of the first stage's 18 missing"),
        "{err}"
    );
    let o = Command::cargo_bin("retrystorm")
        .unwrap()
        .args(["merge", &s1, &s2, "-o", &all])
        .output()
        .unwrap();
    assert!(o.status.success());
    let (code, resumed, err) = with(&["--first-stage-from", &all, "--json", "-"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(resumed, whole);
    // Another search's file is refused.
    let (code, _, err) = tune(
        &m,
        &[
            "--vary",
            "retry.max_attempts=1,2",
            "--minimize",
            "amplification",
            "--first-stage",
            "3",
            "--first-stage-from",
            &all,
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("another search"), "{err}");
    let (code, _, err) = with(&["--shard", "1/2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--out"), "{err}");
}

#[test]
fn halving_keeps_the_best_drops_the_clearly_worse_at_stage_1_for_any_thread_count() {
    // With 30% failures every extra attempt adds load: one attempt is best by construction,
    // four or more are clearly worse and must go at the first stage.
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let run = |jobs: &str| {
        let (code, out, err) = tune(
            &m,
            &[
                "--vary",
                "retry.max_attempts=1..6:1",
                "--vary",
                "retry.base=10ms,50ms,100ms",
                "--minimize",
                "amplification",
                "--halving",
                "--jobs",
                jobs,
                "--json",
                "-",
            ],
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["procedure"], "successive-halving+kim-nelson-kn");
    let best = v["best"].as_u64().unwrap() as usize;
    let cands = v["candidates"].as_array().unwrap();
    let attempts = |c: &serde_json::Value| c["params"][0][1].as_str().unwrap().to_string();
    assert_eq!(attempts(&cands[best - 1]), "1", "{one}");
    let mut dropped = 0;
    for c in cands {
        if attempts(c).parse::<u32>().unwrap() >= 4 {
            assert_eq!(c["status"], "halved", "{c}");
            assert_eq!(c["halving_stage"], 1, "{c}");
            assert_eq!(c["seeds"], 2, "{c}");
            dropped += 1;
        }
    }
    assert_eq!(dropped, 9);
    // Fewer runs than KN's first stage alone over all 18 candidates.
    assert!(v["runs"].as_u64().unwrap() < 18 * 5, "{}", v["runs"]);
}
