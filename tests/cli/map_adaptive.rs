//! `map --adaptive`: on `models/metastable-spike.toml`'s documented map (a 4 x 4 corner of its
//! grid), each cell stops once its interval is clear, with the full map's verdict and runs.

use super::fixtures::SPIKE_MAP;
use crate::util::{out, rs};
use serde_json::Value;
use std::path::Path;

/// The documented map's `no-backoff` over every third capacity and attempt count, 20 seeds.
fn map(extra: &[&str]) -> (i32, String, String) {
    let mut c = rs();
    c.args(SPIKE_MAP)
        .args(["--vary", "server.capacity=5..14:3"])
        .args(["--vary", "retry.max_attempts=1..10:3", "--seeds", "20"])
        .args(extra);
    out(&mut c)
}

fn json(extra: &[&str]) -> Value {
    let (code, text, err) = map(&[extra, &["--json", "-"]].concat());
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&text).unwrap()
}

/// Each `(x, y)` cell's recoveries, seed by seed, from a full map's sweep file.
fn recoveries(f: &Path) -> Vec<((String, String), Vec<bool>)> {
    let text = std::fs::read_to_string(f).unwrap();
    let mut cells: Vec<((String, String), Vec<bool>)> = Vec::new();
    for line in text.lines().skip(1) {
        let r: Value = serde_json::from_str(line).unwrap();
        let key = (
            r["params"][0][1].as_str().unwrap().to_string(),
            r["params"][1][1].as_str().unwrap().to_string(),
        );
        let recovered = !r["summary"]["recovery_ms"].is_null();
        match cells.last_mut() {
            Some((k, runs)) if *k == key => runs.push(recovered),
            _ => cells.push((key, vec![recovered])),
        }
    }
    cells
}

#[test]
fn an_adaptive_map_decides_as_the_full_map_for_a_third_of_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("full.jsonl");
    let full = json(&["--out", f.to_str().unwrap()]);
    let adaptive = json(&["--adaptive", "--jobs", "1"]);
    let (full_cells, cells) = (
        full["cells"].as_array().unwrap(),
        adaptive["cells"].as_array().unwrap(),
    );
    let seeds = recoveries(&f);
    assert_eq!((cells.len(), seeds.len()), (16, 16));
    for ((c, whole), ((x, y), runs)) in cells.iter().zip(full_cells).zip(&seeds) {
        assert_eq!(
            (c["x"].as_str(), c["y"].as_str()),
            (Some(x.as_str()), Some(y.as_str()))
        );
        // The adaptive cell's runs are the full map's first ones, seed for seed.
        let n = c["runs"].as_u64().unwrap() as usize;
        assert!(n % 5 == 0 && n <= 20, "{c}");
        let recovered = runs[..n].iter().filter(|r| **r).count() as u64;
        assert_eq!(c["recovered"].as_u64(), Some(recovered), "{c}");
        let down = whole["share_down"].as_f64().unwrap() >= 0.5;
        match c["decided"].as_str().unwrap() {
            "stays down" => assert!(down, "{c} against {whole}"),
            "recovers" => assert!(!down, "{c} against {whole}"),
            _ => assert_eq!((n, &c["share_down"]), (20, &whole["share_down"]), "{c}"),
        }
    }
    let spent = &adaptive["adaptive"];
    let total = spent["runs"].as_u64().unwrap();
    assert_eq!(spent["full_runs"].as_u64(), Some(320));
    assert!(total * 3 <= 320, "{total} runs of 320");
    // Capacity 8 stays down and 11 recovers: the edge between them is bisected at 9.
    let added = spent["added"].as_array().unwrap();
    assert!(
        !added.is_empty() && added.iter().all(|a| a["x"] == "9"),
        "{spent}"
    );
    // The thread count changes nothing; the table says what was spent.
    assert_eq!(json(&["--adaptive", "--jobs", "2"]), adaptive);
    let (_, table, _) = map(&["--adaptive", "--refine", "0", "--jobs", "2"]);
    assert!(
        table.contains("decided") && table.contains("on 0 cells added by --refine 0"),
        "{table}"
    );
}

#[test]
fn adaptive_refuses_what_it_cannot_do() {
    let refused = |extra: &[&str], want: &str| {
        let (code, _, err) = map(extra);
        assert_eq!((code, err.trim()), (2, format!("error: {want}").as_str()));
    };
    refused(
        &["--adaptive", "--shard", "1/2", "--out", "s.jsonl"],
        "--adaptive decides each cell's next runs from its last ones, so it cannot be split into shards: run the whole map without --shard",
    );
    refused(
        &["--adaptive", "--out", "runs.jsonl"],
        "--adaptive runs only some of each cell's seeds, and `map FILE` needs them all: drop --out (the map's --json holds every cell)",
    );
    refused(
        &["--adaptive", "--metric", "peak_retries"],
        "--adaptive stops a cell once the share of its runs that stays down is clear: it maps recovery, not another --metric",
    );
    refused(
        &["--refine", "2"],
        "--refine bisects the edges between an adaptive map's cells whose verdicts differ: add --adaptive",
    );
}
