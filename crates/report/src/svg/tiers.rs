//! The tiers chart: the arrivals at each tier of the request path, one panel per tier.

use crate::style::{GRID, GRID_BOLD, bold, font, stroke, variant};

use plotters::prelude::*;
use retrystorm_core::summary::{RunReport, VariantResult};

use super::*;
use crate::{ReportError, fmt};

/// The request path, tier by tier: one panel per tier (top first; the last is `[server]`), the
/// arrivals per bucket at that tier as one line per variant, and each panel's title with the
/// tier's totals. Variants keep their colours from the other charts.
pub fn tiers_chart(report: &RunReport) -> Result<String, ReportError> {
    const CHART: &str = "tiers";
    let tiers = report
        .variants
        .first()
        .map_or(0, |v| v.summary.tiers.len().max(1));
    let height = LOAD_HEADER + LOAD_PANEL * tiers as u32 + 20;
    render(CHART, (WIDTH, height), |root| {
        if report.variants.is_empty() {
            return empty(root, CHART);
        }
        let (top, rest) = root.split_vertically(LOAD_HEADER);
        top.draw(&Text::new(
            heading(report, "arrivals at each tier of the request path"),
            (16, 10),
            bold(20),
        ))
        .map_err(chart_err(CHART))?;
        let n = report.variants.len();
        // The per-tier series of a variant: the path's own (several tiers) or the main one.
        let series_of = |v: &VariantResult, t: usize| -> Vec<u64> {
            match v.series.tiers.get(t) {
                Some(s) => s
                    .first
                    .iter()
                    .zip(&s.retries)
                    .map(|(a, b)| u64::from(*a) + u64::from(*b))
                    .collect(),
                None => v
                    .series
                    .first
                    .iter()
                    .zip(&v.series.retries)
                    .map(|(a, b)| u64::from(*a) + u64::from(*b))
                    .collect(),
            }
        };
        let end_s = report
            .variants
            .iter()
            .map(|v| v.summary.end_ms / 1000.0)
            .fold(0.0, f64::max)
            .max(1e-3);
        let panels = rest.split_evenly((tiers, 1));
        for (t, panel) in panels.iter().enumerate() {
            let ymax = report
                .variants
                .iter()
                .flat_map(|v| series_of(v, t))
                .max()
                .unwrap_or(0)
                .max(1) as f64;
            let first = &report.variants[0];
            let bucket = bucket_ms(first);
            let name = first
                .summary
                .tiers
                .get(t)
                .map_or("server".to_string(), |s| s.name.clone());
            let totals: Vec<String> = report
                .variants
                .iter()
                .filter_map(|v| v.summary.tiers.get(t))
                .map(|s| fmt::num(s.arrivals as f64))
                .collect();
            let title = format!(
                "tier {t}: {name} (arrivals per {} ms; totals {})",
                fmt::trim(bucket),
                totals.join(" / ")
            );
            let mut chart = ChartBuilder::on(panel)
                .caption(title, font(15))
                .margin(12)
                .margin_right(44)
                .x_label_area_size(36)
                .y_label_area_size(70)
                .build_cartesian_2d(0f64..end_s, 0f64..ymax * 1.08)
                .map_err(chart_err(CHART))?;
            let y_fmt = |y: &f64| fmt::tick(*y);
            chart
                .configure_mesh()
                .x_labels(12)
                .y_labels(6)
                .y_label_formatter(&y_fmt)
                .label_style(font(13))
                .axis_desc_style(font(14))
                .x_desc("simulated time (s)")
                .y_desc(format!("arrivals per {} ms", fmt::trim(bucket)))
                .bold_line_style(GRID_BOLD)
                .light_line_style(GRID)
                .max_light_lines(1)
                .draw()
                .map_err(chart_err(CHART))?;
            for (i, v) in report.variants.iter().enumerate() {
                let b = bucket_ms(v) / 1000.0;
                let pts: Vec<(f64, f64)> = series_of(v, t)
                    .into_iter()
                    .enumerate()
                    .map(|(k, y)| (k as f64 * b, y as f64))
                    .collect();
                let color = variant(i);
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(stroke(i, n))))
                    .map_err(chart_err(CHART))?
                    .label(v.name.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                    });
            }
            if t == 0 {
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .label_font(font(14))
                    .background_style(WHITE.mix(0.9))
                    .border_style(GRID_BOLD)
                    .draw()
                    .map_err(chart_err(CHART))?;
            }
        }
        Ok(())
    })
}
