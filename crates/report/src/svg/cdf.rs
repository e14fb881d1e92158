//! The completion-time CDF chart, one line per variant.

use crate::style::{GRID, GRID_BOLD, bold, font, stroke, variant};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use retrystorm_core::summary::RunReport;

use super::*;
use crate::{error::ReportError, fmt};

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
    cdf_chart_opts(report, scale, &ChartOptions::default())
}

/// [`cdf_chart_with`] with [`ChartOptions`] (the seeds in the title).
pub fn cdf_chart_opts(
    report: &RunReport,
    scale: XScale,
    opt: &ChartOptions,
) -> Result<String, ReportError> {
    const CHART: &str = "completion CDF";
    // The drawn lines' points: the per-outcome CDFs when split, else the joint one.
    let split = is_split(report);
    let points = report.variants.iter().flat_map(|v| {
        if split {
            v.success_cdf.iter().chain(&v.failure_cdf[..])
        } else {
            v.completion_cdf.iter().chain(&[][..])
        }
    });
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
    let curves = cdf_curves(report, log);
    let entries: Vec<(Swatch, String)> = curves
        .iter()
        .map(|c| {
            let color = variant(c.index);
            let swatch = if c.dashed {
                Swatch::Dashed(color)
            } else {
                Swatch::Line(color)
            };
            (swatch, c.label.clone())
        })
        .collect();
    // The legend sits in the header, above the plot, so it never covers a curve.
    let rows = if report.variants.is_empty() {
        0
    } else {
        legend_rows(18, &entries)
    };
    let header = 40 + rows * LEGEND_ROW;
    render(CHART, (WIDTH, 630 + header as u32), |root| {
        if report.variants.is_empty() {
            return empty(root, CHART);
        }
        let (top, rest) = root.split_vertically(header);
        top.draw(&Text::new(
            heading(report, "completion time CDF", opt.seeds),
            (16, 10),
            bold(20),
        ))
        .map_err(chart_err(CHART))?;
        legend(&top, CHART, (18, 46), &entries)?;
        if log {
            let lo = 10f64.powf(min_pos.log10().floor());
            // The axis ends near the slowest completion, not at the next power of ten.
            let hi = (max * 1.1).max(lo * 10.0);
            draw_cdf(
                report,
                &curves,
                &rest,
                (lo..hi).log_scale(),
                "completion time (ms, log scale)",
            )
        } else {
            let hi = if max > 0.0 { max * 1.02 } else { 1.0 };
            draw_cdf(report, &curves, &rest, 0f64..hi, "completion time (ms)")
        }
    })
}

/// One CDF line: its variant, points, legend entry, whether it is dashed (failures), and its
/// p50 and p99 marks.
pub(super) struct CdfCurve {
    pub(super) index: usize,
    pub(super) points: Vec<(f64, f64)>,
    pub(super) label: String,
    pub(super) dashed: bool,
    pub(super) p50: f64,
    pub(super) p99: f64,
}

/// Whether the run carries per-outcome CDFs (every fresh run; a report read back from JSON has
/// only the joint one): then successes are solid, failures dashed, each a CDF of its own.
fn is_split(report: &RunReport) -> bool {
    report
        .variants
        .iter()
        .any(|v| !v.success_cdf.is_empty() || !v.failure_cdf.is_empty())
}

/// A CDF's points, its name and whether it is dashed, before filtering.
type RawCurve<'a> = (&'a [(f64, f64)], String, bool);

/// The lines of the chart, in drawing (and legend) order.
pub(super) fn cdf_curves(report: &RunReport, log: bool) -> Vec<CdfCurve> {
    let split = is_split(report);
    let mut out = Vec::new();
    for (i, v) in report.variants.iter().enumerate() {
        let curves: Vec<RawCurve> = if split {
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
            let points: Vec<(f64, f64)> = cdf
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite() && (!log || *x > 0.0))
                .collect();
            if split && points.is_empty() {
                continue;
            }
            let (p50, p99) = if split {
                (quantile(cdf, 0.5), quantile(cdf, 0.99))
            } else {
                (v.summary.completion_ms.p50, v.summary.completion_ms.p99)
            };
            let label = if points.is_empty() {
                format!("{name} (no settled intents)")
            } else {
                format!("{name}: p50 {} ms, p99 {} ms", fmt::ms(p50), fmt::ms(p99))
            };
            out.push(CdfCurve {
                index: i,
                points,
                label,
                dashed,
                p50,
                p99,
            });
        }
    }
    out
}

pub(super) fn draw_cdf<X>(
    report: &RunReport,
    curves: &[CdfCurve],
    rest: &DrawingArea<SVGBackend<'_>, Shift>,
    x_spec: X,
    x_desc: &str,
) -> Result<(), ReportError>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    const CHART: &str = "completion CDF";
    let log = x_desc.contains("log");
    let split = is_split(report);
    let caption = if split {
        "solid: intents that succeeded, dashed: intents that failed (each its own CDF); ● p50, ▲ p99"
    } else {
        "settled intents, successes and failures together; ● p50, ▲ p99 of each variant"
    };
    let mut chart = ChartBuilder::on(rest)
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
    for c in curves {
        let color = variant(c.index);
        let w = stroke(c.index, n);
        let pts = c.points.clone();
        let has = !pts.is_empty();
        if c.dashed {
            chart
                .draw_series(DashedLineSeries::new(pts, 9, 5, color.stroke_width(w)))
                .map_err(chart_err(CHART))?;
        } else {
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(w)))
                .map_err(chart_err(CHART))?;
        }
        if has {
            let ok = |x: f64| x.is_finite() && (!log || x > 0.0);
            let dashed = c.dashed;
            let fill = |c: RGBColor| {
                if dashed {
                    c.stroke_width(2)
                } else {
                    c.filled()
                }
            };
            if ok(c.p50) {
                chart
                    .draw_series(std::iter::once(Circle::new((c.p50, 0.5), 5, fill(color))))
                    .map_err(chart_err(CHART))?;
            }
            if ok(c.p99) {
                chart
                    .draw_series(std::iter::once(TriangleMarker::new(
                        (c.p99, 0.99),
                        6,
                        fill(color),
                    )))
                    .map_err(chart_err(CHART))?;
            }
        }
    }
    Ok(())
}

/// The smallest x whose CDF share reaches `q` (the points are the 200 quantiles of
/// [`retrystorm_core::metrics::Completions::cdf`], so this is that quantile); NaN when empty.
pub(super) fn quantile(cdf: &[(f64, f64)], q: f64) -> f64 {
    cdf.iter()
        .find(|(_, y)| *y >= q - 1e-9)
        .map_or(f64::NAN, |p| p.0)
}
