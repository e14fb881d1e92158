//! Charts a reader gets in five seconds (issue 30 item 10), through the CLI: titles that say how
//! many seeds, the tiers chart shaded at the model's windows, the load chart's y axis.

use super::util::{out, rs, shipped};

/// The first `<text>` of a chart: its title.
fn title(svg: &str) -> String {
    let at = svg.find("<text ").expect("a title");
    svg[at..].lines().nth(1).unwrap().to_string()
}

#[test]
fn seeds_are_named_in_every_chart_title() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).display().to_string();
    let (code, _, err) = out(rs().args([
        "compare",
        &shipped("thundering-herd.toml"),
        "--seeds",
        "5",
        "--set",
        "workload.clients=50",
        "--svg",
        &p("load.svg"),
        "--cdf-svg",
        &p("cdf.svg"),
        "--outcomes-svg",
        &p("outcomes.svg"),
        "--tiers-svg",
        &p("tiers.svg"),
    ]));
    assert_eq!(code, 0, "{err}");
    for f in ["load.svg", "cdf.svg", "outcomes.svg", "tiers.svg"] {
        let svg = std::fs::read_to_string(p(f)).unwrap();
        let t = title(&svg);
        assert!(
            t.contains(", 5 seeds (42..46; curves of seed 42"),
            "{f}: {t}"
        );
        assert!(!t.ends_with(", seed 42"), "{f}: {t}");
    }
    // One seed: the seed.
    let (code, _, err) = out(rs().args([
        "compare",
        &shipped("thundering-herd.toml"),
        "--set",
        "workload.clients=50",
        "--cdf-svg",
        &p("one.svg"),
    ]));
    assert_eq!(code, 0, "{err}");
    let t = title(&std::fs::read_to_string(p("one.svg")).unwrap());
    assert!(t.ends_with(", seed 42"), "{t}");
}
