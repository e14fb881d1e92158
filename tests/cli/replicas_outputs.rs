//! The replica outputs (docs/replicas.md): `--replicas-csv`, the replicas block under
//! the comparison table, and a model without replicas left as it was.

use super::fixtures::EJECTION_RUN;
use super::outputs::{HERD, SMALL_HERD_RUN};
use super::util::{out, rs};

/// `models/one-bad-replica.toml` cut to 20 s (replica 2 fails from 10 s): seven variants of five
/// replicas, 200 buckets of 100 ms.
fn bad_replica(extra: &[&str]) -> (i32, String, String) {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/models/one-bad-replica.toml");
    out(rs()
        .args(["compare", model, "--set", "horizon=20s"])
        .args(extra))
}

#[test]
fn replicas_csv_has_a_row_per_variant_replica_and_bucket() {
    let d = tempfile::tempdir().unwrap();
    let (csv, json) = (d.path().join("r.csv"), d.path().join("r.json"));
    let (code, _, err) = bad_replica(&[
        "--replicas-csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "variant,tier,replica,bucket,start_ms,arrivals,served,rejected,ejections"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 7 * 5 * 200);
    assert!(rows.iter().all(|r| r[1] == "server"));
    assert_eq!(rows[1][..5], ["same-host", "server", "0", "1", "100"]);
    // Each replica's rows add up to its summary row.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for v in r["variants"].as_array().unwrap() {
        let name = v["name"].as_str().unwrap();
        for (k, rep) in v["summary"]["tiers"][0]["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let sum = |col: usize| -> u64 {
                rows.iter()
                    .filter(|r| r[0] == name && r[2] == k.to_string())
                    .map(|r| r[col].parse::<u64>().unwrap())
                    .sum()
            };
            assert_eq!(sum(5), rep["arrivals"].as_u64().unwrap(), "{name} {k}");
            assert_eq!(sum(6), rep["served"].as_u64().unwrap(), "{name} {k}");
            assert_eq!(sum(8), rep["ejections"].as_u64().unwrap(), "{name} {k}");
        }
    }
    // The ejection variant's one ejection, of replica 2, in the bucket the detector acted.
    let ejected: Vec<&Vec<&str>> = rows.iter().filter(|r| r[8] != "0").collect();
    assert_eq!(ejected.len(), 2, "ejection and other-host+ejection");
    assert!(ejected.iter().all(|r| r[2] == "2" && r[8] == "1"));
}

#[test]
fn the_replicas_block_lists_each_replica_under_its_variant_and_tier() {
    let (code, stdout, err) = bad_replica(&[]);
    assert_eq!(code, 0, "{err}");
    let block = &stdout[stdout.rfind("\nvariant ").expect("a replicas block")..];
    let lines: Vec<&str> = block.trim().lines().collect();
    assert!(
        lines[0].starts_with("variant") && lines[0].ends_with("errors  ejections"),
        "{block}"
    );
    assert_eq!(lines.len(), 2 + 7 * 5, "{block}");
    assert!(lines[2].starts_with("same-host ") && lines[2].contains(" server "));
    assert!(lines[3].starts_with("      "), "{block}");
    // The markdown has the same block as a second table.
    let (code, md, err) = bad_replica(&["--md", "-"]);
    assert_eq!(code, 0, "{err}");
    assert!(md.contains("\n| variant | tier | replica | arrivals | served | rejected | errors | ejections |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n| same-host | server | 0 |"), "{md}");
    // run's view: the tier, each replica indented under it.
    let (code, view, err) = out(rs().args(EJECTION_RUN));
    assert_eq!(code, 0, "{err}");
    assert!(view.contains("\ntier server: "), "{view}");
    let r2 = view
        .lines()
        .find(|l| l.starts_with("  replica 2:"))
        .expect("replica 2's row");
    assert!(r2.ends_with(", ejections 1"), "{r2}");
}

#[test]
fn a_model_without_replicas_writes_what_it_wrote_and_refuses_the_replicas_chart() {
    let d = tempfile::tempdir().unwrap();
    let csv = d.path().join("r.csv");
    let svg = d.path().join("r.svg");
    let herd = |extra: &[&str]| {
        out(rs()
            .args(["compare", HERD, "--set", "workload.clients=50"])
            .args(extra))
    };
    let (code, table, err) = herd(&["--replicas-csv", csv.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "variant,tier,replica,bucket,start_ms,arrivals,served,rejected,ejections\n"
    );
    // The table, the markdown and run's view have no replicas block.
    let (_, plain, _) = herd(&[]);
    assert_eq!(table, plain);
    assert!(!plain.contains("replica"), "{plain}");
    let (_, md, _) = herd(&["--md", "-"]);
    assert!(!md.contains("replica"), "{md}");
    let (_, view, _) = out(rs().args(SMALL_HERD_RUN));
    assert!(
        !view.contains("replica") && !view.contains("tier "),
        "{view}"
    );
    // The chart has nothing to draw: refused before the runs, nothing written.
    let (code, _, err) = herd(&["--replicas-svg", svg.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--replicas-svg: no tier of the model has replicas"),
        "{err}"
    );
    assert!(!svg.exists());
}
