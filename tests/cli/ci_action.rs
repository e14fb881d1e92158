//! Policy checks in CI: `check --md`, regressions in the JUnit report, the
//! too-few-seeds hint, and the GitHub Action's and pre-commit hook's steps run as scripts with
//! `GITHUB_STEP_SUMMARY` and `GITHUB_OUTPUT` pointing at temporary files.

use super::fixtures::{always_failing, small_herd};
use super::util::{baseline, bin, check_against, in_temp, out, rs, write};
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const HERD: &str = concat!(
    small_herd!(),
    r#"
[[expect]]
metric = "failed"
op = "<="
value = 40
"#
);

/// A model whose one expectation fails on every seed.
const FAILING: &str = concat!(
    "\nname = \"always-down\"\n",
    always_failing!(),
    r#"[[expect]]
metric = "succeeded"
op = ">"
value = 5
"#
);

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn check_md_writes_the_expectations_as_a_table() {
    let (d, ok) = in_temp("herd.toml", HERD);
    let (code, md, _) = out(rs()
        .arg("check")
        .arg(&ok)
        .args(["--seeds", "2", "--md", "-"]));
    assert_eq!(code, 0, "{md}");
    assert!(
        md.starts_with("### small-herd (2 seeds from 7)\n\n"),
        "{md}"
    );
    assert!(
        md.contains("| variant | expectation | seen | verdict |"),
        "{md}"
    );
    assert!(md.contains("| full | failed \\<= 40 |"), "{md}");
    assert!(
        md.trim_end()
            .ends_with("**PASS**: the expectation holds (2 checks over 2 variants)"),
        "{md}"
    );
    assert!(
        !md.contains("PASS  "),
        "--md - replaces the plain report: {md}"
    );

    let bad = write(d.path(), "bad.toml", FAILING);
    let p = d.path().join("bad.md");
    let (code, stdout, stderr) = out(rs().arg("check").arg(&bad).arg("--md").arg(&p));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("FAIL  always-down"),
        "the plain report still prints: {stdout}"
    );
    let md = read(&p);
    assert!(md.contains("| FAIL (reproduce: retrystorm run "), "{md}");
    assert!(md.contains("**FAIL**: 1 of 1 expectation failed"), "{md}");
}

#[test]
fn check_baseline_md_junit_and_the_noise_hint() {
    let (d, m) = in_temp("herd.toml", HERD);
    let base = baseline(&m, "5");

    // A shorter base delay bunches the retries: peak retries of `full` go up by 43%.
    let (md, junit) = (d.path().join("r.md"), d.path().join("r.xml"));
    let (code, stdout, stderr) = out(check_against(&m, &base)
        .args([
            "--set",
            "retry.base=60ms",
            "--metric",
            "peak_retries",
            "--md",
        ])
        .arg(&md)
        .arg("--junit")
        .arg(&junit));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let text = read(&md);
    assert!(
        text.contains("| variant | metric | baseline | this run | change | verdict |"),
        "{text}"
    );
    assert!(
        text.contains("| full | peak\\_retries | 9.40 ± 2.08 | 13.40 ± 2.57 | +42.6% | FAIL |"),
        "{text}"
    );
    assert!(
        text.contains("| no-jitter | peak\\_retries | 40.0 | 40.0 | no change | pass |"),
        "{text}"
    );
    // The model's expectation is checked too, below the comparison.
    assert!(text.contains("| full | failed \\<= 40 |"), "{text}");
    assert!(
        text.contains("**FAIL**: 1 of 2 metrics regressed"),
        "{text}"
    );
    let xml = read(&junit);
    assert!(
        xml.contains(r#"<testcase name="baseline peak_retries" classname="small-herd.full">"#),
        "{xml}"
    );
    assert!(xml.contains(r#"type="regression""#), "{xml}");
    assert!(xml.contains(r#"failures="1""#), "{xml}");
    assert!(xml.contains(r#"<testcase name="failed &lt;= 40""#), "{xml}");

    // +15% at 5 seeds is inside the interval: it passes, with a hint to add seeds.
    let (code, stdout, stderr) = out(check_against(&m, &base).args([
        "--set",
        "retry.base=80ms",
        "--metric",
        "peak_retries",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("within seed noise"), "{stdout}");
    assert!(
        stdout.contains("hint: 1 of 2 metrics got worse beyond the tolerance but pass because the 95% interval of the change includes 0 at 5 seeds"),
        "{stdout}"
    );
    // Under --quiet the hint still reaches the user, on stderr.
    let (code, _, stderr) = out(rs()
        .arg("-q")
        .arg("check")
        .arg(&m)
        .arg("--baseline")
        .arg(&base)
        .args(["--set", "retry.base=80ms", "--metric", "peak_retries"]));
    assert_eq!(code, 0);
    assert!(stderr.contains("hint: 1 of 2 metrics"), "{stderr}");

    // A baseline that covers nothing of this run fails the JUnit report too (exit 4).
    let other = write(
        d.path(),
        "other.toml",
        &HERD.replace("name = \"full\"", "name = \"jittered\""),
    );
    let (code, _, stderr) = out(check_against(&other, &base).arg("--junit").arg(&junit));
    assert_eq!(code, 4, "{stderr}");
    let xml = read(&junit);
    assert!(
        xml.contains(r#"<testcase name="baseline coverage""#),
        "{xml}"
    );
    assert!(xml.contains(r#"type="incomplete baseline""#), "{xml}");
}

/// Runs the action's check step (`.github/retrystorm/check.sh`, which action.yml calls) in
/// `dir` with the action's inputs as environment variables; returns the exit code, the job
/// summary and the step's outputs.
fn action(dir: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let (summary, output) = (dir.join("summary.md"), dir.join("output.txt"));
    let _ = std::fs::remove_file(&summary);
    let _ = std::fs::remove_file(&output);
    let mut c = Command::new("bash");
    c.arg(Path::new(ROOT).join(".github/retrystorm/check.sh"))
        .current_dir(dir)
        .env("RS_BIN", bin())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let read_or_empty = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    (
        o.status.code().unwrap_or(-1),
        read_or_empty(&summary),
        read_or_empty(&output),
    )
}

#[test]
fn the_action_step_fills_the_summary_and_the_verdict() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("models")).unwrap();
    write(&d.path().join("models"), "herd.toml", HERD);

    // One passing model: exit 0, verdict=pass, the table in the job summary, a JUnit file.
    let (code, summary, outputs) = action(
        d.path(),
        &[("RS_MODELS", "models/*.toml"), ("RS_SEEDS", "2")],
    );
    assert_eq!(code, 0, "{summary}");
    assert!(
        summary.contains("### small-herd (2 seeds from 7)"),
        "{summary}"
    );
    assert!(
        summary.contains("| variant | expectation | seen | verdict |"),
        "{summary}"
    );
    assert!(outputs.contains("verdict=pass\n"), "{outputs}");
    assert!(outputs.contains("failed=0\n"), "{outputs}");
    assert!(d.path().join("retrystorm-junit/herd.xml").is_file());

    // A failing model beside it: exit 1, verdict=fail, both tables.
    write(&d.path().join("models"), "down.toml", FAILING);
    let (code, summary, outputs) = action(
        d.path(),
        &[("RS_MODELS", "models/*.toml"), ("RS_SEEDS", "2")],
    );
    assert_eq!(code, 1, "{summary}");
    assert!(
        summary.contains("**FAIL**: 1 of 1 expectation failed"),
        "{summary}"
    );
    assert!(
        summary.contains("**PASS**: the expectation holds"),
        "{summary}"
    );
    assert!(outputs.contains("verdict=fail\n"), "{outputs}");
    assert!(outputs.contains("failed=1\n"), "{outputs}");

    // A folder of baselines: the model with one is compared, a regression fails the step.
    std::fs::create_dir(d.path().join("base")).unwrap();
    let (code, _, _) = out(rs().current_dir(d.path()).args([
        "compare",
        "models/herd.toml",
        "--seeds",
        "3",
        "--json",
        "base/herd.json",
    ]));
    assert_eq!(code, 0);
    std::fs::remove_file(d.path().join("models/down.toml")).unwrap();
    let tighter = HERD.replace("base = \"100ms\"", "base = \"20ms\"");
    write(&d.path().join("models"), "herd.toml", &tighter);
    let (code, summary, outputs) = action(
        d.path(),
        &[
            ("RS_MODELS", "models/**/*.toml"),
            ("RS_SEEDS", "3"),
            ("RS_BASELINE", "base"),
            ("RS_TOLERANCE", "5%"),
        ],
    );
    assert_eq!(code, 1, "{summary}");
    assert!(summary.contains("| change | verdict |"), "{summary}");
    assert!(summary.contains("| FAIL |"), "{summary}");
    assert!(outputs.contains("verdict=fail\n"), "{outputs}");

    // Bad input: no model matches; a model that does not load shows its message in the summary.
    let (code, _, outputs) = action(d.path(), &[("RS_MODELS", "nothing/*.toml")]);
    assert_eq!(code, 2);
    assert!(outputs.contains("verdict=error"), "{outputs}");
    write(
        &d.path().join("models"),
        "herd.toml",
        "[workload]\nclients = -1\n",
    );
    let (code, summary, _) = action(d.path(), &[("RS_MODELS", "models/*.toml")]);
    assert_eq!(code, 2, "{summary}");
    assert!(summary.contains("```\nerror: "), "{summary}");
}

#[test]
fn action_yml_and_the_pre_commit_hook_call_what_is_tested() {
    let yml = read(&Path::new(ROOT).join("action.yml"));
    assert!(yml.contains("using: composite"), "{yml}");
    assert!(
        yml.contains(r#"run: bash "$GITHUB_ACTION_PATH/.github/retrystorm/check.sh""#),
        "{yml}"
    );
    let script = read(&Path::new(ROOT).join(".github/retrystorm/check.sh"));
    for var in [
        "RS_BIN",
        "RS_MODELS",
        "RS_SEEDS",
        "RS_BASELINE",
        "RS_TOLERANCE",
        "RS_JUNIT_DIR",
    ] {
        assert!(yml.contains(&format!("{var}: ")), "action.yml passes {var}");
        assert!(
            script.contains(&format!("${{{var}")),
            "check.sh reads {var}"
        );
    }
    for input in ["models:", "seeds:", "baseline:", "tolerance:", "verdict:"] {
        assert!(
            yml.contains(&format!("  {input}")),
            "action.yml has {input}"
        );
    }
    assert!(
        yml.contains(
            "key: retrystorm-${{ runner.os }}-${{ runner.arch }}-${{ steps.key.outputs.src }}"
        ),
        "the binary is cached by the sources' hash"
    );

    // The hook's entry, run as pre-commit runs it: the binary on PATH, the changed files after.
    let hooks = read(&Path::new(ROOT).join(".pre-commit-hooks.yaml"));
    let entry = hooks
        .lines()
        .find_map(|l| l.trim().strip_prefix("entry: bash -c '"))
        .and_then(|l| l.strip_suffix("' --"))
        .expect("the hook's entry is `bash -c '...' --`");
    assert!(entry.contains("check --seeds 3"), "{entry}");
    let (d, ok) = in_temp("herd.toml", HERD);
    let bad = write(d.path(), "down.toml", FAILING);
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |files: &[&PathBuf]| {
        Command::new("bash")
            .args(["-c", entry, "--"])
            .args(files)
            .env("PATH", &path)
            .output()
            .unwrap()
    };
    let o = run(&[&ok]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&[&bad, &ok]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAIL  always-down"));
}

/// The `run:` script of the step `id` in action.yml (a block scalar after `run: |`).
fn step_script(yml: &str, id: &str) -> String {
    let from = yml
        .find(&format!("- id: {id}\n"))
        .unwrap_or_else(|| panic!("a step with id {id}"));
    let body = &yml[from..];
    let run = body.find("run: |\n").expect("a run: | block") + "run: |\n".len();
    body[run..]
        .lines()
        .take_while(|l| l.starts_with("        "))
        .map(|l| format!("{}\n", l.trim_start()))
        .collect()
}

#[test]
fn the_actions_cache_key_follows_the_sources_not_cargo_lock_alone() {
    let yml = read(&Path::new(ROOT).join("action.yml"));
    let script = step_script(&yml, "key");
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("action");
    std::fs::create_dir_all(src.join("crates/core/src")).unwrap();
    std::fs::create_dir_all(src.join("target/release")).unwrap();
    std::fs::write(src.join("Cargo.lock"), "# the same lock\n").unwrap();
    std::fs::write(src.join("crates/core/src/lib.rs"), "// engine 1\n").unwrap();
    let key = |d: &Path| {
        let outfile = d.join("github_output");
        let _ = std::fs::remove_file(&outfile);
        let status = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .env("GITHUB_ACTION_PATH", d.join("action"))
            .env("GITHUB_OUTPUT", &outfile)
            .status()
            .unwrap();
        assert!(status.success());
        let line = read(&outfile);
        let k = line
            .trim()
            .strip_prefix("src=")
            .expect("src=HASH")
            .to_string();
        assert_eq!(k.len(), 16, "{line}");
        k
    };
    let first = key(d.path());
    // A build's outputs do not change it; a newer engine with the same Cargo.lock does.
    std::fs::write(src.join("target/release/retrystorm"), "binary").unwrap();
    assert_eq!(key(d.path()), first);
    std::fs::write(src.join("crates/core/src/lib.rs"), "// engine 2\n").unwrap();
    assert_ne!(key(d.path()), first);
}
