//! `retrystorm schema`: a JSON Schema (draft 2020-12) of the model file, for editors that check
//! and complete TOML against one (taplo, Even Better TOML; `docs/cli.md` says how).
//!
//! The model's own sections come from the `schemars` derives in the core (serde's renames,
//! defaults and `deny_unknown_fields` become `additionalProperties: false`); the file adds two
//! arrays the loader handles itself: `[[variant]]` (a name plus any model keys but `seed`) and
//! `[[expect]]` (the keys `Expectation::from_table` allows).

use crate::args::SchemaArgs;
use crate::error::CliError;
use crate::output;
use retrystorm_core::model::Model;
use serde_json::{Value, json};

/// Names serde also accepts (`#[serde(alias)]`), which schemars leaves out: `(type, alias,
/// name)`. A test checks that each one deserializes.
pub const ALIASES: [(&str, &str, &str); 6] = [
    ("Class", "unavailable", "503"),
    ("Class", "throttled", "429"),
    ("Class", "server-error", "5xx"),
    ("Class", "conflict", "409"),
    ("Class", "client-error", "4xx"),
    ("RetryAfterPolicy", "honor", "honour"),
];

/// The schema as a JSON value.
pub fn model_file_schema() -> Value {
    let mut s = serde_json::to_value(schemars::schema_for!(Model)).expect("a schema is JSON");
    for (ty, alias, name) in ALIASES {
        if let Some(list) = s["$defs"][ty]["oneOf"].as_array_mut() {
            list.push(json!({ "const": alias, "type": "string", "description": format!("Same as {name:?}.") }));
        }
    }
    // `retry.mode` is expanded by the loader before serde sees the table (core::preset).
    if let Some(p) = s["$defs"]["Retry"]["properties"].as_object_mut() {
        p.insert(
            "mode".into(),
            json!({
                "type": "string",
                "enum": retrystorm_core::preset::MODES,
                "description": "A real client's retry mode, expanded into [retry] and [budget] (docs/policies.md); keys set beside it win."
            }),
        );
        p.insert(
            "from".into(),
            json!({
                "type": "string",
                "pattern": "^(envoy|grpc|aws):.+",
                "description": "A real configuration file, \"SOURCE:FILE\" (envoy:route.yaml, grpc:service-config.json[:SERVICE/METHOD], aws:config[:PROFILE]), read relative to the model file and imported into [retry], [budget] and [hedge] (docs/import.md); keys set beside it win."
            }),
        );
    }
    s["title"] = json!("retrystorm model file");
    s["description"] = json!(
        "A retrystorm model (docs/model.md): the base scenario, optional [[variant]] overrides and [[expect]] assertions."
    );
    // A variant is any part of a model (every model key has a default), named, without `seed`.
    let mut variant = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["name"],
        "properties": s["properties"].clone(),
        "description": "A variant: a name and the model keys it changes (every variant runs with the run's seed)."
    });
    if let Some(p) = variant["properties"].as_object_mut() {
        p.remove("seed");
        p.insert("name".into(), json!({ "type": "string", "minLength": 1 }));
    }
    let expect = json!({
        "type": "object",
        "additionalProperties": false,
        "description": "An expectation about a summary metric: `metric`/`op`/`value`, or `assert = \"METRIC OP VALUE\"`.",
        "properties": {
            "metric": { "type": "string", "description": "A summary metric, dotted for nested: completion_ms.p99." },
            "op": { "type": "string", "enum": ["<", "<=", "==", ">=", ">"] },
            "value": {
                "description": "A number, or a duration for *_ms metrics (\"200ms\").",
                "oneOf": [{ "type": "number" }, { "type": "string" }]
            },
            "assert": { "type": "string", "description": "The compact form, e.g. \"peak_retries < 300\"." },
            "variant": { "type": "string", "description": "The variant it applies to (default: every one)." },
            "over": { "type": "string", "enum": ["all", "mean", "share"] }
        },
        "oneOf": [
            { "required": ["assert"], "not": { "anyOf": [{ "required": ["metric"] }, { "required": ["op"] }, { "required": ["value"] }] } },
            { "required": ["metric", "op", "value"], "not": { "required": ["assert"] } }
        ]
    });
    let props = s["properties"]
        .as_object_mut()
        .expect("a model is an object");
    props.insert(
        "variant".into(),
        json!({ "type": "array", "minItems": 1, "items": variant }),
    );
    props.insert("expect".into(), json!({ "type": "array", "items": expect }));
    s
}

/// Prints the schema, or writes it to `--out`.
pub fn schema(a: SchemaArgs) -> Result<(), CliError> {
    let mut text = serde_json::to_string_pretty(&model_file_schema()).expect("JSON");
    text.push('\n');
    match a.out {
        Some(path) if path.as_os_str() != "-" => {
            output::check(&[output::Out::new("--out", &path)], &[])?;
            output::write(output::Out::new("--out", &path), &text)
        }
        _ => output::print(&text),
    }
}

#[cfg(test)]
mod tests {
    use super::ALIASES;
    use retrystorm_core::model::RetryAfterPolicy;
    use retrystorm_core::policy::Class;

    #[test]
    fn aliases_are_accepted_by_serde() {
        for (ty, alias, name) in ALIASES {
            let (a, n) = (serde_json::json!(alias), serde_json::json!(name));
            match ty {
                "Class" => assert_eq!(
                    serde_json::from_value::<Class>(a).unwrap(),
                    serde_json::from_value::<Class>(n).unwrap()
                ),
                "RetryAfterPolicy" => assert_eq!(
                    serde_json::from_value::<RetryAfterPolicy>(a).unwrap(),
                    serde_json::from_value::<RetryAfterPolicy>(n).unwrap()
                ),
                _ => panic!("no check for {ty}"),
            }
        }
    }
}
