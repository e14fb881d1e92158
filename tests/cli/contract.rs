//! The foundation's command-line contract: byte-identical outputs per seed, the JSON field names
//! scripts read, and one-line errors with exit code 2 for bad input.

use super::fixtures::EJECTION_RUN;
use super::outputs::{HERD, SMALL_HERD_RUN};
use super::util::{assert_deterministic, json_stdout, rs as retrystorm};
use std::path::Path;

fn outputs(dir: &Path, tag: &str, seed: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (j, c, s) = (
        dir.join(format!("{tag}.json")),
        dir.join(format!("{tag}.csv")),
        dir.join(format!("{tag}.svg")),
    );
    retrystorm()
        .args([
            "compare",
            HERD,
            "--seed",
            seed,
            "--set",
            "workload.clients=300",
        ])
        .arg("--json")
        .arg(&j)
        .arg("--csv")
        .arg(&c)
        .arg("--svg")
        .arg(&s)
        .assert()
        .success();
    (
        std::fs::read(j).unwrap(),
        std::fs::read(c).unwrap(),
        std::fs::read(s).unwrap(),
    )
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    // JSON, CSV and SVG must be byte-identical for the same seed.
    let a = assert_deterministic("compare --seed 7", |d| outputs(d, "a", "7"));
    let dir = tempfile::tempdir().unwrap();
    let c = outputs(dir.path(), "c", "8");
    assert_ne!(a.0, c.0);
    assert!(std::str::from_utf8(&a.2).unwrap().starts_with("<svg"));
}

#[test]
fn json_carries_the_contract_fields() {
    let v = json_stdout(retrystorm().args(["compare", HERD, "--json", "-"]));
    assert_eq!(v["model"], "thundering-herd");
    assert_eq!(v["seed"], 42);
    let variants = v["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["no-jitter", "full", "equal", "decorrelated"]);
    for x in variants {
        let s = &x["summary"];
        for f in [
            "intents",
            "attempts",
            "retries",
            "amplification",
            "succeeded",
            "failed",
            "peak_arrivals",
            "peak_retries",
            "bucket_ms",
            "last_arrival_ms",
        ] {
            assert!(s[f].is_number(), "summary.{f} missing");
        }
        for p in ["p50", "p90", "p99", "p999", "max"] {
            assert!(
                s["completion_ms"][p].is_number(),
                "completion_ms.{p} missing"
            );
        }
        assert!(x["series"]["retries"].is_array());
    }
    assert_eq!(variants[0]["summary"]["peak_retries"], 1000);
    assert_eq!(variants[0]["summary"]["retries"], 5000);
}

#[test]
fn run_picks_a_variant_and_set_overrides() {
    let v = json_stdout(retrystorm().args([
        "run",
        HERD,
        "--variant",
        "no-jitter",
        "--set",
        "workload.clients=50",
        "--json",
        "-",
    ]));
    assert_eq!(v["variants"].as_array().unwrap().len(), 1);
    assert_eq!(v["variants"][0]["summary"]["peak_retries"], 50);
}

#[test]
fn vary_crosses_values() {
    let v = json_stdout(retrystorm().args([
        "compare",
        HERD,
        "--vary",
        "retry.base=50ms,100ms",
        "--set",
        "workload.clients=20",
        "--json",
        "-",
    ]));
    let names: Vec<&str> = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 8);
    assert!(names.contains(&"full retry.base=50ms"), "{names:?}");
}

/// Runs with a model text and flags; returns the exit code and stderr.
fn bad(model: Option<&str>, flags: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.toml");
    if let Some(text) = model {
        std::fs::write(&path, text).unwrap();
    }
    let out = retrystorm()
        .arg("run")
        .arg(&path)
        .args(flags)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).replace(&path.display().to_string(), "m.toml");
    (out.status.code().unwrap(), err)
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let cases: &[(Option<&str>, &[&str], &str)] = &[
        (None, &[], "m.toml: cannot read the model file"),
        (Some("[retry\n"), &[], "m.toml:1:"),
        (
            Some("[retry]\njiter = \"full\"\n"),
            &[],
            "m.toml:2:1: retry.jiter: unknown field `jiter`",
        ),
        (
            Some("[retry]\nbase = \"-5ms\"\n"),
            &[],
            "m.toml:2:1: retry.base: durations cannot be negative",
        ),
        (
            Some("[retry]\nbase = 5\n"),
            &[],
            "m.toml:2:1: retry.base: expected a duration string with a unit",
        ),
        (
            Some("[workload]\nclients = 0\n"),
            &[],
            "m.toml:2:1: workload.clients: must be at least 1",
        ),
        (
            Some("[retry]\nbase = \"1s\"\ncap = \"10ms\"\n"),
            &[],
            "m.toml:3:1: retry.cap: must be >= retry.base",
        ),
        (
            Some("[retry]\nbackoff = \"fibonacci\"\n"),
            &[],
            "retry.backoff: unknown variant `fibonacci`",
        ),
        (
            Some(""),
            &["--set", "retry.nope=1"],
            "--set retry.nope=1: retry.nope: unknown field `nope`",
        ),
        (
            Some(""),
            &["--set", "retry"],
            "--set retry: expected KEY=VALUE",
        ),
        (
            Some(""),
            &["--variant", "zzz"],
            "--variant zzz: no such variant",
        ),
    ];
    for (model, flags, want) in cases {
        let (code, err) = bad(*model, flags);
        assert_eq!(code, 2, "{want}: {err}");
        assert!(err.contains(want), "expected {want:?} in {err:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err:?}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_failed_write_leaves_the_previous_output_alone() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("out.json");
    std::fs::write(&good, "previous").unwrap();
    let out = retrystorm()
        .args(["compare", HERD, "--set", "retry.cap=1ms"])
        .arg("--json")
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&good).unwrap(), "previous");
    // A folder that does not exist is refused before running (exit 2, naming the flag).
    let missing = dir.path().join("no/such/dir/out.json");
    let out = retrystorm()
        .args(["run", HERD, "--set", "workload.clients=5"])
        .arg("--json")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: --json "));
}

#[test]
fn a_run_that_cannot_end_stops_and_says_it_is_partial() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("forever.toml");
    // Retries without end against a permanent outage, and no deadline.
    std::fs::write(
        &model,
        "horizon = \"10m\"\n[workload]\nclients = 50\n[retry]\nmax_attempts = 10000\nbase = \"1s\"\ncap = \"10s\"\n\
         [server]\noutages = [{ from = \"0s\", to = \"1h\" }]\n",
    )
    .unwrap();
    let out = retrystorm()
        .arg("run")
        .arg(&model)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["variants"][0]["summary"];
    assert_eq!(s["ended"], "horizon");
    assert_eq!(s["truncated"], true);
    assert_eq!(s["end_ms"], 600_000.0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reached the horizon") && err.contains("partial"),
        "{err}"
    );

    let out = retrystorm()
        .arg("run")
        .arg(&model)
        .args(["--max-events", "500", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["variants"][0]["summary"];
    assert_eq!(
        (
            s["ended"].as_str(),
            s["events"].as_u64(),
            s["truncated"].as_bool()
        ),
        (Some("max-events"), Some(500), Some(true))
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("max_events guard after 500 events"));
}

#[test]
fn json_carries_the_replicas_of_a_replicated_tier() {
    let v = json_stdout(retrystorm().args(EJECTION_RUN).args(["--json", "-"]));
    let x = &v["variants"][0];
    let tier = &x["summary"]["tiers"][0];
    assert_eq!(tier["name"], "server");
    let replicas = tier["replicas"].as_array().unwrap();
    assert_eq!(replicas.len(), 5);
    for (k, r) in replicas.iter().enumerate() {
        assert_eq!(r["replica"], k);
        for f in ["arrivals", "served", "rejected", "errors", "ejections"] {
            assert!(r[f].is_u64(), "summary.tiers[0].replicas[{k}].{f}");
        }
    }
    assert_eq!(replicas[2]["ejections"], 1);
    let sum: u64 = replicas
        .iter()
        .map(|r| r["arrivals"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, tier["arrivals"].as_u64().unwrap());
    // Per bucket, as long as the tier's series (one tier: series.replicas, no series.tiers).
    let s = &x["series"];
    let len = s["first"].as_array().unwrap().len();
    assert!(s.get("tiers").is_none());
    let series = s["replicas"].as_array().unwrap();
    assert_eq!(series.len(), 5);
    for (k, r) in series.iter().enumerate() {
        assert_eq!(r["replica"], k);
        for f in ["arrivals", "served", "rejected", "ejections"] {
            assert_eq!(
                r[f].as_array().unwrap().len(),
                len,
                "series.replicas[{k}].{f}"
            );
        }
    }
    // A model without replicas has neither key.
    let out = retrystorm()
        .args(SMALL_HERD_RUN)
        .args(["--json", "-"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("\"replicas\""), "{text}");
}
