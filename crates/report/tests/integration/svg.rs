use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_report::{
    LoadOptions, Shade, XScale, cdf_chart, cdf_chart_with, load_chart, load_chart_with,
    outcome_chart,
};

use crate::fixture;

fn looks_like_svg(svg: &str) {
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("<text"));
    assert!(!svg.contains("NaN"));
}

#[test]
fn load_chart_has_panel_titles_and_labels() {
    let report = fixture::report();
    let svg = load_chart(&report).unwrap();
    looks_like_svg(&svg);
    for v in &report.variants {
        // Text is escaped in SVG.
        let name = v.name.replace('&', "&amp;");
        let peak = format!(
            "{}: peak {} arrivals per 10 ms",
            name, v.summary.peak_arrivals
        );
        assert!(svg.contains(&peak), "missing {peak:?}");
    }
    assert!(svg.contains("first attempts"));
    assert!(svg.contains("retries"));
    assert!(svg.contains("goodput"));
    assert!(svg.contains("time (s)"));
    // 3,000 buckets merge three by three.
    assert!(svg.contains("arrivals per 30 ms"), "merged y label");
    assert!(
        svg.contains("each column sums 3 buckets of 10 ms"),
        "merge note"
    );
    assert_eq!(svg, load_chart(&report).unwrap());
}

#[test]
fn load_chart_small_is_not_merged() {
    let svg = load_chart(&fixture::small()).unwrap();
    looks_like_svg(&svg);
    assert!(svg.contains("arrivals per 10 ms"));
    assert!(!svg.contains("each column sums"));
    assert!(svg.contains("time (s)"));
}

#[test]
fn load_chart_stays_small() {
    let mut report = fixture::small();
    report.variants = vec![fixture::variant("long", 200_000, 2)];
    let svg = load_chart(&report).unwrap();
    looks_like_svg(&svg);
    assert!(svg.len() < 200_000, "{} bytes", svg.len());
}

#[test]
fn outcome_chart_labels_every_variant() {
    let report = fixture::report();
    let svg = outcome_chart(&report).unwrap();
    looks_like_svg(&svg);
    for v in &report.variants {
        assert!(svg.contains(&v.name.replace('&', "&amp;")), "{}", v.name);
    }
    assert!(svg.contains("duplicated 420"));
    assert!(svg.contains("phantom"));
    assert_eq!(svg, outcome_chart(&report).unwrap());
}

#[test]
fn cdf_chart_has_a_legend_entry_per_variant() {
    let report = fixture::report();
    let svg = cdf_chart(&report).unwrap();
    looks_like_svg(&svg);
    for v in &report.variants {
        assert!(svg.contains(&v.name.replace('&', "&amp;")), "{}", v.name);
    }
    assert!(svg.contains("log scale"));
    assert_eq!(svg, cdf_chart(&report).unwrap());
    let linear = cdf_chart_with(&report, XScale::Linear).unwrap();
    looks_like_svg(&linear);
    assert!(!linear.contains("log scale"));
}

#[test]
fn empty_and_degenerate_reports_render() {
    let empty = RunReport {
        schema_version: SCHEMA_VERSION,
        model: "empty".to_string(),
        seed: 1,
        variants: vec![],
    };
    for svg in [load_chart(&empty), outcome_chart(&empty), cdf_chart(&empty)] {
        looks_like_svg(&svg.unwrap());
    }
    let mut blank = fixture::small();
    let v = &mut blank.variants[0];
    v.series.first.clear();
    v.series.retries.clear();
    v.series.succeeded.clear();
    v.completion_cdf.clear();
    v.summary.applied_once = 0;
    for svg in [load_chart(&blank), outcome_chart(&blank), cdf_chart(&blank)] {
        looks_like_svg(&svg.unwrap());
    }
}

#[test]
fn names_are_escaped() {
    let mut report = fixture::small();
    report.variants[0].name = "<a & b>".to_string();
    let svg = load_chart(&report).unwrap();
    assert!(svg.contains("&lt;a &amp; b&gt;: peak"));
}

/// A burst at t = 0 and a thin tail to 100 s: the axis ends early and the tail is counted.
fn tailed() -> RunReport {
    let mut r = fixture::small();
    let v = &mut r.variants[0];
    let n = 10_000;
    v.series.first = vec![0; n];
    v.series.retries = vec![0; n];
    v.series.succeeded = vec![0; n];
    v.series.first[0] = 1000;
    for i in 1..300 {
        v.series.retries[i] = 50;
    }
    for i in (300..n).step_by(1000) {
        v.series.retries[i] = 1;
    }
    v.summary.last_arrival_ms = 99_000.0;
    r
}

#[test]
fn load_chart_cuts_an_empty_tail_and_says_so() {
    let svg = load_chart(&tailed()).unwrap();
    looks_like_svg(&svg);
    // 99% of the 15,960 arrivals are in by 3 s; the axis ends at a round number after it.
    assert!(
        svg.contains("The time axis ends at 3 s, by when 99% of all arrivals are in"),
        "{svg}"
    );
    assert!(svg.contains("10 later arrivals, the last at 99 s"));
    // No merging: one column per 10 ms bucket, and the y axis says so.
    assert!(svg.contains("arrivals per 10 ms"));
    assert!(!svg.contains("each column sums"));
}

#[test]
fn overlay_and_log_y() {
    let report = fixture::report();
    let opt = LoadOptions {
        overlay: true,
        log_y: true,
        ..LoadOptions::default()
    };
    let svg = load_chart_with(&report, &opt).unwrap();
    looks_like_svg(&svg);
    assert!(svg.contains("every variant on one axis"));
    assert!(svg.contains("(log scale)"));
    for v in &report.variants {
        assert!(
            svg.contains(&v.name.replace('&', "&amp;")),
            "legend {}",
            v.name
        );
    }
    assert_eq!(svg, load_chart_with(&report, &opt).unwrap());
    // Every variant keeps its colour from the panel chart: variant 0 is blue in both.
    assert!(svg.contains("#4E79A7") && load_chart(&report).unwrap().contains("#4E79A7"));
}

#[test]
fn windows_are_shaded_and_recovery_marked() {
    let mut report = fixture::small();
    let s = &mut report.variants[0].summary;
    s.trigger_from_ms = Some(500.0);
    s.trigger_to_ms = Some(700.0);
    s.recovered = Some(true);
    s.recovery_ms = Some(300.0);
    let svg = load_chart(&report).unwrap();
    assert!(
        svg.contains("\ntrigger\n"),
        "the summary's trigger window is shaded"
    );
    assert!(svg.contains("recovered 300 ms after the trigger"));
    assert!(svg.contains("\nrecovered\n"));
    let opt = LoadOptions {
        windows: vec![vec![Shade {
            from_ms: 500.0,
            to_ms: 700.0,
            label: "outage".into(),
        }]],
        ..LoadOptions::default()
    };
    let svg = load_chart_with(&report, &opt).unwrap();
    assert!(svg.contains("\noutage\n") && !svg.contains("\ntrigger\n"));
    report.variants[0].summary.recovered = Some(false);
    assert!(load_chart(&report).unwrap().contains("never recovered"));
}

#[test]
fn cdf_marks_p50_and_p99() {
    let report = fixture::small();
    let svg = cdf_chart(&report).unwrap();
    assert!(
        svg.contains("only: p50 12.3 ms, p99 852 ms"),
        "legend with the percentiles"
    );
    assert!(svg.contains("successes and failures together"));
}

#[test]
fn cdf_splits_successes_from_failures() {
    let report = fixture::split(fixture::small());
    let svg = cdf_chart(&report).unwrap();
    looks_like_svg(&svg);
    let s = &report.variants[0].summary;
    assert_eq!((s.succeeded, s.failed), (9800, 200));
    // Success points are i ms at i/200: p50 = 100 ms, p99 = 198 ms; failures 4x that.
    assert!(svg.contains("only succeeded (9,800): p50 100 ms, p99 198 ms"));
    assert!(svg.contains("only failed (200): p50 400 ms, p99 792 ms"));
    assert!(svg.contains("dashed: intents that failed"));
    assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 2);
    assert!(!svg.contains("successes and failures together"));
}
