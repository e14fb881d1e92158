//! The outcome chart: what happened to each settled intent's effect, one 100% bar per variant.

use crate::style::{DUPLICATED, GRID, GRID_BOLD, LOST, ONCE, PHANTOM, bold, font};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::summary::{RunReport, VariantResult};

use super::*;
use crate::{error::ReportError, fmt};

/// What happened to the effect of each settled intent, as one horizontal 100% bar per variant:
/// applied once, duplicated, lost with the client told it failed, and phantom (lost with the
/// client told it succeeded). The counts, including false failures (client gave up but the
/// effect was applied), are written above each bar.
pub fn outcome_chart(report: &RunReport) -> Result<String, ReportError> {
    outcome_chart_opts(report, &ChartOptions::default())
}

/// [`outcome_chart`] with [`ChartOptions`] (the seeds in the title).
pub fn outcome_chart_opts(report: &RunReport, opt: &ChartOptions) -> Result<String, ReportError> {
    let n = report.variants.len();
    let height = HEADER + BAND * n.max(1) as u32 + 56;
    render(CHART, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(HEADER);
        header
            .draw(&Text::new(
                heading(report, "effects of settled intents", opt.seeds),
                (16, 10),
                bold(20),
            ))
            .map_err(chart_err(CHART))?;
        legend(&header, CHART, (18, 52), &outcome_legend())?;
        if n == 0 {
            return empty(&body, CHART);
        }
        let mut chart = share_axis(&body, n)?;
        for (i, v) in report.variants.iter().enumerate() {
            // Band i, counted from the top; y grows upwards.
            draw_outcome_band(&mut chart, v, (n - 1 - i) as f64)?;
        }
        Ok(())
    })
}

const CHART: &str = "outcome";
/// The height of one variant's band (its label and its bar), and of the title and legend.
const BAND: u32 = 82;
const HEADER: u32 = 74;

/// The four outcomes' colours, in the order the bars stack them.
fn outcome_legend() -> [(Swatch, String); 4] {
    [
        (Swatch::Box(ONCE), "applied once".into()),
        (Swatch::Box(DUPLICATED), "duplicated".into()),
        (Swatch::Box(LOST), "lost (client told failure)".into()),
        (
            Swatch::Box(PHANTOM),
            "phantom (lost, client told success)".into(),
        ),
    ]
}

/// The plot of `n` bands over a 0-100% x axis (the share of settled intents), no y axis: the
/// bands are named by their labels.
fn share_axis<'a, 'b>(
    body: &'a DrawingArea<SVGBackend<'b>, Shift>,
    n: usize,
) -> Result<Plot<'a, 'b>, ReportError> {
    let mut chart = ChartBuilder::on(body)
        .margin_left(16)
        .margin_right(30)
        .margin_top(4)
        .x_label_area_size(46)
        .build_cartesian_2d(0f64..100f64, 0f64..n as f64)
        .map_err(chart_err(CHART))?;
    let x_fmt = |x: &f64| format!("{}%", fmt::trim(*x));
    chart
        .configure_mesh()
        .disable_y_mesh()
        .disable_y_axis()
        .x_labels(11)
        .x_label_formatter(&x_fmt)
        .label_style(font(13))
        .axis_desc_style(font(14))
        .x_desc("share of settled intents")
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1)
        .draw()
        .map_err(chart_err(CHART))?;
    Ok(chart)
}

/// One variant's band from `y0`: its counts written above a 100% bar of its settled intents,
/// one segment per outcome (none when nothing settled).
fn draw_outcome_band(
    chart: &mut Plot<'_, '_>,
    v: &VariantResult,
    y0: f64,
) -> Result<(), ReportError> {
    let s = &v.summary;
    let settled = s.lost + s.applied_once + s.duplicated;
    let phantom = s.phantom.min(s.lost);
    chart
        .draw_series(std::iter::once(Text::new(
            outcome_label(v, settled),
            (0.0, y0 + 0.8),
            font(15).pos(Pos::new(HPos::Left, VPos::Center)),
        )))
        .map_err(chart_err(CHART))?;
    if settled == 0 {
        return Ok(());
    }
    let segments = [
        (s.applied_once, ONCE),
        (s.duplicated, DUPLICATED),
        (s.lost - phantom, LOST),
        (phantom, PHANTOM),
    ];
    let mut x = 0.0;
    for (count, color) in segments {
        if count == 0 {
            continue;
        }
        let w = 100.0 * count as f64 / settled as f64;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x, y0 + 0.12), (x + w, y0 + 0.6)],
                color.filled(),
            )))
            .map_err(chart_err(CHART))?;
        x += w;
    }
    Ok(())
}

/// A band's label: the variant and its counts, false failures included (they are not in the
/// bar: their effect was applied once).
fn outcome_label(v: &VariantResult, settled: u64) -> String {
    let s = &v.summary;
    if settled == 0 {
        return format!("{}: no settled intents", v.name);
    }
    format!(
        "{}: {} settled; once {}, duplicated {}, lost {} (phantom {}), false failures {}",
        v.name,
        fmt::int(settled),
        fmt::int(s.applied_once),
        fmt::int(s.duplicated),
        fmt::int(s.lost),
        fmt::int(s.phantom),
        fmt::int(s.false_failures),
    )
}
