//! The Pareto chart of `retrystorm tune`: every feasible candidate's means on the first two
//! objectives, the front joined by a line, the recommended candidate ringed.

use crate::error::ReportError;
use crate::style::{GRID, GRID_BOLD, bold, ensure_fonts, font, variant};
use crate::svg::{Swatch, legend_to};
use plotters::prelude::*;

/// One feasible candidate on the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct ParetoPoint {
    pub label: String,
    pub x: f64,
    pub y: f64,
    pub front: bool,
    pub best: bool,
}

/// The strip above the plot holding the title and the legend.
const HEADER: i32 = 64;

fn err<E: std::fmt::Display>(e: E) -> ReportError {
    ReportError::Chart {
        chart: "pareto",
        message: e.to_string(),
    }
}

fn span(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let lo = v.clone().fold(f64::INFINITY, f64::min);
    let hi = v.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08).max(hi.abs().max(1.0) * 0.02);
    (lo - pad, hi + pad)
}

/// The chart as SVG text: `x_name` and `y_name` are the objectives (with their direction).
pub fn pareto_chart(
    title: &str,
    x_name: &str,
    y_name: &str,
    points: &[ParetoPoint],
) -> Result<String, ReportError> {
    ensure_fonts()?;
    let (x0, x1) = span(points.iter().map(|p| p.x));
    let (y0, y1) = span(points.iter().map(|p| p.y));
    let mut buf = String::new();
    {
        let root =
            SVGBackend::with_string(&mut buf, (900, 600 + HEADER as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        // Title and legend in a header strip above the plot, so the legend covers no point.
        let (top, body) = root.split_vertically(HEADER);
        top.draw(&Text::new(title, (16, 10), bold(20)))
            .map_err(err)?;
        let others = variant(0).mix(0.45);
        let c = variant(1);
        let ring = variant(6);
        legend_to(
            &top,
            "pareto",
            (18, 48),
            &[
                (Swatch::Dot(others), "feasible".into()),
                (Swatch::Line(c), "Pareto front".into()),
                (Swatch::Ring(ring), "recommended".into()),
            ],
            900 - 16,
        )?;
        let mut chart = ChartBuilder::on(&body)
            .margin(16)
            .margin_top(4)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_name)
            .y_desc(y_name)
            .label_style(font(14))
            .x_label_formatter(&|x: &f64| crate::fmt::tick(*x))
            .y_label_formatter(&|y: &f64| crate::fmt::tick(*y))
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID)
            .max_light_lines(1)
            .draw()
            .map_err(err)?;
        chart
            .draw_series(
                points
                    .iter()
                    .filter(|p| !p.front)
                    .map(|p| Circle::new((p.x, p.y), 4, others.filled())),
            )
            .map_err(err)?;
        let mut front: Vec<&ParetoPoint> = points.iter().filter(|p| p.front).collect();
        front.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
        chart
            .draw_series(LineSeries::new(
                front.iter().map(|p| (p.x, p.y)),
                c.stroke_width(2),
            ))
            .map_err(err)?;
        chart
            .draw_series(front.iter().map(|p| Circle::new((p.x, p.y), 5, c.filled())))
            .map_err(err)?;
        chart
            .draw_series(front.iter().map(|p| {
                Text::new(
                    p.label.clone(),
                    (p.x, p.y),
                    font(12).pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Left,
                        plotters::style::text_anchor::VPos::Bottom,
                    )),
                )
            }))
            .map_err(err)?;
        chart
            .draw_series(
                points
                    .iter()
                    .filter(|p| p.best)
                    .map(|p| Circle::new((p.x, p.y), 9, ring.stroke_width(2))),
            )
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(buf)
}
