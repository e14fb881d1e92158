//! What the seeded chart examples share: the command line `[SEEDS] [SVG]` and the shipped model
//! they run.

/// An example's run: how many seeds, where the chart goes, and the shipped model's text.
pub struct Run {
    pub seeds: u32,
    pub svg: String,
    pub model: String,
}

/// Reads `[SEEDS] [SVG]` (100 seeds and `docs/SVG_NAME` by default) and the text of
/// `models/MODEL_FILE`.
pub fn from_args(model_file: &str, svg_name: &str) -> Result<Run, Box<dyn std::error::Error>> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut args = std::env::args().skip(1);
    let seeds: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100);
    let svg = args
        .next()
        .unwrap_or_else(|| format!("{root}/docs/{svg_name}"));
    let model = std::fs::read_to_string(format!("{root}/models/{model_file}"))?;
    Ok(Run { seeds, svg, model })
}
