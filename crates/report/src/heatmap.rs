//! The heat map of `retrystorm map`: one cell per pair of values of two `--vary` axes, coloured
//! by a value on a light-to-dark scale (the share of runs that stay down: pale green when every
//! run recovers, dark red when none does) and labelled with a short text.

use crate::ReportError;
use crate::style::{GRID_BOLD, TEXT, bold, ensure_fonts, font};
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

fn err<E: std::fmt::Display>(e: E) -> ReportError {
    ReportError::Chart {
        chart: "heatmap",
        message: e.to_string(),
    }
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
    ensure_fonts()?;
    let (nx, ny) = (h.x_values.len().max(1), h.y_values.len().max(1));
    // Cells of 56-110 px, so that a label fits; the chart grows with the grid.
    let cw = (760 / nx).clamp(56, 110) as i32;
    let ch = (480 / ny).clamp(30, 64) as i32;
    let longest = h
        .y_values
        .iter()
        .map(|v| v.chars().count())
        .max()
        .unwrap_or(1) as i32;
    let left = 40 + 8 * longest.min(24);
    let (top, legend_w) = (84, 170);
    let legend = wrap(&h.legend, 20);
    let lh = (ch * ny as i32).clamp(120, 320);
    let title_w = 10 * h.title.chars().count() as i32 + 40;
    let w = (left + cw * nx as i32 + legend_w).max(title_w);
    let hgt = (top + ch * ny as i32 + 70).max(top + lh + 30 + 15 * legend.len() as i32);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w as u32, hgt as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        root.draw(&Text::new(
            h.title.clone(),
            (w / 2, 24),
            bold(18).pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(err)?;
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
        // Row 0 (the first y value) at the bottom, as on a plot.
        for (j, row) in h.cells.iter().enumerate() {
            let y0 = top + ch * (ny as i32 - 1 - j as i32);
            for (i, (v, label)) in row.iter().enumerate() {
                let x0 = left + cw * i as i32;
                let t = norm(*v);
                root.draw(&Rectangle::new(
                    [(x0, y0), (x0 + cw, y0 + ch)],
                    colour(t).filled(),
                ))
                .map_err(err)?;
                root.draw(&Rectangle::new(
                    [(x0, y0), (x0 + cw, y0 + ch)],
                    WHITE.stroke_width(2),
                ))
                .map_err(err)?;
                let ink = if t > 0.65 { WHITE } else { TEXT };
                root.draw(&Text::new(
                    label.clone(),
                    (x0 + cw / 2, y0 + ch / 2),
                    centred(13).color(&ink),
                ))
                .map_err(err)?;
            }
        }
        let bottom = top + ch * ny as i32;
        for (i, v) in h.x_values.iter().enumerate() {
            root.draw(&Text::new(
                v.clone(),
                (left + cw * i as i32 + cw / 2, bottom + 14),
                centred(13),
            ))
            .map_err(err)?;
        }
        for (j, v) in h.y_values.iter().enumerate() {
            root.draw(&Text::new(
                v.clone(),
                (left - 8, top + ch * (ny as i32 - 1 - j as i32) + ch / 2),
                font(13).pos(Pos::new(HPos::Right, VPos::Center)),
            ))
            .map_err(err)?;
        }
        root.draw(&Text::new(
            h.x_name.clone(),
            (left + cw * nx as i32 / 2, bottom + 44),
            bold(14).pos(Pos::new(HPos::Center, VPos::Center)),
        ))
        .map_err(err)?;
        // The y axis is named above its values, so that a long key is never cut.
        root.draw(&Text::new(
            h.y_name.clone(),
            (12, top - 22),
            bold(14).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
        // The scale: a vertical bar, light at the bottom.
        let lx = left + cw * nx as i32 + 36;
        let steps = 40;
        for s in 0..steps {
            let y1 = top + lh - lh * s / steps;
            let y0 = top + lh - lh * (s + 1) / steps;
            root.draw(&Rectangle::new(
                [(lx, y0), (lx + 22, y1)],
                colour((f64::from(s) + 0.5) / f64::from(steps)).filled(),
            ))
            .map_err(err)?;
        }
        root.draw(&Rectangle::new(
            [(lx, top), (lx + 22, top + lh)],
            GRID_BOLD.stroke_width(1),
        ))
        .map_err(err)?;
        let side = font(12).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(
            h.scale_labels.1.clone(),
            (lx + 28, top + 6),
            side.clone(),
        ))
        .map_err(err)?;
        root.draw(&Text::new(
            h.scale_labels.0.clone(),
            (lx + 28, top + lh - 6),
            side,
        ))
        .map_err(err)?;
        for (k, line) in legend.iter().enumerate() {
            root.draw(&Text::new(
                line.clone(),
                (lx - 8, top + lh + 20 + 15 * k as i32),
                font(12).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(buf)
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
