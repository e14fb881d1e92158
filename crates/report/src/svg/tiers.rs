//! The tiers chart: the arrivals at each tier of the request path, one panel per tier.

use crate::marks::Shade;
use crate::style::{stroke, variant};

use plotters::coord::Shift;
use plotters::prelude::*;
use retrystorm_core::summary::{RunReport, VariantResult};

use super::time_panels::*;
use super::*;
use crate::{error::ReportError, fmt};

/// The request path, tier by tier: one panel per tier (top first; the last is `[server]`), the
/// arrivals per bucket at that tier as one line per variant, and each panel's title with the
/// tier's totals. Variants keep their colours from the other charts.
pub fn tiers_chart(report: &RunReport) -> Result<String, ReportError> {
    tiers_chart_opts(report, &ChartOptions::default())
}

/// [`tiers_chart`] with [`ChartOptions`]: the seeds in the title, the windows to shade.
pub fn tiers_chart_opts(report: &RunReport, opt: &ChartOptions) -> Result<String, ReportError> {
    let tiers = report
        .variants
        .first()
        .map_or(0, |v| v.summary.tiers.len().max(1));
    let windows = distinct_windows(report, opt);
    let entries = tiers_legend(report, &windows);
    let title = heading(
        report,
        "arrivals at each tier of the request path",
        opt.seeds,
    );
    let end_s = time_end_s(
        report.variants.iter().flat_map(|v| {
            let b = bucket_ms(v);
            (0..tiers).map(move |t| last_ms(&tier_arrivals(v, t), b))
        }),
        &windows,
    );
    panel_chart(CHART, report, title, &entries, tiers, |panel, t| {
        draw_tier(panel, report, t, end_s, &windows)
    })
}

const CHART: &str = "tiers";

/// The variants' lines and, when there are windows, their shade. The legend sits in the
/// header, above the panels, so it never covers a line.
fn tiers_legend(report: &RunReport, windows: &[Shade]) -> Vec<(Swatch, String)> {
    let mut entries: Vec<(Swatch, String)> = report
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| (Swatch::Line(variant(i)), v.name.clone()))
        .collect();
    if !windows.is_empty() {
        entries.push(windows_entry(""));
    }
    entries
}

/// A variant's arrivals (first attempts and retries) per bucket at tier `t`: the path's own
/// series (several tiers) or the main one.
fn tier_arrivals(v: &VariantResult, t: usize) -> Vec<u64> {
    let (first, retries) = match v.series.tiers.get(t) {
        Some(s) => (&s.first, &s.retries),
        None => (&v.series.first, &v.series.retries),
    };
    first
        .iter()
        .zip(retries)
        .map(|(a, b)| u64::from(*a) + u64::from(*b))
        .collect()
}

/// Tier `t`'s panel: its axes up to `end_s`, the windows behind, a line per variant.
fn draw_tier(
    panel: &DrawingArea<SVGBackend<'_>, Shift>,
    report: &RunReport,
    t: usize,
    end_s: f64,
    windows: &[Shade],
) -> Result<(), ReportError> {
    let ymax = report
        .variants
        .iter()
        .flat_map(|v| tier_arrivals(v, t))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let y_hi = ymax * 1.08;
    let mut chart = time_axes(
        panel,
        CHART,
        tier_title(report, t),
        bucket_ms(&report.variants[0]),
        (end_s, y_hi),
        windows,
    )?;
    let n = report.variants.len();
    for (i, v) in report.variants.iter().enumerate() {
        let pts = time_points(&tier_arrivals(v, t), bucket_ms(v));
        let color = variant(i);
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(stroke(i, n))))
            .map_err(chart_err(CHART))?;
    }
    Ok(())
}

/// Tier `t`'s title: its name and every variant's total there (bucket of the first variant).
fn tier_title(report: &RunReport, t: usize) -> String {
    let first = &report.variants[0];
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
    format!(
        "tier {t}: {name} (arrivals per {}; totals {})",
        fmt::duration(bucket_ms(first)),
        totals.join(" / ")
    )
}
