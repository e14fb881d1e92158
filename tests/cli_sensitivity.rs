//! `retrystorm sensitivity`'s `μ*` interval and `--candidates` end to end (the ranking itself is
//! tested in `cli_tune.rs`).

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

/// retry.cap is never reached (base 10 ms, at most 3 retries): on common seeds it has no effect.
const VARY: [&str; 4] = [
    "--vary",
    "retry.cap=10s,20s,30s,40s",
    "--vary",
    "retry.max_attempts=1..4:1",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = VARY.to_vec();
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
