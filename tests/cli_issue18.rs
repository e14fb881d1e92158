//! Issue 18 end to end: truncation warnings, refused keys and the same verdict on a model file
//! from every command.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn rs() -> Command {
    Command::cargo_bin("retrystorm").unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn out(c: &mut Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_burst_cut_by_the_horizon_warns() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "cut.toml",
        "horizon = \"10s\"\n[workload]\nclients = 1000\nspread = \"100s\"\n[server]\nservice = \"1ms\"\n",
    );
    let (code, stdout, stderr) = out(rs().args(["run"]).arg(&m).args(["--json", "-"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"truncated\": true"), "{stdout}");
    assert!(stderr.contains("warning: cut:"), "{stderr}");
    assert!(stderr.contains("after starting only"), "{stderr}");
}

#[test]
fn a_seed_in_a_variant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "s.toml",
        "[[variant]]\nname = \"a\"\nseed = 9\n",
    );
    for cmd in ["run", "check", "compare"] {
        let (code, _, stderr) = out(rs().arg(cmd).arg(&m));
        assert_eq!(code, 2, "{cmd}: {stderr}");
        assert!(
            stderr.contains("s.toml:3:1: variant[0].seed"),
            "{cmd}: {stderr}"
        );
    }
}

/// `run`, `compare`, `check` and `report` give the same verdict on the same bad `[[expect]]`.
#[test]
fn every_command_refuses_a_bad_expect_table() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[workload]\nclients = 3\n\n[[expect]]\nmetric = \"retries\"\nop = \"<\"\nvalue = 5\novr = \"mean\"\n",
            "e.toml:8:1: expect.ovr: unknown key; did you mean `over`?",
        ),
        (
            "[workload]\nclients = 3\n\n[[expect]]\nmetric = \"retrie\"\nop = \"<\"\nvalue = 5\n",
            "e.toml:5:1: expect.metric: unknown metric `retrie`; did you mean `retries`?",
        ),
        (
            "[workload]\nclients = 3\n\n[[expect]]\nassert = \"retries < 5\"\nover = \"median\"\n",
            "e.toml:6:1: expect.over:",
        ),
        (
            "[[variant]]\nname = \"full\"\n\n[[expect]]\nassert = \"retries < 5\"\nvariant = \"ful\"\n",
            "e.toml:6:1: expect.variant: no variant \"ful\" in the model; did you mean `full`?",
        ),
    ];
    for (text, want) in cases {
        let m = write(dir.path(), "e.toml", text);
        for cmd in ["run", "compare", "check"] {
            let (code, _, stderr) = out(rs().arg(cmd).arg(&m));
            assert_eq!(code, 2, "{cmd}: {stderr}");
            assert!(stderr.contains(want), "{cmd}: {stderr}\nwanted {want}");
        }
        let html = dir.path().join("r.html");
        let (code, _, stderr) = out(rs().arg("report").arg(&m).arg("-o").arg(&html));
        assert_eq!(code, 2, "report: {stderr}");
        assert!(stderr.contains(want), "report: {stderr}");
    }
}

#[test]
fn explain_warns_of_overload_short_timeouts_and_dead_breakers() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "o.toml",
        "[workload]\nkind = \"open\"\nrate = \"500/s\"\n[retry]\ntimeout = \"5ms\"\n[server]\ncapacity = 2\nservice = \"10ms\"\n",
    );
    let (code, stdout, stderr) = out(rs().arg("explain").arg(&m));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("capacity 200 requests/s"), "{stdout}");
    assert!(
        stdout.contains("warning: tier 0 server: the open workload sends at least 500 requests/s against a capacity of 200 requests/s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("timeout 5ms is shorter than the mean service time 10 ms"),
        "{stdout}"
    );
    let b = write(
        dir.path(),
        "b.toml",
        "[workload]\nclients = 10\n[retry]\nmax_attempts = 3\n[breaker]\nenabled = true\nminimum_calls = 20\n",
    );
    let (code, stdout, _) = out(rs().arg("explain").arg(&b));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("minimum_calls = 20 but one client makes at most 3 calls"),
        "{stdout}"
    );
    let (code, stdout, _) = out(rs().arg("explain").arg("models/thundering-herd.toml"));
    assert_eq!(code, 0);
    assert!(stdout.contains("no warnings"), "{stdout}");
    let bad = write(dir.path(), "bad.toml", "[retry]\njitter = true\n");
    let (code, _, stderr) = out(rs().arg("explain").arg(&bad));
    assert_eq!(code, 2, "{stderr}");
}

/// `--set` edits the base and every variant; when that erases a difference between variants,
/// stderr says so once (also for a sweep's `--vary`, which loads the model at every point).
#[test]
fn a_set_that_overrides_variants_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "v.toml",
        "[workload]\nclients = 20\n[server]\nfail = \"always\"\n[[variant]]\nname = \"a\"\nretry.jitter = \"none\"\n[[variant]]\nname = \"b\"\nretry.jitter = \"equal\"\n[[variant]]\nname = \"c\"\n",
    );
    let (code, _, stderr) = out(rs()
        .arg("compare")
        .arg(&m)
        .args(["--set", "retry.jitter=full"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(
        stderr.contains("--set retry.jitter: replaces the value that variants \"a\", \"b\" set"),
        "{stderr}"
    );
    assert!(stderr.contains("retry.jitter = \"full\""), "{stderr}");
    // A key no variant sets: no warning.
    let (_, _, quiet) = out(rs()
        .arg("compare")
        .arg(&m)
        .args(["--set", "retry.base=5ms"]));
    assert!(!quiet.contains("warning"), "{quiet}");
    // A sweep warns once, not once per point.
    let o = dir.path().join("o.jsonl");
    let (code, _, stderr) = out(rs()
        .arg("sweep")
        .arg(&m)
        .args(["--vary", "retry.jitter=full,none,equal", "--out"])
        .arg(&o));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(stderr.contains("the point's retry.jitter"), "{stderr}");
}
