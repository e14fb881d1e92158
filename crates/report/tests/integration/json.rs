use retrystorm_core::summary::SCHEMA_VERSION;
use retrystorm_report::{ReportError, from_json, to_json};

use crate::fixture;

#[test]
fn round_trips() {
    let report = fixture::report();
    let json = to_json(&report);
    assert!(json.ends_with("}\n"));
    // Compared as booleans: a failure would otherwise print two whole reports.
    assert!(
        from_json(&json).unwrap() == report,
        "the report changed on the way back"
    );
    assert!(
        to_json(&from_json(&json).unwrap()) == json,
        "the JSON changed on the way back"
    );
}

#[test]
fn refuses_another_schema_version() {
    let mut value: serde_json::Value = serde_json::from_str(&to_json(&fixture::small())).unwrap();
    value["schema_version"] = (SCHEMA_VERSION + 1).into();
    // Even with a field the old layout would not accept.
    value["variants"] = "changed".into();
    let err = from_json(&value.to_string()).unwrap_err();
    assert!(matches!(err, ReportError::SchemaVersion { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "file written by schema version {}, this retrystorm reads version {SCHEMA_VERSION}",
            SCHEMA_VERSION + 1
        )
    );
}

#[test]
fn explains_other_failures() {
    let err = from_json("{ nope").unwrap_err();
    assert!(matches!(err, ReportError::Json(_)), "{err:?}");
    let err = from_json("[1, 2]").unwrap_err();
    assert!(err.to_string().contains("not a JSON object"), "{err}");
    let err = from_json("{\"model\": \"m\"}").unwrap_err();
    assert!(err.to_string().contains("no `schema_version`"), "{err}");

    let mut value: serde_json::Value = serde_json::from_str(&to_json(&fixture::small())).unwrap();
    value["variants"][0]["summary"]["intents"] = "many".into();
    let err = from_json(&value.to_string()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid report at `variants[0].summary.intents`"
    );
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(source.contains("invalid type"), "{source}");
}

#[test]
fn ignores_fields_it_does_not_know() {
    let mut value: serde_json::Value = serde_json::from_str(&to_json(&fixture::small())).unwrap();
    value["variants"][0]["summary"]["added_later"] = 3.into();
    value["generated_by"] = "a newer retrystorm".into();
    assert!(from_json(&value.to_string()).unwrap() == fixture::small());
}
