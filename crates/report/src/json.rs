//! The JSON contract (`--json`): pretty, deterministic, and versioned.

use retrystorm_core::summary::{ReplicatedReport, RunReport, SCHEMA_VERSION};

use crate::error::ReportError;

/// The report as pretty-printed JSON with a trailing newline. Fields come out in declaration
/// order, so the same report always gives the same bytes.
///
/// Non-finite floats (NaN, infinity) come out as `null`, which [`from_json`] then refuses: the
/// core is expected to report finite numbers.
pub fn to_json(report: &RunReport) -> String {
    let mut s = serde_json::to_string_pretty(report)
        .expect("a RunReport has only string map keys, so it always serializes");
    s.push('\n');
    s
}

/// The replicated report (`--seeds N`) as pretty JSON: a superset of the plain report's keys.
pub fn to_json_replicated(rep: &ReplicatedReport) -> String {
    let mut s = serde_json::to_string_pretty(rep).expect("a report always serializes");
    s.push('\n');
    s
}

/// Reads a report written by [`to_json`].
///
/// The `schema_version` is checked before anything else, so a file from another version is
/// refused with that reason rather than with whichever field changed. Unknown fields are ignored.
pub fn from_json(text: &str) -> Result<RunReport, ReportError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(ReportError::Json)?;
    let Some(object) = value.as_object() else {
        return Err(ReportError::NotAReport(
            "the top level is not a JSON object".to_string(),
        ));
    };
    match object.get("schema_version") {
        None => {
            return Err(ReportError::NotAReport(
                "it has no `schema_version` field".to_string(),
            ));
        }
        Some(v) => match v.as_u64() {
            Some(found) if found == u64::from(SCHEMA_VERSION) => {}
            Some(found) => {
                return Err(ReportError::SchemaVersion {
                    found,
                    expected: SCHEMA_VERSION,
                });
            }
            None => {
                return Err(ReportError::NotAReport(format!(
                    "`schema_version` must be a whole number, got {v}"
                )));
            }
        },
    }
    serde_path_to_error::deserialize(value).map_err(|e| ReportError::Field {
        path: e.path().to_string(),
        source: e.into_inner(),
    })
}
