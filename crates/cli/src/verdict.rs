//! Expectations evaluated over seeds: the verdict lines, the JUnit file and the command that
//! reproduces a failing seed, as `check`, `check --baseline` and `report` show them.

use crate::args::ModelArgs;
use crate::error::CliError;
use crate::model_args::has_named_variants;
use crate::run::run_all_until;
use crate::text::plural;
use retrystorm_core::expect::{Expectation, MetricError, Outcome, Over, metric};
use retrystorm_core::load::Scenario;
use retrystorm_core::model::Model;
use retrystorm_core::summary::Summary;
use retrystorm_report::baseline::{self, Compared, Tolerance};
use retrystorm_report::fmt::shell_word;
use std::fmt::Write as _;

/// One expectation's result on one variant.
pub struct Checked {
    pub expectation: Expectation,
    pub outcome: Outcome,
    /// The command that reproduces the failing seed.
    pub reproduce: Option<String>,
    /// With [`Timing::PerVariant`], this result's share of the wall time its variant's runs took.
    pub seconds: Option<f64>,
}

/// Whether [`evaluate`] times the runs. Timed, it runs the variants one after the other (each
/// over `--jobs`), so that each variant's wall time is its own; untimed, all runs share the
/// pool at once, which keeps every core busy when a variant has fewer seeds than jobs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    Untimed,
    PerVariant,
}

/// The expectations of the model file, then those of `--expect`; bad ones are input errors.
pub fn expectations(
    scenario: &Scenario,
    file: &str,
    extra: &[String],
) -> Result<Vec<Expectation>, CliError> {
    let mut out = Vec::new();
    for (t, line) in scenario.expect.iter().zip(&scenario.expect_lines) {
        out.push(Expectation::from_table(file, *line, t)?);
    }
    for e in extra {
        out.push(Expectation::parse(e)?);
    }
    let names: Vec<&str> = scenario.variants.iter().map(|m| m.name.as_str()).collect();
    for e in &out {
        e.check_variant(&names)?;
    }
    Ok(out)
}

/// `retrystorm run MODEL [--variant V] --seed S [--set ...] [--max-events N]`.
pub fn reproduce(args: &ModelArgs, variant: Option<&str>, seed: u64) -> String {
    let mut words = vec![
        "retrystorm".to_string(),
        "run".to_string(),
        shell_word(&args.model.display().to_string()),
    ];
    if let Some(v) = variant {
        words.push("--variant".into());
        words.push(shell_word(v));
    }
    words.push("--seed".into());
    words.push(seed.to_string());
    for s in &args.sets {
        words.push("--set".into());
        words.push(shell_word(s));
    }
    if let Some(n) = args.max_events {
        words.push("--max-events".into());
        words.push(n.to_string());
    }
    words.join(" ")
}

/// Runs every variant with every seed and evaluates every expectation on the variants it
/// applies to (in expectation order, then variant order).
pub fn evaluate(
    scenario: &Scenario,
    args: &ModelArgs,
    exps: &[Expectation],
    seeds: &[u64],
    timing: Timing,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Vec<Checked>, CliError> {
    let models: &[Model] = &scenario.variants;
    let runs: Vec<(&Model, u64)> = models
        .iter()
        .flat_map(|m| seeds.iter().map(move |s| (m, *s)))
        .collect();
    let (results, wall) = match timing {
        Timing::Untimed => (run_all_until(&runs, args.jobs, stop)?, Vec::new()),
        Timing::PerVariant => {
            let (mut results, mut wall) = (Vec::with_capacity(runs.len()), Vec::new());
            for variant in runs.chunks(seeds.len()) {
                let started = std::time::Instant::now();
                results.extend(run_all_until(variant, args.jobs, stop)?);
                wall.push(started.elapsed().as_secs_f64());
            }
            (results, wall)
        }
    };
    let per_variant: Vec<Vec<(u64, &Summary)>> = results
        .chunks(seeds.len())
        .map(|c| c.iter().zip(seeds).map(|(r, s)| (*s, &r.summary)).collect())
        .collect();
    let named = has_named_variants(scenario);
    let mut out = Vec::new();
    for e in exps {
        // A name that is not a number anywhere (`ended`), or unknown under a nested field, is an
        // input error rather than a failure.
        if let Some(first) = per_variant.first().and_then(|v| v.first()) {
            match metric(first.1, &e.metric) {
                Err(MetricError::NotANumber(_)) | Err(MetricError::Unknown(_)) => {
                    let err = metric(first.1, &e.metric).unwrap_err();
                    return Err(CliError::Input(format!(
                        "{}: expect.metric: {err}",
                        e.source
                    )));
                }
                _ => {}
            }
        }
        for (i, (m, runs)) in models.iter().zip(&per_variant).enumerate() {
            if !e.applies_to(&m.name) {
                continue;
            }
            let cases = exps.iter().filter(|x| x.applies_to(&m.name)).count();
            let seconds = wall.get(i).map(|w| w / cases as f64);
            let outcome = e.evaluate(&m.name, runs);
            let reproduce = outcome
                .seed
                .map(|s| reproduce(args, named.then_some(m.name.as_str()), s));
            out.push(Checked {
                expectation: e.clone(),
                outcome,
                reproduce,
                seconds,
            });
        }
    }
    Ok(out)
}

/// The human report: one line per result, details under each failure. `quiet` leaves out the
/// passing lines.
pub fn render(results: &[Checked], quiet: bool) -> String {
    let mut out = String::new();
    let w = results
        .iter()
        .map(|c| c.outcome.variant.chars().count())
        .max()
        .unwrap_or(0);
    for c in results {
        let o = &c.outcome;
        let e = &c.expectation;
        if quiet && o.passed {
            continue;
        }
        let tag = if o.passed { "PASS" } else { "FAIL" };
        let over = over_label(e.over);
        let _ = writeln!(
            out,
            "{tag}  {:<w$}  {} {} {}{over}: {}",
            o.variant,
            e.metric,
            e.op.as_str(),
            e.value_text,
            o.seen(e.over)
        );
        if !o.passed {
            let _ = writeln!(out, "      expectation: {e}  ({})", e.source);
            if let Some(seed) = o.seed {
                let value = o
                    .values
                    .iter()
                    .find(|(s, _)| *s == seed)
                    .map(|(_, x)| retrystorm_core::expect::num(*x))
                    .unwrap_or_else(|| "absent".into());
                let _ = writeln!(
                    out,
                    "      variant {}, seed {seed}: {} = {value}",
                    o.variant, e.metric
                );
            }
            if let Some(cmd) = &c.reproduce {
                let _ = writeln!(out, "      reproduce: {cmd}");
            }
        }
    }
    out
}

/// The results as a GitHub-flavoured markdown table (`check --md`): variant, expectation,
/// what was seen, verdict; a failing row names the seed and the command that reproduces it.
pub fn markdown(results: &[Checked]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|c| {
            let (e, o) = (&c.expectation, &c.outcome);
            let verdict = match (&c.reproduce, o.passed) {
                (_, true) => "pass".to_string(),
                (Some(cmd), false) => format!("FAIL (reproduce: {cmd})"),
                (None, false) => "FAIL".to_string(),
            };
            vec![
                o.variant.clone(),
                format!(
                    "{} {} {}{}",
                    e.metric,
                    e.op.as_str(),
                    e.value_text,
                    over_label(e.over)
                ),
                o.seen(e.over),
                verdict,
            ]
        })
        .collect();
    let headers = ["variant", "expectation", "seen", "verdict"];
    retrystorm_report::gfm_table(&headers, &[false; 4], &rows)
}

/// What `check --baseline` adds to the JUnit report.
pub struct BaselineCases<'a> {
    pub compared: &'a [Compared],
    pub tolerance: Tolerance,
    /// Why the comparison proves less than the baseline holds (exit 4), if it does.
    pub incomplete: Option<&'a str>,
}

/// JUnit XML via `quick-junit` (it replaced a hand-written writer and its escaping): one
/// `<testsuite>` for the model, one `<testcase>` per expectation and variant, with the model
/// file as `file` and its `[[expect]]`'s line as `line`, and one per variant and metric `check --baseline` compared (failed when it
/// regressed). No timestamps, and durations only when the results were timed (`--junit-time`),
/// so by default the file is deterministic.
pub fn junit(model: &str, results: &[Checked], baseline: Option<&BaselineCases>) -> String {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new(model);
    // `check --baseline`: one testcase per variant and metric compared, failed when it regressed,
    // and one that fails when the comparison covered less than the baseline holds.
    let (compared, tol) = baseline.map_or((&[][..], Tolerance::Relative(0.0)), |b| {
        (b.compared, b.tolerance)
    });
    if let Some(why) = baseline.and_then(|b| b.incomplete) {
        let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
        st.set_message(why).set_type("incomplete baseline");
        let mut case = TestCase::new("baseline coverage", st);
        case.set_classname(model.to_string());
        suite.add_test_case(case);
    }
    for c in compared {
        let line = baseline::render(std::slice::from_ref(c), tol);
        let status = if c.regressed {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            st.set_message(format!(
                "{} regressed for variant {}: {} (baseline {})",
                c.metric,
                c.variant,
                retrystorm_report::fmt::pm(c.new.mean, c.new.half_width),
                retrystorm_report::fmt::pm(c.old.mean, c.old.half_width)
            ))
            .set_type("regression")
            .set_description(line.clone());
            st
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(format!("baseline {}", c.metric), status);
        case.set_classname(format!("{model}.{}", c.variant));
        if !c.regressed {
            case.set_system_out(line);
        }
        suite.add_test_case(case);
    }
    for c in results {
        let e = &c.expectation;
        let o = &c.outcome;
        let name = format!(
            "{} {} {}{}",
            e.metric,
            e.op.as_str(),
            e.value_text,
            over_label(e.over)
        );
        let status = if o.passed {
            TestCaseStatus::success()
        } else {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let mut body = format!("{}: seen {}\n", e, o.seen(e.over));
            if let Some(cmd) = &c.reproduce {
                let _ = writeln!(body, "reproduce: {cmd}");
            }
            st.set_message(format!(
                "{e} failed for variant {}: {}",
                o.variant,
                o.seen(e.over)
            ))
            .set_type("expectation")
            .set_description(body);
            st
        };
        let mut case = TestCase::new(name, status);
        case.set_classname(format!("{model}.{}", o.variant));
        // `models/x.toml:31`: the file, and the line its [[expect]] starts on.
        let (file, line) = match e.source.rsplit_once(':') {
            Some((f, l)) if l.parse::<u64>().is_ok() => (f, Some(l)),
            Some((f, _)) => (f, None),
            None => (e.source.as_str(), None),
        };
        case.extra.insert("file".into(), file.into());
        if let Some(l) = line {
            case.extra.insert("line".into(), l.into());
        }
        if o.passed {
            case.set_system_out(o.seen(e.over));
        }
        if let Some(s) = c.seconds {
            case.set_time(std::time::Duration::from_secs_f64(s));
        }
        suite.add_test_case(case);
    }
    if results.iter().any(|c| c.seconds.is_some()) {
        let total: f64 = results.iter().filter_map(|c| c.seconds).sum();
        suite.set_time(std::time::Duration::from_secs_f64(total));
    }
    junit_text(suite)
}

/// The JUnit XML of `check`'s one suite, ending in a newline.
fn junit_text(suite: quick_junit::TestSuite) -> String {
    let mut report = quick_junit::Report::new("retrystorm check");
    report.add_test_suite(suite);
    let mut out = report.to_string().expect("JUnit XML of strings");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The JUnit XML of a model that could not be checked (it failed to load, or an expectation is
/// malformed): one test case in error, saying why, so a CI run that collects JUnit files shows
/// the model instead of missing it.
pub fn junit_unloaded(file: &str, why: &str) -> String {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
    st.set_message(why).set_type("model not loaded");
    let mut case = TestCase::new("load the model", st);
    case.set_classname(file.to_string());
    case.extra.insert("file".into(), file.into());
    let mut suite = TestSuite::new(file);
    suite.add_test_case(case);
    junit_text(suite)
}

/// The verdict line: expectations counted once each, however many variants they apply to.
pub fn verdict(exps: &[Expectation], results: &[Checked]) -> (usize, String) {
    let failed_exps = exps
        .iter()
        .filter(|e| {
            results
                .iter()
                .any(|c| !c.outcome.passed && c.expectation == **e)
        })
        .count();
    let failed_checks = results.iter().filter(|c| !c.outcome.passed).count();
    let variants = {
        let mut v: Vec<&str> = results.iter().map(|c| c.outcome.variant.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v.len()
    };
    let checks = if results.len() == exps.len() {
        String::new()
    } else {
        format!(
            " ({} over {})",
            plural(results.len() as u64, "check"),
            plural(variants as u64, "variant")
        )
    };
    let line = if failed_exps == 0 {
        match exps.len() {
            1 => format!("the expectation holds{checks}"),
            2 => format!("both expectations hold{checks}"),
            n => format!("all {n} expectations hold{checks}"),
        }
    } else {
        let of_checks = if results.len() == exps.len() {
            String::new()
        } else {
            format!(
                " ({failed_checks} of {} failed)",
                plural(results.len() as u64, "check")
            )
        };
        // Over several variants an expectation fails when it fails on any one of them.
        let on = if of_checks.is_empty() {
            ""
        } else {
            " on at least one variant"
        };
        format!(
            "{failed_exps} of {} failed{on}{of_checks}",
            plural(exps.len() as u64, "expectation")
        )
    };
    (failed_exps, line)
}

/// How an expectation's line says it treats the seeds.
fn over_label(over: Over) -> &'static str {
    match over {
        Over::All => "",
        Over::Mean => " (mean)",
        Over::Share => " (share of seeds)",
    }
}
