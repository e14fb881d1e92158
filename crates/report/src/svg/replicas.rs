//! The replicas chart: the arrivals at each replica of a replicated tier (`server.replicas`),
//! one panel per variant and replicated tier, one line per replica, ejections marked.

use crate::marks::Shade;
use crate::style::{GOODPUT, MARK, REPLICAS, down_triangle, font, replica, thin_stroke};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use retrystorm_core::summary::{ReplicaSeries, RunReport, VariantResult};

use super::time_panels::*;
use super::*;
use crate::{error::ReportError, fmt};

/// The replicas of every replicated tier: one panel per variant and tier with replicas (2 to 64
/// replicas keep their series), the arrivals per bucket at each replica as a line in the
/// replica's colour, each ejection a triangle at the top of the panel in the ejected replica's
/// colour, and a replica's rejections, when it had any, as a dashed line in its colour. The
/// panels of one tier share their y axis, so variants compare at a glance. A report without
/// replica series draws a note instead.
pub fn replicas_chart(report: &RunReport) -> Result<String, ReportError> {
    replicas_chart_opts(report, &ChartOptions::default())
}

/// [`replicas_chart`] with [`ChartOptions`]: the seeds in the title, the windows to shade (each
/// panel its own variant's).
pub fn replicas_chart_opts(report: &RunReport, opt: &ChartOptions) -> Result<String, ReportError> {
    let panels = replica_panels(report);
    let windows = variant_windows(report, &opt.windows);
    let entries = replicas_legend(&panels, &windows);
    let title = heading(report, "arrivals at each replica", opt.seeds);
    if panels.is_empty() {
        return panel_chart(CHART, report, title, &[], 1, |panel, _| {
            panel
                .draw(&Text::new(
                    "no replica series in this report: no tier has server.replicas from 2 to 64",
                    (20, 40),
                    font(16),
                ))
                .map_err(chart_err(CHART))
        });
    }
    let end_s = time_end_s(
        panels.iter().flat_map(|p| {
            p.replicas
                .iter()
                .map(|r| last_ms(&wide(&r.arrivals), p.bucket_ms))
        }),
        &windows.concat(),
    );
    panel_chart(CHART, report, title, &entries, panels.len(), |area, i| {
        let p = &panels[i];
        // One y axis for every panel of the tier.
        let ymax = panels
            .iter()
            .filter(|q| q.tier == p.tier)
            .flat_map(|q| q.replicas.iter().flat_map(|r| r.arrivals.iter().copied()))
            .max()
            .unwrap_or(0)
            .max(1);
        // Room at the top for a window's label and, under it, the ejection marks.
        let ejected = panels.iter().filter(|q| q.tier == p.tier).any(|q| {
            q.replicas
                .iter()
                .any(|r| r.ejections.iter().any(|&e| e > 0))
        });
        let room = if ejected { 1.3 } else { 1.12 };
        let w = windows.get(p.variant).map_or(&[][..], |w| &w[..]);
        draw_panel(area, report, p, (end_s, f64::from(ymax) * room), w)
    })
}

const CHART: &str = "replicas";

/// One panel: a variant's replicated tier.
struct ReplicaPanel<'a> {
    variant: usize,
    /// The tier's index on the path (0 for a path of one tier) and its name.
    tier: usize,
    name: &'a str,
    bucket_ms: f64,
    replicas: &'a [ReplicaSeries],
    /// The ready replicas per bucket, on an autoscaled tier (empty otherwise).
    ready: &'a [f32],
}

/// Every variant's tiers with replica series, variants in report order, tiers top first.
fn replica_panels(report: &RunReport) -> Vec<ReplicaPanel<'_>> {
    let mut out = Vec::new();
    for (i, v) in report.variants.iter().enumerate() {
        let s = &v.series;
        type Tier<'a> = (&'a str, &'a [ReplicaSeries], &'a [f32]);
        let tiers: Vec<Tier> = if s.tiers.is_empty() {
            vec![(tier_name(v, 0), &s.replicas[..], &s.ready_replicas[..])]
        } else {
            s.tiers
                .iter()
                .map(|t| (t.name.as_str(), &t.replicas[..], &t.ready_replicas[..]))
                .collect()
        };
        for (t, (name, replicas, ready)) in tiers.into_iter().enumerate() {
            if !replicas.is_empty() {
                out.push(ReplicaPanel {
                    variant: i,
                    tier: t,
                    name,
                    bucket_ms: bucket_ms(v),
                    replicas,
                    ready,
                });
            }
        }
    }
    out
}

/// Tier `t`'s name as the summary gives it (`server` for a path of one tier without one).
fn tier_name(v: &VariantResult, t: usize) -> &str {
    v.summary.tiers.get(t).map_or("server", |s| s.name.as_str())
}

fn wide(xs: &[u32]) -> Vec<u64> {
    xs.iter().map(|&x| u64::from(x)).collect()
}

/// A line per replica colour (`replica 3`, or `replicas 3, 11, 19` when colours come round
/// again past [`REPLICAS`]), the ejection mark, the dashed rejections when some replica had
/// any, the windows' shade when there are windows.
fn replicas_legend(panels: &[ReplicaPanel], windows: &[Vec<Shade>]) -> Vec<(Swatch, String)> {
    let n = panels.iter().map(|p| p.replicas.len()).max().unwrap_or(0);
    let mut entries: Vec<(Swatch, String)> = (0..n.min(REPLICAS.len()))
        .map(|k| {
            let same: Vec<String> = (k..n)
                .step_by(REPLICAS.len())
                .map(|j| j.to_string())
                .collect();
            let label = if same.len() == 1 {
                format!("replica {k}")
            } else {
                format!("replicas {}", same.join(", "))
            };
            (Swatch::Line(replica(k)), label)
        })
        .collect();
    let any = |f: fn(&ReplicaSeries) -> &Vec<u32>| {
        panels
            .iter()
            .any(|p| p.replicas.iter().any(|r| f(r).iter().any(|&x| x > 0)))
    };
    if any(|r| &r.ejections) {
        entries.push((
            Swatch::Down(MARK),
            "ejected by outlier detection (in the replica's colour)".into(),
        ));
    }
    if any(|r| &r.rejected) {
        entries.push((
            Swatch::Dashed(MARK),
            "rejected per bucket (dashed, in the replica's colour)".into(),
        ));
    }
    if panels.iter().any(|p| !p.ready.is_empty()) {
        entries.push((
            Swatch::Dashed(GOODPUT),
            "ready replicas (autoscaler; all the tier's replicas at 80 % of the axis)".into(),
        ));
    }
    if windows.iter().any(|w| !w.is_empty()) {
        entries.push(windows_entry(" / failure window"));
    }
    entries
}

/// A panel's title: the variant, the tier, and each replica's arrivals in all (its ejections
/// too when it had any), from the summary.
fn panel_title(report: &RunReport, p: &ReplicaPanel) -> String {
    let v = &report.variants[p.variant];
    let counts = v.summary.tiers.get(p.tier).map(|t| &t.replicas);
    let mut totals: Vec<String> = counts
        .into_iter()
        .flatten()
        .map(|r| fmt::num(r.arrivals as f64))
        .collect();
    if totals.len() > 8 {
        totals.truncate(8);
        totals.push("...".into());
    }
    let ejections: u64 = counts.into_iter().flatten().map(|r| r.ejections).sum();
    let ejected = if ejections > 0 {
        format!(
            ", {} ejection{}",
            fmt::int(ejections),
            if ejections == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    // The last bucket is usually cut short by the end of the run: its average is not a count.
    let whole = p.ready.len().saturating_sub(1).max(1);
    let ready = p.ready.iter().take(whole).copied();
    let ready = match (ready.clone().reduce(f32::min), ready.reduce(f32::max)) {
        (Some(lo), Some(hi)) => format!(
            "; ready {} to {}",
            fmt::num(f64::from(lo)),
            fmt::num(f64::from(hi))
        ),
        _ => String::new(),
    };
    format!(
        "{}: tier {}: {}, {} replicas (arrivals per {}; totals {}{ejected}{ready})",
        v.name,
        p.tier,
        p.name,
        p.replicas.len(),
        fmt::duration(p.bucket_ms),
        totals.join(" / ")
    )
}

/// A panel's axes, its variant's windows behind, the rejections (dashed), a line per replica
/// and the ejection marks at the top.
fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    report: &RunReport,
    p: &ReplicaPanel,
    (x_hi, y_hi): (f64, f64),
    windows: &[Shade],
) -> Result<(), ReportError> {
    let mut chart = time_axes(
        area,
        CHART,
        panel_title(report, p),
        p.bucket_ms,
        (x_hi, y_hi),
        windows,
    )?;
    for (k, r) in p.replicas.iter().enumerate() {
        if r.rejected.iter().any(|&x| x > 0) {
            chart
                .draw_series(DashedLineSeries::new(
                    time_points(&wide(&r.rejected), p.bucket_ms),
                    6,
                    4,
                    replica(k).stroke_width(1),
                ))
                .map_err(chart_err(CHART))?;
        }
    }
    for (k, r) in p.replicas.iter().enumerate() {
        chart
            .draw_series(LineSeries::new(
                time_points(&wide(&r.arrivals), p.bucket_ms),
                replica(k).stroke_width(replica_stroke(k, p.replicas.len())),
            ))
            .map_err(chart_err(CHART))?;
    }
    // The ready replicas on their own scale: every slot at 80 % of the axis.
    let b = p.bucket_ms / 1000.0;
    if !p.ready.is_empty() {
        let scale = 0.8 * y_hi / p.replicas.len() as f64;
        let points = p.ready.iter().enumerate();
        chart
            .draw_series(DashedLineSeries::new(
                points.map(|(i, &n)| (i as f64 * b, f64::from(n) * scale)),
                8,
                3,
                GOODPUT.stroke_width(2),
            ))
            .map_err(chart_err(CHART))?;
    }
    // Each ejection a triangle under the windows' labels, the replica named at its first.
    for (k, r) in p.replicas.iter().enumerate() {
        let at: Vec<usize> = (0..r.ejections.len())
            .filter(|&i| r.ejections[i] > 0)
            .collect();
        let marks = at.iter().enumerate().map(|(j, &i)| {
            let label = if j == 0 {
                format!("replica {k} ejected")
            } else {
                String::new()
            };
            EmptyElement::at((i as f64 * b, y_hi))
                + Polygon::new(
                    down_triangle()
                        .into_iter()
                        .map(|(x, y)| (x, y + 24))
                        .collect::<Vec<_>>(),
                    replica(k).filled(),
                )
                + Text::new(
                    label,
                    (9, 24),
                    font(12).pos(Pos::new(HPos::Left, VPos::Center)),
                )
        });
        chart.draw_series(marks).map_err(chart_err(CHART))?;
    }
    Ok(())
}

/// Replica `k`'s line width of `n`: earlier replicas wider ([`thin_stroke`], 4 px down to 1 px),
/// so replicas with the same load (round robin) show as stripes; past 5 replicas at most 2 px,
/// so that many lines stay lines.
fn replica_stroke(k: usize, n: usize) -> u32 {
    let w = thin_stroke(k, n);
    if n > 5 { w.min(2) } else { w }
}
