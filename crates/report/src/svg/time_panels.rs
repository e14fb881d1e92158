//! What the tiers and replicas charts share: a title and legend over panels of one height, each a
//! time axis in seconds with the model's windows shaded behind its lines.

use crate::marks::Shade;
use crate::style::{GRID, GRID_BOLD, WINDOW, bold, font};

use plotters::coord::Shift;
use plotters::prelude::*;
use retrystorm_core::summary::RunReport;

use super::*;
use crate::{error::ReportError, fmt};

/// Renders a chart of `panels` panels of [`LOAD_PANEL`] under a header: `title` and the legend
/// of `entries` (above the panels, so it never covers a line); `draw` draws panel `i`.
pub(super) fn panel_chart(
    chart: &'static str,
    report: &RunReport,
    title: String,
    entries: &[(Swatch, String)],
    panels: usize,
    draw: impl Fn(&DrawingArea<SVGBackend<'_>, Shift>, usize) -> Result<(), ReportError>,
) -> Result<String, ReportError> {
    let header = LOAD_HEADER + ((legend_rows(18, entries) - 1) * LEGEND_ROW) as u32;
    let height = header + LOAD_PANEL * panels as u32 + 20;
    render(chart, (WIDTH, height), |root| {
        if report.variants.is_empty() {
            return empty(root, chart);
        }
        let (top, rest) = root.split_vertically(header);
        top.draw(&Text::new(title, (16, 10), bold(20)))
            .map_err(chart_err(chart))?;
        legend(&top, chart, (18, 46), entries)?;
        for (i, panel) in rest.split_evenly((panels, 1)).iter().enumerate() {
            draw(panel, i)?;
        }
        Ok(())
    })
}

/// Every variant's windows of trouble, as the load chart shades them, each distinct window once.
pub(super) fn distinct_windows(report: &RunReport, opt: &ChartOptions) -> Vec<Shade> {
    let mut windows: Vec<Shade> = Vec::new();
    for w in variant_windows(report, &opt.windows).into_iter().flatten() {
        if !windows.contains(&w) {
            windows.push(w);
        }
    }
    windows
}

/// The legend entry of the shaded windows: `outage / capacity drop / load spike`, then `more`.
pub(super) fn windows_entry(more: &str) -> (Swatch, String) {
    (
        Swatch::Box(WINDOW),
        format!("outage / capacity drop / load spike{more}"),
    )
}

/// Where a series of counts per bucket of `bucket_ms` ends: the end of its last non-zero bucket.
pub(super) fn last_ms(ys: &[u64], bucket_ms: f64) -> f64 {
    ys.iter()
        .rposition(|&x| x > 0)
        .map_or(0.0, |k| (k + 1) as f64 * bucket_ms)
}

/// The end of a time axis in seconds: near `data_ms` (the last data of any panel) or a window's
/// end, whichever is later; not at the horizon.
pub(super) fn time_end_s(data_ms: impl Iterator<Item = f64>, windows: &[Shade]) -> f64 {
    let end = data_ms
        .chain(windows.iter().map(|w| w.to_ms))
        .fold(0.0, f64::max);
    near_ceil(end.max(1.0)) / 1000.0
}

/// A panel's axes from 0 to `x_hi` seconds and 0 to `y_hi` counts per bucket of `bucket_ms`
/// (the axis says "arrivals per ..."), under `title`, with `windows` shaded behind.
pub(super) fn time_axes<'a, 'b>(
    panel: &'a DrawingArea<SVGBackend<'b>, Shift>,
    chart_name: &'static str,
    title: String,
    bucket_ms: f64,
    (x_hi, y_hi): (f64, f64),
    windows: &[Shade],
) -> Result<Plot<'a, 'b>, ReportError> {
    let mut chart = ChartBuilder::on(panel)
        .caption(title, font(15))
        .margin(12)
        .margin_right(44)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..x_hi, 0f64..y_hi)
        .map_err(chart_err(chart_name))?;
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
        .y_desc(format!("arrivals per {}", fmt::duration(bucket_ms)))
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(chart_err(chart_name))?;
    // Windows first, behind the lines, each labelled at its top left.
    for w in windows {
        shade_clipped(&mut chart, chart_name, w, (1000.0, x_hi), (0.0, y_hi))?;
    }
    Ok(chart)
}

/// Counts per bucket as points `(seconds, count)`.
pub(super) fn time_points(ys: &[u64], bucket_ms: f64) -> Vec<(f64, f64)> {
    let b = bucket_ms / 1000.0;
    ys.iter()
        .enumerate()
        .map(|(k, y)| (k as f64 * b, *y as f64))
        .collect()
}
