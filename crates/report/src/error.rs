//! What can go wrong while reading or rendering a report.

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
