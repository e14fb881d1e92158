//! SVG charts drawn with plotters into a `String`.
//!
//! Text is laid out with the DejaVu Sans font compiled into the binary (plotters' `ab_glyph`
//! path), so nothing depends on the fonts installed on the machine; the SVG carries the text as
//! `<text>` elements. Output is byte-identical for the same report.

use crate::style::{GRID, GRID_BOLD, PALETTE, bold, ensure_fonts, font};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::summary::{RunReport, VariantResult};

use crate::{ReportError, fmt};

/// At most this many columns are drawn per panel of the load chart; longer series are merged by
/// summing runs of adjacent buckets.
pub const MAX_COLUMNS: usize = 1200;

const WIDTH: u32 = 1200;
const LOAD_HEADER: u32 = 64;
const LOAD_PANEL: u32 = 270;

const FIRST: RGBColor = RGBColor(0x4e, 0x79, 0xa7);
const RETRY: RGBColor = RGBColor(0xe1, 0x57, 0x59);
const GOODPUT: RGBColor = RGBColor(0x1b, 0x7a, 0x3a);
const ONCE: RGBColor = RGBColor(0x59, 0xa1, 0x4f);
const DUPLICATED: RGBColor = RGBColor(0xf2, 0x8e, 0x2b);
const LOST: RGBColor = RGBColor(0xe1, 0x57, 0x59);
const PHANTOM: RGBColor = RGBColor(0x8c, 0x56, 0xa8);

/// Turns any plotters error into a [`ReportError`] naming the chart.
fn chart_err<E: std::fmt::Display>(chart: &'static str) -> impl Fn(E) -> ReportError {
    move |e| ReportError::Chart {
        chart,
        message: e.to_string(),
    }
}

/// Draws `f` on a fresh white SVG canvas and returns the document.
fn render(
    chart: &'static str,
    size: (u32, u32),
    f: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), ReportError>,
) -> Result<String, ReportError> {
    ensure_fonts()?;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(chart_err(chart))?;
        f(&root)?;
        root.present().map_err(chart_err(chart))?;
    }
    Ok(buf)
}

/// A legend drawn by hand in a header strip: a swatch and a label per entry, left to right.
fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
    (x, y): (i32, i32),
    entries: &[(RGBColor, bool, &str)],
) -> Result<(), ReportError> {
    let style = font(15).pos(Pos::new(HPos::Left, VPos::Center));
    let mut x = x;
    for &(color, line, label) in entries {
        if line {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 22, y)],
                color.stroke_width(3),
            ))
            .map_err(chart_err(chart))?;
        } else {
            area.draw(&Rectangle::new(
                [(x, y - 6), (x + 22, y + 6)],
                color.filled(),
            ))
            .map_err(chart_err(chart))?;
        }
        area.draw(&Text::new(label.to_string(), (x + 28, y), style.clone()))
            .map_err(chart_err(chart))?;
        let (w, _) = area
            .estimate_text_size(label, &style)
            .map_err(chart_err(chart))?;
        x += 28 + w as i32 + 26;
    }
    Ok(())
}

fn empty(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
) -> Result<(), ReportError> {
    area.draw(&Text::new("no variants in this report", (20, 40), font(16)))
        .map_err(chart_err(chart))
}

fn heading(report: &RunReport, what: &str) -> String {
    format!("{what}: model {}, seed {}", report.model, report.seed)
}

/// A series' bucket width, falling back to the summary's when the series does not say.
fn bucket_ms(v: &VariantResult) -> f64 {
    [v.series.bucket_ms, v.summary.bucket_ms]
        .into_iter()
        .find(|b| b.is_finite() && *b > 0.0)
        .unwrap_or(1.0)
}

/// Sums runs of `factor` adjacent values.
fn merge(values: &[u32], factor: usize) -> Vec<u64> {
    values
        .chunks(factor)
        .map(|c| c.iter().map(|&v| u64::from(v)).sum())
        .collect()
}

/// The outline of a bar chart of `values`, columns `width` wide from x = 0, as the corners of a
/// step line; runs of equal values share their corners. Closed along y = 0, ready for a polygon.
fn step_polygon(values: &[u64], width: f64) -> Vec<(f64, f64)> {
    let mut pts = vec![(0.0, 0.0)];
    let mut level = 0u64;
    for (i, &v) in values.iter().enumerate() {
        if v != level {
            let x = i as f64 * width;
            pts.push((x, level as f64));
            pts.push((x, v as f64));
            level = v;
        }
    }
    let end = values.len() as f64 * width;
    pts.push((end, level as f64));
    pts.push((end, 0.0));
    pts
}

/// Arrivals at the server over time: first attempts and retries as stacked filled areas, with the
/// goodput (intents succeeded per bucket) as a line when there is any. One panel per variant,
/// stacked vertically, all on the same x and y scale. Series longer than [`MAX_COLUMNS`] buckets
/// are merged (summed) into wider buckets, and the y-axis label says so.
pub fn load_chart(report: &RunReport) -> Result<String, ReportError> {
    const CHART: &str = "load";
    let n = report.variants.len();
    let height = LOAD_HEADER + LOAD_PANEL * n.max(1) as u32;
    render(CHART, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(LOAD_HEADER);
        header
            .draw(&Text::new(
                heading(report, "arrivals at the server"),
                (16, 10),
                bold(20),
            ))
            .map_err(chart_err(CHART))?;
        if n == 0 {
            return empty(&body, CHART);
        }

        let max_len = report
            .variants
            .iter()
            .map(|v| v.series.first.len().max(v.series.retries.len()))
            .max()
            .unwrap_or(0);
        let factor = max_len.div_ceil(MAX_COLUMNS).max(1);

        struct Panel<'a> {
            v: &'a VariantResult,
            bucket: f64,
            first: Vec<u64>,
            total: Vec<u64>,
            goodput: Vec<u64>,
        }
        let panels: Vec<Panel> = report
            .variants
            .iter()
            .map(|v| {
                let first = merge(&v.series.first, factor);
                let retries = merge(&v.series.retries, factor);
                let len = first.len().max(retries.len());
                let total = (0..len)
                    .map(|i| first.get(i).unwrap_or(&0) + retries.get(i).unwrap_or(&0))
                    .collect();
                Panel {
                    v,
                    bucket: bucket_ms(v),
                    first,
                    total,
                    goodput: merge(&v.series.succeeded, factor),
                }
            })
            .collect();
        let any_goodput = panels.iter().any(|p| p.goodput.iter().any(|&g| g > 0));

        let mut entries = vec![(FIRST, false, "first attempts"), (RETRY, false, "retries")];
        if any_goodput {
            entries.push((GOODPUT, true, "goodput (intents succeeded, same scale)"));
        }
        legend(&header, CHART, (18, 46), &entries)?;

        // Shared scales.
        let end_ms = panels
            .iter()
            .map(|p| p.total.len().max(p.goodput.len()) as f64 * factor as f64 * p.bucket)
            .fold(0.0, f64::max);
        let seconds = end_ms >= 10_000.0;
        let unit = if seconds { 1000.0 } else { 1.0 };
        let x_end = if end_ms > 0.0 { end_ms / unit } else { 1.0 };
        let y_max = panels
            .iter()
            .flat_map(|p| p.total.iter().chain(&p.goodput))
            .copied()
            .max()
            .unwrap_or(0);
        let y_end = (y_max as f64 * 1.08).max(1.0);

        let same_bucket = panels.iter().all(|p| p.bucket == panels[0].bucket);
        let mut x_desc = if seconds { "time (s)" } else { "time (ms)" }.to_string();
        let y_desc = if !same_bucket {
            "arrivals per bucket (see titles)".to_string()
        } else if factor == 1 {
            format!("arrivals per {} bucket", fmt::duration(panels[0].bucket))
        } else {
            format!(
                "arrivals per {}",
                fmt::duration(panels[0].bucket * factor as f64)
            )
        };
        if factor > 1 {
            // Too many buckets to draw one column each: say how they were merged.
            if same_bucket {
                x_desc.push_str(&format!(
                    "; each column sums {factor} buckets of {}",
                    fmt::duration(panels[0].bucket),
                ));
            } else {
                x_desc.push_str(&format!("; each column sums {factor} buckets"));
            }
        }

        let areas = body.split_evenly((n, 1));
        for (i, (p, area)) in panels.iter().zip(&areas).enumerate() {
            let last = i + 1 == n;
            let title = format!(
                "{}: peak {} arrivals per {} ({} retries)",
                p.v.name,
                fmt::int(p.v.summary.peak_arrivals),
                fmt::duration(p.bucket),
                fmt::int(p.v.summary.peak_retries),
            );
            let mut chart = ChartBuilder::on(area)
                .caption(title, bold(17))
                .margin_left(12)
                .margin_right(24)
                .margin_top(4)
                .margin_bottom(6)
                .x_label_area_size(if last { 46 } else { 26 })
                .y_label_area_size(78)
                .build_cartesian_2d(0f64..x_end, 0f64..y_end)
                .map_err(chart_err(CHART))?;
            let x_fmt = |x: &f64| fmt::tick(*x);
            let y_fmt = |y: &f64| fmt::tick(*y);
            let mut mesh = chart.configure_mesh();
            mesh.x_labels(12)
                .y_labels(5)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .label_style(font(13))
                .axis_desc_style(font(14))
                .y_desc(y_desc.as_str())
                .bold_line_style(GRID_BOLD)
                .light_line_style(GRID)
                .max_light_lines(1);
            if last {
                mesh.x_desc(x_desc.as_str());
            }
            mesh.draw().map_err(chart_err(CHART))?;

            let width = factor as f64 * p.bucket / unit;
            chart
                .draw_series(std::iter::once(Polygon::new(
                    step_polygon(&p.total, width),
                    RETRY.filled(),
                )))
                .map_err(chart_err(CHART))?;
            chart
                .draw_series(std::iter::once(Polygon::new(
                    step_polygon(&p.first, width),
                    FIRST.filled(),
                )))
                .map_err(chart_err(CHART))?;
            if any_goodput {
                let pts = p
                    .goodput
                    .iter()
                    .enumerate()
                    .map(|(j, &g)| ((j as f64 + 0.5) * width, g as f64));
                chart
                    .draw_series(LineSeries::new(pts, GOODPUT.stroke_width(2)))
                    .map_err(chart_err(CHART))?;
            }
        }
        Ok(())
    })
}

/// What happened to the effect of each settled intent, as one horizontal 100% bar per variant:
/// applied once, duplicated, lost with the client told it failed, and phantom (lost with the
/// client told it succeeded). The counts, including false failures (client gave up but the
/// effect was applied), are written above each bar.
pub fn outcome_chart(report: &RunReport) -> Result<String, ReportError> {
    const CHART: &str = "outcome";
    const BAND: u32 = 82;
    const HEADER: u32 = 74;
    let n = report.variants.len();
    let height = HEADER + BAND * n.max(1) as u32 + 56;
    render(CHART, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(HEADER);
        header
            .draw(&Text::new(
                heading(report, "effects of settled intents"),
                (16, 10),
                bold(20),
            ))
            .map_err(chart_err(CHART))?;
        legend(
            &header,
            CHART,
            (18, 52),
            &[
                (ONCE, false, "applied once"),
                (DUPLICATED, false, "duplicated"),
                (LOST, false, "lost (client told failure)"),
                (PHANTOM, false, "phantom (lost, client told success)"),
            ],
        )?;
        if n == 0 {
            return empty(&body, CHART);
        }

        let mut chart = ChartBuilder::on(&body)
            .margin_left(16)
            .margin_right(30)
            .margin_top(4)
            .x_label_area_size(46)
            .build_cartesian_2d(0f64..100f64, 0f64..n as f64)
            .map_err(chart_err(CHART))?;
        let x_fmt = |x: &f64| format!("{}%", fmt::trim(*x));
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_labels(11)
            .x_label_formatter(&x_fmt)
            .label_style(font(13))
            .axis_desc_style(font(14))
            .x_desc("share of settled intents")
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID)
            .max_light_lines(1)
            .draw()
            .map_err(chart_err(CHART))?;

        for (i, v) in report.variants.iter().enumerate() {
            let s = &v.summary;
            // Band i, counted from the top; y grows upwards.
            let y0 = (n - 1 - i) as f64;
            let settled = s.lost + s.applied_once + s.duplicated;
            let phantom = s.phantom.min(s.lost);
            let label = if settled == 0 {
                format!("{}: no settled intents", v.name)
            } else {
                format!(
                    "{}: {} settled; once {}, duplicated {}, lost {} (phantom {}), false failures {}",
                    v.name,
                    fmt::int(settled),
                    fmt::int(s.applied_once),
                    fmt::int(s.duplicated),
                    fmt::int(s.lost),
                    fmt::int(s.phantom),
                    fmt::int(s.false_failures),
                )
            };
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (0.0, y0 + 0.8),
                    font(15).pos(Pos::new(HPos::Left, VPos::Center)),
                )))
                .map_err(chart_err(CHART))?;
            if settled == 0 {
                continue;
            }
            let segments = [
                (s.applied_once, ONCE),
                (s.duplicated, DUPLICATED),
                (s.lost - phantom, LOST),
                (phantom, PHANTOM),
            ];
            let mut x = 0.0;
            for (count, color) in segments {
                if count == 0 {
                    continue;
                }
                let w = 100.0 * count as f64 / settled as f64;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x, y0 + 0.12), (x + w, y0 + 0.6)],
                        color.filled(),
                    )))
                    .map_err(chart_err(CHART))?;
                x += w;
            }
        }
        Ok(())
    })
}

/// The x scale of [`cdf_chart_with`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XScale {
    /// Logarithmic when the positive completion times span a factor of 100 or more.
    #[default]
    Auto,
    Linear,
    Log,
}

/// [`cdf_chart_with`] with [`XScale::Auto`].
pub fn cdf_chart(report: &RunReport) -> Result<String, ReportError> {
    cdf_chart_with(report, XScale::Auto)
}

/// Completion-time CDF of every variant, one line each, with a legend.
pub fn cdf_chart_with(report: &RunReport, scale: XScale) -> Result<String, ReportError> {
    const CHART: &str = "completion CDF";
    let points = report.variants.iter().flat_map(|v| &v.completion_cdf);
    let max = points
        .clone()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    let min_pos = points
        .map(|p| p.0)
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold(f64::INFINITY, f64::min);
    let log = match scale {
        XScale::Linear => false,
        XScale::Log => min_pos.is_finite(),
        XScale::Auto => min_pos.is_finite() && max / min_pos >= 100.0,
    };
    render(CHART, (WIDTH, 640), |root| {
        if report.variants.is_empty() {
            return empty(root, CHART);
        }
        if log {
            let lo = 10f64.powf(min_pos.log10().floor());
            let hi = 10f64.powf(max.log10().ceil()).max(lo * 10.0);
            draw_cdf(
                report,
                root,
                (lo..hi).log_scale(),
                "completion time (ms, log scale)",
            )
        } else {
            let hi = if max > 0.0 { max * 1.02 } else { 1.0 };
            draw_cdf(report, root, 0f64..hi, "completion time (ms)")
        }
    })
}

fn draw_cdf<X>(
    report: &RunReport,
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    x_spec: X,
    x_desc: &str,
) -> Result<(), ReportError>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    const CHART: &str = "completion CDF";
    let log = x_desc.contains("log");
    let mut chart = ChartBuilder::on(root)
        .caption(heading(report, "completion time CDF"), bold(20))
        .margin(16)
        .margin_right(44)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x_spec, 0f64..1.0)
        .map_err(chart_err(CHART))?;
    let x_fmt = |x: &f64| fmt::tick(*x);
    let y_fmt = |y: &f64| format!("{}%", fmt::trim(y * 100.0));
    chart
        .configure_mesh()
        .x_labels(12)
        .y_labels(11)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(font(13))
        .axis_desc_style(font(14))
        .x_desc(x_desc)
        .y_desc("settled intents completed")
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(chart_err(CHART))?;
    for (i, v) in report.variants.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = v
            .completion_cdf
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log || *x > 0.0))
            .collect();
        let label = if pts.is_empty() {
            format!("{} (no settled intents)", v.name)
        } else {
            v.name.clone()
        };
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(chart_err(CHART))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(font(15))
        .background_style(WHITE.mix(0.9))
        .border_style(GRID_BOLD)
        .margin(12)
        .draw()
        .map_err(chart_err(CHART))?;
    Ok(())
}
