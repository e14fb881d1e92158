//! The `retrystorm` binary end to end: check (pass, fail with the reproduce command, bad input),
//! replications, sweeps (resume after a kill, shards + merge, any --jobs), and the HTML report.
//! Models are small (tens of clients, 3 seeds) so that every test stays fast.

use super::fixtures::small_herd;
use super::util::{out, rs};
use std::path::{Path, PathBuf};

/// A small herd: 40 clients, 4 attempts, no jitter vs full jitter.
const HERD: &str = concat!(
    small_herd!(),
    r#"
[[expect]]
metric = "peak_retries"
op = "=="
value = 40
variant = "no-jitter"

[[expect]]
assert = "peak_retries < 30"
variant = "full"
over = "mean"

[[expect]]
metric = "completion_ms.max"
op = "<="
value = "2s"
"#
);

fn model(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("herd.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn check_passes_and_writes_junit() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), HERD);
    let junit = d.path().join("junit.xml");
    let (code, stdout, stderr) = out(rs()
        .arg("check")
        .arg(&m)
        .args(["--seeds", "3", "--junit"])
        .arg(&junit));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("PASS  no-jitter  peak_retries == 40"),
        "{stdout}"
    );
    assert!(stdout.contains("(95% CI, 3 seeds)"), "{stdout}");
    assert!(
        stdout.contains("all 3 expectations hold (4 checks over 2 variants)"),
        "{stdout}"
    );
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(x.starts_with("<?xml"), "{x}");
    assert_eq!(x.matches("<testcase ").count(), 4, "{x}");
    assert!(x.contains("failures=\"0\""), "{x}");
}

#[test]
fn check_fails_with_exit_1_and_the_reproduce_command() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), HERD);
    let junit = d.path().join("j.xml");
    let (code, stdout, stderr) = out(rs()
        .arg("check")
        .arg(&m)
        .args(["--seeds", "3", "--set", "workload.clients=41"])
        .args(["--expect", "peak_retries < 10, variant=full", "--junit"])
        .arg(&junit));
    assert_eq!(code, 1, "{stdout}{stderr}");
    // no-jitter now peaks at 41, and full jitter above 10.
    assert!(
        stdout.contains("FAIL  no-jitter  peak_retries == 40"),
        "{stdout}"
    );
    let repro = format!(
        "reproduce: retrystorm run {} --variant no-jitter --seed 7 --set workload.clients=41",
        m.display()
    );
    assert!(stdout.contains(&repro), "{stdout}");
    assert!(
        stdout.contains("variant no-jitter, seed 7: peak_retries = 41"),
        "{stdout}"
    );
    assert!(stderr.contains("expectations failed"), "{stderr}");
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(x.contains("<failure "), "{x}");
    // The reproduce command does reproduce it.
    let (code, stdout, _) = out(rs().args(["run"]).arg(&m).args([
        "--variant",
        "no-jitter",
        "--seed",
        "7",
        "--set",
        "workload.clients=41",
    ]));
    assert_eq!(code, 0);
    assert!(stdout.contains("peak retries 41"), "{stdout}");
}

#[test]
fn check_bad_input_exits_2() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), HERD);
    let (code, _, stderr) = out(rs()
        .arg("check")
        .arg(&m)
        .args(["--expect", "peak_retrys < 3"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("did you mean `peak_retries`"), "{stderr}");
    let bad = HERD.replace(
        "metric = \"completion_ms.max\"",
        "metric = \"completion_ms.p98\"",
    );
    let m = model(d.path(), &bad);
    let (code, _, stderr) = out(rs().arg("check").arg(&m));
    assert_eq!(code, 2);
    assert!(stderr.contains("herd.toml:37:1: expect.metric"), "{stderr}");
    let m = model(
        d.path(),
        &HERD.replace("variant = \"full\"\nover", "variant = \"ful\"\nover"),
    );
    let (code, _, stderr) = out(rs().arg("check").arg(&m));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("did you mean `full`"), "{stderr}");
    let (code, _, stderr) = out(rs().arg("check").arg(d.path().join("missing.toml")));
    assert_eq!(code, 2);
    assert!(stderr.contains("missing.toml"), "{stderr}");
    let (code, _, stderr) = out(rs().arg("check").arg(&m).args(["--seeds", "0"]));
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn seeds_give_means_with_confidence_intervals() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), HERD);
    let json = d.path().join("r.json");
    let (code, stdout, stderr) = out(rs()
        .arg("compare")
        .arg(&m)
        .args(["--seeds", "3", "--json"])
        .arg(&json));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(" ± "), "{stdout}");
    assert!(stdout.contains("means over 3 seeds (7..=9)"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["seed"], 7);
    assert_eq!(v["seeds"], serde_json::json!([7, 8, 9]));
    let full = &v["variants"][1];
    assert_eq!(full["name"], "full");
    assert!(full["summary"]["peak_retries"].is_u64());
    assert!(full["series"].is_object());
    assert_eq!(full["replications"]["n"], 3);
    assert!(
        full["replications"]["ci95"]["peak_retries"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(
        v["variants"][0]["replications"]["mean"]["peak_retries"],
        40.0
    );
    // run --seeds groups the metrics as the one-seed view does.
    let (code, stdout, _) =
        out(rs()
            .arg("run")
            .arg(&m)
            .args(["--variant", "full", "--seeds", "3"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("completion ms:") && stdout.contains(" p99 "),
        "{stdout}"
    );
}

fn sweep(m: &Path, out_path: &Path, extra: &[&str]) -> (i32, String, String) {
    out(rs()
        .arg("sweep")
        .arg(m)
        .args([
            "--vary",
            "workload.clients=10..30:10",
            "--vary",
            "retry.base=50ms,100ms",
        ])
        .args(["--seeds", "3", "--out"])
        .arg(out_path)
        .args(extra))
}

#[test]
fn sweep_is_identical_for_any_jobs_and_after_resume() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), HERD);
    let one = d.path().join("one.jsonl");
    let two = d.path().join("two.jsonl");
    let (code, stdout, stderr) = sweep(&m, &one, &["--jobs", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("36 runs (6 points x 2 variants x 3 seeds)"),
        "{stdout}"
    );
    assert!(stdout.contains("workload.clients"), "{stdout}");
    assert_eq!(sweep(&m, &two, &["--jobs", "2"]).0, 0);
    let a = std::fs::read(&one).unwrap();
    assert_eq!(
        a,
        std::fs::read(&two).unwrap(),
        "--jobs 1 and --jobs 2 differ"
    );
    assert_eq!(a.iter().filter(|b| **b == b'\n').count(), 37);

    // Killed half way: 13 runs written, then a torn line.
    let resumed = d.path().join("resumed.jsonl");
    let (code, _, stderr) = sweep(&m, &resumed, &["--jobs", "2", "--limit", "13"]);
    assert_eq!(code, 0, "{stderr}");
    let mut partial = std::fs::read(&resumed).unwrap();
    assert_eq!(partial.iter().filter(|b| **b == b'\n').count(), 14);
    partial.extend_from_slice(&a[partial.len()..partial.len() + 40]);
    std::fs::write(&resumed, &partial).unwrap();
    // Without --resume the file is not touched.
    assert_eq!(sweep(&m, &resumed, &[]).0, 2);
    let (code, _, stderr) = sweep(&m, &resumed, &["--jobs", "2", "--resume"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("torn"), "{stderr}");
    assert!(stderr.contains("13 of 36 runs already done"), "{stderr}");
    assert_eq!(std::fs::read(&resumed).unwrap(), a, "resumed sweep differs");
    // Resuming with another grid is refused.
    let (code, _, stderr) = out(rs()
        .arg("sweep")
        .arg(&m)
        .args([
            "--vary",
            "workload.clients=10..30:10",
            "--seeds",
            "2",
            "--resume",
            "--out",
        ])
        .arg(&resumed));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("another sweep"), "{stderr}");
}

#[test]
fn shards_merge_to_the_unsharded_bytes() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), HERD);
    let whole = d.path().join("whole.jsonl");
    assert_eq!(sweep(&m, &whole, &[]).0, 0);
    let s1 = d.path().join("s1.jsonl");
    let s2 = d.path().join("s2.jsonl");
    assert_eq!(sweep(&m, &s1, &["--shard", "1/2"]).0, 0);
    assert_eq!(sweep(&m, &s2, &["--shard", "2/2"]).0, 0);
    let merged = d.path().join("merged.jsonl");
    let (code, stdout, stderr) = out(rs().arg("merge").arg(&s2).arg(&s1).arg("-o").arg(&merged));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("36 of 36 runs"), "{stdout}");
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );

    // The sweep report: table, chart, HTML.
    let svg = d.path().join("sweep.svg");
    let html = d.path().join("sweep.html");
    let (code, stdout, stderr) = out(rs()
        .arg("report")
        .arg(&merged)
        .args(["--metric", "peak_retries", "--svg"])
        .arg(&svg)
        .arg("-o")
        .arg(&html));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("retry.base"), "{stdout}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("id=\"sweep-chart\"") && h.contains("id=\"sweep-results\""));
    // The variant toggles and tagged lines, inline only.
    assert!(h.contains("id=\"variant-toggles\"") && h.contains("class=\"v0\"><title>"));
    assert!(!h.contains("<script src") && !h.contains("href=\"http"));

    // A file from another schema version is refused with a clear message.
    let text = std::fs::read_to_string(&merged).unwrap();
    let v2 = d.path().join("v2.jsonl");
    std::fs::write(
        &v2,
        text.replacen("\"schema_version\":1", "\"schema_version\":2", 1),
    )
    .unwrap();
    let (code, _, stderr) = out(rs().arg("merge").arg(&v2).arg("-o").arg(d.path().join("x")));
    assert_eq!(code, 2);
    assert!(stderr.contains("schema version 2"), "{stderr}");
}

/// A minimal well-formedness check: every opened tag is closed in order (void elements aside).
fn balanced(html: &str) -> Result<(), String> {
    const VOID: &[&str] = &["meta", "br", "img", "link", "hr", "input"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').ok_or("unclosed <")?;
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') || tag.ends_with('/') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack
                .pop()
                .ok_or(format!("</{name}> without an opening tag"))?;
            if top != name.trim() {
                return Err(format!("</{name}> closes <{top}>"));
            }
        } else {
            let name = tag.split_whitespace().next().unwrap_or("").to_string();
            if !VOID.contains(&name.as_str()) {
                stack.push(name);
            }
        }
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed: {stack:?}"))
    }
}

#[test]
fn html_report_has_every_section() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), HERD);
    let html = d.path().join("report.html");
    let (code, stdout, stderr) = out(rs()
        .arg("report")
        .arg(&m)
        .args(["--seeds", "3", "-o"])
        .arg(&html));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("2 variants, all 3 expectations hold (4 checks over 2 variants)"),
        "{stdout}"
    );
    let h = std::fs::read_to_string(&html).unwrap();
    balanced(&h).unwrap();
    for id in [
        "model",
        "summary",
        "summary-table",
        "expectations",
        "expectations-table",
        "load-chart",
        "cdf-chart",
        "outcome-chart",
    ] {
        assert!(h.contains(&format!("id=\"{id}\"")), "missing section {id}");
    }
    assert_eq!(h.matches("<svg").count(), 3);
    assert!(
        !h.contains("http://") || !h.contains("src=\"http"),
        "network load"
    );
    // Inline script only (the variant toggles): nothing loaded from anywhere.
    assert_eq!(h.matches("<script>").count(), 1);
    assert!(!h.contains("<script src") && !h.contains("href=\"http"));
    // A toggle per variant, and the variants' chart elements tagged and titled.
    assert_eq!(h.matches("onclick=\"rsToggle(").count(), 2);
    for i in 0..2 {
        assert!(
            h.contains(&format!("class=\"v{i}\"><title>")),
            "variant {i} untagged"
        );
        assert!(h.contains(&format!(".off-{i} svg .v{i}{{display:none}}")));
    }
    assert!(h.contains("peak_retries &lt; 30"));
    assert!(h.contains("[[expect]]"), "the model text is shown");
}

/// The flags the user docs show in code (`--metric drain_ms`) are flags some command takes: a
/// renamed or invented flag in the docs (`--columns`) fails here.
#[test]
fn flags_in_the_docs_exist() {
    let (_, top, _) = out(rs().arg("--help"));
    let mut help = top.clone();
    let commands = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next());
    for c in commands {
        help.push_str(&out(rs().args([c, "--help"])).1);
    }
    let root = env!("CARGO_MANIFEST_DIR");
    for doc in ["cli.md", "output.md", "model.md", "tune.md"] {
        let text = std::fs::read_to_string(format!("{root}/docs/{doc}")).unwrap();
        // Inline code that starts with a flag or a retrystorm command.
        let spans = text.split('`').skip(1).step_by(2);
        for span in spans.filter(|s| s.starts_with("--") || s.starts_with("retrystorm ")) {
            for word in span.split([' ', '\n', '=', '[', ']', '(', ')', ',']) {
                let flag = word.trim_end_matches(['.', ':', ';']);
                let name = flag.strip_prefix("--").unwrap_or("");
                let is_flag = name.starts_with(|c: char| c.is_ascii_lowercase())
                    && name.chars().all(|c| c.is_ascii_lowercase() || c == '-');
                if is_flag {
                    // Followed by a space, a line's end or (an alias) a bracket.
                    assert!(
                        [" ", "\n", "]"]
                            .iter()
                            .any(|end| help.contains(&format!("{flag}{end}"))),
                        "docs/{doc} shows `{span}`: no command takes {flag}"
                    );
                }
            }
        }
    }
}
