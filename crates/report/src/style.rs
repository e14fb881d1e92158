//! What every chart shares: colours, so that a variant looks the same in each, and the font,
//! DejaVu Sans embedded from the `dejavu` crate so that text needs no system fonts.

use crate::error::ReportError;
use plotters::style::{FontStyle, IntoFont, RGBColor, TextStyle};
use std::sync::OnceLock;

/// The family name the charts register DejaVu Sans under.
pub(crate) const FONT: &str = "sans-serif";

/// Registers DejaVu Sans (regular and bold) as [`FONT`] once per process.
pub(crate) fn ensure_fonts() -> Result<(), ReportError> {
    static OK: OnceLock<bool> = OnceLock::new();
    let ok = *OK.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if ok { Ok(()) } else { Err(ReportError::Font) }
}

pub(crate) fn font(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().color(&TEXT)
}

pub(crate) fn bold(size: u32) -> TextStyle<'static> {
    (FONT, size).into_font().style(FontStyle::Bold).color(&TEXT)
}

pub(crate) const TEXT: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
pub(crate) const GRID_BOLD: RGBColor = RGBColor(0xc8, 0xc8, 0xc8);

/// Variant colours: variant `i` of a report (or line `i` of a sweep) gets `VARIANTS[i % 8]` in
/// every chart. None of them is used for anything else, so a colour always names a variant.
pub(crate) const VARIANTS: [RGBColor; 8] = [
    RGBColor(0x4e, 0x79, 0xa7), // blue
    RGBColor(0xf2, 0x8e, 0x2b), // orange
    RGBColor(0x76, 0xb7, 0xb2), // teal
    RGBColor(0xb0, 0x7a, 0xa1), // purple
    RGBColor(0x9c, 0x75, 0x5f), // brown
    RGBColor(0xff, 0x9d, 0xa7), // pink
    RGBColor(0x2f, 0x4b, 0x7c), // navy
    RGBColor(0x8c, 0x8c, 0x1f), // olive
];

/// The colour of variant (or line) `i`.
pub(crate) fn variant(i: usize) -> RGBColor {
    VARIANTS[i % VARIANTS.len()]
}

/// Shade `k` of `n` (from 0) of a colour: from pale (mixed with 60% white) to the full colour,
/// for arrivals by attempt number (the first retry palest, the last attempts darkest).
pub(crate) fn shade(c: RGBColor, k: usize, n: usize) -> RGBColor {
    let white = if n <= 1 {
        0.0
    } else {
        0.6 * (1.0 - k as f64 / (n - 1) as f64)
    };
    let mix = |x: u8| (f64::from(x) + (255.0 - f64::from(x)) * white).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// Line `i` of `n` that may coincide with others: earlier lines are drawn wider, so a later line
/// on top of an earlier one leaves the earlier one's colour visible on both sides.
pub(crate) fn stroke(i: usize, n: usize) -> u32 {
    (2 + n.saturating_sub(i + 1)).min(6) as u32
}

/// [`stroke`] for dense data (the load chart's overlay): from 4 px down to 1 px.
pub(crate) fn thin_stroke(i: usize, n: usize) -> u32 {
    (1 + n.saturating_sub(i + 1)).min(4) as u32
}

/// Replica colours, in the replicas chart only (whose panels are each one variant's): replica
/// `k` of a tier gets `REPLICAS[k % 8]` (ColorBrewer Dark2). Its legend names them.
pub(crate) const REPLICAS: [RGBColor; 8] = [
    RGBColor(0x1b, 0x9e, 0x77), // green
    RGBColor(0xd9, 0x5f, 0x02), // orange
    RGBColor(0x75, 0x70, 0xb3), // violet
    RGBColor(0xe7, 0x29, 0x8a), // magenta
    RGBColor(0x66, 0xa6, 0x1e), // leaf
    RGBColor(0xe6, 0xab, 0x02), // mustard
    RGBColor(0xa6, 0x76, 0x1d), // ochre
    RGBColor(0x66, 0x66, 0x66), // grey
];

/// The colour of replica `k`.
pub(crate) fn replica(k: usize) -> RGBColor {
    REPLICAS[k % REPLICAS.len()]
}

// What the other colours mean; none is a variant colour.
/// First attempts (neutral grey: the load that would come anyway).
pub(crate) const FIRST: RGBColor = RGBColor(0x96, 0x96, 0x96);
/// Goodput (intents succeeded): near-black line.
pub(crate) const GOODPUT: RGBColor = RGBColor(0x1a, 0x1a, 0x1a);
/// Outcomes of an intent's effect.
pub(crate) const ONCE: RGBColor = RGBColor(0x59, 0xa1, 0x4f);
pub(crate) const DUPLICATED: RGBColor = RGBColor(0xd4, 0xa0, 0x17);
pub(crate) const LOST: RGBColor = RGBColor(0xe1, 0x57, 0x59);
pub(crate) const PHANTOM: RGBColor = RGBColor(0x6b, 0x1d, 0x1d);
/// Background of outage, capacity-drop and load-spike windows (labelled in the chart).
pub(crate) const WINDOW: RGBColor = RGBColor(0xee, 0xe4, 0xc8);
/// Recovery marks and reference lines.
pub(crate) const MARK: RGBColor = RGBColor(0x33, 0x33, 0x33);

/// The outline of marker `i` around (0, 0) in pixels: circle (an octagon), square, triangle,
/// diamond, plus, in turn, so that lines with the same points stay apart.
pub(crate) fn marker_shape(i: usize) -> Vec<(i32, i32)> {
    match i % 5 {
        0 => vec![
            (-2, -5),
            (2, -5),
            (5, -2),
            (5, 2),
            (2, 5),
            (-2, 5),
            (-5, 2),
            (-5, -2),
        ],
        1 => vec![(-4, -4), (4, -4), (4, 4), (-4, 4)],
        2 => vec![(0, -6), (5, 4), (-5, 4)],
        3 => vec![(0, -6), (6, 0), (0, 6), (-6, 0)],
        _ => vec![
            (-2, -6),
            (2, -6),
            (2, -2),
            (6, -2),
            (6, 2),
            (2, 2),
            (2, 6),
            (-2, 6),
            (-2, 2),
            (-6, 2),
            (-6, -2),
            (-2, -2),
        ],
    }
}

/// A triangle pointing down, its tip at (0, 6): an event (an ejection) marked from above.
pub(crate) fn down_triangle() -> Vec<(i32, i32)> {
    vec![(-6, -5), (6, -5), (0, 6)]
}
