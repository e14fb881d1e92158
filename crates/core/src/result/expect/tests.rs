use super::*;

#[test]
fn compact_form() {
    let e = Expectation::parse("peak_retries<200").unwrap();
    assert_eq!(
        (e.metric.as_str(), e.op, e.value),
        ("peak_retries", Op::Lt, 200.0)
    );
    let e = Expectation::parse("completion_ms.p99 <= 2s, over=mean, variant=full").unwrap();
    assert_eq!((e.op, e.value, e.over), (Op::Le, 2000.0, Over::Mean));
    assert_eq!(e.variant.as_deref(), Some("full"));
    let e = Expectation::parse("peak_retrie < 3").unwrap_err();
    assert!(e.to_string().contains("did you mean `peak_retries`"), "{e}");
    assert!(Expectation::parse("duplicated < 3ms").is_err());
    assert!(Expectation::parse("duplicated ~ 3").is_err());
    assert!(Expectation::parse("duplicated == 0, over=most").is_err());
}

#[test]
fn table_form_points_at_the_line() {
    let t: Table = "metric = \"duplicatd\"\nop = \"==\"\nvalue = 0\n"
        .parse()
        .unwrap();
    let e = Expectation::from_table("m.toml", 12, &t).unwrap_err();
    assert!(e.to_string().starts_with("m.toml:12: expect.metric"), "{e}");
    assert!(e.to_string().contains("did you mean `duplicated`"), "{e}");
    let t: Table =
        "metric = \"completion_ms.p99\"\nop = \"<\"\nvalue = \"1.5s\"\nover = \"mean\"\n"
            .parse()
            .unwrap();
    let e = Expectation::from_table("m.toml", 3, &t).unwrap();
    assert_eq!((e.value, e.over), (1500.0, Over::Mean));
    assert_eq!(e.source, "m.toml:3");
    let t: Table = "assert = \"phantom == 0\"\nvariant = \"x\"\n"
        .parse()
        .unwrap();
    let e = Expectation::from_table("m.toml", 3, &t).unwrap();
    assert_eq!(e.variant.as_deref(), Some("x"));
    assert!(e.check_variant(&["y", "x"]).is_ok());
    assert!(
        e.check_variant(&["xx"])
            .unwrap_err()
            .to_string()
            .contains("did you mean `xx`")
    );
}

#[test]
fn absent_optional_metrics_are_reported_as_absent() {
    // A run of one tier: no `layered` block.
    let summary = Summary {
        intents: 3,
        ..Summary::default()
    };
    assert_eq!(metric(&summary, "intents"), Ok(3.0));
    assert!(matches!(
        metric(&summary, "layered.orphaned"),
        Err(MetricError::Absent(_))
    ));
    assert!(matches!(
        metric(&summary, "ended"),
        Err(MetricError::NotANumber(_))
    ));
    assert!(matches!(
        metric(&summary, "completion_ms.p98"),
        Err(MetricError::Unknown(_))
    ));
    let e = Expectation::parse("layered.orphaned == 0").unwrap();
    let o = e.evaluate("v", &[(1, &summary)]);
    assert!(!o.passed);
    assert!(
        o.seen(Over::All).contains("absent"),
        "{}",
        o.seen(Over::All)
    );
}

#[test]
fn names_include_nested_and_plain() {
    let n = metric_names();
    for want in [
        "completion_ms.p99",
        "peak_retries",
        "recovery_ms",
        "layered.orphaned",
        "layered.expected_amplification",
        "layered.layers.N.sent",
        "tiers.N.served",
        "recovered",
    ] {
        assert!(n.contains(&want.to_string()), "{want} in {n:?}");
    }
    for not in ["completion_ms", "layered", "ended", "truncated"] {
        assert!(!n.contains(&not.to_string()), "{not} in {n:?}");
    }
}

#[test]
fn a_share_of_seeds_with_its_wilson_interval() {
    let e = Expectation::parse("recovered >= 0.6, over=share").unwrap();
    assert_eq!(e.over, Over::Share);
    let yes = Summary {
        recovered: Some(true),
        ..Summary::default()
    };
    let no = Summary {
        recovered: Some(false),
        ..Summary::default()
    };
    assert_eq!(metric(&yes, "recovered"), Ok(1.0));
    // 7 of 10 recovered: 0.7 >= 0.6 holds, shown with Wilson's 0.40 .. 0.89.
    let runs: Vec<(u64, &Summary)> = (0..10)
        .map(|i| (i, if i < 7 { &yes } else { &no }))
        .collect();
    let o = e.evaluate("v", &runs);
    assert!(o.passed);
    assert_eq!(
        o.seen(Over::Share),
        "7 of 10 seeds, share 0.7 (95% Wilson CI 0.3968 .. 0.8922)"
    );
    // 0.8 fails, and the seed to look at is one that did not recover.
    let e = Expectation::parse("recovered >= 0.8, over=share").unwrap();
    let o = e.evaluate("v", &runs);
    assert!(!o.passed);
    assert_eq!(o.seed, Some(7));
    // A run without a trigger has no `recovered`: absent, not a silent 0.
    let none = Summary::default();
    assert!(!e.evaluate("v", &[(1, &none)]).passed);
    // Shares are for yes/no metrics, between 0 and 1; a yes/no metric is not averaged.
    let bad = |t: &str| Expectation::parse(t).unwrap_err().message;
    assert!(bad("peak_retries < 0.5, over=share").contains("yes/no metric"));
    assert!(bad("recovered >= 80, over=share").contains("[0, 1]"));
    assert!(bad("recovered >= 0.8, over=mean").contains("over = \"share\""));
}

#[test]
fn unknown_metrics_get_the_closest_real_one() {
    let e = check_metric("p99").unwrap_err();
    assert!(e.contains("did you mean `completion_ms.p99`"), "{e}");
    let e = check_metric("peak_retry").unwrap_err();
    assert!(e.contains("did you mean `peak_retries`"), "{e}");
    let e = check_metric("completion_ms.p98").unwrap_err();
    assert!(e.contains("did you mean `completion_ms.p9"), "{e}");
    let e = check_metric("orphaned").unwrap_err();
    assert!(e.contains("did you mean `layered.orphaned`"), "{e}");
    let e = check_metric("ended").unwrap_err();
    assert!(e.contains("not a number"), "{e}");
    let e = check_metric("zzzzzzzzzzzzzzzz").unwrap_err();
    assert!(e.contains("metrics: intents, attempts"), "{e}");
    assert!(
        !e.contains("layered,") && !e.contains("ended") && !e.contains("truncated"),
        "{e}"
    );
    assert!(check_metric("layered.layers.3.sent").is_ok());
    assert!(check_metric("tiers.0.peak_arrivals").is_ok());
    assert!(check_metric("layered.nope").is_err());
    assert!(check_metric("layered").is_err());
    assert!(Expectation::parse("p99 < 2s").is_err());
}

fn with_attempts(rows: &[(u64, u64, u64)]) -> Summary {
    Summary {
        attempt_peaks: rows
            .iter()
            .enumerate()
            .map(
                |(i, &(arrivals, peak, peak_window))| crate::result::summary::AttemptPeak {
                    attempt: i as u64 + 1,
                    arrivals,
                    peak,
                    peak_window,
                },
            )
            .collect(),
        ..Summary::default()
    }
}

/// Per-attempt metrics are named by attempt number (from 1); one past the last reads 0.
#[test]
fn attempt_metrics_by_number_and_zero_past_the_last() {
    let s = with_attempts(&[(500, 500, 500), (500, 112, 119)]);
    assert_eq!(metric(&s, "attempt_peaks.1.arrivals"), Ok(500.0));
    assert_eq!(metric(&s, "attempt_peaks.2.peak"), Ok(112.0));
    assert_eq!(metric(&s, "attempt_peaks.2.peak_window"), Ok(119.0));
    assert_eq!(metric(&s, "attempt_peaks.3.peak_window"), Ok(0.0));
    assert_eq!(metric(&s, "attempt_peaks.70000.arrivals"), Ok(0.0));
    let m = metrics(&s);
    assert_eq!(m.get("attempt_peaks.2.peak_window"), Some(&119.0));
    assert!(!m.contains_key("attempt_peaks.0.peak_window"));
    for ok in [
        "attempt_peaks.2.peak_window",
        "attempt_peaks.9.peak",
        "attempt_peaks.1.arrivals",
        "peak_arrivals_window",
        "peak_retries_window",
    ] {
        assert!(check_metric(ok).is_ok(), "{ok}");
    }
    // An attempt number no run reaches would read 0 in every run: refused.
    assert!(check_metric("attempt_peaks.10000.peak").is_ok());
    for unreachable in [
        "attempt_peaks.10001.peak",
        "attempt_peaks.18446744073709551616.peak",
        "attempt_peaks.99999999999999999999.peak",
    ] {
        let e = check_metric(unreachable).unwrap_err();
        assert!(e.contains("numbered 1 to 10000"), "{e}");
        assert!(Expectation::parse(&format!("{unreachable} < 1")).is_err());
    }
    let e = check_metric("attempt_peaks.0.peak").unwrap_err();
    assert!(e.contains("numbered from 1"), "{e}");
    assert!(e.contains("`attempt_peaks.1.peak`"), "{e}");
    assert!(check_metric("attempt_peaks.2.peek").is_err());
    assert!(check_metric("attempt_peaks.2").is_err());
    assert!(metric(&s, "attempt_peaks.2.peek").is_err());
    let e = Expectation::parse("attempt_peaks.2.peak_window <= 120").unwrap();
    assert_eq!(e.holds(&s), Ok(true));
    let e = Expectation::parse("attempt_peaks.4.peak_window == 0").unwrap();
    assert_eq!(e.holds(&s), Ok(true));
}
