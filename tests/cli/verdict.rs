//! The stability verdict through the CLI: `explain`'s lines, `--json`, `--sarif` (validated
//! against the SARIF 2.1.0 schema, `tests/fixtures/sarif-schema-2.1.0.json` from
//! oasis-tcs/sarif-spec), `--fail-on`, and `compare --verdict`'s column.

use crate::util::{out, rs, shipped, write};

/// The line of `[retry]` in a model file.
fn retry_line(path: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .position(|l| l.trim() == "[retry]")
        .unwrap()
        + 1
}

#[test]
fn explain_says_the_spike_without_backoff_is_vulnerable_with_its_numbers() {
    let (code, text, err) = out(rs().args(["explain", &shipped("metastable-spike.toml")]));
    assert_eq!(code, 0, "{err}");
    let block: String = text.split("\nfull-jitter\n").next().unwrap().to_string();
    assert!(block.contains("verdict: vulnerable (3.27x)"), "{block}");
    assert!(
        block.contains("3000 attempts/s arrive against 917 requests/s"),
        "{block}"
    );
    assert!(block.contains("--set budget.kind=grpc"), "{block}");
    assert!(!block.contains("no warnings"), "{block}");
    let grpc = text.split("\ngrpc-budget\n").nth(1).unwrap();
    assert!(grpc.contains("verdict: stable"), "{grpc}");
}

#[test]
fn explain_json_holds_every_variants_verdict() {
    let (code, text, err) = out(rs().args(["explain", &shipped("osdi-retry.toml"), "--json", "-"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let variants = v["variants"].as_array().unwrap();
    let verdict = |name: &str| {
        variants
            .iter()
            .find(|x| x["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))["verdict"]
            .clone()
    };
    assert_eq!(verdict("b-0.40cpu-10s")["verdict"], "vulnerable");
    assert_eq!(verdict("b-0.40cpu-10s")["trigger"]["tips"], true);
    assert_eq!(verdict("a-0.45cpu-10s")["trigger"]["tips"], false);
    assert_eq!(verdict("b-drop-expired")["verdict"], "stable");
    let ratio = verdict("b-0.40cpu-10s")["ratio"].as_f64().unwrap();
    assert!((ratio - 66665.0 / 35555.5).abs() < 0.01, "{ratio}");
}

#[test]
fn sarif_validates_and_points_at_the_retry_table() {
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("v.sarif");
    let model = shipped("metastable-spike.toml");
    let (code, _, err) = out(rs().args(["explain", &model, "--sarif"]).arg(&sarif));
    assert_eq!(code, 0, "{err}");
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sarif-schema-2.1.0.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // no-backoff and full-jitter are vulnerable; the budget and breaker variants are not.
    let results = log["runs"][0]["results"].as_array().unwrap();
    let variants: Vec<&str> = results
        .iter()
        .map(|r| r["properties"]["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["no-backoff", "full-jitter"]);
    let no_backoff = &results[0];
    assert_eq!(no_backoff["ruleId"], "vulnerable");
    let region = &no_backoff["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], retry_line(&model));
    // full-jitter writes its own retry keys: its finding is at its variant's line.
    let text = std::fs::read_to_string(&model).unwrap();
    let jitter_line = text
        .lines()
        .position(|l| l.starts_with("retry.backoff = \"exponential\""))
        .unwrap()
        + 1;
    assert_eq!(
        results[1]["locations"][0]["physicalLocation"]["region"]["startLine"],
        jitter_line
    );
    let ratio = no_backoff["properties"]["ratio"].as_f64().unwrap();
    assert!((3.2..3.3).contains(&ratio), "{ratio}");
}

#[test]
fn fail_on_vulnerable_exits_1_and_a_stable_model_passes() {
    let (code, _, err) = out(rs().args([
        "explain",
        &shipped("metastable-spike.toml"),
        "--fail-on",
        "vulnerable",
    ]));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("--fail-on vulnerable: no-backoff (vulnerable), full-jitter (vulnerable)"),
        "{err}"
    );
    let (code, _, err) = out(rs().args([
        "explain",
        &shipped("metastable-spike.toml"),
        "--fail-on",
        "overloaded",
    ]));
    assert_eq!(code, 0, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.toml",
        "[workload]\nkind = \"open\"\nrate = \"100/s\"\n[retry]\nmax_attempts = 3\ntimeout = \"1s\"\n[server]\ncapacity = 10\nservice = \"exp(10ms)\"\n",
    );
    let (code, text, err) = out(rs()
        .arg("explain")
        .arg(&m)
        .args(["--fail-on", "vulnerable"]));
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("verdict: stable (0.30x)"), "{text}");
}

#[test]
fn a_trace_workload_is_unknown_and_exits_0() {
    let (code, text, err) = out(rs().args([
        "explain",
        &shipped("trace-replay.toml"),
        "--fail-on",
        "vulnerable",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains(
            "verdict: unknown: a trace workload (3135 arrivals) has no steady arrival rate"
        ),
        "{text}"
    );
}

#[test]
fn compare_verdict_adds_a_column() {
    let model = shipped("gc-pause.toml");
    let (code, with, err) = out(rs().args(["compare", &model, "--verdict", "-q"]));
    assert_eq!(code, 0, "{err}");
    let (_, without, _) = out(rs().args(["compare", &model, "-q"]));
    let header = with.lines().nth(1).unwrap();
    assert!(header.trim_end().ends_with("verdict"), "{header}");
    let row = |name: &str| {
        with.lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .to_string()
    };
    assert!(
        row("no-jitter ")
            .trim_end()
            .ends_with("vulnerable 2.81x, tips"),
        "{with}"
    );
    assert!(
        row("timeout-1s ")
            .trim_end()
            .ends_with("vulnerable 2.80x, recovers"),
        "{with}"
    );
    assert!(
        row("budget ").trim_end().ends_with("stable 0.70x"),
        "{with}"
    );
    // Without the flag the table is the one it always was: the same rows, less the column.
    assert_eq!(with.lines().count(), without.lines().count());
}

/// The action's SARIF step (`.github/retrystorm/sarif.sh`, which action.yml calls) writes one
/// file per model that loads and skips one that does not; the pre-commit hook
/// `retrystorm-verdict` fails on a vulnerable model and passes a stable one.
#[test]
fn the_sarif_step_and_the_verdict_hook() {
    let root = env!("CARGO_MANIFEST_DIR");
    let d = tempfile::tempdir().unwrap();
    let models = d.path().join("models");
    std::fs::create_dir(&models).unwrap();
    std::fs::copy(shipped("gc-pause.toml"), models.join("gc-pause.toml")).unwrap();
    write(&models, "bad.toml", "[workload]\nclients = -1\n");
    let o = std::process::Command::new("bash")
        .arg(format!("{root}/.github/retrystorm/sarif.sh"))
        .current_dir(d.path())
        .env("RS_BIN", crate::util::bin())
        .env("RS_MODELS", "models/*.toml")
        .env("RS_SARIF_DIR", "out")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("skipped models/bad.toml"), "{err}");
    let log: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("out/models_gc-pause.sarif")).unwrap(),
    )
    .unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(
        results.len(),
        4,
        "no-pause, no-jitter, full-jitter, timeout-1s"
    );
    let yml = std::fs::read_to_string(format!("{root}/action.yml")).unwrap();
    assert!(yml.contains(r#"run: bash "$GITHUB_ACTION_PATH/.github/retrystorm/sarif.sh""#));
    assert!(yml.contains("uses: github/codeql-action/upload-sarif@v3"));

    let hooks = std::fs::read_to_string(format!("{root}/.pre-commit-hooks.yaml")).unwrap();
    let entry = hooks
        .split("- id: retrystorm-verdict")
        .nth(1)
        .and_then(|h| {
            h.lines()
                .find_map(|l| l.trim().strip_prefix("entry: bash -c '"))
        })
        .and_then(|l| l.strip_suffix("' --"))
        .expect("the verdict hook's entry is `bash -c '...' --`")
        .to_string();
    let path = format!(
        "{}:{}",
        crate::util::bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let stable = write(
        d.path(),
        "stable.toml",
        "[workload]\nkind = \"open\"\nrate = \"100/s\"\n[retry]\ntimeout = \"1s\"\n[server]\ncapacity = 10\nservice = \"exp(10ms)\"\n",
    );
    let hook = |file: &std::path::Path| {
        std::process::Command::new("bash")
            .args(["-c", &entry, "--"])
            .arg(file)
            .env("PATH", &path)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(hook(&models.join("gc-pause.toml")), Some(1));
    assert_eq!(hook(&stable), Some(0));
}
