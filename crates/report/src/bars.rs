//! The bar chart of `retrystorm sensitivity`: one row per parameter, ranked, a bar for Morris's
//! `μ*` (how much the parameter moves the metric) and a thinner one for `σ` (how much of that is
//! interaction or non-linearity), with `μ*`'s confidence interval as an error bar.

use crate::error::ReportError;
use crate::style::{GRID, GRID_BOLD, TEXT, font, variant};
use crate::svg::{Swatch, header_height, header_strip};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One parameter's row.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// The half-width of `value`'s confidence interval, drawn as an error bar (NaN: none).
    pub conf: f64,
    /// Drawn thinner under the main bar (NaN: none).
    pub second: f64,
}

const CHART: &str = "bars";

fn err<E: std::fmt::Display>(e: E) -> ReportError {
    crate::svg::chart_err(CHART)(e)
}

const WIDTH: u32 = 900;

/// Whether a bar has an error bar: a finite value with a positive interval.
fn whisker(b: &Bar) -> bool {
    b.value.is_finite() && b.conf.is_finite() && b.conf > 0.0
}

/// The chart as SVG text, the first bar at the top; `names` are the legend entries of the two
/// bars and of the error bar. The legend sits in a strip above the bars, so it covers none.
pub fn bar_chart(
    title: &str,
    x_name: &str,
    names: (&str, &str, &str),
    bars: &[Bar],
) -> Result<String, ReportError> {
    let n = bars.len().max(1);
    let top = bars
        .iter()
        .flat_map(|b| [b.value, b.second, b.value + b.conf])
        .filter(|x| x.is_finite())
        .fold(0.0f64, f64::max);
    let x1 = if top > 0.0 { top * 1.12 } else { 1.0 };
    let mut entries = vec![
        (Swatch::Box(variant(0)), names.0.to_string()),
        (Swatch::Box(variant(1)), names.1.to_string()),
    ];
    if bars.iter().any(whisker) {
        entries.push((Swatch::Line(TEXT), names.2.to_string()));
    }
    let right = WIDTH as i32 - 16;
    let height = header_height(&entries, right) as u32 + (80 + 56 * n).min(1960) as u32;
    crate::svg::render(CHART, (WIDTH, height), |root| {
        let body = header_strip(root, CHART, title, &entries, right)?;
        draw_bars(&body, x_name, bars, x1)
    })
}

/// The axis, then per row the two bars, the error bar, the label and the value.
fn draw_bars(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    x_name: &str,
    bars: &[Bar],
    x1: f64,
) -> Result<(), ReportError> {
    let n = bars.len().max(1);
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .margin_top(4)
        .x_label_area_size(48)
        .y_label_area_size(16)
        .build_cartesian_2d(0.0..x1, 0.0..n as f64)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(x_name)
        .label_style(font(14))
        .x_label_formatter(&|x: &f64| crate::fmt::tick(*x))
        .y_labels(0)
        .disable_y_mesh()
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(err)?;
    // Row `i` of `n` from the top spans y in [n - i - 1, n - i).
    let row = |i: usize| (n - i - 1) as f64;
    let (c0, c1) = (variant(0), variant(1));
    let rows = || bars.iter().enumerate();
    chart
        .draw_series(rows().filter(|(_, b)| b.value.is_finite()).map(|(i, b)| {
            Rectangle::new(
                [(0.0, row(i) + 0.30), (b.value, row(i) + 0.62)],
                c0.filled(),
            )
        }))
        .map_err(err)?;
    chart
        .draw_series(rows().filter(|(_, b)| b.second.is_finite()).map(|(i, b)| {
            Rectangle::new(
                [(0.0, row(i) + 0.12), (b.second, row(i) + 0.26)],
                c1.filled(),
            )
        }))
        .map_err(err)?;
    // The error bar: a line across the interval (clipped at 0) with end ticks, centred on the
    // main bar.
    let ink = TEXT.stroke_width(2);
    chart
        .draw_series(rows().filter(|(_, b)| whisker(b)).flat_map(|(i, b)| {
            let (lo, hi, y) = ((b.value - b.conf).max(0.0), b.value + b.conf, row(i));
            [
                PathElement::new(vec![(lo, y + 0.46), (hi, y + 0.46)], ink),
                PathElement::new(vec![(lo, y + 0.36), (lo, y + 0.56)], ink),
                PathElement::new(vec![(hi, y + 0.36), (hi, y + 0.56)], ink),
            ]
        }))
        .map_err(err)?;
    chart
        .draw_series(rows().map(|(i, b)| {
            Text::new(
                b.label.clone(),
                (0.0, row(i) + 0.82),
                font(13).pos(Pos::new(HPos::Left, VPos::Center)),
            )
        }))
        .map_err(err)?;
    chart
        .draw_series(rows().filter(|(_, b)| b.value.is_finite()).map(|(i, b)| {
            let (text, x) = if whisker(b) {
                (
                    format!(" {}", crate::fmt::pm(b.value, Some(b.conf))),
                    b.value + b.conf,
                )
            } else {
                (format!(" {}", crate::fmt::num(b.value)), b.value)
            };
            // A little right of the bar or the interval's end (SVG drops the space).
            Text::new(
                text,
                (x + x1 * 0.006, row(i) + 0.46),
                font(12).pos(Pos::new(HPos::Left, VPos::Center)),
            )
        }))
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_labelled_and_deterministic() {
        let bars = vec![
            Bar {
                label: "retry.max_attempts".into(),
                value: 2.5,
                conf: 0.3,
                second: 0.4,
            },
            Bar {
                label: "retry.cap".into(),
                value: 0.0,
                conf: 0.0,
                second: f64::NAN,
            },
        ];
        let names = ("μ*", "σ", "95% interval");
        let svg = bar_chart("m: sensitivity", "mu*", names, &bars).unwrap();
        for t in [
            "retry.max_attempts",
            "retry.cap",
            "μ*",
            "σ",
            "2.50 ± 0.30",
            "95% interval",
        ] {
            assert!(svg.contains(t), "{t}");
        }
        assert_eq!(
            svg,
            bar_chart("m: sensitivity", "mu*", names, &bars).unwrap()
        );
        // No interval, no error bar: one fewer legend entry and no "±".
        let bare: Vec<Bar> = bars
            .iter()
            .map(|b| Bar {
                conf: f64::NAN,
                ..b.clone()
            })
            .collect();
        let plain = bar_chart("m: sensitivity", "mu*", names, &bare).unwrap();
        assert!(!plain.contains('±') && !plain.contains("95% interval"));
        assert!(plain.contains("2.5"));
    }
}
