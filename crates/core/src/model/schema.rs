//! JSON Schemas for the model file's scalar forms that have their own serde code (durations,
//! rates, limits, distributions, `fail`, `Retry-After`): the derives on the model structs use
//! these, so `retrystorm schema` describes exactly what [`crate::model::load`] accepts.
//!
//! The patterns follow the parsers: [`Duration::parse`] (a number with one of the units `ns`,
//! `us`, `µs`, `ms`, `s`, `m`, `h`, or a bare `0`), [`Rate::parse`] (`N/ms`, `/s`, `/m`, `/min`,
//! `/h`) and [`Dist::parse`]. They check the form; ranges (`uniform` with MIN <= MAX, a
//! probability in [0, 1]) are left to the loader's errors, which name the line.

use crate::base::dist::Dist;
use crate::base::time::{Duration, Rate};
use crate::model::{FailMode, Limit};
use crate::policy::ratelimit::RetryAfter;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use std::borrow::Cow;

/// A number (digits, `.`, `_`, an exponent) then a unit: what [`Duration::parse`] reads.
const DURATION: &str = r"[0-9_]*\.?[0-9_]+(e\+?[0-9]+)?\s*(ns|us|µs|ms|s|m|h)";

/// `^DURATION$` or the bare string `"0"`.
pub fn duration_pattern() -> String {
    format!(r"^\s*(0|{DURATION})\s*$")
}

impl JsonSchema for Duration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration with a unit: \"250us\", \"10ms\", \"1.5s\", \"2m\", \"1h\" (ns, us, µs, ms, s, m, h); 0 needs none.",
            "oneOf": [
                { "type": "string", "pattern": duration_pattern() },
                { "type": "integer", "const": 0 }
            ]
        })
    }
}

impl JsonSchema for Rate {
    fn schema_name() -> Cow<'static, str> {
        "Rate".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A rate: \"80/s\", \"5/ms\", \"120/m\", \"3600/h\".",
            "type": "string",
            "pattern": r"^\s*([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*/\s*(ms|s|m|min|h)\s*$"
        })
    }
}

impl JsonSchema for Limit {
    fn schema_name() -> Cow<'static, str> {
        "Limit".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A non-negative integer or \"unlimited\".",
            "oneOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string", "enum": ["unlimited", "unbounded"] }
            ]
        })
    }
}

impl JsonSchema for FailMode {
    fn schema_name() -> Cow<'static, str> {
        "FailMode".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "\"never\", \"always\" or the probability that a served attempt fails.",
            "oneOf": [
                { "type": "string", "enum": ["never", "always"] },
                { "type": "number", "minimum": 0, "maximum": 1 }
            ]
        })
    }
}

impl JsonSchema for RetryAfter {
    fn schema_name() -> Cow<'static, str> {
        "RetryAfter".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The Retry-After sent: \"none\", \"derived\" (from the server's state) or a duration.",
            "oneOf": [
                { "type": "string", "enum": ["none", "derived"] },
                { "type": "string", "pattern": duration_pattern() }
            ]
        })
    }
}

impl JsonSchema for Dist {
    fn schema_name() -> Cow<'static, str> {
        "Dist".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let d = g.subschema_for::<Duration>();
        let call = format!(
            r"^\s*(constant|const|uniform|exp|exponential|lognormal|normal)\s*\(\s*{DURATION}\s*(,\s*[^,()]+\s*)?\)\s*$"
        );
        json_schema!({
            "description": "A distribution: a duration (constant), \"uniform(MIN, MAX)\", \"exp(MEAN)\", \"lognormal(MEAN, SIGMA)\", \"normal(MEAN, SD)\", or a table { dist = ..., ... }.",
            "oneOf": [
                { "type": "string", "pattern": duration_pattern() },
                { "type": "string", "pattern": call },
                { "type": "integer", "const": 0 },
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["dist"],
                    "properties": {
                        "dist": { "type": "string", "enum": ["constant", "uniform", "exp", "exponential", "lognormal", "normal"] },
                        "value": d, "min": d, "max": d, "mean": d, "sd": d,
                        "sigma": { "type": "number", "minimum": 0 }
                    }
                }
            ]
        })
    }
}
