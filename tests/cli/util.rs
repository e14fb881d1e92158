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

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
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
