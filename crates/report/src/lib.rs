//! retrystorm's outputs, rendered from a [`RunReport`]: a plain-text comparison table, JSON, CSV
//! of the time series, and SVG charts.
//!
//! Every function here is pure: it takes the report and returns a `String`. Writing files is the
//! CLI's job. Every output is deterministic: the same report gives the same bytes.
//!
//! ```
//! use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
//!
//! let report = RunReport { schema_version: SCHEMA_VERSION, model: "m".into(), seed: 7, variants: vec![] };
//! let json = retrystorm_report::to_json(&report);
//! assert_eq!(retrystorm_report::from_json(&json).unwrap(), report);
//! ```

mod bars;
pub mod baseline;
mod ci;
mod csv;
mod error;
pub mod export;
pub mod fmt;
mod gfm;
mod heatmap;
pub mod html;
mod json;
mod lines;
pub mod markdown;
mod marks;
mod objective;
mod pareto;
mod replica_rows;
pub mod sarif;
mod style;
mod svg;
pub mod sweep;
mod table;
mod text;
mod variant_view;

// The crate's API, re-exported for users (the CLI, the Python package, users' code): inside this
// crate nothing names an item through these, only by the module that defines it
// (`crate::svg::load_chart`; tests/structure.rs checks it).
pub use crate::bars::{Bar, bar_chart};
pub use crate::ci::{
    ci_rows, ci_rows_with, ci_table, ci_table_labelled, ci_table_with, ci_view, text_table,
};
pub use crate::csv::{
    CSV_HEADER, REPLICAS_CSV_HEADER, TIERS_CSV_HEADER, replicas_csv, series_csv, tiers_csv,
    write_replicas_csv, write_series_csv, write_tiers_csv,
};
pub use crate::error::ReportError;
pub use crate::gfm::table as gfm_table;
pub use crate::heatmap::{Heatmap, heatmap_chart};
pub use crate::json::{from_json, to_json, to_json_replicated};
pub use crate::lines::{Band, Line, LineChart, LinePanel, line_chart, line_chart_with_bands};
pub use crate::marks::{Shade, model_windows, replica_windows};
pub use crate::objective::{CandidatePoint, objective_chart};
pub use crate::pareto::{ParetoPoint, pareto_chart};
pub use crate::svg::{
    BURST_RATIO, BURST_SHARE, ChartOptions, LoadOptions, MAX_COLUMNS, TIME_QUANTILE, XScale,
    cdf_chart, cdf_chart_opts, cdf_chart_with, load_chart, load_chart_with, outcome_chart,
    outcome_chart_opts, replicas_chart, replicas_chart_opts, tiers_chart, tiers_chart_opts,
};
pub use crate::table::{
    Labels, comparison_table, comparison_table_labelled, comparison_table_with,
};
pub use crate::variant_view::{run_view, variant_view};
pub use retrystorm_core::summary::RunReport;
