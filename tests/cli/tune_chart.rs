//! `tune --svg` with one objective: the chart of every candidate's mean and interval.

use crate::tune::{model, tune};

/// Whether every tag of `svg` is closed in order (an SVG file a browser opens), one `<svg>` root.
fn assert_well_formed(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let end = rest[i..].find('>').expect("a tag ends") + i;
        let tag = &rest[i + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') || tag.ends_with('/') {
            continue;
        }
        match tag.strip_prefix('/') {
            Some(name) => assert_eq!(open.pop(), Some(name), "closing {name}"),
            None => open.push(tag.split_whitespace().next().unwrap_or("")),
        }
        assert!(open.first().is_none_or(|r| *r == "svg"), "one <svg> root");
    }
    assert!(open.is_empty(), "unclosed {open:?}");
}

#[test]
fn one_objective_svg_draws_every_candidate_against_the_parameter_or_ranked() {
    // failed: about 30% of 4,000 intents with one attempt, 9% with two, 3% with three: the
    // first two break the constraint, the third is the least amplification that meets it.
    let dir = tempfile::tempdir().unwrap();
    let m = model(dir.path());
    let svg = dir.path().join("one.svg");
    let base = [
        "--vary",
        "retry.max_attempts=1,2,3,4",
        "--minimize",
        "amplification",
        "--constraint",
        "failed < 200",
        "--svg",
        svg.to_str().unwrap(),
    ];
    let (code, out, err) = tune(&m, &base);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("recommended: #3"), "{out}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert_well_formed(&chart);
    assert!(!chart.contains("NaN"));
    for t in [
        "t: amplification of every candidate",
        "retry.max_attempts",
        "amplification (minimise); bar: 95% interval",
        "feasible",
        "infeasible (fails a constraint)",
        "recommended",
    ] {
        assert!(chart.contains(&format!("\n{t}\n")), "{t}: {chart:.400}");
    }
    // One marker per candidate and the ring of the recommendation.
    assert_eq!(chart.matches("r=\"5\"").count(), 4, "{chart}");
    assert_eq!(chart.matches("r=\"10\"").count(), 1, "{chart}");

    // Two tuned parameters: the 8 candidates in order of their mean, each named.
    let mut two = base.to_vec();
    two.extend(["--vary", "retry.base=10ms,20ms"]);
    let (code, out, err) = tune(&m, &two);
    assert_eq!(code, 0, "{out}{err}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert_well_formed(&chart);
    assert!(chart.contains("\ncandidates, in order of the mean amplification (minimise)\n"));
    for c in 1..=8 {
        assert!(chart.contains(&format!("\n#{c}\n")), "#{c}");
    }
    assert_eq!(chart.matches("r=\"5\"").count(), 8);
}
