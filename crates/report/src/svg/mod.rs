//! SVG charts drawn with plotters into a `String`.
//!
//! Text is laid out with the DejaVu Sans font compiled into the binary (plotters' `ab_glyph`
//! path), so nothing depends on the fonts installed on the machine; the SVG carries the text as
//! `<text>` elements. Output is byte-identical for the same report.
//!
//! One file per chart (`load` with its `load_panel` and `columns`, `outcome`, `cdf`, `tiers`);
//! this file holds what they share: the canvas, the hand-drawn legend, the titles.

use crate::style::{ensure_fonts, font};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::summary::{RunReport, VariantResult};

use crate::ReportError;

mod cdf;
mod columns;
mod load;
mod load_panel;
mod outcome;
mod tiers;

pub use self::cdf::{XScale, cdf_chart, cdf_chart_with};
use self::columns::*;
use self::load::*;
pub use self::load::{LoadOptions, MAX_COLUMNS, TIME_QUANTILE, load_chart, load_chart_with};
use self::load_panel::*;
pub use self::outcome::outcome_chart;
pub use self::tiers::tiers_chart;

const WIDTH: u32 = 1200;

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

/// What a legend entry shows.
enum Swatch {
    Box(RGBColor),
    Line(RGBColor),
    Dashed(RGBColor),
    /// A box striped in several colours: "the variant's colour".
    Stripes(Vec<RGBColor>),
}

/// A legend drawn by hand in a header strip: a swatch and a label per entry, left to right.
fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &'static str,
    (x, y): (i32, i32),
    entries: &[(Swatch, String)],
) -> Result<(), ReportError> {
    let style = font(15).pos(Pos::new(HPos::Left, VPos::Center));
    let e = chart_err(chart);
    let (x_start, mut x, mut y) = (x, x, y);
    for (swatch, label) in entries {
        if x > x_start && x + legend_width(label) > WIDTH as i32 - 16 {
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
        }
        area.draw(&Text::new(label.clone(), (x + 28, y), style.clone()))
            .map_err(&e)?;
        x += legend_width(label);
    }
    Ok(())
}

const LEGEND_ROW: i32 = 22;

/// The room a legend entry takes: swatch, label (about 9 px a character at 15 px) and a gap.
fn legend_width(label: &str) -> i32 {
    28 + 9 * label.chars().count() as i32 + 20
}

/// How many rows [`legend`] needs for `entries` from `x`.
fn legend_rows(x: i32, entries: &[(Swatch, String)]) -> i32 {
    let (mut cur, mut rows) = (x, 1);
    for (_, label) in entries {
        if cur > x && cur + legend_width(label) > WIDTH as i32 - 16 {
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
