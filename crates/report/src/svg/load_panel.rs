//! One panel of the load chart: its axes, stacked columns, goodput line, shaded windows and
//! recovery mark.

use crate::style::{
    FIRST, GOODPUT, GRID, GRID_BOLD, MARK, WINDOW, bold, font, shade, thin_stroke, variant,
};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::metrics::ATTEMPT_SERIES;

use super::*;
use crate::{error::ReportError, fmt};

/// The shared x scale of the load chart's panels (in display units: ms or s).
pub(super) struct Scale {
    pub(super) x0: f64,
    pub(super) x1: f64,
    pub(super) unit: f64,
    pub(super) factor: usize,
}

/// Calls `f` with a linear y range `0..1.08 max`, or a log range from 0.8 to 1.5 `max` (the
/// axis ends near the tallest column, not at the next power of ten), and the floor that zero
/// values are drawn at.
pub(super) fn draw_y(
    log: bool,
    max: f64,
    f: impl FnOnce(YSpec) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    if log {
        let hi = (max * 1.5).max(10.0);
        f(YSpec::Log(0.8, hi))
    } else {
        f(YSpec::Linear(max * 1.08))
    }
}

#[derive(Clone, Copy)]
pub(super) enum YSpec {
    Linear(f64),
    Log(f64, f64),
}

/// What one load panel shows, whatever its y axis.
#[derive(Clone, Copy)]
pub(super) struct PanelSpec<'p, 'v> {
    pub(super) scale: &'p Scale,
    pub(super) title: &'p str,
    pub(super) panels: &'p [LoadPanel<'v>],
    pub(super) overlay: bool,
    pub(super) goodput: bool,
    /// Empty but under the last panel.
    pub(super) x_desc: &'p str,
    pub(super) y_desc: &'p str,
}

impl PanelSpec<'_, '_> {
    /// The panel in `area` on the y axis `y`.
    pub(super) fn draw(
        self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        y: YSpec,
    ) -> Result<(), ReportError> {
        match y {
            YSpec::Linear(hi) => self.draw_in(area, 0f64..hi, 0.0, hi),
            YSpec::Log(lo, hi) => self.draw_in(area, (lo..hi).log_scale(), lo, hi),
        }
    }

    /// [`PanelSpec::draw`] on the y coordinate `y_spec`, from `y_lo` to `y_hi`.
    fn draw_in<Y>(
        self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        y_spec: Y,
        y_lo: f64,
        y_hi: f64,
    ) -> Result<(), ReportError>
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let PanelSpec {
            scale,
            title,
            panels,
            overlay,
            goodput,
            x_desc,
            y_desc,
        } = self;
        let last = !x_desc.is_empty();
        let mut chart = ChartBuilder::on(area)
            .caption(title, bold(16))
            .margin_left(12)
            .margin_right(24)
            .margin_top(4)
            .margin_bottom(6)
            .x_label_area_size(if last { 46 } else { 26 })
            .y_label_area_size(78)
            .build_cartesian_2d(scale.x0..scale.x1, y_spec)
            .map_err(chart_err(CHART))?;
        let x_fmt = |x: &f64| {
            if *x < 0.0 {
                String::new()
            } else {
                fmt::tick(*x)
            }
        };
        let y_fmt = |y: &f64| fmt::tick(*y);
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(12)
            .y_labels(5)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style(font(13))
            .axis_desc_style(font(14))
            .y_desc(y_desc)
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID)
            .max_light_lines(1);
        if last {
            mesh.x_desc(x_desc);
        }
        mesh.draw().map_err(chart_err(CHART))?;

        // Windows first, behind the data.
        draw_windows(&mut chart, panels, scale, y_lo, y_hi)?;
        let n = panels.len();
        for (k, p) in panels.iter().enumerate() {
            let width = scale.factor as f64 * p.bucket / scale.unit;
            if overlay {
                let outline = step_polygon(&p.total, width, y_lo);
                let line = variant(p.index).stroke_width(thin_stroke(k, n));
                chart
                    .draw_series(LineSeries::new(outline, line))
                    .map_err(chart_err(CHART))?;
            } else {
                draw_stacks(&mut chart, p, width, y_lo, goodput)?;
            }
            if let Some(r) = p.recovered_at {
                let row = if overlay { Some(k) } else { None };
                draw_recovery(&mut chart, p, r / scale.unit, row, scale.x1, (y_lo, y_hi))?;
            }
        }
        Ok(())
    }
}

const CHART: &str = "load";

/// The panel's plotting context, whatever its y coordinate.
type Panel<'a, 'b, C> = ChartContext<'a, SVGBackend<'b>, C>;

/// Every distinct window of the panels shaded from `y_lo` to `y_hi` and labelled at its start.
fn draw_windows<C: CoordTranslate<From = (f64, f64)>>(
    chart: &mut Panel<'_, '_, C>,
    panels: &[LoadPanel],
    scale: &Scale,
    y_lo: f64,
    y_hi: f64,
) -> Result<(), ReportError> {
    let mut seen: Vec<(f64, f64, &str)> = Vec::new();
    for w in panels.iter().flat_map(|p| &p.windows) {
        let key = (w.from_ms, w.to_ms, w.label.as_str());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        shade_clipped(chart, CHART, w, (scale.unit, scale.x1), (y_lo, y_hi))?;
    }
    Ok(())
}

/// Window `w` shaded over `y` on an x axis of `unit` ms a unit that ends at `x1`: cut at the
/// axis's end, left out when it starts after it. The load panels and the tiers chart clip alike.
pub(super) fn shade_clipped<C: CoordTranslate<From = (f64, f64)>>(
    chart: &mut Panel<'_, '_, C>,
    name: &'static str,
    w: &crate::marks::Shade,
    (unit, x1): (f64, f64),
    y: (f64, f64),
) -> Result<(), ReportError> {
    let (a, b) = (w.from_ms / unit, (w.to_ms / unit).min(x1));
    if a >= x1 {
        return Ok(());
    }
    shade_window(chart, name, (a, b), y, &w.label)
}

/// One trigger window shaded from `x.0` to `x.1` over `y.0..y.1`, its label at the top left: the
/// load panels and the tiers chart mark their windows alike.
pub(super) fn shade_window<C: CoordTranslate<From = (f64, f64)>>(
    chart: &mut Panel<'_, '_, C>,
    name: &'static str,
    x: (f64, f64),
    y: (f64, f64),
    label: &str,
) -> Result<(), ReportError> {
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(x.0, y.0), (x.1, y.1)],
            WINDOW.filled(),
        )))
        .map_err(chart_err(name))?;
    chart
        .draw_series(std::iter::once(Text::new(
            label.to_string(),
            (x.0, y.1),
            font(12).pos(Pos::new(HPos::Left, VPos::Top)),
        )))
        .map_err(chart_err(name))?;
    Ok(())
}

/// A panel's stacked areas (retries, by attempt when split, over first attempts) and its
/// goodput line.
fn draw_stacks<C: CoordTranslate<From = (f64, f64)>>(
    chart: &mut Panel<'_, '_, C>,
    p: &LoadPanel,
    width: f64,
    y_lo: f64,
    goodput: bool,
) -> Result<(), ReportError> {
    let color = variant(p.index);
    // Each area with its outline, so that a spike one bucket wide (narrower than a pixel on a
    // long axis) still shows. By attempt: the stacks from the top down, each attempt's shade
    // above the ones before it.
    let mut areas: Vec<(&Vec<u64>, RGBColor)> = p
        .layers
        .iter()
        .enumerate()
        .rev()
        .map(|(j, l)| (l, shade(color, j, ATTEMPT_SERIES - 1)))
        .collect();
    if areas.is_empty() {
        areas.push((&p.total, color));
    }
    areas.push((&p.first, FIRST));
    for (values, c) in areas {
        let outline = step_polygon(values, width, y_lo);
        chart
            .draw_series(std::iter::once(Polygon::new(outline.clone(), c.filled())))
            .map_err(chart_err(CHART))?;
        chart
            .draw_series(
                step_runs(values, width, y_lo)
                    .into_iter()
                    .map(|run| PathElement::new(run, c.stroke_width(1))),
            )
            .map_err(chart_err(CHART))?;
    }
    if goodput {
        let pts = p
            .goodput
            .iter()
            .enumerate()
            .map(|(j, &g)| ((j as f64 + 0.5) * width, (g as f64).max(y_lo)));
        chart
            .draw_series(LineSeries::new(pts, GOODPUT.stroke_width(2)))
            .map_err(chart_err(CHART))?;
    }
    Ok(())
}

/// The dashed mark where goodput recovered, at `x` on the axis (nothing past `x1`), and its
/// label; in the overlay (`row`: the line's index) in the variant's colour, labels stacked.
fn draw_recovery<C: CoordTranslate<From = (f64, f64)>>(
    chart: &mut Panel<'_, '_, C>,
    p: &LoadPanel,
    x: f64,
    row: Option<usize>,
    x1: f64,
    (y_lo, y_hi): (f64, f64),
) -> Result<(), ReportError> {
    if x > x1 {
        return Ok(());
    }
    let mark = if row.is_some() {
        variant(p.index)
    } else {
        MARK
    };
    chart
        .draw_series(DashedLineSeries::new(
            [(x, y_lo), (x, y_hi)],
            6,
            4,
            mark.stroke_width(2),
        ))
        .map_err(chart_err(CHART))?;
    let label = if row.is_some() {
        format!("{} recovered", p.v.name)
    } else {
        "recovered".to_string()
    };
    let row = row.map_or(0.0, |k| k as f64);
    let ypos = if y_lo == 0.0 {
        y_hi * (0.9 - 0.07 * row)
    } else {
        y_hi / 2f64.powf(1.0 + row)
    };
    chart
        .draw_series(std::iter::once(Text::new(
            label,
            (x, ypos),
            font(12).pos(Pos::new(HPos::Left, VPos::Center)),
        )))
        .map_err(chart_err(CHART))?;
    Ok(())
}
