//! The Envoy document read: YAML (or JSON, a subset of YAML) as one `serde_json::Value`.

use super::super::refuse;
use crate::error::CliError;
use serde_json::{Map, Value};

/// A YAML document as JSON: mappings with string keys, scalars as YAML 1.2's core schema reads
/// them. Tags, aliases and non-string keys are refused.
fn to_json(file: &str, at: &str, y: &saphyr::Yaml<'_>) -> Result<Value, CliError> {
    use saphyr::{Scalar, Yaml};
    Ok(match y {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
        Yaml::Value(Scalar::FloatingPoint(f)) => serde_json::Number::from_f64(f.into_inner())
            .map(Value::Number)
            .ok_or_else(|| refuse(file, at, "a number that is not finite"))?,
        Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
        Yaml::Sequence(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| to_json(file, &format!("{at}[{i}]"), v))
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let Yaml::Value(Scalar::String(k)) = k else {
                    return Err(refuse(file, at, "a mapping key that is not a string"));
                };
                let here = if at.is_empty() {
                    k.to_string()
                } else {
                    format!("{at}.{k}")
                };
                out.insert(k.to_string(), to_json(file, &here, v)?);
            }
            Value::Object(out)
        }
        Yaml::Tagged(tag, _) => {
            return Err(refuse(
                file,
                at,
                format!("YAML tag {tag} is not supported; write plain values"),
            ));
        }
        Yaml::Alias(_) => {
            return Err(refuse(
                file,
                at,
                "YAML aliases (*name) are not supported; write the value out",
            ));
        }
        Yaml::Representation(..) | Yaml::BadValue => {
            return Err(refuse(file, at, "a value YAML cannot read"));
        }
    })
}

/// Parses `text` (YAML or JSON) into one JSON value.
pub fn parse(file: &str, text: &str) -> Result<Value, CliError> {
    use saphyr::LoadableYamlNode;
    // The loader expands aliases by copying (a few lines can become gigabytes), so they are
    // refused from the parser's events before anything is built.
    for event in saphyr_parser::Parser::new_from_str(text) {
        match event {
            Ok((saphyr_parser::Event::Alias(_), span)) => {
                return Err(refuse(
                    file,
                    "",
                    format!(
                        "line {}: YAML aliases (*name) are not supported; write the value out",
                        span.start.line()
                    ),
                ));
            }
            Ok(_) => {}
            Err(_) => break, // the loader reports it with its position
        }
    }
    let docs = saphyr::Yaml::load_from_str(text)
        .map_err(|e| refuse(file, "", format!("not valid YAML or JSON: {e}")))?;
    match docs.as_slice() {
        [one] => to_json(file, "", one),
        [] => Err(refuse(file, "", "the file is empty")),
        _ => Err(refuse(
            file,
            "",
            format!(
                "{} YAML documents; give one route or retry_policy",
                docs.len()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json_read_alike() {
        let y = parse("f", "a: {b: [1, 2.5, \"0.1s\", true, null]}\n").unwrap();
        let j = parse("f", r#"{"a": {"b": [1, 2.5, "0.1s", true, null]}}"#).unwrap();
        assert_eq!(y, j);
        assert!(
            parse("f", "a: &x 1\nb: *x\n")
                .unwrap_err()
                .to_string()
                .contains("alias")
        );
        assert!(
            parse("f", "a: 1\n---\nb: 2\n")
                .unwrap_err()
                .to_string()
                .contains("2 YAML documents")
        );
        assert!(parse("f", "a: [\n").is_err());
    }
}
