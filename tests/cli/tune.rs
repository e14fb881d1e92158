//! `retrystorm tune` end to end on a small model where the answers are known.

use super::util::{bin, out, racing, rs};
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

pub(crate) fn model(dir: &Path) -> PathBuf {
    let p = dir.join("t.toml");
    std::fs::write(&p, MODEL).unwrap();
    p
}

pub(crate) fn tune(m: &Path, args: &[&str]) -> (i32, String, String) {
    out(rs().arg("tune").arg(m).args(args))
}

/// One to four attempts, the least amplification wanted: one attempt is best by construction.
const FEWEST_ATTEMPTS: [&str; 4] = [
    "--vary",
    "retry.max_attempts=1,2,3,4",
    "--minimize",
    "amplification",
];

#[test]
fn the_best_by_construction_is_recommended_with_a_snippet() {
    // Every retry is extra load: one attempt has amplification 1, the least possible.
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (code, out, err) = tune(&m, &FEWEST_ATTEMPTS);
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
    let constrained = [&FEWEST_ATTEMPTS[..], &["--constraint", "failed < 1"]].concat();
    let (code, out, err) = tune(&m, &constrained);
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

/// `completion_ms` times failed intents too, so minimising it favours failing fast: a warning
/// names `success_ms`; minimising `success_ms` gets none.
#[test]
fn minimising_completion_time_warns_that_failing_fast_wins() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let flags = ["--vary", "retry.max_attempts=1,3", "--minimize"];
    let (code, _, err) = tune(&m, &[&flags[..], &["completion_ms.p99"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "warning: --minimize completion_ms.p99: completion_ms counts failed intents too"
        ) && err.contains("use success_ms.p99"),
        "{err}"
    );
    let (code, _, err) = tune(&m, &[&flags[..], &["success_ms.p99"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
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
    out(rs().arg("sensitivity").arg(m).args(args))
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
        assert!(out.contains("the first stage: shard"), "{out}");
        assert!(err.contains("--first-stage-from"), "{err}");
    }
    // One shard alone: the search runs the other's runs itself, says so, and ends the same.
    let (code, out, err) = with(&["--first-stage-from", &s1, "--json", "-"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("9 runs of the search's"), "{err}");
    assert!(err.contains("ran them here"), "{err}");
    assert_eq!(out, whole);
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
    let from = [&FIRST_STAGE[..], &["--first-stage-from", &all]].concat();
    let (code, _, err) = tune(&m, &from);
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

fn merge(inputs: &[String], out: &str) -> String {
    let o = Command::cargo_bin("retrystorm")
        .unwrap()
        .arg("merge")
        .args(inputs)
        .args(["-o", out])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs the search `flags` as a batch system would, 2 shards a stage: the first stage's shards,
/// then rounds of `--first-stage-from MERGED --shard I/2` and merging the old merged file with
/// the new shards, until a shard says the search is complete; then the final run without
/// `--shard`. Every shard is also run with `--jobs 2` and must give the same bytes. Returns the
/// final `--json` and the stages the shards ran, in order.
fn shard_to_the_end(m: &Path, dir: &Path, flags: &[&str]) -> (String, Vec<String>) {
    let p = |n: String| dir.join(n).to_str().unwrap().to_string();
    let all = p("all.jsonl".into());
    let mut stages = Vec::new();
    for round in 0.. {
        assert!(round < 40, "the rounds do not end: {stages:?}");
        let mut shards = Vec::new();
        let mut complete = 0;
        for i in 1..=2 {
            let (out1, out2) = (
                p(format!("r{round}-{i}.jsonl")),
                p(format!("j{round}-{i}.jsonl")),
            );
            let mut bytes = Vec::new();
            for (jobs, out) in [("1", &out1), ("2", &out2)] {
                let shard = format!("{i}/2");
                let mut v: Vec<&str> = flags.to_vec();
                if round > 0 {
                    v.extend(["--first-stage-from", &all]);
                }
                v.extend(["--shard", &shard, "--out", out, "--jobs", jobs]);
                let (code, stdout, err) = tune(m, &v);
                assert_eq!(code, 0, "{err}");
                if stdout.contains("the tune search is complete") {
                    assert!(err.contains("without --shard"), "{err}");
                    assert!(
                        !Path::new(out).exists(),
                        "a complete search writes no shard"
                    );
                    complete += 1;
                    continue;
                }
                assert!(err.contains("next: "), "{err}");
                if jobs == "1" {
                    let stage = stdout.split(": shard").next().unwrap().to_string();
                    if i == 1 {
                        stages.push(stage.trim_start_matches("t: tune, ").to_string());
                    }
                }
                bytes.push(std::fs::read(out).unwrap());
            }
            if bytes.len() == 2 {
                assert!(
                    bytes[0] == bytes[1],
                    "--jobs 1 and 2 differ in round {round}"
                );
                shards.push(out1);
            }
        }
        if complete > 0 {
            assert_eq!(complete, 4, "every shard of a complete search says so");
            break;
        }
        assert_eq!(shards.len(), 2);
        let mut inputs = Vec::new();
        if round > 0 {
            inputs.push(all.clone());
        }
        inputs.extend(shards);
        let said = merge(&inputs, &all);
        assert!(said.contains("of a tune search"), "{said}");
    }
    let mut v: Vec<&str> = flags.to_vec();
    v.extend(["--first-stage-from", &all, "--json", "-"]);
    let (code, out, err) = tune(m, &v);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("ran them here"), "{err}");
    (out, stages)
}

/// The `--json` of an unsharded search with `flags`, asserted equal to the same search sharded
/// through every stage, and the stages the shards ran.
fn unsharded_is_sharded(m: &Path, dir: &Path, flags: &[&str]) -> (String, Vec<String>) {
    let mut v = flags.to_vec();
    v.extend(["--json", "-"]);
    let (code, whole, err) = tune(m, &v);
    assert_eq!(code, 0, "{err}");
    let (sharded, stages) = shard_to_the_end(m, dir, flags);
    assert_eq!(sharded, whole);
    (whole, stages)
}

/// Three bases, two of them (10ms and 10.1ms) near-tied, told apart to 0.001.
const NEAR_TIE: [&str; 6] = [
    "--vary",
    "retry.base=10ms,10100us,12ms",
    "--minimize",
    "completion_ms.p99",
    "--indifference",
    "0.001",
];

#[test]
fn a_halving_search_sharded_through_every_stage_gives_the_unsharded_bytes() {
    // 12 candidates: halving stages 1 (2 seeds) and 2 (6 seeds) keep the two near-tied ones
    // (a base of 10ms or 10.1ms), which KN then runs one seed a stage until the budget is spent.
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let flags = [
        &["--vary", "retry.max_attempts=2..5:1"][..],
        &NEAR_TIE,
        &["--halving", "--budget", "46"],
    ]
    .concat();
    let (whole, stages) = unsharded_is_sharded(&m, dir.path(), &flags);
    assert_eq!(
        stages[..2],
        ["successive-halving stage 1", "successive-halving stage 2"]
    );
    assert!(stages.len() >= 4, "{stages:?}");
    assert!(
        stages[2..].iter().all(|s| s.starts_with("KN stage")),
        "{stages:?}"
    );
    let w: serde_json::Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(w["procedure"], "successive-halving+kim-nelson-kn");
    assert_eq!(w["runs"], 46, "{whole}");
}

#[test]
fn a_kn_search_sharded_through_every_stage_gives_the_unsharded_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let flags = [&NEAR_TIE[..], &["--budget", "24"]].concat();
    let (whole, stages) = unsharded_is_sharded(&m, dir.path(), &flags);
    assert_eq!(
        stages,
        [
            "the first stage",
            "KN stage 6 (3 contenders at seed 6)",
            "KN stage 7 (3 contenders at seed 7)",
            "KN stage 8 (3 contenders at seed 8)"
        ]
    );
    let all = dir.path().join("all.jsonl");
    let all = all.to_str().unwrap();
    // Another model's runs, or another seed's, are refused, naming what differs.
    for (extra, names) in [
        (["--set", "server.capacity=5"], "--set"),
        (["--seed", "99"], "--seed"),
    ] {
        let mut v = flags.to_vec();
        v.extend(extra);
        v.extend(["--first-stage-from", all]);
        let (code, _, err) = tune(&m, &v);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("another search") && err.contains(names),
            "{err}"
        );
        assert!(err.contains("all.jsonl"), "{err}");
    }
    // Runs the search never asks for change nothing: the file of a search with a larger budget
    // and another objective gives this search's bytes.
    let s2 = dir.path().join("more");
    std::fs::create_dir(&s2).unwrap();
    let more = [
        "--vary",
        "retry.base=10ms,10100us,12ms",
        "--minimize",
        "amplification",
        "--first-stage",
        "8",
        "--budget",
        "30",
    ];
    shard_to_the_end(&m, &s2, &more);
    let bigger = s2.join("all.jsonl");
    let mut v = flags.to_vec();
    v.extend([
        "--first-stage-from",
        bigger.to_str().unwrap(),
        "--json",
        "-",
    ]);
    let (code, out, err) = tune(&m, &v);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, whole);
    // A plain sweep of the grid is runs too (without --shard), but not a file to shard on.
    let sw = dir.path().join("sweep.jsonl");
    let o = Command::cargo_bin("retrystorm")
        .unwrap()
        .arg("sweep")
        .arg(&m)
        .args([
            "--vary",
            "retry.base=10ms,10100us,12ms",
            "--seeds",
            "5",
            "--out",
        ])
        .arg(&sw)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut v = flags.to_vec();
    v.extend(["--first-stage-from", sw.to_str().unwrap(), "--json", "-"]);
    let (code, out, err) = tune(&m, &v);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, whole);
    assert!(err.contains("9 runs of the search's 24"), "{err}");
    v.truncate(v.len() - 2);
    let shard_out = dir.path().join("x.jsonl");
    v.extend(["--shard", "1/2", "--out", shard_out.to_str().unwrap()]);
    let (code, _, err) = tune(&m, &v);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not the runs of `tune --shard`"), "{err}");
    assert!(!shard_out.exists());
}

// `sensitivity`'s mu* interval and `--candidates`.

/// retry.cap is never reached (base 10 ms, at most 3 retries): on common seeds it has no effect.
const SENSITIVITY_VARY: [&str; 4] = [
    "--vary",
    "retry.cap=10s,20s,30s,40s",
    "--vary",
    "retry.max_attempts=1..4:1",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = SENSITIVITY_VARY.to_vec();
    v.extend(["--metric", "amplification", "--seeds", "2"]);
    v.extend(extra);
    v
}

#[test]
fn mu_star_has_a_bootstrap_interval_the_same_at_every_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (a, b) = (dir.path().join("a.svg"), dir.path().join("b.svg"));
    let run = |jobs: &str, svg: &Path| {
        let (code, out, err) = sensitivity(
            &m,
            &with(&[
                "--trajectories",
                "8",
                "--json",
                "-",
                "--jobs",
                jobs,
                "--svg",
                svg.to_str().unwrap(),
            ]),
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    let one = run("1", &a);
    assert_eq!(one, run("2", &b));
    let svg = std::fs::read_to_string(&a).unwrap();
    assert_eq!(svg, std::fs::read_to_string(&b).unwrap());
    assert!(
        svg.contains('±') && svg.contains("95% interval"),
        "{svg:.300}"
    );
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["selection"], "random");
    assert!(v["candidates"].is_null() && v["spread"].is_null());
    assert_eq!(v["conf_level"], 0.95);
    assert_eq!(v["resamples"], 1000);
    let p = v["parameters"].as_array().unwrap();
    assert_eq!(p[0]["key"], "retry.max_attempts");
    let conf = p[0]["mu_star_conf"].as_f64().unwrap();
    let mu_star = p[0]["mu_star"].as_f64().unwrap();
    assert!(conf > 0.0 && conf < mu_star, "{one}");
    assert_eq!(p[1]["key"], "retry.cap");
    assert_eq!(p[1]["mu_star_conf"].as_f64(), Some(0.0), "{one}");
    // The table has the column.
    let (code, table, _) = sensitivity(&m, &with(&["--trajectories", "8"]));
    assert_eq!(code, 0);
    assert!(table.contains("mu*_conf"), "{table}");
    let first = table.lines().find(|l| l.starts_with("1 ")).unwrap_or("");
    assert!(
        first.contains(&retrystorm_report::fmt::num(conf)),
        "{table}"
    );
}

#[test]
fn candidates_keep_the_most_spread_out_trajectories() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let run = |r: &str, cands: &str, jobs: &str| {
        let (code, out, err) = sensitivity(
            &m,
            &with(&[
                "--trajectories",
                r,
                "--candidates",
                cands,
                "--json",
                "-",
                "--jobs",
                jobs,
            ]),
        );
        assert_eq!(code, 0, "{err}");
        out
    };
    let out = run("4", "30", "2");
    assert_eq!(out, run("4", "30", "1"));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["selection"], "campolongo-brute-force");
    assert_eq!(v["candidates"], 30);
    assert_eq!(v["trajectories"], 4);
    let chosen: Vec<u64> = v["chosen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(chosen.len(), 4);
    assert!(chosen.windows(2).all(|w| w[0] < w[1]) && chosen[3] < 30);
    let (spread, first) = (
        v["spread"].as_f64().unwrap(),
        v["spread_first"].as_f64().unwrap(),
    );
    assert!(spread > first, "{out}");
    let p = v["parameters"].as_array().unwrap();
    assert_eq!(p[0]["key"], "retry.max_attempts");
    assert_eq!(p[0]["effects"], 4);
    assert_eq!(p[1]["mu_star"], 0.0);
    // Past brute force's reach, the local method; and the note in the table.
    let big: serde_json::Value = serde_json::from_str(&run("12", "40", "2")).unwrap();
    assert_eq!(big["selection"], "campolongo-local");
    assert!(big["spread"].as_f64().unwrap() > big["spread_first"].as_f64().unwrap());
    let (code, table, _) = sensitivity(&m, &with(&["--trajectories", "12", "--candidates", "40"]));
    assert_eq!(code, 0);
    assert!(
        table.contains("the 12 most spread out of 40 candidates") && table.contains("local method"),
        "{table}"
    );
}

#[test]
fn candidates_must_exceed_the_trajectories() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (code, _, err) = sensitivity(&m, &with(&["--trajectories", "6", "--candidates", "6"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("--candidates 6 must exceed --trajectories 6"),
        "{err}"
    );
    let (code, _, err) = sensitivity(&m, &with(&["--trajectories", "1", "--candidates", "9"]));
    assert_eq!(code, 2);
    assert!(err.contains("--trajectories of at least 2"), "{err}");
    let (code, _, err) = sensitivity(&m, &with(&["--candidates", "5000"]));
    assert_eq!(code, 2);
    assert!(err.contains("--candidates"), "{err}");
}

// Issue 31: tune never replaces its own runs file, and refuses runs that contradict each other.

/// Two candidates with a first stage of 3 runs.
const FIRST_STAGE: [&str; 6] = [
    "--vary",
    "retry.max_attempts=1,2",
    "--minimize",
    "amplification",
    "--first-stage",
    "3",
];

/// The model in `dir` and [`FIRST_STAGE`]'s runs, written by one shard to `dir/runs.jsonl`.
fn first_stage_runs(dir: &Path) -> (PathBuf, PathBuf) {
    let m = model(dir);
    let runs = dir.join("runs.jsonl");
    let mut v = FIRST_STAGE.to_vec();
    v.extend(["--shard", "1/1", "--out", runs.to_str().unwrap()]);
    let (code, _, err) = tune(&m, &v);
    assert_eq!(code, 0, "{err}");
    (m, runs)
}

#[test]
fn tune_refuses_to_write_over_its_runs_file() {
    let dir = tempfile::tempdir().unwrap();
    let (m, runs) = first_stage_runs(dir.path());
    let runs_s = runs.to_str().unwrap();
    let before = std::fs::read(&runs).unwrap();
    for extra in [
        ["--shard", "1/2", "--out", runs_s],
        ["--json", runs_s, "--jobs", "1"],
        ["--svg", runs_s, "--maximize", "succeeded"],
    ] {
        let mut v = FIRST_STAGE.to_vec();
        v.extend(["--first-stage-from", runs_s]);
        v.extend(extra);
        let (code, _, err) = tune(&m, &v);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(
            err.contains("is the --first-stage-from runs file, which this command reads"),
            "{err}"
        );
        assert_eq!(std::fs::read(&runs).unwrap(), before, "{extra:?}");
    }
}

#[test]
fn two_shards_given_one_out_do_not_both_write_it() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let out = dir.path().join("o.jsonl");
    let flags = |i: &str| {
        let mut c = std::process::Command::new(bin());
        c.arg("tune").arg(&m).args([
            "--vary",
            "retry.max_attempts=1,2,3",
            "--minimize",
            "amplification",
            "--shard",
            i,
            "--out",
        ]);
        c.arg(&out);
        c
    };
    // At once: one claims the file, the other is refused (exit 2), never both exit 0.
    let refusals = ["the file exists", "another command is writing"];
    assert_eq!(racing(["1/2", "2/2"].map(flags), &refusals), 1);
    // One after the other: the second does not replace the first's runs.
    let before = std::fs::read(&out).unwrap();
    let o = flags("2/2").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--out") && err.contains("the file exists"),
        "{err}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn first_stage_from_refuses_a_run_given_twice_with_different_results() {
    let dir = tempfile::tempdir().unwrap();
    let (m, runs) = first_stage_runs(dir.path());
    let runs_s = runs.to_str().unwrap();
    let text = std::fs::read_to_string(&runs).unwrap();
    let line = text.lines().nth(1).unwrap().to_string();
    let mut v = FIRST_STAGE.to_vec();
    v.extend(["--first-stage-from", runs_s, "--json", "-"]);
    // The same run twice, identical: accepted, as merge accepts it.
    std::fs::write(&runs, format!("{text}{line}\n")).unwrap();
    let (code, _, err) = tune(&m, &v);
    assert_eq!(code, 0, "{err}");
    // Twice with different results: refused, as merge refuses it.
    let mut r: serde_json::Value = serde_json::from_str(&line).unwrap();
    r["summary"]["retries"] = (r["summary"]["retries"].as_u64().unwrap() + 1000).into();
    std::fs::write(
        &runs,
        format!("{text}{}\n", serde_json::to_string(&r).unwrap()),
    )
    .unwrap();
    let (code, _, err) = tune(&m, &v);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("twice with different results"), "{err}");
}

#[test]
fn tune_without_vary_and_one_candidate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let (code, out, err) = tune(&m, &["--minimize", "amplification"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("tune needs settings to search"), "{err}");
}
