//! Charts a reader gets in five seconds, through the CLI: titles that say how
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

#[test]
fn the_herds_load_chart_has_a_log_axis_unless_linear_y() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).display().to_string();
    let herd = shipped("thundering-herd.toml");
    let (code, _, err) = out(rs().args(["compare", &herd, "--svg", &p("auto.svg")]));
    assert_eq!(code, 0, "{err}");
    let auto = std::fs::read_to_string(p("auto.svg")).unwrap();
    assert!(auto.contains("arrivals per 10 ms (log scale)"));
    assert!(auto.contains("The y axis is logarithmic: the first burst"));
    assert!(auto.contains("--linear-y draws it linear."));
    let (code, _, err) = out(rs().args(["compare", &herd, "--svg", &p("lin.svg"), "--linear-y"]));
    assert_eq!(code, 0, "{err}");
    let lin = std::fs::read_to_string(p("lin.svg")).unwrap();
    assert!(!lin.contains("(log scale)"));
    assert!(lin.contains("--log-y shows the rest."));
    // Both at once is a usage error.
    let (code, _, err) = out(rs().args([
        "compare",
        &herd,
        "--svg",
        &p("x.svg"),
        "--linear-y",
        "--log-y",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--linear-y") && err.contains("--log-y"),
        "{err}"
    );
    // A load without a first burst (the stack's incident in the middle) stays linear.
    let (code, _, err) =
        out(rs().args(["compare", &shipped("stack.toml"), "--svg", &p("stack.svg")]));
    assert_eq!(code, 0, "{err}");
    let stack = std::fs::read_to_string(p("stack.svg")).unwrap();
    assert!(!stack.contains("(log scale)") && !stack.contains("first burst"));
}

#[test]
fn the_tiers_chart_shades_the_models_windows() {
    let d = tempfile::tempdir().unwrap();
    let svg = d.path().join("tiers.svg");
    let (code, _, err) = out(rs().args([
        "compare",
        &shipped("stack.toml"),
        "--tiers-svg",
        svg.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(svg).unwrap();
    // The server's capacity drop (60 s to 90 s), once in each of the three tiers' panels.
    assert_eq!(svg.matches("\ncapacity 10\n").count(), 3);
    let shaded = svg
        .match_indices("<rect ")
        .filter(|(i, _)| {
            svg[*i..]
                .split('>')
                .next()
                .unwrap()
                .contains("fill=\"#EEE4C8\"")
        })
        .count();
    assert_eq!(shaded, 4, "three panels and the legend's swatch");
}

#[test]
fn the_replicas_chart_draws_each_replica_and_marks_the_ejection() {
    let d = tempfile::tempdir().unwrap();
    let svg = d.path().join("replicas.svg");
    let html = d.path().join("r.html");
    let model = shipped("one-bad-replica.toml");
    let (code, _, err) = out(rs().args([
        "compare",
        &model,
        "--set",
        "horizon=20s",
        "--replicas-svg",
        svg.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(title(&svg).contains("arrivals at each replica: model one-bad-replica, seed 1"));
    // The legend names every replica; a panel per variant (one tier, replicated).
    for k in 0..5 {
        assert!(svg.contains(&format!("\nreplica {k}\n")), "replica {k}");
    }
    assert_eq!(svg.matches(": tier 0: server, 5 replicas (").count(), 7);
    // The ejection variants' triangles, labelled; replica 2's failure window in every panel.
    assert_eq!(svg.matches("\nreplica 2 ejected\n").count(), 2);
    assert_eq!(svg.matches("\nreplica 2: fails 100%\n").count(), 7);
    // The HTML report draws it too; a model without replicas has none.
    let (code, _, err) = out(rs().args([
        "report",
        &model,
        "--set",
        "horizon=20s",
        "-o",
        html.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("id=\"replicas-chart\"")
    );
    let (code, _, err) = out(rs().args([
        "report",
        &shipped("thundering-herd.toml"),
        "--set",
        "workload.clients=50",
        "-o",
        html.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        !std::fs::read_to_string(&html)
            .unwrap()
            .contains("replicas-chart")
    );
}
