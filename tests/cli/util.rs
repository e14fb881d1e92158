//! Helpers every topic module shares: the binary's command, its exit code and output, model
//! files in temporary folders, JSON read back, and the run-twice determinism check.

#![allow(dead_code)]

use assert_cmd::Command;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The shipped models' folder.
pub const MODELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models");

/// The `retrystorm` binary this test build made.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_retrystorm"))
}

/// A command running the binary, stopped after two minutes (a hang fails the test).
pub fn rs() -> Command {
    let mut c = Command::new(bin());
    c.timeout(Duration::from_secs(120));
    c
}

/// Runs the command: its exit code (-1 when killed), stdout and stderr.
pub fn out(c: &mut Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Starts every command at once, then waits for them all: how many exited 0. Each other one
/// must exit 2 with one of `refusals` in its stderr (any other exit fails the test): commands
/// racing for one output file.
pub fn racing(cmds: impl IntoIterator<Item = std::process::Command>, refusals: &[&str]) -> usize {
    use std::process::Stdio;
    let kids: Vec<_> = cmds
        .into_iter()
        .map(|mut c| {
            c.stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ok = 0;
    for k in kids {
        let o = k.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        match o.status.code() {
            Some(0) => ok += 1,
            Some(2) => assert!(refusals.iter().any(|r| err.contains(r)), "{err}"),
            c => panic!("{c:?}: {err}"),
        }
    }
    ok
}

/// Runs the command, which must succeed, and reads its stdout as JSON (`--json -`).
pub fn json_stdout(c: &mut Command) -> serde_json::Value {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `compare M --seeds SEEDS --json base.json` beside the model `m`, which must succeed: the
/// baseline `check --baseline` reads. Returns its path.
pub fn baseline(m: &Path, seeds: &str) -> PathBuf {
    let base = m.with_file_name("base.json");
    let (code, _, err) = out(rs()
        .arg("compare")
        .arg(m)
        .args(["--seeds", seeds, "--json"])
        .arg(&base));
    assert_eq!(code, 0, "{err}");
    base
}

/// `check M --baseline BASE`: the model `m` checked against the baseline `base`; a test adds
/// its flags.
pub fn check_against(m: &Path, base: &Path) -> Command {
    let mut c = rs();
    c.arg("check").arg(m).arg("--baseline").arg(base);
    c
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A new temporary folder holding the file `name` written with `text`: the folder (removed when
/// it drops) and the file's path.
pub fn in_temp(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), name, text);
    (dir, p)
}

/// The path of the shipped model `name` (e.g. `thundering-herd.toml`).
pub fn shipped(name: &str) -> String {
    format!("{MODELS}/{name}")
}

/// A file's JSON.
pub fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// madsim's run-twice check: runs `f` twice, each time in a fresh temporary folder, and asserts
/// that both give the same result (the bytes of what it ran); returns that result.
pub fn assert_deterministic<T: PartialEq + Debug>(what: &str, mut f: impl FnMut(&Path) -> T) -> T {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = f(d1.path());
    let b = f(d2.path());
    assert!(a == b, "{what}: two runs gave different bytes");
    a
}
