//! `retrystorm validate`: the quick part of the validation suite agrees with every
//! reference (or reports a known finding), and `--docs` rewrites only its own block.

use assert_cmd::Command;

fn retrystorm() -> Command {
    let mut c = Command::cargo_bin("retrystorm").unwrap();
    c.arg("--quiet");
    c
}

#[test]
fn the_quick_suite_agrees_with_its_references() {
    let o = retrystorm()
        .args(["validate", "--quick", "--json", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert!(rows.len() >= 25, "only {} comparisons", rows.len());
    for r in &rows {
        assert!(
            r["pass"] == true || r["known"].is_string(),
            "an unexplained difference: {r}"
        );
        assert!(r["source"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
    }
    // The article, closed forms, Brooker's script and the AWS blog are all in it.
    for src in ["the article", "closed form", "mbrooker", "AWS"] {
        assert!(
            rows.iter()
                .any(|r| r["source"].as_str().unwrap().contains(src)),
            "no comparison cites {src}"
        );
    }
}

#[test]
fn docs_gets_its_block_replaced_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v.md");
    std::fs::write(
        &p,
        "# before\n<!-- validate:begin (retrystorm validate --docs docs/validation.md) -->\nold\n<!-- validate:end -->\nafter\n",
    )
    .unwrap();
    retrystorm()
        .args(["validate", "--only", "herd", "--docs"])
        .arg(&p)
        .assert()
        .success();
    let t = std::fs::read_to_string(&p).unwrap();
    assert!(t.starts_with("# before\n<!-- validate:begin"), "{t}");
    assert!(t.ends_with("<!-- validate:end -->\nafter\n"), "{t}");
    assert!(!t.contains("\nold\n"), "{t}");
    assert!(t.contains("| Thundering herd (the article's jitter experiment) | full | peak retries per 10 ms | 158.2 (mean of 200, sd 7.900) | 159.5 ± 1.172 |"), "{t}");
}

#[test]
fn bad_requests_fail_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("plain.md");
    std::fs::write(&p, "no block here\n").unwrap();
    let o = retrystorm()
        .args(["validate", "--docs"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("validate:begin"));
    let o = retrystorm()
        .args(["validate", "--only", "hurd"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("herd"));
}
