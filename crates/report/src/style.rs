//! What every chart shares: colours, so that a variant looks the same in each, and the font,
//! DejaVu Sans embedded from the `dejavu` crate so that text needs no system fonts.

use crate::ReportError;
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
/// Tableau 10: line `i` of every chart gets colour `i`.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x79, 0x70, 0x6e),
];
