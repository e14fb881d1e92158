//! Outputs you can trust: where outputs go (files replaced whole, FIFOs and devices
//! written through, symlinks followed), failed writes, refusals before anything runs (two outputs
//! on one path, unwritable paths, inputs that are not regular files, grids too big, metric
//! names), the sweep lock, and the wording of the human output.
//!
//! Every file is made in a temporary folder; the real /dev is only read.

use super::fixtures::small_herd;
use super::util::{bin, out, racing, rs};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(super) const HERD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models/thundering-herd.toml");

/// A run of the shipped herd's full-jitter variant at 50 clients: a model without replicas.
pub(super) const SMALL_HERD_RUN: [&str; 6] = [
    "run",
    HERD,
    "--variant",
    "full",
    "--set",
    "workload.clients=50",
];
const OUTAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models/outage-recovery.toml");

/// The small herd with three expectations: one per variant and one for both.
const SMALL: &str = concat!(
    small_herd!(),
    r#"
[[expect]]
assert = "peak_retries == 40"
variant = "no-jitter"
[[expect]]
assert = "peak_retries < 40"
variant = "full"
[[expect]]
assert = "failed == 40"
"#
);

fn small(dir: &Path) -> PathBuf {
    let p = dir.join("small.toml");
    std::fs::write(&p, SMALL).unwrap();
    p
}

/// The names in a folder, sorted (to see that no temporary file was left).
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", p.display());
}

#[cfg(unix)]
fn is_fifo(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(p).unwrap().file_type().is_fifo()
}

// 1. Where outputs go.

#[cfg(unix)]
#[test]
fn a_fifo_output_is_written_through_not_replaced() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("json.fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let (code, _, err) = out(rs()
        .args(["run", HERD, "--set", "workload.clients=5", "--json"])
        .arg(&fifo));
    assert_eq!(code, 0, "{err}");
    let got = reader.join().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&got).unwrap();
    assert_eq!(v["model"], "thundering-herd");
    assert!(is_fifo(&fifo), "the FIFO was replaced");
    assert_eq!(entries(d.path()), ["json.fifo"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_output_replaces_its_target_and_stays_a_link() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("charts")).unwrap();
    let target = d.path().join("charts/load.svg");
    std::fs::write(&target, "old").unwrap();
    let link = d.path().join("load.svg");
    std::os::unix::fs::symlink("charts/load.svg", &link).unwrap();
    let (code, _, err) = out(rs()
        .args(["run", HERD, "--set", "workload.clients=5", "--svg"])
        .arg(&link));
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .starts_with("<svg")
    );
    assert_eq!(entries(&d.path().join("charts")), ["load.svg"]);
}

/// (`/dev/stdout` itself is mapped the same way, see the unit tests of `output`; it is not used
/// here, so that a broken build could not replace the machine's `/dev/stdout`.)
#[test]
fn fd_paths_of_stdout_are_standard_output() {
    let before = std::fs::symlink_metadata("/dev/stdout")
        .ok()
        .map(|m| m.file_type());
    for path in ["/proc/self/fd/1", "/dev/fd/1"] {
        let (code, stdout, err) =
            out(rs().args(["run", HERD, "--set", "workload.clients=5", "--json", path]));
        assert_eq!(code, 0, "{path}: {err}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["seed"], 42, "{path}");
    }
    let after = std::fs::symlink_metadata("/dev/stdout")
        .ok()
        .map(|m| m.file_type());
    assert_eq!(before, after);
}

#[test]
fn a_closed_pipe_on_stdout_is_not_an_error() {
    // 90 kB of CSV: more than a pipe holds, so the write meets the closed end.
    let mut child = std::process::Command::new(bin())
        .args(["compare", HERD, "--csv", "-"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        !err.contains("Broken pipe") && !err.contains("panicked"),
        "{err}"
    );
    assert!(first.starts_with(b"variant,"));
}

#[cfg(unix)]
#[test]
fn the_file_size_limit_is_exit_3_and_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let json = d.path().join("big.json");
    std::fs::write(&json, "previous").unwrap();
    // `ulimit -f 1`: files of at most 512 or 1024 bytes; the JSON is about 30 kB.
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 1 && exec \"$@\"")
        .arg("sh")
        .arg(bin())
        .args(["run", HERD, "--set", "workload.clients=50", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("--json") && err.contains("file-size limit"),
        "{err}"
    );
    assert_eq!(entries(d.path()), ["big.json"]);
    assert_eq!(std::fs::read_to_string(&json).unwrap(), "previous");
}

// 2. Two outputs on one path.

#[test]
fn two_outputs_on_one_path_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let x = d.path().join("x");
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        vec![
            "run".into(),
            m.clone().into(),
            "--json".into(),
            "-".into(),
            "--csv".into(),
            "-".into(),
        ],
        vec![
            "compare".into(),
            m.clone().into(),
            "--svg".into(),
            x.clone().into(),
            "--cdf-svg".into(),
            d.path().join(".").join("x").into(),
        ],
        vec![
            "run".into(),
            m.clone().into(),
            "--json".into(),
            d.path().join("o.txt").into(),
            "--csv".into(),
            d.path().join("o.txt").into(),
        ],
        vec![
            "sweep".into(),
            m.clone().into(),
            "--vary".into(),
            "workload.clients=10,20".into(),
            "--out".into(),
            d.path().join("o.jsonl").into(),
            "--svg".into(),
            d.path().join("o.jsonl").into(),
        ],
        vec![
            "run".into(),
            m.clone().into(),
            "--json".into(),
            m.clone().into(),
        ],
    ];
    for args in cases {
        let (code, stdout, err) = out(rs().args(&args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("same file") || err.contains("stdout") || err.contains("the model file"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(stdout.is_empty(), "nothing ran: {stdout}");
    }
    assert_eq!(entries(d.path()), ["small.toml"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_to_another_output_is_the_same_path() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    std::fs::write(d.path().join("a.svg"), "").unwrap();
    std::os::unix::fs::symlink("a.svg", d.path().join("b.svg")).unwrap();
    let (code, _, err) = out(rs()
        .arg("run")
        .arg(&m)
        .arg("--svg")
        .arg(d.path().join("a.svg"))
        .arg("--outcomes-svg")
        .arg(d.path().join("b.svg")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--outcomes-svg") && err.contains("same file"),
        "{err}"
    );
}

// 3. Outputs are checked before anything runs.

#[test]
fn unwritable_outputs_fail_at_once_naming_the_flag() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("plain");
    std::fs::write(&file, "").unwrap();
    // A sweep of 10,000 runs of 1000 clients: minutes of work if it started.
    let sweep = |flag: &str, p: &Path| {
        let start = Instant::now();
        let r = out(rs()
            .args([
                "sweep",
                HERD,
                "--vary",
                "retry.base=1ms..10000ms:1ms",
                "--jobs",
                "1",
                flag,
            ])
            .arg(p));
        (r, start.elapsed())
    };
    for (flag, p, want) in [
        (
            "--out",
            d.path().join("missing/runs.jsonl"),
            "does not exist",
        ),
        ("--out", d.path().to_path_buf(), "is a directory"),
        ("--svg", d.path().join("plain/x.svg"), "not a folder"),
        ("--out", file.clone(), "the file exists"),
    ] {
        let ((code, _, err), took) = sweep(flag, &p);
        assert_eq!(code, 2, "{flag} {}: {err}", p.display());
        assert!(err.starts_with(&format!("error: {flag} ")), "{err}");
        assert!(err.contains(want), "{want} in {err}");
        assert!(took < Duration::from_secs(20), "took {took:?}");
    }
    let (code, _, err) = out(rs()
        .args(["run", HERD, "--csv"])
        .arg(d.path().join("no/such/dir/x.csv")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--csv") && err.contains("does not exist"),
        "{err}"
    );
    assert_eq!(entries(d.path()), ["plain"]);
}

// 4. Inputs that are not regular files, and a size cap.

#[cfg(unix)]
#[test]
fn a_model_that_is_not_a_regular_file_is_refused_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("model.fifo");
    mkfifo(&fifo);
    for (path, want) in [
        (fifo.clone(), "is a FIFO (named pipe), not a regular file"),
        (d.path().to_path_buf(), "is a directory, not a regular file"),
        (
            PathBuf::from("/dev/zero"),
            "is a character device, not a regular file",
        ),
    ] {
        for cmd in ["run", "check", "sweep", "report"] {
            let start = Instant::now();
            let (code, _, err) = out(rs()
                .arg(cmd)
                .arg(&path)
                .args(["-o", "-"].iter().take(if cmd == "report" { 2 } else { 0 })));
            assert_eq!(code, 2, "{cmd} {}: {err}", path.display());
            assert!(err.contains(want), "{cmd}: {want} in {err}");
            assert!(start.elapsed() < Duration::from_secs(20));
        }
    }
    let (code, _, err) = out(rs()
        .arg("merge")
        .arg(&fifo)
        .arg("-o")
        .arg(d.path().join("m.jsonl")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FIFO"), "{err}");
}

#[test]
fn a_model_over_4_mib_is_refused() {
    // Parsed, a model file takes about 100 times its size: 4 MiB keeps loading under 0.5 GB.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("huge.toml");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(5 * 1024 * 1024).unwrap();
    let (code, _, err) = out(rs().arg("run").arg(&p));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("5 MiB; it may be at most 4 MiB"), "{err}");
}

#[test]
fn a_model_that_is_not_utf8_says_where() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.toml");
    std::fs::write(&p, b"[retry]\nbase = \"1\xffms\"\n").unwrap();
    let (code, _, err) = out(rs().arg("run").arg(&p));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("m.toml:2:10: the model file is not UTF-8"),
        "{err}"
    );
}

// 5. Two sweeps on one --out.

#[test]
fn a_sweep_file_held_by_another_sweep_is_refused() {
    if std::process::Command::new("flock")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: no flock(1) on this machine");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let runs = d.path().join("runs.jsonl");
    let sweep = |extra: &[&str]| {
        out(rs()
            .arg("sweep")
            .arg(&m)
            .args(["--vary", "workload.clients=10,20,30", "--out"])
            .arg(&runs)
            .args(extra))
    };
    let (code, _, err) = sweep(&["--limit", "1"]);
    assert_eq!(code, 0, "{err}");
    // Another process holds the lock, as a running sweep does.
    // (`-o`: the lock is held by flock itself, not by its command, so killing flock frees it.)
    let mut holder = std::process::Command::new("flock")
        .args(["-x", "-o"])
        .arg(&runs)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::process::Command::new("flock")
        .args(["-n", "-x"])
        .arg(&runs)
        .arg("true")
        .status()
        .unwrap()
        .success()
    {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "flock never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = std::fs::read(&runs).unwrap();
    let (code, _, err) = sweep(&["--resume"]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("another sweep is writing this file"), "{err}");
    assert_eq!(std::fs::read(&runs).unwrap(), before);
    // Once it is gone, the sweep resumes.
    let (code, _, err) = sweep(&["--resume"]);
    assert_eq!(code, 0, "{err}");
}

// 6. --vary grids.

#[test]
fn vary_grids_are_counted_and_bounded_before_running() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "sweep",
            &["--vary", "workload.clients=1..18446744073709551615:1"],
            "at most 1000000",
        ),
        (
            "sweep",
            &["--vary", "network.request_loss=0..1:1e-300"],
            "at most 1000000",
        ),
        (
            "sweep",
            &["--vary", "network.request_loss=0..inf:0.1"],
            "not a finite number",
        ),
        (
            "sweep",
            &[
                "--vary",
                "workload.clients=1..100000:1",
                "--vary",
                "retry.base=1ms..100000ms:1ms",
            ],
            "the limit is 10000000 runs",
        ),
        (
            // About 14 KB a run stays in memory: 100,000 per process keep it under 2 GB.
            "sweep",
            &["--vary", "retry.base=1ms..200000ms:1ms"],
            "this sweep would hold 400000 runs in memory (about 14 KB each) for its table; at most 100000 per process: split it with --shard I/4",
        ),
        (
            "sweep",
            &["--vary", "retry.base=1ms,2ms", "--vary", "retry.base=3ms"],
            "varied twice",
        ),
        (
            "sweep",
            &["--vary", "retry.jitter=full,full"],
            "listed twice",
        ),
        (
            "compare",
            &["--vary", "retry.jitter=full,full"],
            "listed twice",
        ),
        (
            "compare",
            &["--vary", "retry.jitter=full", "--vary", "retry.jitter=none"],
            "varied twice",
        ),
        (
            "sweep",
            &["--vary", "workload.clients=10,20", "--shard", "7/8"],
            "would have none",
        ),
    ];
    for (cmd, flags, want) in cases {
        let start = Instant::now();
        let (code, stdout, err) = out(rs().arg(cmd).arg(&m).args(*flags));
        assert_eq!(code, 2, "{flags:?}: {err}");
        assert!(err.contains(want), "{want} in {err}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(start.elapsed() < Duration::from_secs(20));
    }
}

#[test]
fn merge_refuses_a_run_outside_the_grid() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let runs = d.path().join("runs.jsonl");
    let (code, _, err) = out(rs()
        .arg("sweep")
        .arg(&m)
        .args(["--vary", "workload.clients=10,20", "--out"])
        .arg(&runs));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&runs).unwrap();
    let forged = text.replacen("\"job\":1,", "\"job\":999,", 1);
    assert_ne!(forged, text);
    std::fs::write(&runs, forged).unwrap();
    let (code, _, err) = out(rs()
        .arg("merge")
        .arg(&runs)
        .arg("-o")
        .arg(d.path().join("all.jsonl")));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("run 999 is outside the header's grid of 4 runs"),
        "{err}"
    );
}

// 7. --set takes one value; --set name= renames.

#[test]
fn set_takes_one_value_and_name_takes_effect() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let (code, _, err) = out(rs()
        .arg("run")
        .arg(&m)
        .args(["--set", "name=\"x\"\n[retry]\nbase = \"1s\""]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a value is one value on one line"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let (code, stdout, err) = out(rs().arg("compare").arg(&m).args(["--set", "name=zzz"]));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.starts_with("zzz (seed 7)"), "{stdout}");
    assert!(
        stdout.contains("no-jitter") && stdout.contains("full"),
        "variants keep their names"
    );
    let (code, stdout, _) =
        out(rs()
            .arg("run")
            .arg(&m)
            .args(["--set", "name=\"my model\"", "--json", "-"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["model"], "my model");
    let runs = d.path().join("runs.jsonl");
    let (code, _, err) = out(rs()
        .arg("sweep")
        .arg(&m)
        .args([
            "--vary",
            "workload.clients=10",
            "--set",
            "name=zzz",
            "--out",
        ])
        .arg(&runs));
    assert_eq!(code, 0, "{err}");
    let header = std::fs::read_to_string(&runs).unwrap();
    assert!(
        header.lines().next().unwrap().contains("\"model\":\"zzz\""),
        "{header}"
    );
}

// 8. Metric names are checked before the first run.

#[test]
fn metric_names_are_checked_first_with_a_suggestion() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let runs = d.path().join("runs.jsonl");
    let (code, _, err) = out(rs()
        .args(["sweep", HERD, "--vary", "retry.base=1ms..10000ms:1ms"])
        .args(["--metric", "peak_retry", "--out"])
        .arg(&runs));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--metric peak_retry") && err.contains("did you mean `peak_retries`"),
        "{err}"
    );
    assert!(!runs.exists(), "the sweep started");

    let (code, _, err) = out(rs().arg("check").arg(&m).args(["--expect", "p99 < 2s"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("did you mean `completion_ms.p99`"), "{err}");
    let (code, _, err) = out(rs()
        .arg("check")
        .arg(&m)
        .args(["--expect", "zzzzzzzzzzzzzz < 2"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("metrics: intents, attempts"), "{err}");
    for not in ["layered,", "ended", "truncated", " layered "] {
        assert!(!err.contains(not), "{not} listed in {err}");
    }
    assert!(
        err.contains("completion_ms.p99") && err.contains("layered.orphaned"),
        "{err}"
    );
}

// 9. The HTML report's reproduce line works.

#[test]
fn the_html_reproduce_command_writes_the_same_report() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let html = d.path().join("report.html");
    let (code, _, err) = out(rs()
        .current_dir(d.path())
        .args(["report", "small.toml", "-o", "report.html", "--seeds", "2"])
        .args(["--set", "workload.clients=10"]));
    assert_eq!(code, 0, "{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    let cmd = page
        .split("Reproduce with <code>")
        .nth(1)
        .and_then(|s| s.split("</code>").next())
        .unwrap()
        .to_string();
    assert!(
        cmd.starts_with("retrystorm report small.toml -o report.html --seed 7 --seeds 2"),
        "{cmd}"
    );
    assert!(cmd.contains("--set workload.clients=10"), "{cmd}");
    std::fs::remove_file(&html).unwrap();
    let words: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    let (code, _, err) = out(rs().current_dir(d.path()).args(&words));
    assert_eq!(code, 0, "{cmd}: {err}");
    assert_eq!(std::fs::read_to_string(&html).unwrap(), page);
    let _ = m;
}

// 10. Wording, --jobs, --quiet.

#[test]
fn check_counts_expectations_not_checks() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let (code, stdout, err) = out(rs().arg("check").arg(&m));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.starts_with("small-herd (1 seed from 7)"), "{stdout}");
    assert!(
        stdout.contains("all 3 expectations hold (4 checks over 2 variants)"),
        "{stdout}"
    );
    let (code, _, err) = out(rs()
        .arg("check")
        .arg(&m)
        .args(["--set", "workload.clients=41"]));
    assert_eq!(code, 1);
    assert!(
        err.contains("2 of 3 expectations failed on at least one variant (3 of 4 checks failed)"),
        "{err}"
    );
    let (code, stdout, _) =
        out(rs()
            .arg("check")
            .arg(&m)
            .args(["--expect", "failed == 40", "--quiet"]));
    assert_eq!(code, 0);
    // Under --quiet the verdict names the model file: several files' lines tell apart.
    assert_eq!(
        stdout,
        format!(
            "{}: all 4 expectations hold (6 checks over 2 variants)\n",
            m.display()
        )
    );
    let (code, stdout, err) =
        out(rs()
            .arg("check")
            .arg(&m)
            .args(["--set", "workload.clients=41", "-q"]));
    assert_eq!(code, 1);
    assert!(
        !stdout.contains("PASS") && stdout.contains("FAIL"),
        "{stdout}"
    );
    assert!(err.contains("expectations failed"), "{err}");
}

#[test]
fn compare_and_check_take_jobs_and_give_the_same_answer() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let one = out(rs()
        .arg("compare")
        .arg(&m)
        .args(["--seeds", "3", "--jobs", "1"]));
    let two = out(rs()
        .arg("compare")
        .arg(&m)
        .args(["--seeds", "3", "--jobs", "2"]));
    assert_eq!(one.0, 0, "{}", one.2);
    assert_eq!(one, two);
    let (code, _, err) = out(rs()
        .arg("check")
        .arg(&m)
        .args(["--seeds", "2", "--jobs", "2"]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = out(rs().arg("compare").arg(&m).args(["--jobs", "0"]));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn merge_says_one_file() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let runs = d.path().join("runs.jsonl");
    let (code, stdout, err) = out(rs()
        .arg("sweep")
        .arg(&m)
        .args(["--vary", "workload.clients=10"])
        .arg("--out")
        .arg(&runs));
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.starts_with("small-herd: 2 runs (1 point x 2 variants x 1 seed)"),
        "{stdout}"
    );
    let (code, stdout, err) = out(rs()
        .arg("merge")
        .arg(&runs)
        .arg("-o")
        .arg(d.path().join("all.jsonl")));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.starts_with("merged 1 file: 2 of 2 runs"), "{stdout}");
}

// 11. The replicated text views.

#[test]
fn seeds_keep_the_grouped_view_and_the_recovery_column() {
    let (code, stdout, err) =
        out(rs().args(["run", HERD, "--seeds", "3", "--set", "workload.clients=30"]));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("\ncompletion ms: "), "{stdout}");
    assert!(stdout.contains("\nintents: "), "{stdout}");
    assert!(
        !stdout.contains("completion_ms.p50:") && !stdout.contains("applied_once:"),
        "{stdout}"
    );
    let (code, stdout, err) = out(rs().args([
        "compare",
        OUTAGE,
        "--seeds",
        "2",
        "--set",
        "horizon=25s",
        "--set",
        "workload.rate=300/s",
    ]));
    assert_eq!(code, 0, "{err}");
    let header = stdout.lines().nth(1).unwrap();
    assert!(header.contains("recovery ms"), "{stdout}");
    let (code, stdout, err) = out(rs().args([
        "run",
        OUTAGE,
        "--seeds",
        "2",
        "--variant",
        "full-jitter",
        "--set",
        "horizon=25s",
        "--set",
        "workload.rate=300/s",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("\nrecovery ms: "), "{stdout}");
}

/// The one-seed HTML summary shows recovery (the model has an outage) and false failures, as
/// the text table does.
#[test]
fn html_one_seed_summary_has_recovery_and_false_failures() {
    let d = tempfile::tempdir().unwrap();
    let html = d.path().join("r.html");
    let (code, _, stderr) = out(rs()
        .args(["report", OUTAGE, "--set", "horizon=20s", "-o"])
        .arg(&html));
    assert_eq!(code, 0, "{stderr}");
    let h = std::fs::read_to_string(&html).unwrap();
    let table = &h[h.find("id=\"summary-table\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains("<th>false failures</th>"), "{table}");
    assert!(table.contains("<th>recovery ms</th>"), "{table}");
    let (_, text, _) = out(rs().args(["compare", OUTAGE, "--set", "horizon=20s"]));
    // Some variant never recovers or recovers: the cell says which, as the text table does.
    assert_eq!(
        table.contains(">never<"),
        text.contains(" never "),
        "{text}\n{table}"
    );
}

// Issue 31: nothing lost.

/// A model replaying `t.csv` with its retry policy imported from `route.yaml`, in `dir`.
fn with_inputs(dir: &Path) -> PathBuf {
    std::fs::write(
        dir.join("t.csv"),
        "timestamp,class\n0.0,web\n0.01,web\n0.02,mobile\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("route.yaml"),
        "retry_policy:\n  retry_on: 5xx\n  num_retries: 2\n",
    )
    .unwrap();
    let m = dir.join("m.toml");
    std::fs::write(
        &m,
        "name = \"m\"\nhorizon = \"2s\"\n[workload]\nkind = \"trace\"\ntrace = \"t.csv\"\n[retry]\nfrom = \"envoy:route.yaml\"\n[server]\nfail = 0.5\n[[expect]]\nassert = \"retries >= 0\"\n",
    )
    .unwrap();
    m
}

#[test]
fn no_output_replaces_an_input_of_its_command() {
    let d = tempfile::tempdir().unwrap();
    let m = with_inputs(d.path());
    let trace = std::fs::read(d.path().join("t.csv")).unwrap();
    let yaml = std::fs::read(d.path().join("route.yaml")).unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    // The same file by another name: ./ prefixes and a symbolic link.
    let via_dot = d.path().join(".").join("t.csv");
    #[cfg(unix)]
    std::os::unix::fs::symlink("t.csv", d.path().join("link.csv")).unwrap();
    let m_s = m.to_str().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["run".into(), m_s.into(), "--json".into(), p("t.csv")],
            "the trace file",
        ),
        (
            vec!["run".into(), m_s.into(), "--csv".into(), p("route.yaml")],
            "the configuration file",
        ),
        (
            vec![
                "compare".into(),
                m_s.into(),
                "--svg".into(),
                via_dot.to_str().unwrap().into(),
            ],
            "the trace file",
        ),
        (
            vec!["report".into(), m_s.into(), "-o".into(), p("t.csv")],
            "the trace file",
        ),
        (
            vec!["check".into(), m_s.into(), "--junit".into(), p("t.csv")],
            "the trace file",
        ),
        (
            vec![
                "sweep".into(),
                m_s.into(),
                "--vary".into(),
                "server.fail=0.1,0.2".into(),
                "--svg".into(),
                p("t.csv"),
            ],
            "the trace file",
        ),
        (
            vec![
                "sensitivity".into(),
                m_s.into(),
                "--vary".into(),
                "server.fail=0.1,0.2".into(),
                "--metric".into(),
                "retries".into(),
                "--trajectories".into(),
                "2".into(),
                "--json".into(),
                p("route.yaml"),
            ],
            "the configuration file",
        ),
        (
            vec![
                "tune".into(),
                m_s.into(),
                "--vary".into(),
                "server.fail=0.1,0.2".into(),
                "--minimize".into(),
                "retries".into(),
                "--json".into(),
                p("t.csv"),
            ],
            "the trace file",
        ),
        #[cfg(unix)]
        (
            vec!["run".into(), m_s.into(), "--json".into(), p("link.csv")],
            "the trace file",
        ),
    ];
    for (args, what) in cases {
        let (code, _, err) = out(rs().args(&args));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(&format!("is {what}, which this command reads")),
            "{args:?}: {err}"
        );
        assert_eq!(
            std::fs::read(d.path().join("t.csv")).unwrap(),
            trace,
            "{args:?}"
        );
        assert_eq!(
            std::fs::read(d.path().join("route.yaml")).unwrap(),
            yaml,
            "{args:?}"
        );
    }
    // A baseline is an input of `check` too.
    let base = p("base.json");
    let (code, _, err) = out(rs().args(["run", m_s, "--json", &base]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = out(rs().args(["check", m_s, "--baseline", &base, "--junit", &base]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is the --baseline file, which this command reads"),
        "{err}"
    );
    // A sweep file read by `report` is its input.
    let runs = p("runs.jsonl");
    let (code, _, err) = out(rs().args([
        "sweep",
        m_s,
        "--vary",
        "server.fail=0.1,0.2",
        "--out",
        &runs,
    ]));
    assert_eq!(code, 0, "{err}");
    let before = std::fs::read(&runs).unwrap();
    let (code, _, err) = out(rs().args(["report", &runs, "--svg", &runs]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is the sweep file, which this command reads"),
        "{err}"
    );
    assert_eq!(std::fs::read(&runs).unwrap(), before);
}

#[test]
fn two_inits_racing_for_one_path_write_it_once() {
    let d = tempfile::tempdir().unwrap();
    for round in 0..8 {
        let p = d.path().join(format!("x{round}.toml"));
        let inits = (0..4).map(|_| {
            let mut c = std::process::Command::new(bin());
            c.args(["init", "-o"]).arg(&p);
            c
        });
        let refusals = ["the file exists", "another command is writing"];
        assert_eq!(racing(inits, &refusals), 1, "round {round}");
        assert!(
            std::fs::read_to_string(&p)
                .unwrap()
                .contains("name = \"starter\"")
        );
    }
    // A folder is not "the file exists".
    let (code, _, err) = out(rs().args(["init", "-o"]).arg(d.path()));
    assert_eq!(code, 2);
    assert!(err.contains("is a directory; give a file path"), "{err}");
}

#[test]
fn a_killed_writers_temporary_file_is_cleaned_on_the_next_run() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    std::fs::write(d.path().join(".o.json.k9k9k9.tmp"), "half a report").unwrap();
    let o = d.path().join("o.json");
    let (code, _, err) = out(rs().arg("run").arg(&m).arg("--json").arg(&o));
    assert_eq!(code, 0, "{err}");
    assert_eq!(entries(d.path()), ["o.json", "small.toml"]);
}

#[cfg(unix)]
#[test]
fn an_output_fifo_nobody_reads_is_refused_not_waited_on() {
    let d = tempfile::tempdir().unwrap();
    let m = small(d.path());
    let f = d.path().join("f");
    mkfifo(&f);
    let t = Instant::now();
    let (code, _, err) = out(rs().arg("report").arg(&m).arg("-o").arg(&f));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no process reads the FIFO"), "{err}");
    let (code, _, err) = out(rs().args(["init", "--force", "-o"]).arg(&f));
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no process reads the FIFO"), "{err}");
    let (code, _, err) = out(rs().args(["init", "-o"]).arg(&f));
    assert_eq!(code, 3, "{err}");
    assert!(t.elapsed() < Duration::from_secs(60));
    assert!(is_fifo(&f));
    // A socket is refused before anything runs, not after the run.
    let s = d.path().join("s.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&s).unwrap();
    let (code, _, err) = out(rs().arg("run").arg(&m).arg("--json").arg(&s));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is a socket"), "{err}");
}

#[test]
fn a_corrupt_sweep_file_is_named_as_one_not_as_a_model() {
    // `report` and `map` take a sweep file or a model: a broken sweep file was parsed as TOML
    // ("key with no value, expected `=`") and called the model file.
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("runs.jsonl");
    std::fs::write(&bad, "garbage\n").unwrap();
    let html = d.path().join("r.html");
    let (code, _, err) = out(rs().arg("report").arg(&bad).arg("-o").arg(&html));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("runs.jsonl:1: not a JSON line"), "{err}");
    let odd = d.path().join("runs.txt");
    std::fs::write(&odd, "{\"schema_version\": 1}\n").unwrap();
    let (code, _, err) = out(rs().arg("map").arg(&odd));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("runs.txt:1: "), "{err}");
    assert!(!err.contains("--vary"), "{err}");
    assert!(!html.exists());
}
