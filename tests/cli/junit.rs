//! `check --junit` for a model that does not load, the `[[expect]]` line on each test case, and
//! the verdict line that names the model under `--quiet` and says what failing means over
//! several variants.

use super::util::{out, rs, write};

const TWO_VARIANTS: &str = r#"horizon = "5s"
[workload]
clients = 10
[retry]
max_attempts = 3
[server]
fail = "always"
[[variant]]
name = "a"
[[variant]]
name = "b"
retry.max_attempts = 1

[[expect]]
metric = "retries"
op = "<"
value = 1
"#;

#[test]
fn a_model_that_does_not_load_gets_a_junit_file_saying_why() {
    let d = tempfile::tempdir().unwrap();
    let m = write(d.path(), "m.toml", "[retry\n");
    let junit = d.path().join("j.xml");
    let (code, _, err) = out(rs().arg("check").arg(&m).arg("--junit").arg(&junit));
    assert_eq!(code, 2, "{err}");
    let x = std::fs::read_to_string(&junit).unwrap();
    assert!(x.contains("<error"), "{x}");
    assert!(x.contains("model not loaded"), "{x}");
    assert!(x.contains("m.toml:1:7: unclosed table"), "{x}");
}

#[test]
fn test_cases_carry_the_expect_line_and_the_quiet_verdict_names_the_model() {
    let d = tempfile::tempdir().unwrap();
    let m = write(d.path(), "m.toml", TWO_VARIANTS);
    let junit = d.path().join("j.xml");
    let (code, stdout, err) = out(rs()
        .arg("--quiet")
        .arg("check")
        .arg(&m)
        .arg("--junit")
        .arg(&junit));
    assert_eq!(code, 1, "{stdout}{err}");
    let x = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(x.matches("line=\"14\"").count(), 2, "{x}");
    let all = format!("{stdout}{err}");
    assert!(
        all.contains(&format!(
            "{}: 1 of 1 expectation failed on at least one variant (1 of 2 checks failed)",
            m.display()
        )),
        "{all}"
    );
}
