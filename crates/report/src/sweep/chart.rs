//! The sweep chart: a metric against the varied parameter, one line per variant, with its CI
//! band.

use crate::error::ReportError;
use crate::style::{GRID, GRID_BOLD, font, marker_shape, stroke, variant};
use crate::svg::{Swatch, header_height, header_strip};
use crate::sweep::header::SweepHeader;
use crate::sweep::table::PointRow;
use plotters::coord::Shift;
use plotters::prelude::*;
use retrystorm_core::aggregate;
use retrystorm_core::sweep::Axis;

/// Which axis goes on x: the first with several values and numeric positions, else the first
/// with several values (drawn as categories), else the first.
fn x_axis(header: &SweepHeader) -> Option<usize> {
    let axes = &header.grid.axes;
    axes.iter()
        .position(|a| a.values.len() > 1 && a.numeric())
        .or_else(|| axes.iter().position(|a| a.values.len() > 1))
        .or(if axes.is_empty() { None } else { Some(0) })
}

/// An axis as a chart's x label: its key, with `(ms)` when its values are durations.
pub fn axis_name(a: &Axis) -> String {
    if a.numeric() && a.values.iter().any(|v| v.parse::<f64>().is_err()) {
        format!("{} (ms)", a.key)
    } else {
        a.key.clone()
    }
}

const CHART: &str = "sweep";

fn err<E: std::fmt::Display>(e: E) -> ReportError {
    crate::svg::chart_err(CHART)(e)
}

/// A line of the sweep chart: `(x, mean, half-width)` points.
struct Line {
    label: String,
    /// The variant's index in the header: its colour.
    variant: usize,
    /// Which line of its variant (other axes' values): solid for the first, dashed after.
    nth: usize,
    points: Vec<(f64, f64, f64)>,
}

/// The chart's x axis: the grid axis it shows (if any), as numbers or as categories.
struct XAxis<'a> {
    index: Option<usize>,
    axis: Option<&'a Axis>,
    numeric: bool,
}

impl<'a> XAxis<'a> {
    fn of(header: &'a SweepHeader) -> Self {
        let index = x_axis(header);
        let axis = index.map(|i| &header.grid.axes[i]);
        XAxis {
            index,
            axis,
            numeric: axis.is_some_and(Axis::numeric),
        }
    }

    /// A point's position on the axis: its value, or its category's index.
    fn pos(&self, params: &[(String, String)]) -> f64 {
        match (self.index, self.axis) {
            (Some(i), Some(a)) => {
                let v = &params[i].1;
                if self.numeric {
                    Axis::x(v).unwrap_or(0.0)
                } else {
                    a.values.iter().position(|x| x == v).unwrap_or(0) as f64
                }
            }
            _ => 0.0,
        }
    }

    fn name(&self) -> String {
        self.axis.map_or("point".to_string(), axis_name)
    }

    /// A tick's text: the number, or the category at an integer position.
    fn tick(&self, x: f64) -> String {
        if self.numeric {
            return crate::fmt::tick(x);
        }
        let i = x.round();
        match self.axis {
            Some(a) if (x - i).abs() < 1e-6 && i >= 0.0 => {
                a.values.get(i as usize).cloned().unwrap_or_default()
            }
            _ => String::new(),
        }
    }
}

/// The lines of the chart: one per variant and value of the other varied axes, in row order,
/// each sorted along x.
fn sweep_lines(header: &SweepHeader, rows: &[PointRow], metric: &str, x: &XAxis) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for r in rows {
        let Some(e) = aggregate::estimate(&r.estimates, metric) else {
            continue;
        };
        let mut label = r.variant.clone();
        for (i, (k, v)) in r.params.iter().enumerate() {
            if Some(i) != x.index && header.grid.axes[i].values.len() > 1 {
                label.push_str(&format!(" {k}={v}"));
            }
        }
        let hw = if e.half_width.is_finite() {
            e.half_width
        } else {
            0.0
        };
        let p = (x.pos(&r.params), e.mean, hw);
        let vi = header
            .grid
            .variants
            .iter()
            .position(|v| *v == r.variant)
            .unwrap_or(lines.len());
        match lines.iter_mut().find(|l| l.label == label) {
            Some(l) => l.points.push(p),
            None => {
                let nth = lines.iter().filter(|l| l.variant == vi).count();
                lines.push(Line {
                    label,
                    variant: vi,
                    nth,
                    points: vec![p],
                })
            }
        }
    }
    for l in &mut lines {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

/// The plotted ranges `(x0..x1, y0..y1)`: every point and band, x padded 3%, y from 0 (or
/// below) to 8% over the top.
fn ranges(lines: &[Line]) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
    let all = lines.iter().flat_map(|l| l.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64, 0.0f64);
    for (x, m, h) in all {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(m - h);
        y1 = y1.max(m + h);
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = (x1 - x0) * 0.03;
    let y1 = if y1 > y0 { y1 * 1.08 } else { y0 + 1.0 };
    (x0 - pad..x1 + pad, y0..y1)
}

/// The legend: each line's colour, dashes and marker, and its label.
fn legend_entries(lines: &[Line]) -> Vec<(Swatch, String)> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let swatch = Swatch::Marked {
                color: variant(l.variant),
                dashed: l.nth > 0,
                marker: i,
            };
            (swatch, l.label.clone())
        })
        .collect()
}

const WIDTH: u32 = 1000;

/// `metric` against the varied parameter, one line per variant (and per value of the other
/// axes), with the 95% CI band when there are several seeds. The legend sits in a strip above
/// the plot, so it covers no line.
pub fn sweep_chart(
    header: &SweepHeader,
    rows: &[PointRow],
    metric: &str,
) -> Result<String, ReportError> {
    let x = XAxis::of(header);
    let lines = sweep_lines(header, rows, metric, &x);
    let bucket = rows
        .iter()
        .find_map(|r| r.estimates.get("bucket_ms"))
        .map(|e| e.mean);
    let y_name = crate::fmt::metric_label(metric, bucket);
    let title = format!("{}: {} by {}", header.model, y_name, x.name());
    let entries = legend_entries(&lines);
    let right = WIDTH as i32 - 16;
    let height = 600 + header_height(&entries, right) as u32;
    crate::svg::render(CHART, (WIDTH, height), |root| {
        let body = header_strip(root, CHART, &title, &entries, right)?;
        draw_lines(&body, &x, &lines, &y_name)
    })
}

/// The mesh, the CI bands, then the lines with their markers.
fn draw_lines(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    x: &XAxis,
    lines: &[Line],
    y_name: &str,
) -> Result<(), ReportError> {
    let bands = lines.iter().any(|l| l.points.iter().any(|p| p.2 > 0.0));
    let y_desc = if bands {
        format!("{y_name}; band: 95% CI over seeds")
    } else {
        y_name.to_string()
    };
    let mut chart = crate::svg::plot_area(area, CHART, ranges(lines))?;
    let fmt_x = |v: &f64| x.tick(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x.name())
        .y_desc(y_desc.as_str())
        .label_style(font(14))
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&|y: &f64| crate::fmt::tick(*y))
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1);
    if !x.numeric {
        let categories = x.axis.map_or(0, |a| a.values.len());
        mesh.x_labels(categories.max(2) * 4 + 1);
    }
    mesh.draw().map_err(err)?;
    // Bands first, so that no band hides another line.
    for l in lines.iter().filter(|l| l.points.iter().any(|p| p.2 > 0.0)) {
        let mut band: Vec<(f64, f64)> = l.points.iter().map(|p| (p.0, p.1 + p.2)).collect();
        band.extend(l.points.iter().rev().map(|p| (p.0, p.1 - p.2)));
        let fill = variant(l.variant).mix(0.16).filled();
        chart
            .draw_series(std::iter::once(Polygon::new(band, fill)))
            .map_err(err)?;
    }
    let n = lines.len();
    for (i, l) in lines.iter().enumerate() {
        let color = variant(l.variant);
        let style = color.stroke_width(stroke(i, n));
        let pts = l.points.iter().map(|p| (p.0, p.1));
        if l.nth == 0 {
            chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?;
        } else {
            chart
                .draw_series(DashedLineSeries::new(pts, 4 + 4 * l.nth as u32, 5, style))
                .map_err(err)?;
        }
        chart
            .draw_series(l.points.iter().map(|p| {
                EmptyElement::at((p.0, p.1)) + Polygon::new(marker_shape(i), color.filled())
            }))
            .map_err(err)?;
    }
    Ok(())
}
