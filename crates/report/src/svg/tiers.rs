//! The tiers chart: the arrivals at each tier of the request path, one panel per tier.

use crate::marks::Shade;
use crate::style::{GRID, GRID_BOLD, WINDOW, bold, font, stroke, variant};

use plotters::coord::Shift;
use plotters::prelude::*;
use retrystorm_core::summary::{RunReport, VariantResult};

use super::*;
use crate::{ReportError, fmt};

/// The request path, tier by tier: one panel per tier (top first; the last is `[server]`), the
/// arrivals per bucket at that tier as one line per variant, and each panel's title with the
/// tier's totals. Variants keep their colours from the other charts.
pub fn tiers_chart(report: &RunReport) -> Result<String, ReportError> {
    tiers_chart_opts(report, &ChartOptions::default())
}

/// [`tiers_chart`] with [`ChartOptions`]: the seeds in the title, the windows to shade.
pub fn tiers_chart_opts(report: &RunReport, opt: &ChartOptions) -> Result<String, ReportError> {
    let tiers = report
        .variants
        .first()
        .map_or(0, |v| v.summary.tiers.len().max(1));
    let windows = distinct_windows(report, opt);
    let entries = tiers_legend(report, &windows);
    let header = LOAD_HEADER + ((legend_rows(18, &entries) - 1) * LEGEND_ROW) as u32;
    let height = header + LOAD_PANEL * tiers as u32 + 20;
    render(CHART, (WIDTH, height), |root| {
        if report.variants.is_empty() {
            return empty(root, CHART);
        }
        let (top, rest) = root.split_vertically(header);
        top.draw(&Text::new(
            heading(
                report,
                "arrivals at each tier of the request path",
                opt.seeds,
            ),
            (16, 10),
            bold(20),
        ))
        .map_err(chart_err(CHART))?;
        legend(&top, CHART, (18, 46), &entries)?;
        let end_s = time_end_s(report, tiers, &windows);
        let panels = rest.split_evenly((tiers, 1));
        for (t, panel) in panels.iter().enumerate() {
            draw_tier(panel, report, t, end_s, &windows)?;
        }
        Ok(())
    })
}

const CHART: &str = "tiers";

/// The windows of trouble, as the load chart shades them (each distinct window once: every
/// panel shows every variant).
fn distinct_windows(report: &RunReport, opt: &ChartOptions) -> Vec<Shade> {
    let mut windows: Vec<Shade> = Vec::new();
    for w in variant_windows(report, &opt.windows).into_iter().flatten() {
        if !windows.contains(&w) {
            windows.push(w);
        }
    }
    windows
}

/// The variants' lines and, when there are windows, their shade. The legend sits in the
/// header, above the panels, so it never covers a line.
fn tiers_legend(report: &RunReport, windows: &[Shade]) -> Vec<(Swatch, String)> {
    let mut entries: Vec<(Swatch, String)> = report
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| (Swatch::Line(variant(i)), v.name.clone()))
        .collect();
    if !windows.is_empty() {
        entries.push((
            Swatch::Box(WINDOW),
            "outage / capacity drop / load spike".into(),
        ));
    }
    entries
}

/// A variant's arrivals (first attempts and retries) per bucket at tier `t`: the path's own
/// series (several tiers) or the main one.
fn tier_arrivals(v: &VariantResult, t: usize) -> Vec<u64> {
    let (first, retries) = match v.series.tiers.get(t) {
        Some(s) => (&s.first, &s.retries),
        None => (&v.series.first, &v.series.retries),
    };
    first
        .iter()
        .zip(retries)
        .map(|(a, b)| u64::from(*a) + u64::from(*b))
        .collect()
}

/// The end of the time axis in seconds: near the last arrival at any tier (or a window's end),
/// not at the horizon.
fn time_end_s(report: &RunReport, tiers: usize, windows: &[Shade]) -> f64 {
    let data_ms = report
        .variants
        .iter()
        .flat_map(|v| {
            let b = bucket_ms(v);
            (0..tiers).map(move |t| {
                tier_arrivals(v, t)
                    .iter()
                    .rposition(|&x| x > 0)
                    .map_or(0.0, |k| (k + 1) as f64 * b)
            })
        })
        .chain(windows.iter().map(|w| w.to_ms))
        .fold(0.0, f64::max);
    near_ceil(data_ms.max(1.0)) / 1000.0
}

/// Tier `t`'s panel: its axes up to `end_s`, the windows behind, a line per variant.
fn draw_tier(
    panel: &DrawingArea<SVGBackend<'_>, Shift>,
    report: &RunReport,
    t: usize,
    end_s: f64,
    windows: &[Shade],
) -> Result<(), ReportError> {
    let ymax = report
        .variants
        .iter()
        .flat_map(|v| tier_arrivals(v, t))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let y_hi = ymax * 1.08;
    let mut chart = tier_axes(panel, report, t, (end_s, y_hi))?;
    // Windows first, behind the lines, each labelled at its top left.
    for w in windows {
        shade_clipped(&mut chart, CHART, w, (1000.0, end_s), (0.0, y_hi))?;
    }
    let n = report.variants.len();
    for (i, v) in report.variants.iter().enumerate() {
        let b = bucket_ms(v) / 1000.0;
        let pts: Vec<(f64, f64)> = tier_arrivals(v, t)
            .into_iter()
            .enumerate()
            .map(|(k, y)| (k as f64 * b, y as f64))
            .collect();
        let color = variant(i);
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(stroke(i, n))))
            .map_err(chart_err(CHART))?;
    }
    Ok(())
}

/// Tier `t`'s axes from 0 to `x_hi` seconds and 0 to `y_hi` arrivals per bucket (the first
/// variant's), under a title with the tier's name and every variant's total there.
fn tier_axes<'a, 'b>(
    panel: &'a DrawingArea<SVGBackend<'b>, Shift>,
    report: &RunReport,
    t: usize,
    (x_hi, y_hi): (f64, f64),
) -> Result<Plot<'a, 'b>, ReportError> {
    let first = &report.variants[0];
    let bucket = bucket_ms(first);
    let name = first
        .summary
        .tiers
        .get(t)
        .map_or("server".to_string(), |s| s.name.clone());
    let totals: Vec<String> = report
        .variants
        .iter()
        .filter_map(|v| v.summary.tiers.get(t))
        .map(|s| fmt::num(s.arrivals as f64))
        .collect();
    let title = format!(
        "tier {t}: {name} (arrivals per {}; totals {})",
        fmt::duration(bucket),
        totals.join(" / ")
    );
    let mut chart = ChartBuilder::on(panel)
        .caption(title, font(15))
        .margin(12)
        .margin_right(44)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..x_hi, 0f64..y_hi)
        .map_err(chart_err(CHART))?;
    let y_fmt = |y: &f64| fmt::tick(*y);
    let x_fmt = |x: &f64| fmt::tick(*x);
    chart
        .configure_mesh()
        .x_labels(12)
        .y_labels(6)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(font(13))
        .axis_desc_style(font(14))
        .x_desc("simulated time (s)")
        .y_desc(format!("arrivals per {}", fmt::duration(bucket)))
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(chart_err(CHART))?;
    Ok(chart)
}
