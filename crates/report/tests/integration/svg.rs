use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_report::{XScale, cdf_chart, cdf_chart_with, load_chart, outcome_chart};

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
    assert!(svg.contains("arrivals per 10 ms bucket"));
    assert!(svg.contains("time (ms)"));
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
