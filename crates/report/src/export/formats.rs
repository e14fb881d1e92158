//! One [`Exporter`] per format, each a call of the function that renders it.

use crate::error::ReportError;
use crate::export::{Exporter, Results};

pub(super) struct Json;
pub(super) struct SeriesCsv;
pub(super) struct LoadSvg;
pub(super) struct OutcomesSvg;
pub(super) struct CdfSvg;
pub(super) struct TiersCsv;
pub(super) struct TiersSvg;
pub(super) struct ReplicasCsv;
pub(super) struct ReplicasSvg;
pub(super) struct Markdown;

impl Exporter for Json {
    fn kind(&self) -> &'static str {
        "json"
    }
    /// The replicated report when there are replications: a superset of the plain one's keys.
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        Ok(match r.replicated {
            Some(rep) => crate::json::to_json_replicated(rep),
            None => crate::json::to_json(r.report),
        })
    }
}

impl Exporter for SeriesCsv {
    fn kind(&self) -> &'static str {
        "csv"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::csv::series_csv(r.report)
    }
}

impl Exporter for LoadSvg {
    fn kind(&self) -> &'static str {
        "svg"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::svg::load_chart_with(r.report, &r.load)
    }
}

impl Exporter for OutcomesSvg {
    fn kind(&self) -> &'static str {
        "svg"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::svg::outcome_chart_opts(r.report, &r.charts)
    }
}

impl Exporter for CdfSvg {
    fn kind(&self) -> &'static str {
        "svg"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::svg::cdf_chart_opts(r.report, crate::svg::XScale::Auto, &r.charts)
    }
}

impl Exporter for TiersCsv {
    fn kind(&self) -> &'static str {
        "csv"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::csv::tiers_csv(r.report)
    }
}

impl Exporter for TiersSvg {
    fn kind(&self) -> &'static str {
        "svg"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::svg::tiers_chart_opts(r.report, &r.charts)
    }
}

impl Exporter for ReplicasCsv {
    fn kind(&self) -> &'static str {
        "csv"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::csv::replicas_csv(r.report)
    }
}

impl Exporter for ReplicasSvg {
    fn kind(&self) -> &'static str {
        "svg"
    }
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        crate::svg::replicas_chart_opts(r.report, &r.replicas)
    }
}

impl Exporter for Markdown {
    fn kind(&self) -> &'static str {
        "md"
    }
    /// With replications, the means and their 95% intervals.
    fn render(&self, r: &Results) -> Result<String, ReportError> {
        Ok(match r.replicated {
            Some(rep) => crate::markdown::ci_table_with(rep, r.metrics),
            None => crate::markdown::comparison_table_with(r.report, r.metrics),
        })
    }
}
