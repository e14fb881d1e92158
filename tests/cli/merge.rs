//! Sweeps a scheduler can trust: the sweep header records the retrystorm
//! version and a fingerprint of every file the model reads; `merge` and `sweep --resume` refuse
//! a mismatch (exit 2), and `merge` with runs missing exits 5 unless `--partial`.

use crate::util::{out, rs, write};
use std::path::Path;

const MODEL: &str = r#"
name = "traced"
seed = 3
[workload]
kind = "trace"
trace = "logs/t.csv"
[server]
capacity = 2
service = "10ms"
[retry]
max_attempts = 3
base = "50ms"
"#;

const TRACE: &str = "timestamp\n0\n0.1\n0.2\n0.5\n1\n";

/// A folder with the model and its trace.
fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("logs")).unwrap();
    write(d.path(), "logs/t.csv", TRACE);
    write(d.path(), "m.toml", MODEL);
    d
}

/// `retrystorm ARGS` run in `dir`: exit code, stdout, stderr.
fn rs_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    out(rs().current_dir(dir).args(args))
}

/// A sweep of 8 runs (2 points x 1 variant x 4 seeds) into `file`, with `extra` flags.
fn sweep(dir: &Path, file: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "sweep",
        "m.toml",
        "--vary",
        "retry.base=50ms,100ms",
        "--seeds",
        "4",
        "--out",
        file,
    ];
    args.extend_from_slice(extra);
    rs_in(dir, &args)
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn the_header_records_the_version_and_every_input() {
    let d = setup();
    assert_eq!(sweep(d.path(), "s.jsonl", &[]).0, 0);
    let header: serde_json::Value =
        serde_json::from_str(read(d.path(), "s.jsonl").lines().next().unwrap()).unwrap();
    assert_eq!(header["retrystorm"], env!("CARGO_PKG_VERSION"));
    let inputs = header["inputs"].as_object().unwrap();
    assert_eq!(inputs.len(), 1, "{inputs:?}");
    // The FNV-1a 64 of the trace's bytes.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in TRACE.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    assert_eq!(inputs["trace:logs/t.csv"], format!("{h:016x}"));
}

#[test]
fn merge_refuses_shards_of_another_version() {
    let d = setup();
    assert_eq!(sweep(d.path(), "s1.jsonl", &["--shard", "1/2"]).0, 0);
    assert_eq!(sweep(d.path(), "s2.jsonl", &["--shard", "2/2"]).0, 0);
    let ours = format!("\"retrystorm\":\"{}\"", env!("CARGO_PKG_VERSION"));
    let text = read(d.path(), "s2.jsonl");
    assert!(text.contains(&ours), "{text}");
    write(
        d.path(),
        "s2.jsonl",
        &text.replacen(&ours, "\"retrystorm\":\"0.0.9\"", 1),
    );
    let (code, _, err) = rs_in(
        d.path(),
        &["merge", "s1.jsonl", "s2.jsonl", "-o", "all.jsonl"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "shard s2.jsonl was made by retrystorm 0.0.9, s1.jsonl by retrystorm {}",
            env!("CARGO_PKG_VERSION")
        )),
        "{err}"
    );
    assert!(!d.path().join("all.jsonl").exists());
}

#[test]
fn merge_refuses_shards_of_a_changed_trace() {
    let d = setup();
    assert_eq!(sweep(d.path(), "s1.jsonl", &["--shard", "1/2"]).0, 0);
    write(d.path(), "logs/t.csv", &TRACE.replace("0.5", "0.6"));
    assert_eq!(sweep(d.path(), "s2.jsonl", &["--shard", "2/2"]).0, 0);
    let (code, _, err) = rs_in(
        d.path(),
        &["merge", "s1.jsonl", "s2.jsonl", "-o", "all.jsonl"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "shard s2.jsonl read other contents of the trace file logs/t.csv than s1.jsonl"
        ),
        "{err}"
    );
}

#[test]
fn merge_with_a_shard_missing_exits_5_unless_partial() {
    let d = setup();
    assert_eq!(sweep(d.path(), "whole.jsonl", &[]).0, 0);
    assert_eq!(sweep(d.path(), "s1.jsonl", &["--shard", "1/2"]).0, 0);
    let (code, stdout, err) = rs_in(d.path(), &["merge", "s1.jsonl", "-o", "all.jsonl"]);
    assert_eq!(code, 5, "{err}");
    assert!(stdout.contains("merged 1 file: 4 of 8 runs"), "{stdout}");
    assert!(
        err.contains("error: 4 of 8 runs present; 4 missing: shard 2/2 (--shard);"),
        "{err}"
    );
    assert!(err.contains("--partial"), "{err}");
    // What there is was written: `sweep --resume` completes it into the unsharded bytes.
    assert_eq!(sweep(d.path(), "all.jsonl", &["--resume"]).0, 0);
    assert_eq!(read(d.path(), "all.jsonl"), read(d.path(), "whole.jsonl"));

    let (code, _, err) = rs_in(
        d.path(),
        &["merge", "s1.jsonl", "-o", "part.jsonl", "--partial"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: 4 of 8 runs present; 4 missing: shard 2/2 (--shard) (--partial"),
        "{err}"
    );
    assert_eq!(read(d.path(), "part.jsonl"), read(d.path(), "s1.jsonl"));

    // A shard cut short is named by its run ranges.
    let cut: String = read(d.path(), "whole.jsonl")
        .lines()
        .take(6)
        .map(|l| format!("{l}\n"))
        .collect();
    write(d.path(), "cut.jsonl", &cut);
    let (code, _, err) = rs_in(d.path(), &["merge", "cut.jsonl", "-o", "c.jsonl"]);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("3 missing: runs 5-7;"), "{err}");
}

#[test]
fn resume_refuses_a_changed_trace_or_another_version() {
    let d = setup();
    let (code, _, err) = sweep(d.path(), "r.jsonl", &["--limit", "3"]);
    assert_eq!(code, 0, "{err}");
    let begun = read(d.path(), "r.jsonl");
    write(d.path(), "logs/t.csv", &TRACE.replace("0.5", "0.6"));
    let (code, _, err) = sweep(d.path(), "r.jsonl", &["--resume"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "--resume: the trace file logs/t.csv changed since r.jsonl was begun; restore it, or use another --out"
        ),
        "{err}"
    );
    assert_eq!(
        read(d.path(), "r.jsonl"),
        begun,
        "a refused resume writes nothing"
    );

    write(d.path(), "logs/t.csv", TRACE);
    let ours = format!("\"retrystorm\":\"{}\"", env!("CARGO_PKG_VERSION"));
    write(
        d.path(),
        "r.jsonl",
        &begun.replacen(&ours, "\"retrystorm\":\"0.0.9\"", 1),
    );
    let (code, _, err) = sweep(d.path(), "r.jsonl", &["--resume"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "--resume: r.jsonl was begun by retrystorm 0.0.9; this is retrystorm {}",
            env!("CARGO_PKG_VERSION")
        )),
        "{err}"
    );
    // With the same files and version it continues.
    write(d.path(), "r.jsonl", &begun);
    let (code, _, err) = sweep(d.path(), "r.jsonl", &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(read(d.path(), "r.jsonl").lines().count(), 9);
}

/// Files from before the header recorded the version and inputs: merged among themselves with a
/// note, refused next to a new file and by `--resume`.
#[test]
fn old_headers_merge_with_a_note_and_are_not_resumed() {
    let d = setup();
    assert_eq!(sweep(d.path(), "s1.jsonl", &["--shard", "1/2"]).0, 0);
    assert_eq!(sweep(d.path(), "s2.jsonl", &["--shard", "2/2"]).0, 0);
    let old = |t: &str| {
        let (head, rest) = t.split_once('\n').unwrap();
        let mut h: serde_json::Value = serde_json::from_str(head).unwrap();
        let o = h.as_object_mut().unwrap();
        o.remove("retrystorm");
        o.remove("inputs");
        format!("{}\n{rest}", serde_json::to_string(&h).unwrap())
    };
    write(d.path(), "o1.jsonl", &old(&read(d.path(), "s1.jsonl")));
    write(d.path(), "o2.jsonl", &old(&read(d.path(), "s2.jsonl")));
    let (code, _, err) = rs_in(
        d.path(),
        &["merge", "o1.jsonl", "o2.jsonl", "-o", "o.jsonl"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("note: o1.jsonl was made by a retrystorm that recorded neither its version nor its input files"),
        "{err}"
    );
    let (code, _, err) = rs_in(
        d.path(),
        &["merge", "s1.jsonl", "o2.jsonl", "-o", "x.jsonl"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("shard o2.jsonl was made by a retrystorm that did not record its version and input files, s1.jsonl by retrystorm"),
        "{err}"
    );
    let (code, _, err) = sweep(d.path(), "o1.jsonl", &["--shard", "1/2", "--resume"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--resume: o1.jsonl was begun by a retrystorm that did not record its version and input files"),
        "{err}"
    );
}
