//! `map --verdict`: each cell's analytic verdict beside the simulated share of runs that stay
//! down, in the table, the JSON and the chart; refused with a sweep file.

use super::fixtures::SPIKE_MAP;
use crate::util::{out, rs};

/// `models/metastable-spike.toml`'s `no-backoff`, cut to 40 s, over capacity and attempts.
fn map(extra: &[&str]) -> (i32, String, String) {
    let mut c = rs();
    c.args(SPIKE_MAP)
        .args(["--set", "horizon=40s", "--seeds", "2", "--within", "10s"])
        .args([
            "--vary",
            "server.capacity=8,14",
            "--vary",
            "retry.max_attempts=1,4",
        ])
        .args(extra);
    out(&mut c)
}

#[test]
fn map_verdict_puts_the_analytic_verdict_beside_each_cell() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("map.svg");
    let (code, json, err) = map(&["--verdict", "--json", "-", "--svg", svg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for c in cells {
        let verdict = c["analytic_verdict"].as_str().unwrap();
        let down = c["analytic_down"].as_bool().unwrap();
        let stays = c["share_down"].as_f64().unwrap() >= 0.5;
        assert_eq!(c["agrees"].as_bool(), Some(down == stays), "{c}");
        // Eight workers cannot carry 750/s; fourteen without retries have no all-fail state.
        match (c["x"].as_str().unwrap(), c["y"].as_str().unwrap()) {
            ("8", _) => assert_eq!(verdict, "overloaded", "{c}"),
            ("14", "1") => assert_eq!((verdict, down), ("stable", false), "{c}"),
            _ => {}
        }
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("analytic verdict (S"), "{chart}");
    assert!(chart.contains("100.0% O\n"), "{chart}");
    let (_, table, _) = map(&["--verdict"]);
    assert!(
        table.contains("analytic verdict") && table.contains("overloaded"),
        "{table}"
    );
    assert!(table.contains("judged cells"), "{table}");
    // Without the flag the map has none of it.
    let (_, plain, _) = map(&["--json", "-"]);
    assert!(!plain.contains("analytic_verdict"), "{plain}");
}

#[test]
fn map_verdict_needs_the_model_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("runs.jsonl");
    let (code, _, err) = map(&["--out", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut c = rs();
    c.args(["map", f.to_str().unwrap(), "--verdict"]);
    let (code, _, err) = out(&mut c);
    assert_eq!(code, 2);
    assert!(err.contains("--verdict judges each cell's model"), "{err}");
}
