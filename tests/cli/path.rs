//! The request path from the command line: per-tier CSV and chart, and the stack model.

use super::util::json_stdout;
use assert_cmd::Command;

fn bin() -> Command {
    Command::cargo_bin("retrystorm").unwrap()
}

const PATH_MODEL: &str = r#"
name = "path"
[workload]
kind = "open"
rate = "200/s"
intents = 300
[retry]
max_attempts = 3
timeout = "100ms"
[[tier]]
name = "gateway"
server = { service = "1ms" }
retry = { max_attempts = 2, timeout = "40ms" }
network = { latency = "1ms" }
[server]
capacity = 2
service = "exp(5ms)"
fail = 0.2
[[variant]]
name = "a"
[[variant]]
name = "b"
tier = [{ name = "gateway", server = { service = "1ms" }, retry = { max_attempts = 1 } }]
"#;

#[test]
fn tiers_csv_and_chart() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("path.toml");
    std::fs::write(&model, PATH_MODEL).unwrap();
    let csv = dir.path().join("tiers.csv");
    let svg = dir.path().join("tiers.svg");
    let json = dir.path().join("r.json");
    bin()
        .args(["compare", model.to_str().unwrap(), "-q"])
        .args(["--tiers-csv", csv.to_str().unwrap()])
        .args(["--tiers-svg", svg.to_str().unwrap()])
        .args(["--json", json.to_str().unwrap()])
        .assert()
        .success();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "variant,tier,bucket,start_ms,first,retries,arrivals,queue_len,busy"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // Both variants, both tiers; each tier's arrivals add up to its summary's.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for (v, name) in ["a", "b"].iter().enumerate() {
        for (t, tier) in ["gateway", "server"].iter().enumerate() {
            let sum: u64 = rows
                .iter()
                .filter(|r| r[0] == *name && r[1] == *tier)
                .map(|r| r[6].parse::<u64>().unwrap())
                .sum();
            let want = r["variants"][v]["summary"]["tiers"][t]["arrivals"]
                .as_u64()
                .unwrap();
            assert_eq!(sum, want, "{name} {tier}");
            assert!(want > 0);
        }
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.starts_with("<svg") && chart.contains("tier 1: server"),
        "{}",
        &chart[..200]
    );
    assert!(chart.contains("tier 0: gateway"));
}

#[test]
fn the_stack_model_loads_and_its_tiers_are_reported() {
    let r = json_stdout(
        bin()
            .args([
                "run",
                "models/stack.toml",
                "--variant",
                "retry at the client only",
                "--json",
                "-",
            ])
            .args(["--set", "workload.intents=20000"]),
    );
    let tiers = r["variants"][0]["summary"]["tiers"].as_array().unwrap();
    let names: Vec<&str> = tiers.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["gateway", "service", "server"]);
    let layers = r["variants"][0]["summary"]["layered"]["layers"]
        .as_array()
        .unwrap();
    assert_eq!(layers.len(), 3);
    assert_eq!(layers[0]["name"], "client");
}

#[test]
fn the_html_report_shows_every_tier() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("path.toml");
    std::fs::write(&model, PATH_MODEL).unwrap();
    let html = dir.path().join("r.html");
    bin()
        .args([
            "report",
            model.to_str().unwrap(),
            "-q",
            "-o",
            html.to_str().unwrap(),
        ])
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"tiers-chart\""), "no tiers chart");
    assert!(page.contains("tier 0: gateway"));
    // A one-tier model has no tiers chart.
    let flat = dir.path().join("flat.toml");
    std::fs::write(&flat, "[workload]\nclients = 10\n[server]\nfail = 0.5\n").unwrap();
    bin()
        .args([
            "report",
            flat.to_str().unwrap(),
            "-q",
            "-o",
            html.to_str().unwrap(),
        ])
        .assert()
        .success();
    assert!(
        !std::fs::read_to_string(&html)
            .unwrap()
            .contains("tiers-chart")
    );
}

#[test]
fn the_run_view_has_a_line_per_hop_and_per_tier() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("path.toml");
    std::fs::write(&model, PATH_MODEL).unwrap();
    let out = bin()
        .args(["run", model.to_str().unwrap(), "--variant", "a", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "hop client:",
        "hop gateway:",
        "tier gateway:",
        "tier server:",
        "bottom:",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(line)),
            "{line} missing in\n{text}"
        );
    }
    assert!(!text.contains('{'), "raw JSON in the human view:\n{text}");
}
