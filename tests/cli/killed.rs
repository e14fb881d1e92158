//! A shard killed with -9 (`tune --shard`, `map --shard`) leaves no `--out`, only its claim file,
//! whose lock died with it: the rerun takes the claim over and writes what an uninterrupted run
//! writes.

use super::util::{bin, in_temp};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs of about a million intents each: a shard takes seconds, long enough to be killed.
const MODEL: &str = r#"horizon = "600s"
[workload]
kind = "open"
rate = "2000/s"
[retry]
max_attempts = 3
timeout = "1s"
backoff = "exponential"
base = "10ms"
[server]
service = "exp(5ms)"
fail = 0.3
"#;

/// The command's exit code and stderr.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(bin()).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Starts `args`, kills it with SIGKILL once it has claimed `out` (its runs under way), and
/// asserts that it died of the signal and left no `out`.
fn kill_mid_run(args: &[&str], out: &Path) {
    let mut child = Command::new(bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let name = out.file_name().unwrap().to_str().unwrap();
    let claim = out.with_file_name(format!(".{name}.claim"));
    let started = Instant::now();
    while !claim.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "never claimed");
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before its claim"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "finished before the kill: {status}"
    );
    assert!(!out.exists(), "a killed shard left {}", out.display());
}

/// The shard `args` (`--out` appended) killed then rerun writes the bytes of one never killed.
fn rerun_after_kill_is_the_uninterrupted_run(dir: &Path, args: &[&str]) {
    let whole = dir.join("whole.jsonl");
    let shard = dir.join("shard.jsonl");
    let with = |out: &Path| {
        let mut v = args.to_vec();
        v.extend(["--out", out.to_str().unwrap()]);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let (code, err) = run(&with(&whole).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, Some(0), "{err}");
    let killed = with(&shard);
    let killed: Vec<&str> = killed.iter().map(String::as_str).collect();
    kill_mid_run(&killed, &shard);
    let (code, err) = run(&killed);
    assert_eq!(code, Some(0), "the rerun after a kill: {err}");
    assert_eq!(
        std::fs::read(&shard).unwrap(),
        std::fs::read(&whole).unwrap()
    );
    let mut left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["m.toml", "shard.jsonl", "whole.jsonl"]);
}

#[test]
fn a_tune_shard_killed_with_9_reruns_to_the_uninterrupted_bytes() {
    let (dir, m) = in_temp("m.toml", MODEL);
    let m = m.to_str().unwrap();
    let args = [
        "tune",
        m,
        "--vary",
        "retry.max_attempts=1,3",
        "--vary",
        "retry.base=10ms,50ms",
        "--minimize",
        "amplification",
        "--first-stage",
        "3",
        "--jobs",
        "1",
        "--shard",
        "1/2",
    ];
    rerun_after_kill_is_the_uninterrupted_run(dir.path(), &args);
}

#[test]
fn a_map_shard_killed_with_9_reruns_to_the_uninterrupted_bytes() {
    let (dir, m) = in_temp("m.toml", MODEL);
    let m = m.to_str().unwrap();
    let args = [
        "map",
        m,
        "--vary",
        "retry.max_attempts=1,3",
        "--vary",
        "retry.base=10ms,50ms",
        "--seeds",
        "2",
        "--metric",
        "amplification",
        "--jobs",
        "1",
        "--shard",
        "1/2",
    ];
    rerun_after_kill_is_the_uninterrupted_run(dir.path(), &args);
}
