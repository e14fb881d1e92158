//! Ctrl-C (SIGINT) during a long run: the runs stop, the outputs are written from what was
//! simulated so far, marked truncated, and the exit code is 130 (`docs/cli.md`, "Ctrl-C").

use super::util::{bin, read_json};
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// 100,000 arrivals a second for an hour (minutes of work, announced by a note before it
/// starts), on the direct path and on the event loop.
const LONG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/long.toml");

/// Runs `retrystorm ARGS`, sends SIGINT once it has announced the run, and returns its exit
/// code, stdout and stderr (the announcement included).
fn interrupted(args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    // The size note comes after the handler is installed and before the first run starts.
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.contains("Ctrl-C stops it"), "{first}");
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("still running 60 s after SIGINT: {rest}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.code().unwrap_or(-1),
        reader.join().unwrap(),
        first + &rest,
    )
}

#[test]
fn ctrl_c_stops_a_run_and_prints_what_was_simulated() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let (code, stdout, stderr) = interrupted(&["run", LONG, "--json", json.to_str().unwrap()]);
    assert_eq!(code, 130, "{stderr}");
    assert!(
        stderr.contains("warning: long: truncated by Ctrl-C at ")
            && stderr.contains("its summary is partial (\"truncated\": true)"),
        "{stderr}"
    );
    assert!(
        stderr.trim_end().ends_with(
            "error: interrupted by Ctrl-C; the outputs hold the runs as far as they got (\"truncated\": true)"
        ),
        "{stderr}"
    );
    // The table is printed, its `ended` row saying so.
    assert!(
        stdout.contains("truncated by Ctrl-C (totals are partial) at "),
        "{stdout}"
    );
    let s = &read_json(&json)["variants"][0]["summary"];
    assert_eq!(s["ended"], "interrupted");
    assert_eq!(s["truncated"], true);
    let end = s["end_ms"].as_f64().unwrap();
    assert!(end > 0.0 && end < 3_600_000.0, "{end}");
    assert!(s["intents"].as_u64().unwrap() > 0);
}

#[test]
fn ctrl_c_stops_every_run_of_a_compare() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("compare.json");
    let (code, stdout, stderr) = interrupted(&[
        "compare",
        LONG,
        "--json",
        json.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    assert_eq!(code, 130, "{stderr}");
    let rep = read_json(&json);
    let variants = rep["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2);
    for v in variants {
        let s = &v["summary"];
        assert_eq!(s["ended"], "interrupted", "{}", v["name"]);
        assert_eq!(s["truncated"], true);
        assert!(
            stderr.contains(&format!(
                "warning: {}: truncated by Ctrl-C at ",
                v["name"].as_str().unwrap()
            )),
            "{stderr}"
        );
        // The table's note for each row.
        assert!(
            stdout.contains(&format!(
                "note: {} truncated by Ctrl-C at ",
                v["name"].as_str().unwrap()
            )),
            "{stdout}"
        );
    }
}
