//! Charts a reader gets in five seconds: legends outside the plotted data,
//! titles that name the seeds, windows shaded on every time axis, a log y axis for a first
//! burst that dwarfs the rest, axes ending near the last data. Structural checks on the SVG.

use retrystorm_core::stats::Estimate;
use retrystorm_core::summary::RunReport;
use retrystorm_core::sweep::{Axis, Grid};
use retrystorm_report::sweep::chart::sweep_chart;
use retrystorm_report::sweep::header::SweepHeader;
use retrystorm_report::sweep::table::PointRow;
use retrystorm_report::{
    Bar, ChartOptions, LoadOptions, ParetoPoint, Shade, XScale, bar_chart, cdf_chart,
    cdf_chart_opts, load_chart_with, outcome_chart_opts, pareto_chart, replicas_chart, tiers_chart,
    tiers_chart_opts,
};

use crate::fixture;

type BBox = (f64, f64, f64, f64);

/// The value of attribute `name` in the tag `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let end = tag[at..].find('"')?;
    Some(&tag[at..at + end])
}

fn num(tag: &str, name: &str) -> f64 {
    attr(tag, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Every element `<name ...>` of the document, as its opening tag's text.
fn tags<'a>(svg: &'a str, name: &str) -> Vec<&'a str> {
    let open = format!("<{name} ");
    svg.match_indices(&open)
        .map(|(i, _)| {
            let end = svg[i..].find('>').map_or(svg.len(), |e| i + e);
            &svg[i..end]
        })
        .collect()
}

/// The bounding box of the plotted data: every polyline of three or more points (curves, not
/// swatches or grid lines) and every circle (points, markers) in `colours`, but for the circles
/// inside `legend` (the legend's own swatches).
fn data_bbox(svg: &str, colours: &[&str], legend: &[BBox]) -> BBox {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let mut add = |x: f64, y: f64| {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x);
        y1 = y1.max(y);
    };
    for t in tags(svg, "polyline") {
        if !attr(t, "stroke").is_some_and(|c| colours.contains(&c)) {
            continue;
        }
        let pts: Vec<(f64, f64)> = attr(t, "points")
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|p| {
                let (a, b) = p.split_once(',')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            })
            .collect();
        if pts.len() >= 3 {
            pts.into_iter().for_each(|(x, y)| add(x, y));
        }
    }
    for t in tags(svg, "circle") {
        let c = attr(t, "fill")
            .filter(|f| *f != "none")
            .or(attr(t, "stroke"));
        let (x, y) = (num(t, "cx"), num(t, "cy"));
        let swatch = legend.iter().any(|b| intersects(*b, (x, y, x, y)));
        if c.is_some_and(|c| colours.contains(&c)) && !swatch {
            add(x, y);
        }
    }
    assert!(x0 < x1 && y0 < y1, "no data drawn");
    (x0, y0, x1, y1)
}

/// The box of the `<text>` whose content is `label` (about 9 px a character at 15 px).
fn text_box(svg: &str, label: &str) -> BBox {
    let needle = format!(">\n{label}\n</text>");
    let at = svg
        .find(&needle)
        .unwrap_or_else(|| panic!("no text {label:?}"));
    let start = svg[..at].rfind("<text ").expect("a text tag");
    let tag = &svg[start..at];
    let (x, y) = (num(tag, "x"), num(tag, "y"));
    let w = 9.0 * label.chars().count() as f64;
    (x - 30.0, y - 10.0, x + w, y + 10.0)
}

fn intersects(a: BBox, b: BBox) -> bool {
    a.0 <= b.2 && b.0 <= a.2 && a.1 <= b.3 && b.1 <= a.3
}

/// The first `n` variant colours (crate::style's palette, as the SVG writes them).
const VARIANTS: [&str; 3] = ["#4E79A7", "#F28E2B", "#76B7B2"];

fn assert_outside(svg: &str, labels: &[String], colours: &[&str]) {
    let boxes: Vec<BBox> = labels.iter().map(|l| text_box(svg, l)).collect();
    let data = data_bbox(svg, colours, &boxes);
    for (l, b) in labels.iter().zip(boxes) {
        assert!(
            !intersects(b, data),
            "the legend entry {l:?} at {b:?} covers the data at {data:?}"
        );
    }
}

#[test]
fn cdf_legend_is_outside_the_curves() {
    let report = fixture::split(fixture::report());
    for svg in [
        cdf_chart(&report).unwrap(),
        cdf_chart_opts(&report, XScale::Linear, &ChartOptions::default()).unwrap(),
    ] {
        let labels: Vec<String> = report
            .variants
            .iter()
            .map(|v| format!("{} succeeded", v.name))
            .collect();
        // The label goes on with its counts; match the text's start.
        let full: Vec<String> = labels
            .iter()
            .map(|l| {
                let at = svg.find(&format!("\n{l} ")).expect(l) + 1;
                svg[at..].lines().next().unwrap().to_string()
            })
            .collect();
        assert_outside(&svg, &full, &VARIANTS);
    }
}

#[test]
fn tiers_legend_is_outside_the_lines() {
    let report = fixture::report();
    let svg = tiers_chart(&report).unwrap();
    let labels: Vec<String> = report.variants.iter().map(|v| v.name.clone()).collect();
    assert_outside(&svg, &labels, &VARIANTS);
}

#[test]
fn pareto_legend_is_outside_the_points() {
    // Points everywhere, up to the top right corner where the legend used to be.
    let points: Vec<ParetoPoint> = (0..40)
        .map(|i| {
            let x = f64::from(i % 8);
            let y = f64::from(i / 8) * 2.0;
            ParetoPoint {
                label: String::new(),
                x,
                y,
                front: i % 8 == 0 || i < 8,
                best: i == 0,
            }
        })
        .collect();
    let svg = pareto_chart("tune: model m", "p99 (ms)", "amplification", &points).unwrap();
    let labels: Vec<String> = ["feasible", "Pareto front", "recommended"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // Variant 0 faded (the feasible points), 1 (the front), 6 (the ring).
    let colours = ["#4E79A7", "#F28E2B", "#2F4B7C"];
    assert_outside(&svg, &labels, &colours);
}

#[test]
fn sweep_legend_is_outside_the_lines() {
    // Three variants rising from the bottom left to the top right: the data spans the plot,
    // where the legend used to sit.
    let variants: Vec<String> = ["no-jitter", "full", "equal"].map(String::from).to_vec();
    let grid = Grid {
        axes: vec![Axis {
            key: "retry.base".into(),
            values: (1..=5).map(|i| format!("{}ms", i * 50)).collect(),
        }],
        variants: variants.clone(),
        seeds: vec![1],
    };
    let header = SweepHeader::new("herd", "", &[], &grid, 15);
    let mut rows = Vec::new();
    for (vi, v) in variants.iter().enumerate() {
        for (p, x) in grid.axes[0].values.iter().enumerate() {
            let mean = p as f64 * 250.0 + vi as f64;
            let e = Estimate {
                mean,
                half_width: f64::NAN,
                n: 1,
            };
            rows.push(PointRow {
                point: p as u64,
                params: vec![("retry.base".into(), x.clone())],
                variant: v.clone(),
                n: 1,
                estimates: [("amplification".to_string(), e)].into_iter().collect(),
            });
        }
    }
    let svg = sweep_chart(&header, &rows, "amplification").unwrap();
    assert_outside(&svg, &variants, &VARIANTS);
}

#[test]
fn sensitivity_legend_is_outside_the_bars() {
    // Every bar runs to the right edge, where the legend used to sit (lower right).
    let bars: Vec<Bar> = (0..4)
        .map(|i| Bar {
            label: format!("p{i}"),
            value: 10.0,
            conf: 0.5,
            second: 9.0,
        })
        .collect();
    let names = ("μ* (mean |effect|)", "σ", "μ* 95% interval");
    let svg = bar_chart("m: which parameters", "μ*", names, &bars).unwrap();
    // The bars: rects in the two bar colours wider than a legend swatch (22 px).
    let data: Vec<BBox> = tags(&svg, "rect")
        .into_iter()
        .filter(|t| attr(t, "fill").is_some_and(|c| VARIANTS[..2].contains(&c)))
        .filter(|t| num(t, "width") > 22.0)
        .map(|t| {
            let (x, y) = (num(t, "x"), num(t, "y"));
            (x, y, x + num(t, "width"), y + num(t, "height"))
        })
        .collect();
    assert_eq!(data.len(), 8, "two bars a row");
    for l in [names.0, names.1, names.2] {
        let b = text_box(&svg, l);
        for d in &data {
            assert!(
                !intersects(b, *d),
                "the legend entry {l:?} at {b:?} covers a bar at {d:?}"
            );
        }
    }
}

fn title(svg: &str) -> String {
    let at = svg.find("<text ").expect("a title");
    svg[at..].lines().nth(1).unwrap().to_string()
}

#[test]
fn titles_say_how_many_seeds() {
    let report = fixture::split(fixture::report());
    let five = ChartOptions {
        seeds: 5,
        ..ChartOptions::default()
    };
    let load = LoadOptions {
        seeds: 5,
        ..LoadOptions::default()
    };
    let charts = [
        load_chart_with(&report, &load).unwrap(),
        cdf_chart_opts(&report, XScale::Auto, &five).unwrap(),
        outcome_chart_opts(&report, &five).unwrap(),
        tiers_chart_opts(&report, &five).unwrap(),
    ];
    for svg in &charts {
        let t = title(svg);
        assert!(
            t.ends_with(
                "model outage-storm, 5 seeds (42..46; curves of seed 42, numbers are means)"
            ),
            "{t}"
        );
        assert!(!t.contains("model outage-storm, seed 42"), "{t}");
    }
    // One run: its seed.
    let one = cdf_chart_opts(&report, XScale::Auto, &ChartOptions::default()).unwrap();
    assert!(title(&one).ends_with("model outage-storm, seed 42"));
}

/// A herd: all 1,000 clients at t = 0, then a long low tail of retries (3 to 12 a bucket).
fn herd() -> RunReport {
    let mut r = fixture::small();
    let v = &mut r.variants[0];
    let n = v.series.first.len();
    v.series.first = (0..n).map(|i| if i == 0 { 1000 } else { 0 }).collect();
    v.series.retries = (0..n)
        .map(|i| if i == 0 { 0 } else { 3 + (i % 10) as u32 })
        .collect();
    v.series.succeeded = vec![0; n];
    r
}

fn y_desc(svg: &str) -> bool {
    svg.contains("(log scale)")
}

#[test]
fn a_first_burst_that_dwarfs_the_rest_gets_a_log_axis() {
    let svg = load_chart_with(&herd(), &LoadOptions::default()).unwrap();
    assert!(y_desc(&svg), "the herd's y axis is logarithmic");
    assert!(
        svg.contains("The y axis is logarithmic: the first burst (1,000 per column) is 125 times the median column (8); --linear-y draws it linear."),
        "and the chart says why"
    );
    // --linear-y keeps it linear, and points at --log-y.
    let linear = LoadOptions {
        linear_y: true,
        ..LoadOptions::default()
    };
    let svg = load_chart_with(&herd(), &linear).unwrap();
    assert!(!y_desc(&svg));
    assert!(svg.contains("is 125 times the median column (8); --log-y shows the rest."));
    // A flat load (and a storm in the middle, not a first burst) stays linear, without a note.
    for r in [fixture::small(), fixture::report()] {
        let svg = load_chart_with(&r, &LoadOptions::default()).unwrap();
        assert!(!y_desc(&svg));
        assert!(!svg.contains("first burst"));
    }
    // A burst 20 times the median or less is not dwarfing.
    let mut mild = herd();
    mild.variants[0].series.first[0] = 160; // 20 times the median of 8
    assert!(!y_desc(
        &load_chart_with(&mild, &LoadOptions::default()).unwrap()
    ));
    mild.variants[0].series.first[0] = 161;
    assert!(y_desc(
        &load_chart_with(&mild, &LoadOptions::default()).unwrap()
    ));
}

/// The `(x, width)` of every rect filled in the windows' sand colour.
fn window_rects(svg: &str) -> Vec<(f64, f64)> {
    tags(svg, "rect")
        .into_iter()
        .filter(|t| attr(t, "fill") == Some("#EEE4C8"))
        .filter(|t| num(t, "height") > 20.0) // not the legend's swatch
        .map(|t| (num(t, "x"), num(t, "width")))
        .collect()
}

#[test]
fn the_tiers_chart_shades_the_windows() {
    let report = fixture::report();
    assert!(
        window_rects(&tiers_chart(&report).unwrap()).is_empty(),
        "no window, no shade"
    );
    let w = |from_ms: f64, to_ms: f64, label: &str| Shade {
        from_ms,
        to_ms,
        label: label.into(),
    };
    let opt = ChartOptions {
        windows: vec![vec![
            w(5000.0, 10_000.0, "outage"),
            w(10_000.0, 20_000.0, "slow ×10"),
        ]],
        ..ChartOptions::default()
    };
    let svg = tiers_chart_opts(&report, &opt).unwrap();
    let rects = window_rects(&svg);
    assert_eq!(rects.len(), 2, "{rects:?}");
    let ((a, wa), (b, wb)) = (rects[0], rects[1]);
    // 5..10 s and 10..20 s on one linear time axis: the second starts where the first ends,
    // twice as wide, and the first starts one width after the axis' 0.
    assert!((a + wa - b).abs() <= 1.0, "{rects:?}");
    assert!((wb - 2.0 * wa).abs() <= 2.0, "{rects:?}");
    assert!(svg.contains("\noutage\n") && svg.contains("\nslow ×10\n"));
    assert!(svg.contains("\noutage / capacity drop / load spike\n"));
    // Without the model's windows, the summary's trigger window.
    let mut r = fixture::small();
    r.variants[0].summary.trigger_from_ms = Some(500.0);
    r.variants[0].summary.trigger_to_ms = Some(700.0);
    let svg = tiers_chart(&r).unwrap();
    assert_eq!(window_rects(&svg).len(), 1);
    assert!(svg.contains("\ntrigger\n"));
}

/// The numbers of the tick labels anchored `anchor` ("middle": x axes, "end": y axes).
fn ticks(svg: &str, anchor: &str) -> Vec<f64> {
    tags(svg, "text")
        .into_iter()
        .filter(|t| attr(t, "text-anchor") == Some(anchor))
        .filter_map(|t| {
            let at = svg.find(t)? + t.len() + 2;
            svg[at..].lines().next()?.replace(',', "").parse().ok()
        })
        .collect()
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NAN, f64::max)
}

#[test]
fn axes_end_near_the_last_data() {
    // The data ends at 2 s; the summary's end (the horizon) is 30 s.
    let r = fixture::small();
    assert_eq!(r.variants[0].summary.end_ms, 30_000.0);
    let x = max(&ticks(&tiers_chart(&r).unwrap(), "middle"));
    assert!(
        (1.8..=2.2).contains(&x),
        "the tiers chart's last x tick is {x} s"
    );
    // A log y axis ends above the tallest column (1,000), not at the next power of ten.
    let y = max(&ticks(
        &load_chart_with(&herd(), &LoadOptions::default()).unwrap(),
        "end",
    ));
    assert_eq!(y, 1000.0, "the herd's top y tick");
    // The CDF's log x axis ends near the slowest completion.
    let report = fixture::split(fixture::report());
    let slowest = report
        .variants
        .iter()
        .flat_map(|v| v.failure_cdf.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    let svg = cdf_chart_opts(&report, XScale::Log, &ChartOptions::default()).unwrap();
    let x = max(&ticks(&svg, "middle"));
    assert!(
        x <= slowest * 1.1 && x >= slowest / 10.0,
        "last x tick {x} against the slowest {slowest}"
    );
}

#[test]
fn replicas_legend_is_outside_the_lines_and_names_every_replica() {
    let report = fixture::replicated();
    let svg = replicas_chart(&report).unwrap();
    let labels: Vec<String> = (0..3).map(|k| format!("replica {k}")).collect();
    // The replicas' colours (ColorBrewer Dark2), not the variants'.
    assert_outside(&svg, &labels, &["#1B9E77", "#D95F02", "#7570B3"]);
    // A panel per variant; the ejection marked and named once, its legend entries present.
    assert_eq!(svg.matches(": tier 0: server, 3 replicas (").count(), 3);
    assert_eq!(svg.matches("\nreplica 2 ejected\n").count(), 1);
    assert!(svg.contains("\nejected by outlier detection (in the replica"));
    assert!(svg.contains("\nrejected per bucket (dashed, in the replica"));
    assert_eq!(svg, replicas_chart(&report).unwrap(), "deterministic");
    // Without replicas: a note, no panel.
    let plain = replicas_chart(&fixture::report()).unwrap();
    assert!(plain.contains("no replica series in this report"));
    assert!(!plain.contains("replicas ("));
}
