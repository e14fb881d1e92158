//! The completion-time CDF chart, one line per variant.

use crate::style::{GRID, GRID_BOLD, bold, font, stroke, variant};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use retrystorm_core::summary::RunReport;

use super::*;
use crate::{ReportError, fmt};

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
    render(CHART, (WIDTH, 660), |root| {
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

/// One CDF line: its points, its legend entry, whether it is dashed (failures).
pub(super) type CdfCurve<'a> = (&'a [(f64, f64)], String, bool);

pub(super) fn draw_cdf<X>(
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
    let (top, rest) = root.split_vertically(30);
    top.draw(&Text::new(
        heading(report, "completion time CDF"),
        (16, 10),
        bold(20),
    ))
    .map_err(chart_err(CHART))?;
    // Split when the run carries per-outcome CDFs (every fresh run; a report read back from
    // JSON has only the joint one): successes solid, failures dashed, each a CDF of its own.
    let split = report
        .variants
        .iter()
        .any(|v| !v.success_cdf.is_empty() || !v.failure_cdf.is_empty());
    let caption = if split {
        "solid: intents that succeeded, dashed: intents that failed (each its own CDF); ● p50, ▲ p99"
    } else {
        "settled intents, successes and failures together; ● p50, ▲ p99 of each variant"
    };
    let mut chart = ChartBuilder::on(&rest)
        .caption(caption, font(14))
        .margin(16)
        .margin_top(6)
        .margin_right(44)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x_spec, 0f64..1.0)
        .map_err(chart_err(CHART))?;
    let x_fmt = |x: &f64| fmt::tick(*x);
    let y_fmt = |y: &f64| format!("{}%", fmt::trim(y * 100.0));
    let y_desc = if split {
        "share of the variant's successes / failures completed"
    } else {
        "share of settled intents completed"
    };
    chart
        .configure_mesh()
        .x_labels(12)
        .y_labels(11)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(font(13))
        .axis_desc_style(font(14))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(chart_err(CHART))?;
    let n = report.variants.len();
    for (i, v) in report.variants.iter().enumerate() {
        let color = variant(i);
        let w = stroke(i, n);
        let curves: Vec<CdfCurve> = if split {
            let s = &v.summary;
            vec![
                (
                    &v.success_cdf[..],
                    format!("{} succeeded ({})", v.name, fmt::int(s.succeeded)),
                    false,
                ),
                (
                    &v.failure_cdf[..],
                    format!("{} failed ({})", v.name, fmt::int(s.failed)),
                    true,
                ),
            ]
        } else {
            vec![(&v.completion_cdf[..], v.name.clone(), false)]
        };
        for (cdf, name, dashed) in curves {
            let pts: Vec<(f64, f64)> = cdf
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log || *x > 0.0))
                .collect();
            if split && pts.is_empty() {
                continue;
            }
            let (p50, p99) = if split {
                (quantile(cdf, 0.5), quantile(cdf, 0.99))
            } else {
                (v.summary.completion_ms.p50, v.summary.completion_ms.p99)
            };
            let label = if pts.is_empty() {
                format!("{name} (no settled intents)")
            } else {
                format!("{name}: p50 {} ms, p99 {} ms", fmt::ms(p50), fmt::ms(p99))
            };
            let has = !pts.is_empty();
            let anno = if dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts, 9, 5, color.stroke_width(w)))
                    .map_err(chart_err(CHART))?
            } else {
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(w)))
                    .map_err(chart_err(CHART))?
            };
            anno.label(label).legend(move |(x, y)| {
                if dashed {
                    PathElement::new(vec![(x, y), (x + 8, y)], color.stroke_width(3))
                } else {
                    PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                }
            });
            if has {
                let ok = |x: f64| x.is_finite() && (!log || x > 0.0);
                let fill = |c: RGBColor| {
                    if dashed {
                        c.stroke_width(2)
                    } else {
                        c.filled()
                    }
                };
                if ok(p50) {
                    chart
                        .draw_series(std::iter::once(Circle::new((p50, 0.5), 5, fill(color))))
                        .map_err(chart_err(CHART))?;
                }
                if ok(p99) {
                    chart
                        .draw_series(std::iter::once(TriangleMarker::new(
                            (p99, 0.99),
                            6,
                            fill(color),
                        )))
                        .map_err(chart_err(CHART))?;
                }
            }
        }
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

/// The smallest x whose CDF share reaches `q` (the points are the 200 quantiles of
/// [`retrystorm_core::metrics::Completions::cdf`], so this is that quantile); NaN when empty.
pub(super) fn quantile(cdf: &[(f64, f64)], q: f64) -> f64 {
    cdf.iter()
        .find(|(_, y)| *y >= q - 1e-9)
        .map_or(f64::NAN, |p| p.0)
}
