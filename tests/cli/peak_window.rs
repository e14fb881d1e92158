//! The window and per-attempt peaks from the command line: `--metric` columns that
//! appear only when asked, metric names checked before anything runs, `[[expect]]` and sweeps on
//! `attempt_peaks.N.FIELD`, the JSON fields, and the `--by-attempt` load chart.

use assert_cmd::Command;

/// The shared herd (`tests/fixtures/herd-500.toml`) with a seed, a 100 ms window and its
/// expectations.
const HERD: &str = concat!(
    "seed = 7\npeak_window = \"100ms\"\n",
    include_str!("../fixtures/herd-500.toml"),
    r#"
[[expect]]
assert = "attempt_peaks.2.peak_window >= 90"
variant = "equal"
[[expect]]
assert = "attempt_peaks.9.peak_window == 0"
[[expect]]
assert = "peak_retries_window >= 100"
variant = "equal"
"#
);

fn herd() -> (tempfile::TempDir, std::path::PathBuf) {
    super::util::in_temp("herd.toml", HERD)
}

fn cli(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("retrystorm")
        .unwrap()
        .args(args)
        .output()
        .unwrap()
}

fn stdout(args: &[&str]) -> String {
    let out = cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn metric_columns_only_when_asked() {
    let (_d, p) = herd();
    let p = p.to_str().unwrap();
    let plain = stdout(&["compare", p]);
    assert!(!plain.contains("window"), "{plain}");
    let asked = stdout(&[
        "compare",
        p,
        "--metric",
        "peak_arrivals_window",
        "--metric",
        "attempt_peaks.2.peak_window",
    ]);
    // The same table with two columns added at the end of every line.
    for (a, b) in plain.lines().zip(asked.lines()) {
        assert!(b.starts_with(a.trim_end()), "{a:?} / {b:?}");
    }
    let header = asked.lines().nth(1).unwrap();
    assert!(
        header.ends_with("peak_arrivals_window  attempt_peaks.2.peak_window"),
        "{header}"
    );
    // The cells are the JSON's values.
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&["compare", p, "--json", "-"])).unwrap();
    for (i, line) in asked.lines().skip(3).take(2).enumerate() {
        let s = &json["variants"][i]["summary"];
        let cells: Vec<&str> = line.split_whitespace().collect();
        let n = cells.len();
        let w = s["attempt_peaks"][1]["peak_window"].as_u64().unwrap();
        assert_eq!(cells[n - 1], w.to_string());
        let a = s["peak_arrivals_window"].as_u64().unwrap();
        assert_eq!(cells[n - 2].replace(',', ""), a.to_string());
        assert_eq!(s["peak_window_ms"], 100.0);
        let sum: u64 = s["attempt_peaks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["arrivals"].as_u64().unwrap())
            .sum();
        assert_eq!(sum, s["arrivals"].as_u64().unwrap());
    }
    // The markdown table and the --seeds table take the columns too.
    let md = stdout(&[
        "compare",
        p,
        "--md",
        "-",
        "--metric",
        "attempt_peaks.3.peak",
    ]);
    assert!(md.contains("| attempt\\_peaks.3.peak |"), "{md}");
    let ci = stdout(&[
        "compare",
        p,
        "--seeds",
        "2",
        "--metric",
        "attempt_peaks.7.peak",
    ]);
    assert!(
        ci.lines().nth(1).unwrap().ends_with("attempt_peaks.7.peak"),
        "{ci}"
    );
    // Attempt 7 never happened: 0 in every seed.
    assert!(ci.lines().nth(3).unwrap().ends_with(" 0"), "{ci}");
}

#[test]
fn metric_names_are_checked_before_running() {
    let (_d, p) = herd();
    let p = p.to_str().unwrap();
    for (name, says) in [
        ("peak_arrival_window", "did you mean `peak_arrivals_window`"),
        ("attempt_peaks.0.peak", "numbered from 1"),
        ("attempt_peaks.2.peek", "did you mean"),
        (
            "attempt_peaks.18446744073709551616.peak",
            "numbered 1 to 10000",
        ),
    ] {
        let out = cli(&["compare", p, "--metric", name]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("--metric {name}")) && err.contains(says),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn expectations_and_sweeps_read_attempt_metrics() {
    let (d, p) = herd();
    let p = p.to_str().unwrap();
    let out = stdout(&["check", p]);
    assert!(out.contains("all 3 expectations hold"), "{out}");
    let jsonl = d.path().join("s.jsonl");
    let table = stdout(&[
        "sweep",
        p,
        "--vary",
        "peak_window=50ms,200ms",
        "--out",
        jsonl.to_str().unwrap(),
        "--metric",
        "attempt_peaks.2.peak_window",
    ]);
    assert!(table.contains("attempt_peaks.2.peak_window"), "{table}");
}

#[test]
fn the_load_chart_splits_retries_by_attempt() {
    let (d, p) = herd();
    let p = p.to_str().unwrap();
    let svg = |extra: &[&str], name: &str| {
        let f = d.path().join(name);
        let mut args = vec!["compare", p, "--svg", f.to_str().unwrap()];
        args.extend(extra);
        stdout(&args);
        std::fs::read_to_string(f).unwrap()
    };
    let plain = svg(&[], "plain.svg");
    let split = svg(&["--by-attempt"], "split.svg");
    assert!(plain.contains("retries (in the variant"));
    assert!(!plain.contains("first retry (attempt 2)"));
    for label in [
        "first retry (attempt 2)",
        "attempt 3",
        "attempt 4",
        "retry waves peak",
    ] {
        assert!(split.contains(label), "{label}");
    }
    assert_eq!(split, svg(&["--by-attempt"], "again.svg"), "deterministic");
    // The stdout table does not change with the chart's flag.
    assert_eq!(
        stdout(&["compare", p]),
        stdout(&["compare", p, "--by-attempt"])
    );
}
