//! The heat map of `retrystorm map`: one cell per pair of values of two `--vary` axes, coloured
//! by a value on a light-to-dark scale (the share of runs that stay down: pale green when every
//! run recovers, dark red when none does) and labelled with a short text.

use crate::error::ReportError;
use crate::style::{GRID_BOLD, TEXT, bold, font};
use crate::svg::{chart_err, render};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What the heat map shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Heatmap {
    pub title: String,
    /// The axis names (the `--vary` keys) and their values, as given.
    pub x_name: String,
    pub y_name: String,
    pub x_values: Vec<String>,
    pub y_values: Vec<String>,
    /// `cells[y][x]`: the colour value (NaN: no data) and the label.
    pub cells: Vec<Vec<(f64, String)>>,
    /// What the colour means, e.g. "share of runs that stay down".
    pub legend: String,
    /// The values at the light and the dark end of the scale.
    pub scale: (f64, f64),
    /// How the legend's ends are written (e.g. `0%`, `100%`).
    pub scale_labels: (String, String),
}

/// Pale green, pale orange, red: light where all is well.
const STOPS: [(f64, (u8, u8, u8)); 3] = [
    (0.0, (0xe5, 0xf2, 0xe0)),
    (0.5, (0xfb, 0xc8, 0x8a)),
    (1.0, (0xb8, 0x27, 0x2c)),
];

/// The colour of `t` in `[0, 1]`, linear between the stops; grey for NaN.
fn colour(t: f64) -> RGBColor {
    if t.is_nan() {
        return RGBColor(0xd8, 0xd8, 0xd8);
    }
    let t = t.clamp(0.0, 1.0);
    let i = if t <= STOPS[1].0 { 0 } else { 1 };
    let ((a, ca), (b, cb)) = (STOPS[i], STOPS[i + 1]);
    let f = (t - a) / (b - a);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    RGBColor(mix(ca.0, cb.0), mix(ca.1, cb.1), mix(ca.2, cb.2))
}

fn centred(size: u32) -> TextStyle<'static> {
    font(size).pos(Pos::new(HPos::Center, VPos::Center))
}

/// The heat map as SVG text.
pub fn heatmap_chart(h: &Heatmap) -> Result<String, ReportError> {
    let g = Grid::of(h);
    render(CHART, (g.width as u32, g.height as u32), |root| {
        root.draw(&Text::new(
            h.title.clone(),
            (g.width / 2, 24),
            bold(18).pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(chart_err(CHART))?;
        draw_cells(root, h, &g)?;
        draw_axes(root, h, &g)?;
        draw_scale(root, h, &g)
    })
}

const CHART: &str = "heatmap";

type Canvas<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Where everything goes, in pixels: the cells (x from `left`, y from `top`), the scale bar
/// right of them, and the canvas around both.
struct Grid {
    nx: i32,
    ny: i32,
    /// A cell's width and height.
    cw: i32,
    ch: i32,
    left: i32,
    top: i32,
    /// The scale bar's height.
    lh: i32,
    /// The legend's text, in lines under the scale bar.
    legend: Vec<String>,
    width: i32,
    height: i32,
}

impl Grid {
    fn of(h: &Heatmap) -> Grid {
        let (nx, ny) = (h.x_values.len().max(1), h.y_values.len().max(1));
        // Cells of 56-110 px, so that a label fits; the chart grows with the grid.
        let cw = (760 / nx).clamp(56, 110) as i32;
        let ch = (480 / ny).clamp(30, 64) as i32;
        let (nx, ny) = (nx as i32, ny as i32);
        let longest = h
            .y_values
            .iter()
            .map(|v| v.chars().count())
            .max()
            .unwrap_or(1) as i32;
        let left = 40 + 8 * longest.min(24);
        let (top, legend_w) = (84, 170);
        let legend = wrap(&h.legend, 20);
        let lh = (ch * ny).clamp(120, 320);
        let title_w = 10 * h.title.chars().count() as i32 + 40;
        let width = (left + cw * nx + legend_w).max(title_w);
        let height = (top + ch * ny + 70).max(top + lh + 30 + 15 * legend.len() as i32);
        Grid {
            nx,
            ny,
            cw,
            ch,
            left,
            top,
            lh,
            legend,
            width,
            height,
        }
    }

    /// The top of row `j` (row 0, the first y value, at the bottom, as on a plot).
    fn row_top(&self, j: usize) -> i32 {
        self.top + self.ch * (self.ny - 1 - j as i32)
    }
}

/// Each cell filled with its value's colour, outlined in white and labelled (in white on the
/// dark end of the scale).
fn draw_cells(root: &Canvas<'_>, h: &Heatmap, g: &Grid) -> Result<(), ReportError> {
    let range = h.scale.1 - h.scale.0;
    let norm = |v: f64| {
        if range > 0.0 {
            (v - h.scale.0) / range
        } else if v.is_nan() {
            f64::NAN
        } else {
            0.0
        }
    };
    let e = chart_err(CHART);
    for (j, row) in h.cells.iter().enumerate() {
        let y0 = g.row_top(j);
        for (i, (v, label)) in row.iter().enumerate() {
            let x0 = g.left + g.cw * i as i32;
            let t = norm(*v);
            let cell = [(x0, y0), (x0 + g.cw, y0 + g.ch)];
            root.draw(&Rectangle::new(cell, colour(t).filled()))
                .map_err(&e)?;
            root.draw(&Rectangle::new(cell, WHITE.stroke_width(2)))
                .map_err(&e)?;
            let ink = if t > 0.65 { WHITE } else { TEXT };
            root.draw(&Text::new(
                label.clone(),
                (x0 + g.cw / 2, y0 + g.ch / 2),
                centred(13).color(&ink),
            ))
            .map_err(&e)?;
        }
    }
    Ok(())
}

/// The axes' values beside the cells and their names: x below, y above its values, so that a
/// long key is never cut.
fn draw_axes(root: &Canvas<'_>, h: &Heatmap, g: &Grid) -> Result<(), ReportError> {
    let e = chart_err(CHART);
    let bottom = g.top + g.ch * g.ny;
    for (i, v) in h.x_values.iter().enumerate() {
        root.draw(&Text::new(
            v.clone(),
            (g.left + g.cw * i as i32 + g.cw / 2, bottom + 14),
            centred(13),
        ))
        .map_err(&e)?;
    }
    for (j, v) in h.y_values.iter().enumerate() {
        root.draw(&Text::new(
            v.clone(),
            (g.left - 8, g.row_top(j) + g.ch / 2),
            font(13).pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(&e)?;
    }
    root.draw(&Text::new(
        h.x_name.clone(),
        (g.left + g.cw * g.nx / 2, bottom + 44),
        bold(14).pos(Pos::new(HPos::Center, VPos::Center)),
    ))
    .map_err(&e)?;
    root.draw(&Text::new(
        h.y_name.clone(),
        (12, g.top - 22),
        bold(14).pos(Pos::new(HPos::Left, VPos::Center)),
    ))
    .map_err(&e)?;
    Ok(())
}

/// The scale right of the cells: a vertical bar, light at the bottom, its ends' values beside
/// it and what the colour means under it.
fn draw_scale(root: &Canvas<'_>, h: &Heatmap, g: &Grid) -> Result<(), ReportError> {
    let e = chart_err(CHART);
    let (top, lh) = (g.top, g.lh);
    let lx = g.left + g.cw * g.nx + 36;
    let steps = 40;
    for s in 0..steps {
        let y1 = top + lh - lh * s / steps;
        let y0 = top + lh - lh * (s + 1) / steps;
        root.draw(&Rectangle::new(
            [(lx, y0), (lx + 22, y1)],
            colour((f64::from(s) + 0.5) / f64::from(steps)).filled(),
        ))
        .map_err(&e)?;
    }
    root.draw(&Rectangle::new(
        [(lx, top), (lx + 22, top + lh)],
        GRID_BOLD.stroke_width(1),
    ))
    .map_err(&e)?;
    let side = font(12).pos(Pos::new(HPos::Left, VPos::Center));
    root.draw(&Text::new(
        h.scale_labels.1.clone(),
        (lx + 28, top + 6),
        side.clone(),
    ))
    .map_err(&e)?;
    root.draw(&Text::new(
        h.scale_labels.0.clone(),
        (lx + 28, top + lh - 6),
        side,
    ))
    .map_err(&e)?;
    for (k, line) in g.legend.iter().enumerate() {
        root.draw(&Text::new(
            line.clone(),
            (lx - 8, top + lh + 20 + 15 * k as i32),
            font(12).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(&e)?;
    }
    Ok(())
}

/// Words in lines of at most `n` characters (a longer word keeps its own line); only plain
/// spaces break, so `20\u{a0}s` stays whole.
fn wrap(text: &str, n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(' ').filter(|w| !w.is_empty()) {
        match out.last_mut() {
            Some(l) if l.chars().count() + 1 + w.chars().count() <= n => {
                l.push(' ');
                l.push_str(w);
            }
            _ => out.push(w.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> Heatmap {
        Heatmap {
            title: "m: recovery".into(),
            x_name: "server.outages[0].to".into(),
            y_name: "workload.rate".into(),
            x_values: vec!["10s".into(), "20s".into()],
            y_values: vec!["500/s".into()],
            cells: vec![vec![(0.0, "0%".into()), (1.0, "100%".into())]],
            legend: "share of runs that stay down".into(),
            scale: (0.0, 1.0),
            scale_labels: ("0%".into(), "100%".into()),
        }
    }

    #[test]
    fn cells_are_coloured_by_value_and_labelled() {
        let svg = heatmap_chart(&map()).unwrap();
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        assert!(svg.contains(&hex(colour(0.0))), "{svg}");
        assert!(svg.contains(&hex(colour(1.0))));
        for t in ["100%", "500/s", "20s", "workload.rate", "stay down"] {
            assert!(svg.contains(t), "{t}");
        }
        assert_eq!(svg, heatmap_chart(&map()).unwrap());
    }

    #[test]
    fn the_scale_runs_light_to_dark() {
        let lum = |c: RGBColor| u32::from(c.0) + u32::from(c.1) + u32::from(c.2);
        assert!(lum(colour(0.0)) > lum(colour(0.5)) && lum(colour(0.5)) > lum(colour(1.0)));
        assert_eq!(colour(f64::NAN), RGBColor(0xd8, 0xd8, 0xd8));
        assert_eq!(
            wrap("share of runs that stay down", 18),
            ["share of runs that", "stay down"]
        );
    }
}
