//! The outcome chart: what happened to each settled intent's effect, one 100% bar per variant.

use crate::style::{DUPLICATED, GRID, GRID_BOLD, LOST, ONCE, PHANTOM, bold, font};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::summary::RunReport;

use super::*;
use crate::{ReportError, fmt};

/// What happened to the effect of each settled intent, as one horizontal 100% bar per variant:
/// applied once, duplicated, lost with the client told it failed, and phantom (lost with the
/// client told it succeeded). The counts, including false failures (client gave up but the
/// effect was applied), are written above each bar.
pub fn outcome_chart(report: &RunReport) -> Result<String, ReportError> {
    const CHART: &str = "outcome";
    const BAND: u32 = 82;
    const HEADER: u32 = 74;
    let n = report.variants.len();
    let height = HEADER + BAND * n.max(1) as u32 + 56;
    render(CHART, (WIDTH, height), |root| {
        let (header, body) = root.split_vertically(HEADER);
        header
            .draw(&Text::new(
                heading(report, "effects of settled intents"),
                (16, 10),
                bold(20),
            ))
            .map_err(chart_err(CHART))?;
        legend(
            &header,
            CHART,
            (18, 52),
            &[
                (Swatch::Box(ONCE), "applied once".into()),
                (Swatch::Box(DUPLICATED), "duplicated".into()),
                (Swatch::Box(LOST), "lost (client told failure)".into()),
                (
                    Swatch::Box(PHANTOM),
                    "phantom (lost, client told success)".into(),
                ),
            ],
        )?;
        if n == 0 {
            return empty(&body, CHART);
        }

        let mut chart = ChartBuilder::on(&body)
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

        for (i, v) in report.variants.iter().enumerate() {
            let s = &v.summary;
            // Band i, counted from the top; y grows upwards.
            let y0 = (n - 1 - i) as f64;
            let settled = s.lost + s.applied_once + s.duplicated;
            let phantom = s.phantom.min(s.lost);
            let label = if settled == 0 {
                format!("{}: no settled intents", v.name)
            } else {
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
            };
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (0.0, y0 + 0.8),
                    font(15).pos(Pos::new(HPos::Left, VPos::Center)),
                )))
                .map_err(chart_err(CHART))?;
            if settled == 0 {
                continue;
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
        }
        Ok(())
    })
}
