//! `workload.kind = "trace"` from the command line: the trace file is read relative to the model,
//! CSV and JSON Lines give the same replay, `speed` scales the load, bad rows exit 2 with place.

use super::util::{out, rs};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

fn summary(json: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v.pointer("/variants/0/summary")
        .or_else(|| v.get("summary"))
        .cloned()
        .unwrap_or(v)
}

const MODEL: &str = "[workload]\nkind = \"trace\"\ntrace = \"logs/TRACE\"\n[server]\ncapacity = 1\nservice = \"10ms\"\n";

#[test]
fn csv_and_jsonl_traces_replay_the_same_arrivals() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "logs/a.csv",
        "timestamp,class,key\n100.0,web,r1\n100.004,web,r2\n101.5,api,r3\n",
    );
    write(
        dir.path(),
        "logs/a.jsonl",
        "{\"timestamp\": 100.0, \"class\": \"web\", \"key\": \"r1\"}\n{\"timestamp\": \"100004ms\", \"class\": \"web\"}\n{\"timestamp\": 101.5, \"class\": \"api\"}\n",
    );
    let mut results = Vec::new();
    for f in ["a.csv", "a.jsonl"] {
        let m = write(dir.path(), &format!("{f}.toml"), &MODEL.replace("TRACE", f));
        let (code, stdout, stderr) = out(rs().arg("run").arg(&m).args(["--json", "-"]));
        assert_eq!(code, 0, "{stderr}");
        let s = summary(&stdout);
        assert_eq!(s["intents"], 3, "{s}");
        assert_eq!(s["last_arrival_ms"], 1500.0, "{s}");
        // The second request waited 6 ms behind the first (one worker, 10 ms each).
        assert_eq!(s["completion_ms"]["max"], 16.0, "{s}");
        results.push(s);
    }
    assert_eq!(results[0], results[1]);
}

#[test]
fn speed_two_replays_twice_as_fast() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "logs/t.csv", "timestamp\n0\n1\n2\n4\n");
    let m = write(dir.path(), "m.toml", &MODEL.replace("TRACE", "t.csv"));
    let last = |speed: &str| {
        let (code, stdout, stderr) = out(rs().arg("run").arg(&m).args([
            "--set",
            &format!("workload.speed={speed}"),
            "--json",
            "-",
        ]));
        assert_eq!(code, 0, "{stderr}");
        summary(&stdout)["last_arrival_ms"].as_f64().unwrap()
    };
    assert_eq!(last("1.0"), 4000.0);
    assert_eq!(last("2.0"), 2000.0);
    // The same run twice gives the same bytes.
    let once = out(rs().arg("run").arg(&m).args(["--json", "-"])).1;
    assert_eq!(once, out(rs().arg("run").arg(&m).args(["--json", "-"])).1);
}

#[test]
fn bad_traces_exit_2_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "logs/bad.csv",
        "timestamp,class\n1,a\n2,b\nsoon,c\n",
    );
    write(
        dir.path(),
        "logs/extra.jsonl",
        "{\"timestamp\": 1, \"status\": 200}\n",
    );
    let cases = [
        ("bad.csv", "bad.csv:4:1: timestamp:"),
        ("extra.jsonl", "extra.jsonl:1:18: status: unknown field"),
        ("missing.csv", "workload.trace:"),
    ];
    for (f, want) in cases {
        let m = write(dir.path(), &format!("{f}.toml"), &MODEL.replace("TRACE", f));
        for cmd in ["run", "check", "compare"] {
            let (code, _, stderr) = out(rs().arg(cmd).arg(&m));
            assert_eq!(code, 2, "{cmd} {f}: {stderr}");
            assert!(stderr.contains(want), "{cmd} {f}: {stderr}");
        }
    }
}

#[test]
fn the_example_replay_model_holds_its_expectations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, stdout, stderr) = out(rs()
        .current_dir(std::env::temp_dir())
        .arg("check")
        .arg(root.join("models/trace-replay.toml")));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("all 3 expectations hold"), "{stdout}");
}
