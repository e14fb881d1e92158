use retrystorm_core::summary::Ended;
use retrystorm_report::{comparison_table, run_view, variant_view};

use crate::fixture;

#[test]
fn has_every_variant_and_the_numbers() {
    let report = fixture::report();
    let t = comparison_table(&report);
    for v in &report.variants {
        assert!(t.contains(&v.name), "{t}");
        assert!(t.contains(&format!("{}", v.summary.peak_arrivals)), "{t}");
    }
    for needle in [
        "10,000",
        "24,100",
        "2.41x",
        "9,800",
        "12.3",
        "852",
        "peak/10 ms",
    ] {
        assert!(t.contains(needle), "missing {needle:?} in\n{t}");
    }
    // One header, one rule, one row per variant.
    assert_eq!(t.lines().count(), 2 + report.variants.len(), "{t}");
}

#[test]
fn outcome_columns_only_when_something_went_wrong() {
    let report = fixture::report();
    let t = comparison_table(&report);
    for col in ["lost", "once", "duplicated", "phantom", "false failures"] {
        assert!(t.lines().next().unwrap().contains(col), "{t}");
    }
    assert!(t.contains("420"));

    let t = comparison_table(&fixture::small());
    assert!(!t.contains("duplicated"), "{t}");
    assert!(t.contains("applied exactly once"), "{t}");
}

#[test]
fn numbers_are_right_aligned() {
    let t = comparison_table(&fixture::report());
    let lines: Vec<&str> = t.lines().collect();
    let header = lines[0];
    let end = header.find("intents").unwrap() + "intents".len();
    for row in &lines[2..] {
        assert!(row[..end].ends_with("10,000"), "{row}");
    }
}

#[test]
fn notes_for_unsettled_runs() {
    let mut report = fixture::report();
    report.variants[1].summary.ended = Ended::MaxEvents;
    report.variants[2].summary.ended = Ended::Horizon;
    report.variants[2].summary.unsettled = 12;
    let t = comparison_table(&report);
    assert!(t.contains("unsettled"), "{t}");
    assert!(
        t.contains("note: naive retries stopped at the max_events guard"),
        "{t}"
    );
    assert!(
        t.contains("note: backoff + jitter reached the horizon"),
        "{t}"
    );
}

#[test]
fn deterministic() {
    let report = fixture::report();
    assert_eq!(comparison_table(&report), comparison_table(&report));
    assert_eq!(run_view(&report), run_view(&report));
}

#[test]
fn variant_view_lists_keys() {
    let report = fixture::report();
    let v = variant_view(&report.variants[1]);
    for needle in [
        "variant:",
        "naive retries",
        "amplification 2.41x",
        "duplicated 420",
        "p99 852",
        "settled at 30,000 ms after 1,234,567 events",
    ] {
        assert!(v.contains(needle), "missing {needle:?} in\n{v}");
    }
    let r = run_view(&report);
    assert!(r.starts_with("model: outage-storm\nseed:  42\n"), "{r}");
}

/// Nothing succeeded: the view says so instead of success times of 0 ms.
#[test]
fn no_success_has_no_success_times() {
    let success_line = |v: &retrystorm_core::summary::VariantResult| {
        let view = variant_view(v);
        view.lines()
            .find(|l| l.starts_with("success ms:"))
            .unwrap()
            .to_string()
    };
    let mut report = fixture::report();
    let v = &mut report.variants[1];
    assert!(success_line(v).contains(" p99 "), "{}", success_line(v));
    v.summary.succeeded = 0;
    v.summary.success_ms = Default::default();
    assert!(success_line(v).ends_with(" none"), "{}", success_line(v));
}
