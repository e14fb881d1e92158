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
mod path_rows;
mod replica_rows;
pub mod sarif;
mod style;
mod svg;
pub mod sweep;
mod table;
mod text;

pub use crate::ci::{
    ci_rows, ci_rows_with, ci_table, ci_table_labelled, ci_table_with, ci_view, text_table,
};
pub use crate::csv::{
    CSV_HEADER, REPLICAS_CSV_HEADER, TIERS_CSV_HEADER, replicas_csv, series_csv, tiers_csv,
    write_replicas_csv, write_series_csv, write_tiers_csv,
};
pub use crate::gfm::table as gfm_table;
pub use crate::json::{from_json, to_json};
pub use crate::lines::{Band, Line, LineChart, LinePanel, line_chart, line_chart_with_bands};
pub use crate::marks::{Shade, model_windows, replica_windows};
pub use crate::svg::{
    BURST_RATIO, BURST_SHARE, ChartOptions, LoadOptions, MAX_COLUMNS, TIME_QUANTILE, XScale,
    cdf_chart, cdf_chart_opts, cdf_chart_with, load_chart, load_chart_with, outcome_chart,
    outcome_chart_opts, replicas_chart, replicas_chart_opts, tiers_chart, tiers_chart_opts,
};
pub use crate::table::{
    Labels, comparison_table, comparison_table_labelled, comparison_table_with, run_view,
    variant_view,
};

pub use retrystorm_core::summary::RunReport;

/// What can go wrong while reading or rendering a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The text is not JSON at all.
    #[error("not valid JSON")]
    Json(#[source] serde_json::Error),
    /// JSON, but not shaped like a report (no `schema_version`, not an object, ...).
    #[error("not a retrystorm report: {0}")]
    NotAReport(String),
    /// A report from another layout version.
    #[error("file written by schema version {found}, this retrystorm reads version {expected}")]
    SchemaVersion { found: u64, expected: u32 },
    /// The right version, but a field does not fit.
    #[error("invalid report at `{path}`")]
    Field {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("writing CSV")]
    Csv(#[source] ::csv::Error),
    /// plotters failed; its error types are generic over the backend, so only the text is kept.
    #[error("drawing the {chart} chart: {message}")]
    Chart {
        chart: &'static str,
        message: String,
    },
    #[error("the bundled DejaVu font could not be loaded")]
    Font,
}
pub use crate::bars::{Bar, bar_chart};
pub use crate::heatmap::{Heatmap, heatmap_chart};
pub use crate::objective::{CandidatePoint, objective_chart};
pub use crate::pareto::{ParetoPoint, pareto_chart};
