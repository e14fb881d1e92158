//! The chart of `retrystorm tune` with one objective: each candidate's mean and 95% interval of
//! the objective, against the tuned parameter when one numeric parameter is tuned, else in order
//! of the objective; infeasible and undecided candidates drawn apart, the recommendation ringed.

use crate::error::ReportError;
use crate::style::{FIRST, GRID, GRID_BOLD, font, variant};
use crate::svg::{Swatch, header_height, header_strip};
use plotters::coord::Shift;
use plotters::prelude::*;
use retrystorm_core::tune::Feasibility;

/// One candidate on the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct CandidatePoint {
    /// `#N`, as the table names it.
    pub label: String,
    /// The tuned parameter's value; `None` draws the candidates in order of their mean.
    pub x: Option<f64>,
    pub mean: f64,
    /// The 95% interval's half-width (NaN: none).
    pub half_width: f64,
    /// Whether it meets every constraint (the worst of its constraints' verdicts).
    pub feasibility: Feasibility,
    pub best: bool,
}

const CHART: &str = "objective";
const WIDTH: u32 = 900;
/// Up to this many candidates in order of their mean, each gets its `#N` under the axis.
const MAX_NAMED: usize = 30;

fn err<E: std::fmt::Display>(e: E) -> ReportError {
    crate::svg::chart_err(CHART)(e)
}

/// The chart as SVG text. `x_name` names the tuned parameter when every point has an `x`;
/// otherwise the candidates are ranked by their mean, smallest first. `y_name` is the objective
/// with its direction.
pub fn objective_chart(
    title: &str,
    x_name: Option<&str>,
    y_name: &str,
    points: &[CandidatePoint],
) -> Result<String, ReportError> {
    let by_param = x_name.is_some() && points.iter().all(|p| p.x.is_some());
    let placed = place(points, by_param);
    let entries = legend_entries(points);
    let right = WIDTH as i32 - 16;
    let height = 560 + header_height(&entries, right) as u32;
    let x_desc = match x_name {
        Some(n) if by_param => n.to_string(),
        _ => format!("candidates, in order of the mean {y_name}"),
    };
    crate::svg::render(CHART, (WIDTH, height), |root| {
        let body = header_strip(root, CHART, title, &entries, right)?;
        let axes = Axes {
            x_desc: &x_desc,
            y_desc: &format!("{y_name}; bar: 95% interval"),
            ranked: !by_param,
        };
        draw_points(&body, &axes, &placed)
    })
}

/// Each point with its x position: its parameter value, or its rank (from 1) by mean.
fn place(points: &[CandidatePoint], by_param: bool) -> Vec<(f64, &CandidatePoint)> {
    if by_param {
        return points.iter().map(|p| (p.x.unwrap_or(0.0), p)).collect();
    }
    let mut sorted: Vec<&CandidatePoint> = points.iter().collect();
    sorted.sort_by(|a, b| a.mean.total_cmp(&b.mean));
    sorted
        .into_iter()
        .enumerate()
        .map(|(i, p)| ((i + 1) as f64, p))
        .collect()
}

/// The marker of a point by its feasibility.
fn swatch(f: Feasibility) -> Swatch {
    match f {
        Feasibility::Feasible => Swatch::Dot(variant(0).to_rgba()),
        Feasibility::Undecided => Swatch::Ring(variant(0)),
        Feasibility::Infeasible => Swatch::Ring(FIRST),
    }
}

/// One entry per kind of point the chart holds, then the recommendation's ring.
fn legend_entries(points: &[CandidatePoint]) -> Vec<(Swatch, String)> {
    let mut entries = Vec::new();
    for (f, name) in [
        (Feasibility::Feasible, "feasible"),
        (Feasibility::Undecided, "feasibility undecided"),
        (Feasibility::Infeasible, "infeasible (fails a constraint)"),
    ] {
        if points.iter().any(|p| p.feasibility == f) {
            entries.push((swatch(f), name.to_string()));
        }
    }
    if points.iter().any(|p| p.best) {
        entries.push((Swatch::Ring(variant(6)), "recommended".to_string()));
    }
    entries
}

/// The axes' descriptions and whether x holds ranks (ticks then name the candidates).
struct Axes<'a> {
    x_desc: &'a str,
    y_desc: &'a str,
    ranked: bool,
}

/// The x and y ranges holding every point and interval, padded.
fn ranges(placed: &[(f64, &CandidatePoint)]) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
    let span = |v: Vec<f64>| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return 0.0..1.0;
        }
        let pad = ((hi - lo) * 0.08).max(hi.abs().max(1.0) * 0.02);
        lo - pad..hi + pad
    };
    let hw = |p: &CandidatePoint| {
        if p.half_width.is_finite() {
            p.half_width
        } else {
            0.0
        }
    };
    let ys = placed
        .iter()
        .flat_map(|(_, p)| [p.mean - hw(p), p.mean + hw(p)])
        .filter(|y| y.is_finite())
        .collect();
    (span(placed.iter().map(|(x, _)| *x).collect()), span(ys))
}

/// The mesh, each point's interval and marker, and the ring on the recommendation.
fn draw_points(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    axes: &Axes,
    placed: &[(f64, &CandidatePoint)],
) -> Result<(), ReportError> {
    let mut chart = crate::svg::plot_area(area, CHART, ranges(placed))?;
    let named = axes.ranked && placed.len() <= MAX_NAMED;
    let tick = |x: &f64| -> String {
        if !named {
            return crate::fmt::tick(*x);
        }
        let i = x.round();
        match placed.get((i as usize).wrapping_sub(1)) {
            Some((_, p)) if (x - i).abs() < 1e-6 => p.label.clone(),
            _ => String::new(),
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(axes.x_desc)
        .y_desc(axes.y_desc)
        .label_style(font(12))
        .x_label_formatter(&tick)
        .y_label_formatter(&|y: &f64| crate::fmt::tick(*y))
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID)
        .max_light_lines(1);
    if named {
        mesh.x_labels(placed.len() * 4 + 1);
    }
    mesh.draw().map_err(err)?;
    let color = |p: &CandidatePoint| match p.feasibility {
        Feasibility::Infeasible => FIRST,
        _ => variant(0),
    };
    chart
        .draw_series(
            placed
                .iter()
                .filter(|(_, p)| p.half_width.is_finite() && p.half_width > 0.0)
                .map(|(x, p)| {
                    let (lo, hi) = (p.mean - p.half_width, p.mean + p.half_width);
                    PathElement::new(vec![(*x, lo), (*x, hi)], color(p).stroke_width(1))
                }),
        )
        .map_err(err)?;
    chart
        .draw_series(placed.iter().map(|(x, p)| {
            let style = match p.feasibility {
                Feasibility::Feasible => color(p).filled(),
                _ => color(p).stroke_width(2),
            };
            Circle::new((*x, p.mean), 5, style)
        }))
        .map_err(err)?;
    chart
        .draw_series(
            placed
                .iter()
                .filter(|(_, p)| p.best)
                .map(|(x, p)| Circle::new((*x, p.mean), 10, variant(6).stroke_width(2))),
        )
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(label: &str, x: f64, mean: f64, f: Feasibility, best: bool) -> CandidatePoint {
        CandidatePoint {
            label: label.into(),
            x: Some(x),
            mean,
            half_width: 0.1,
            feasibility: f,
            best,
        }
    }

    #[test]
    fn ranked_chart_names_candidates_in_order_and_marks_kinds() {
        let pts = vec![
            point("#1", 10.0, 3.0, Feasibility::Feasible, false),
            point("#2", 20.0, 1.0, Feasibility::Feasible, true),
            point("#3", 30.0, 2.0, Feasibility::Infeasible, false),
        ];
        let svg = objective_chart("m: amplification", None, "amplification", &pts).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for t in ["feasible", "infeasible (fails a constraint)", "recommended"] {
            assert!(svg.contains(&format!("\n{t}\n")), "{t}");
        }
        assert!(!svg.contains("undecided"));
        // Ranked by mean: #2 (1.0), #3 (2.0), #1 (3.0) from left to right.
        let at = |l: &str| svg.find(&format!("\n{l}\n")).unwrap();
        assert!(at("#2") < at("#3") && at("#3") < at("#1"), "{svg}");
        assert!(svg.contains("candidates, in order of the mean amplification"));
        assert_eq!(
            svg,
            objective_chart("m: amplification", None, "amplification", &pts).unwrap()
        );
    }

    #[test]
    fn by_parameter_uses_the_values_on_x() {
        let pts = vec![
            point("#1", 10.0, 3.0, Feasibility::Undecided, false),
            point("#2", 20.0, 1.0, Feasibility::Feasible, true),
        ];
        let svg = objective_chart("m", Some("retry.base (ms)"), "amplification", &pts).unwrap();
        assert!(svg.contains("\nretry.base (ms)\n"));
        assert!(svg.contains("\nfeasibility undecided\n"));
        assert!(
            !svg.contains("\n#1\n"),
            "no candidate names on a value axis"
        );
    }
}
