//! A generic line chart: panels stacked vertically over one shared x axis, one line per series,
//! with a shared legend. For sweeps (a metric against a parameter, one line per strategy), where
//! the data is not a [`RunReport`](retrystorm_core::summary::RunReport).
//!
//! Same rendering rules as the report's other charts: DejaVu Sans compiled in, deterministic
//! bytes for the same input.

use crate::style::{GRID, GRID_BOLD, bold, ensure_fonts, font, marker_shape, stroke, variant};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::{error::ReportError, fmt};

const CHART: &str = "line";
const WIDTH: u32 = 1000;

/// One line: a name for the legend and its points `(x, y)` in x order.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One panel: a y axis and its lines. Line `i` gets variant colour `i` and marker `i` in every
/// panel (and in every other chart), so give every panel its lines in the same order, the
/// variants' order. Earlier lines are drawn wider, so lines with the same points stay visible.
#[derive(Clone, Debug, PartialEq)]
pub struct LinePanel {
    pub title: String,
    pub y_desc: String,
    /// A logarithmic y axis (points with y <= 0 are left out).
    pub log_y: bool,
    pub lines: Vec<Line>,
}

/// A chart of stacked panels sharing the x axis.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_desc: String,
    pub panels: Vec<LinePanel>,
}

fn err<E: std::fmt::Display>(e: E) -> ReportError {
    ReportError::Chart {
        chart: CHART,
        message: e.to_string(),
    }
}

/// A shaded band behind line `line` of a panel: `(x, low, high)` in x order (a spread over
/// seeds, say), in the line's colour.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    pub line: usize,
    pub points: Vec<(f64, f64, f64)>,
}

/// Draws `chart` as an SVG document: each panel 420 px high, 1000 px wide.
pub fn line_chart(chart: &LineChart) -> Result<String, ReportError> {
    line_chart_with_bands(chart, &[])
}

/// [`line_chart`] with bands: `bands[k]` are panel `k`'s (missing panels have none). Bands are
/// drawn under every line, and the y axis reaches their tops.
pub fn line_chart_with_bands(
    chart: &LineChart,
    bands: &[Vec<Band>],
) -> Result<String, ReportError> {
    ensure_fonts()?;
    let panels = chart.panels.len().max(1) as u32;
    let mut buf = String::new();
    {
        let root =
            SVGBackend::with_string(&mut buf, (WIDTH, 50 + 420 * panels)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&chart.title, bold(20)).map_err(err)?;
        let points = || {
            chart
                .panels
                .iter()
                .flat_map(|p| &p.lines)
                .flat_map(|l| &l.points)
        };
        let x_lo = points()
            .map(|p| p.0)
            .filter(|x| x.is_finite())
            .fold(f64::INFINITY, f64::min);
        let x_hi = points()
            .map(|p| p.0)
            .filter(|x| x.is_finite())
            .fold(f64::NEG_INFINITY, f64::max);
        let (x_lo, x_hi) = if x_lo < x_hi {
            (x_lo, x_hi)
        } else if x_lo.is_finite() {
            (x_lo - 1.0, x_lo + 1.0)
        } else {
            (0.0, 1.0)
        };
        let areas = root.split_evenly((chart.panels.len().max(1), 1));
        for (k, (panel, area)) in chart.panels.iter().zip(&areas).enumerate() {
            let own: &[Band] = bands.get(k).map_or(&[], Vec::as_slice);
            let ys = panel
                .lines
                .iter()
                .flat_map(|l| &l.points)
                .map(|p| p.1)
                .chain(own.iter().flat_map(|b| &b.points).map(|p| p.2))
                .filter(|y| y.is_finite() && (!panel.log_y || *y > 0.0));
            let y_hi = ys.clone().fold(f64::NEG_INFINITY, f64::max);
            let y_lo = ys.fold(f64::INFINITY, f64::min);
            if panel.log_y && y_lo.is_finite() {
                let lo = 10f64.powf(y_lo.log10().floor());
                let hi = 10f64.powf(y_hi.log10().ceil()).max(lo * 10.0);
                draw_panel(chart, panel, own, area, x_lo..x_hi, (lo..hi).log_scale())?;
            } else {
                let hi = if y_hi.is_finite() && y_hi > 0.0 {
                    y_hi * 1.05
                } else {
                    1.0
                };
                draw_panel(chart, panel, own, area, x_lo..x_hi, 0f64..hi)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(buf)
}

fn draw_panel<Y>(
    chart: &LineChart,
    panel: &LinePanel,
    bands: &[Band],
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    x: std::ops::Range<f64>,
    y: Y,
) -> Result<(), ReportError>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut c = ChartBuilder::on(area)
        .caption(&panel.title, font(17))
        .margin(14)
        .margin_right(30)
        .x_label_area_size(46)
        .y_label_area_size(76)
        .build_cartesian_2d(x, y)
        .map_err(err)?;
    let tick = |v: &f64| fmt::tick(*v);
    c.configure_mesh()
        .x_labels(12)
        .y_labels(10)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style(font(13))
        .axis_desc_style(font(14))
        .x_desc(chart.x_desc.as_str())
        .y_desc(panel.y_desc.as_str())
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(err)?;
    for b in bands {
        let lowest = if panel.log_y {
            f64::MIN_POSITIVE
        } else {
            f64::MIN
        };
        let mut poly: Vec<(f64, f64)> = b.points.iter().map(|p| (p.0, p.2)).collect();
        poly.extend(b.points.iter().rev().map(|p| (p.0, p.1.max(lowest))));
        c.draw_series(std::iter::once(Polygon::new(
            poly,
            variant(b.line).mix(0.16).filled(),
        )))
        .map_err(err)?;
    }
    let n = panel.lines.len();
    for (i, line) in panel.lines.iter().enumerate() {
        let color = variant(i);
        let pts: Vec<(f64, f64)> = line
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && (!panel.log_y || *y > 0.0))
            .collect();
        c.draw_series(LineSeries::new(
            pts.clone(),
            color.stroke_width(stroke(i, n)),
        ))
        .map_err(err)?
        .label(line.name.as_str())
        .legend(move |(x, y)| {
            EmptyElement::at((x, y))
                + PathElement::new(vec![(0, 0), (22, 0)], color.stroke_width(3))
                + Polygon::new(
                    marker_shape(i)
                        .into_iter()
                        .map(|(a, b)| (a + 11, b))
                        .collect::<Vec<_>>(),
                    color.filled(),
                )
        });
        c.draw_series(
            pts.into_iter()
                .map(|p| EmptyElement::at(p) + Polygon::new(marker_shape(i), color.filled())),
        )
        .map_err(err)?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(font(14))
        .background_style(WHITE.mix(0.9))
        .border_style(GRID_BOLD)
        .margin(10)
        .draw()
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LineChart {
        let line = |name: &str, k: f64| Line {
            name: name.into(),
            points: (1..=5)
                .map(|x| (f64::from(x), k * f64::from(x * x)))
                .collect(),
        };
        LineChart {
            title: "t".into(),
            x_desc: "clients".into(),
            panels: vec![
                LinePanel {
                    title: "calls".into(),
                    y_desc: "calls".into(),
                    log_y: false,
                    lines: vec![line("alpha", 1.0), line("beta", 2.0)],
                },
                LinePanel {
                    title: "time".into(),
                    y_desc: "ms".into(),
                    log_y: true,
                    lines: vec![line("alpha", 10.0), line("beta", 300.0)],
                },
            ],
        }
    }

    #[test]
    fn deterministic_svg_with_every_line() {
        let a = line_chart(&sample()).unwrap();
        assert_eq!(a, line_chart(&sample()).unwrap());
        assert!(a.starts_with("<svg"));
        assert!(a.contains("alpha") && a.contains("beta"), "legend entries");
        assert!(!a.contains("NaN"));
    }

    #[test]
    fn empty_input_still_draws() {
        let c = LineChart {
            title: "none".into(),
            x_desc: "x".into(),
            panels: vec![],
        };
        assert!(line_chart(&c).unwrap().starts_with("<svg"));
    }
}
