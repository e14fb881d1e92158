//! A run's report exported to files, in hyperfine's exporter shape: one [`Exporter`] per
//! format (`formats.rs`), and an [`ExportManager`] that holds the formats asked for, each with
//! where it goes, and renders them all. The command line fills the manager from its flags and
//! writes what it renders; nothing here touches a file.

mod formats;

use crate::error::ReportError;
use crate::svg::{ChartOptions, LoadOptions};
use retrystorm_core::summary::{ReplicatedReport, RunReport};

/// A file a report can be exported as: one per output flag of `run` and `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `--json`: the report (with `--seeds N`, the replicated report).
    Json,
    /// `--csv`: the per-bucket time series.
    Csv,
    /// `--svg`: the load chart.
    LoadSvg,
    /// `--outcomes-svg`: the outcomes over time.
    OutcomesSvg,
    /// `--cdf-svg`: the completion-time CDF.
    CdfSvg,
    /// `--tiers-csv`: every tier's series.
    TiersCsv,
    /// `--tiers-svg`: every tier's chart.
    TiersSvg,
    /// `--replicas-csv`: each replica's series.
    ReplicasCsv,
    /// `--replicas-svg`: each replica's chart.
    ReplicasSvg,
    /// `--md`: the table as GitHub-flavoured Markdown.
    Markdown,
}

impl Format {
    fn exporter(self) -> &'static dyn Exporter {
        use formats::*;
        match self {
            Format::Json => &Json,
            Format::Csv => &SeriesCsv,
            Format::LoadSvg => &LoadSvg,
            Format::OutcomesSvg => &OutcomesSvg,
            Format::CdfSvg => &CdfSvg,
            Format::TiersCsv => &TiersCsv,
            Format::TiersSvg => &TiersSvg,
            Format::ReplicasCsv => &ReplicasCsv,
            Format::ReplicasSvg => &ReplicasSvg,
            Format::Markdown => &Markdown,
        }
    }

    /// Whether the format is text a reader reads in place of the table (written to stdout, it
    /// replaces the table there); a chart is not.
    pub fn is_text(self) -> bool {
        self.exporter().kind() != "svg"
    }
}

/// What every exporter reads: the report, its replications (with `--seeds N`), the extra
/// `--metric` columns and the charts' options.
pub struct Results<'a> {
    pub report: &'a RunReport,
    /// The replications the report's numbers are the means of, if there are several.
    pub replicated: Option<&'a ReplicatedReport>,
    pub metrics: &'a [String],
    pub load: LoadOptions,
    pub charts: ChartOptions,
    /// The replicas chart's options (its windows include the server's failure windows).
    pub replicas: ChartOptions,
}

/// One format's rendering of [`Results`].
trait Exporter: Sync {
    /// What kind of output it is, as its errors name it: `json`, `csv`, `svg`, `md`.
    fn kind(&self) -> &'static str;
    fn render(&self, r: &Results) -> Result<String, ReportError>;
}

/// A format that could not be rendered: its kind (`svg`) and why.
#[derive(Debug, thiserror::Error)]
#[error("{kind}: {source}")]
pub struct ExportError {
    pub kind: &'static str,
    #[source]
    pub source: ReportError,
}

/// The formats asked for, each with its destination `D` (the command line's output), in the
/// order they were added.
pub struct ExportManager<D> {
    exports: Vec<(Format, D)>,
}

impl<D> Default for ExportManager<D> {
    fn default() -> Self {
        ExportManager {
            exports: Vec::new(),
        }
    }
}

impl<D> ExportManager<D> {
    pub fn add(&mut self, format: Format, dest: D) {
        self.exports.push((format, dest));
    }

    /// Every format rendered, with its destination, in order: all or none, so a failing chart
    /// leaves no output half-written.
    pub fn render(self, r: &Results) -> Result<Vec<(Format, D, String)>, ExportError> {
        self.exports
            .into_iter()
            .map(|(format, dest)| {
                let e = format.exporter();
                e.render(r)
                    .map(|text| (format, dest, text))
                    .map_err(|source| ExportError {
                        kind: e.kind(),
                        source,
                    })
            })
            .collect()
    }
}
