//! Renders every output of the report crate for a hand-built three-variant retry storm, so the
//! charts can be looked at without running a simulation:
//!
//! ```text
//! cargo run -p retrystorm-report --example sample_charts -- /tmp/charts
//! ```
//!
//! Writes `load.svg`, `outcome.svg`, `cdf.svg`, `report.json` and `series.csv` into the directory
//! given (default: the system temporary directory), prints the table, and checks that the JSON
//! reads back to the same report.

#[path = "../tests/integration/fixture.rs"]
mod fixture;

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&dir)?;
    let report = fixture::report();

    print!("{}", retrystorm_report::comparison_table(&report));
    let json = retrystorm_report::to_json(&report);
    let outputs = [
        ("load.svg", retrystorm_report::load_chart(&report)?),
        ("outcome.svg", retrystorm_report::outcome_chart(&report)?),
        ("cdf.svg", retrystorm_report::cdf_chart(&report)?),
        ("report.json", json.clone()),
        ("series.csv", retrystorm_report::series_csv(&report)?),
    ];
    for (name, text) in &outputs {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        println!("wrote {} ({} bytes)", path.display(), text.len());
    }

    assert!(retrystorm_report::from_json(&json)? == report);
    Ok(())
}
