//! `check --junit` for a model that does not load, the `[[expect]]` line on each test case, and
//! the verdict line that names the model under `--quiet` and says what failing means over
//! several variants; `--junit-time` durations.

use super::fixtures::always_failing;
use super::util::{in_temp, out, rs};

const TWO_VARIANTS: &str = concat!(
    "horizon = \"5s\"\n",
    always_failing!(),
    r#"[[variant]]
name = "a"
[[variant]]
name = "b"
retry.max_attempts = 1

[[expect]]
metric = "retries"
op = "<"
value = 1
"#
);

#[test]
fn a_model_that_does_not_load_gets_a_junit_file_saying_why() {
    let (d, m) = in_temp("m.toml", "[retry\n");
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
    let (d, m) = in_temp("m.toml", TWO_VARIANTS);
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
    assert!(
        !x.contains("time="),
        "untimed by default, so deterministic: {x}"
    );
    let all = format!("{stdout}{err}");
    assert!(
        all.contains(&format!(
            "{}: 1 of 1 expectation failed on at least one variant (1 of 2 checks failed)",
            m.display()
        )),
        "{all}"
    );
}

/// The attribute's value on each line that has it, in order.
fn attribute_values(xml: &str, name: &str) -> Vec<f64> {
    let key = format!(" {name}=\"");
    xml.lines()
        .filter_map(|l| l.split_once(&key))
        .map(|(_, rest)| rest.split('"').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn junit_time_gives_each_case_its_share_of_its_variants_wall_time() {
    let (d, m) = in_temp("m.toml", TWO_VARIANTS);
    let junit = d.path().join("j.xml");
    let (code, stdout, err) = out(rs()
        .arg("check")
        .arg(&m)
        .args(["--seeds", "2", "--junit-time", "--junit"])
        .arg(&junit));
    assert_eq!(code, 1, "{stdout}{err}");
    let x = std::fs::read_to_string(&junit).unwrap();
    // The suite's time, then one per test case (two variants, one expectation each).
    let times = attribute_values(&x, "time");
    assert_eq!(times.len(), 3, "{x}");
    assert!(times.iter().all(|t| t.is_finite() && *t >= 0.0), "{x}");
    let cases: f64 = times[1..].iter().sum();
    assert!(
        (times[0] - cases).abs() <= 0.002,
        "the suite is the sum of its cases: {x}"
    );

    let (code, _, err) = out(rs().arg("check").arg(&m).arg("--junit-time"));
    assert_eq!(code, 2, "--junit-time without --junit: {err}");
    assert!(err.contains("--junit"), "{err}");
}
