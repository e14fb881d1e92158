//! SVG charts drawn with plotters into a `String`.
//!
//! Text is laid out with the DejaVu Sans font compiled into the binary (plotters' `ab_glyph`
//! path), so nothing depends on the fonts installed on the machine; the SVG carries the text as
//! `<text>` elements. Output is byte-identical for the same report.
//!
//! One file per chart (`load` with its `load_panel` and `columns`, `outcome`, `cdf`, `tiers`,
//! `replicas`; the last two share `time_panels`); this file holds what they all share: the
//! canvas, the hand-drawn legend, the titles.

use crate::style::{ensure_fonts, font};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::summary::{RunReport, VariantResult};

use crate::error::ReportError;

mod cdf;
mod columns;
mod load;
mod load_panel;
mod outcome;
mod replicas;
mod tiers;
mod time_panels;

pub use self::cdf::{XScale, cdf_chart, cdf_chart_opts, cdf_chart_with};
use self::columns::*;
use self::load::*;
pub use self::load::{
    BURST_RATIO, BURST_SHARE, LoadOptions, MAX_COLUMNS, TIME_QUANTILE, load_chart, load_chart_with,
};
use self::load_panel::*;
pub use self::outcome::{outcome_chart, outcome_chart_opts};
pub use self::replicas::{replicas_chart, replicas_chart_opts};
pub use self::tiers::{tiers_chart, tiers_chart_opts};

const WIDTH: u32 = 1200;

/// Turns any plotters error into a [`ReportError`] naming the chart.
pub(crate) fn chart_err<E: std::fmt::Display>(chart: &'static str) -> impl Fn(E) -> ReportError {
    move |e| ReportError::Chart {
        chart,
        message: e.to_string(),
    }
}

/// Draws `f` on a fresh white SVG canvas and returns the document.
pub(crate) fn render(
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

/// What a legend entry shows.
pub(crate) enum Swatch {
    Box(RGBColor),
    Line(RGBColor),
    Dashed(RGBColor),
    /// A box striped in several colours: "the variant's colour".
    Stripes(Vec<RGBColor>),
    /// A filled dot (a scatter point).
    Dot(RGBAColor),
    /// A ring (a marked point).
    Ring(RGBColor),
    /// A triangle pointing down (an event marked at the top of a panel).
    Down(RGBColor),
    /// A sweep line: solid or dashed, with its point marker ([`crate::style::marker_shape`]).
    Marked {
        color: RGBColor,
        dashed: bool,
        marker: usize,
    },
}

/// A legend drawn by hand in a header strip: a swatch and a label per entry, left to right.
/// Legends sit outside the plotted data (in a header strip), so they never cover a curve.
fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
    xy: (i32, i32),
    entries: &[(Swatch, String)],
) -> Result<(), ReportError> {
    legend_to(area, chart, xy, entries, WIDTH as i32 - 16)
}

/// [`legend`] wrapping its rows before `right` (pixels from the area's left edge).
pub(crate) fn legend_to(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
    (x, y): (i32, i32),
    entries: &[(Swatch, String)],
    right: i32,
) -> Result<(), ReportError> {
    let style = font(15).pos(Pos::new(HPos::Left, VPos::Center));
    let e = chart_err(chart);
    let (x_start, mut x, mut y) = (x, x, y);
    for (swatch, label) in entries {
        if x > x_start && x + legend_width(label) > right {
            x = x_start;
            y += LEGEND_ROW;
        }
        match swatch {
            Swatch::Line(c) => area
                .draw(&PathElement::new(
                    vec![(x, y), (x + 22, y)],
                    c.stroke_width(3),
                ))
                .map_err(&e)?,
            Swatch::Dashed(c) => {
                for dx in [0, 9, 18] {
                    area.draw(&PathElement::new(
                        vec![(x + dx, y), (x + dx + 5, y)],
                        c.stroke_width(2),
                    ))
                    .map_err(&e)?;
                }
            }
            Swatch::Box(c) => area
                .draw(&Rectangle::new([(x, y - 6), (x + 22, y + 6)], c.filled()))
                .map_err(&e)?,
            Swatch::Stripes(cs) => {
                let k = cs.len().max(1) as i32;
                let w = (22 / k).max(2);
                for (i, c) in cs.iter().enumerate() {
                    let x0 = x + i as i32 * w;
                    area.draw(&Rectangle::new([(x0, y - 6), (x0 + w, y + 6)], c.filled()))
                        .map_err(&e)?;
                }
            }
            Swatch::Dot(c) => area
                .draw(&Circle::new((x + 11, y), 4, c.filled()))
                .map_err(&e)?,
            Swatch::Ring(c) => area
                .draw(&Circle::new((x + 11, y), 6, c.stroke_width(2)))
                .map_err(&e)?,
            Swatch::Down(c) => area
                .draw(&Polygon::new(
                    crate::style::down_triangle()
                        .into_iter()
                        .map(|(a, b)| (x + 11 + a, y + b))
                        .collect::<Vec<_>>(),
                    c.filled(),
                ))
                .map_err(&e)?,
            Swatch::Marked {
                color,
                dashed,
                marker,
            } => marked_swatch(area, (x, y), *color, *dashed, *marker).map_err(&e)?,
        }
        area.draw(&Text::new(label.clone(), (x + 28, y), style.clone()))
            .map_err(&e)?;
        x += legend_width(label);
    }
    Ok(())
}

/// A sweep line's swatch at `(x, y)`: the line (three dashes when `dashed`) and its marker.
fn marked_swatch(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    (x, y): (i32, i32),
    color: RGBColor,
    dashed: bool,
    marker: usize,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    let dashes: &[(i32, i32)] = if dashed {
        &[(0, 5), (9, 14), (18, 22)]
    } else {
        &[(0, 22)]
    };
    for (a, b) in dashes {
        area.draw(&PathElement::new(
            vec![(x + a, y), (x + b, y)],
            color.stroke_width(3),
        ))?;
    }
    let shape = crate::style::marker_shape(marker)
        .into_iter()
        .map(|(a, b)| (x + 11 + a, y + b))
        .collect::<Vec<_>>();
    area.draw(&Polygon::new(shape, color.filled()))
}

/// The height of a header strip ([`header_strip`]) whose legend wraps before `right`.
pub(crate) fn header_height(entries: &[(Swatch, String)], right: i32) -> i32 {
    40 + legend_rows_to(18, entries, right) * LEGEND_ROW
}

/// Draws `title` and the legend of `entries` in a strip of [`header_height`] at the top of
/// `root` and returns the area below it: the legend then covers no data.
pub(crate) fn header_strip<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    chart: &'static str,
    title: &str,
    entries: &[(Swatch, String)],
    right: i32,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, ReportError> {
    let (top, body) = root.split_vertically(header_height(entries, right));
    top.draw(&Text::new(title, (16, 10), crate::style::bold(20)))
        .map_err(chart_err(chart))?;
    legend_to(&top, chart, (18, 46), entries, right)?;
    Ok(body)
}

/// A plot of two linear axes on an SVG canvas.
pub(crate) type Plot<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A plot of two linear axes in the area under a [`header_strip`]: the margins and label areas
/// the sweep and `tune` charts share.
pub(crate) fn plot_area<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    chart: &'static str,
    (x, y): (std::ops::Range<f64>, std::ops::Range<f64>),
) -> Result<Plot<'a, 'b>, ReportError> {
    ChartBuilder::on(area)
        .margin(16)
        .margin_top(4)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x, y)
        .map_err(chart_err(chart))
}

const LEGEND_ROW: i32 = 22;

/// The room a legend entry takes: swatch, label (about 9 px a character at 15 px) and a gap.
fn legend_width(label: &str) -> i32 {
    28 + 9 * label.chars().count() as i32 + 20
}

/// How many rows [`legend`] needs for `entries` from `x`.
fn legend_rows(x: i32, entries: &[(Swatch, String)]) -> i32 {
    legend_rows_to(x, entries, WIDTH as i32 - 16)
}

/// How many rows [`legend_to`] needs for `entries` from `x` to `right`.
pub(crate) fn legend_rows_to(x: i32, entries: &[(Swatch, String)], right: i32) -> i32 {
    let (mut cur, mut rows) = (x, 1);
    for (_, label) in entries {
        if cur > x && cur + legend_width(label) > right {
            cur = x;
            rows += 1;
        }
        cur += legend_width(label);
    }
    rows
}

fn empty(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
) -> Result<(), ReportError> {
    area.draw(&Text::new("no variants in this report", (20, 40), font(16)))
        .map_err(chart_err(chart))
}

/// What the CDF, outcome and tiers charts take besides the report (the load chart has
/// [`LoadOptions`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChartOptions {
    /// How many replications (`--seeds N`, seeds `seed`..`seed + N - 1`) the report's numbers
    /// are the means of; 0 or 1 for one run. Titles then say "5 seeds" instead of "seed 1".
    pub seeds: u32,
    /// Windows to shade on a time axis (the tiers chart), per variant in report order (see
    /// [`crate::marks::model_windows`]). A variant without an entry gets its summary's trigger window.
    pub windows: Vec<Vec<crate::marks::Shade>>,
}

/// A chart's title: what it shows, the model, and the run: `seed 1`, or with `--seeds 5`
/// `5 seeds (1..5; curves of seed 1, numbers are means)`.
fn heading(report: &RunReport, what: &str, seeds: u32) -> String {
    if seeds > 1 {
        let last = report.seed.saturating_add(u64::from(seeds) - 1);
        format!(
            "{what}: model {}, {seeds} seeds ({}..{last}; curves of seed {}, numbers are means)",
            report.model, report.seed, report.seed
        )
    } else {
        format!("{what}: model {}, seed {}", report.model, report.seed)
    }
}

/// The windows to shade on each variant's time axis: the given ones (the model's, see
/// [`crate::marks::model_windows`]), or for a variant without an entry its summary's trigger window.
/// The load and tiers charts shade the same windows.
fn variant_windows(
    report: &RunReport,
    given: &[Vec<crate::marks::Shade>],
) -> Vec<Vec<crate::marks::Shade>> {
    report
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| match given.get(i) {
            Some(w) => w.clone(),
            None => crate::marks::summary_window(&v.summary)
                .into_iter()
                .collect(),
        })
        .collect()
}

/// A series' bucket width, falling back to the summary's when the series does not say.
fn bucket_ms(v: &VariantResult) -> f64 {
    [v.series.bucket_ms, v.summary.bucket_ms]
        .into_iter()
        .find(|b| b.is_finite() && *b > 0.0)
        .unwrap_or(1.0)
}
