//! Reports and their commands end to end: `--md`, `check --baseline`, `init`,
//! `completions`, and the chart flags.

use super::fixtures::small_herd;
use super::util::{assert_deterministic, baseline, check_against, out, rs};
use std::path::{Path, PathBuf};

const HERD: &str = small_herd!();

fn model(dir: &Path) -> PathBuf {
    let p = dir.join("herd.toml");
    std::fs::write(&p, HERD).unwrap();
    p
}

#[test]
fn markdown_table_for_compare_and_seeds() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path());
    let (code, md, _) = out(rs().arg("compare").arg(&m).args(["--md", "-"]));
    assert_eq!(code, 0);
    assert!(
        md.starts_with("**small-herd** (seed 7)\n\n| variant | intents |"),
        "{md}"
    );
    assert!(md.contains("| --- | ---: |"), "{md}");
    assert!(md.contains("| no-jitter | 40 |"), "{md}");
    let p = d.path().join("t.md");
    let (code, stdout, _) = out(rs()
        .arg("compare")
        .arg(&m)
        .arg("--seeds")
        .arg("3")
        .arg("--md")
        .arg(&p));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("means over 3 seeds"),
        "the table still prints"
    );
    // The headings name the seeds as the charts' titles do, not "seed 7" alone.
    assert!(
        stdout.starts_with("small-herd (3 seeds, 7..9)\n"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(&p).unwrap();
    assert!(md.contains(" ± "), "{md}");
    assert!(md.starts_with("**small-herd** (3 seeds, 7..9)\n\n"), "{md}");
}

#[test]
fn baseline_passes_unchanged_and_fails_a_regression() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path());
    let base = baseline(&m, "3");
    let (code, stdout, _) = out(&mut check_against(&m, &base));
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("no metric regressed"), "{stdout}");
    // A shorter base delay bunches the retries: peak retries of `full` go up.
    let (code, stdout, stderr) = out(check_against(&m, &base).args([
        "--set",
        "retry.base=20ms",
        "--tolerance",
        "5%",
        "--metric",
        "peak_retries",
    ]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("FAIL  full       peak_retries:"),
        "{stdout}"
    );
    assert!(stdout.contains("(baseline "), "{stdout}");
    assert!(stderr.contains("regressed"), "{stderr}");
    // Bad flags: exit 2 naming the flag.
    let (code, _, stderr) = out(check_against(&m, &base).args(["--tolerance", "x"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("--tolerance x"), "{stderr}");
    let (code, _, stderr) = out(check_against(&m, &base).args(["--metric", "peak_retry"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("did you mean `peak_retries`"), "{stderr}");
    let (code, _, stderr) = out(&mut check_against(&m, &d.path().join("none.json")));
    assert_eq!(code, 2);
    assert!(stderr.contains("--baseline"), "{stderr}");
}

#[test]
fn init_writes_a_model_that_runs() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.toml");
    let (code, _, _) = out(rs().arg("init").arg("-o").arg(&p));
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.starts_with("# A retrystorm model"));
    let (code, stdout, stderr) = out(rs().arg("compare").arg(&p));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("full-jitter"), "{stdout}");
    // No overwrite without --force.
    let (code, _, stderr) = out(rs().arg("init").arg("-o").arg(&p));
    assert_eq!(code, 2);
    assert!(stderr.contains("--force"), "{stderr}");
    let (code, _, _) = out(rs()
        .arg("init")
        .arg("thundering-herd")
        .arg("-o")
        .arg(&p)
        .arg("--force"));
    assert_eq!(code, 0);
    let (code, _, stderr) = out(rs().arg("init").arg("herd"));
    assert_eq!(code, 2);
    assert!(stderr.contains("TEMPLATE herd"), "{stderr}");
    let (code, list, _) = out(rs().args(["init", "--list"]));
    assert_eq!(code, 0);
    assert!(list.contains("metastable-spike"));
}

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, text, _) = out(rs().args(["completions", shell]));
        assert_eq!(code, 0, "{shell}");
        assert!(text.contains("retrystorm"), "{shell}");
    }
    let (code, _, _) = out(rs().args(["completions", "tcsh"]));
    assert_eq!(code, 2);
}

#[test]
fn chart_flags_are_deterministic() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path());
    let svg = |dir: &Path| {
        let p = dir.join("a.svg");
        let (code, _, _) = out(rs()
            .arg("compare")
            .arg(&m)
            .arg("--svg")
            .arg(&p)
            .args(["--overlay", "--log-y"]));
        assert_eq!(code, 0);
        std::fs::read_to_string(p).unwrap()
    };
    let a = assert_deterministic("compare --svg --overlay --log-y", svg);
    assert!(a.contains("every variant on one axis") && a.contains("log scale"));
}

#[test]
fn a_baseline_that_compares_less_than_it_holds_fails_with_exit_4() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path());
    let base = d.path().join("base.json");
    let (code, _, _) = out(rs().arg("compare").arg(&m).arg("--json").arg(&base));
    assert_eq!(code, 0);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let check = |v: &serde_json::Value, extra: &[&str]| {
        let p = d.path().join("edited.json");
        std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
        out(check_against(&m, &p).args(extra))
    };
    // Renamed variants: one of two compared.
    let mut renamed = json.clone();
    renamed["variants"][0]["name"] = "renamed".into();
    let (code, stdout, stderr) = check(&renamed, &[]);
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert!(
        stderr.contains("is in the baseline but not in this run"),
        "{stderr}"
    );
    assert!(!stdout.contains("no metric regressed"), "{stdout}");
    // Another model's report: nothing compared.
    let mut other = json.clone();
    other["model"] = "other".into();
    for (i, v) in other["variants"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        v["name"] = format!("x{i}").into();
    }
    let (code, _, stderr) = check(&other, &[]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("compared 0 of the"), "{stderr}");
    // A metric the baseline lacks compares nothing too.
    let mut lacking = json.clone();
    for v in lacking["variants"].as_array_mut().unwrap() {
        v["summary"]
            .as_object_mut()
            .unwrap()
            .remove("amplification");
    }
    let (code, _, stderr) = check(&lacking, &["--metric", "amplification"]);
    assert_eq!(code, 4, "{stderr}");
    // Corrupt entries are refused (exit 2), not skipped.
    let mut corrupt = json.clone();
    corrupt["variants"][1]
        .as_object_mut()
        .unwrap()
        .remove("name");
    let (code, _, stderr) = check(&corrupt, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("variants[1]: no `name`"), "{stderr}");
    let mut corrupt = json.clone();
    corrupt["variants"][0]["summary"] = "x".into();
    let (code, _, stderr) = check(&corrupt, &[]);
    assert_eq!(code, 2, "{stderr}");
    // The untouched baseline still passes.
    let (code, stdout, _) = check(&json, &[]);
    assert_eq!(code, 0, "{stdout}");
}
