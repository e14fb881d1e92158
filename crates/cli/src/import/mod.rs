//! The importers behind `retrystorm import SOURCE FILE` and `retry.from`: a real client's retry configuration as the equivalent model
//! sections, each key commented with the field it came from (`docs/import.md`).
//!
//! One module per source. An importer refuses (exit 2) any field it cannot map, naming the field
//! and what is supported, so nothing is silently dropped. The result is loaded with the core's
//! loader before it is printed: what `import` prints is a model a run accepts.

mod aws;
mod envoy;
mod grpc;

use crate::{error::CliError, output};
use retrystorm_core::time::Duration;

/// The sources `import` reads.
pub const SOURCES: [&str; 3] = ["grpc", "aws", "envoy"];

/// The largest configuration file read (real ones are a few kB).
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// What the imported sections become.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A model of their own (`retrystorm import`): it must load by itself.
    Model,
    /// Keys under a model's `[retry]` (or a tier's), `retry.from`: the model around them decides
    /// what the rest is.
    RetryFrom,
}

/// Model sections in the order they are written, each an ordered list of keys.
#[derive(Debug, Default)]
pub struct Emit {
    header: Vec<String>,
    sections: Vec<(String, Vec<Line>)>,
    warnings: Vec<String>,
}

#[derive(Debug)]
struct Line {
    key: String,
    value: String,
    comment: String,
}

impl Emit {
    /// A comment line above the sections.
    pub fn note(&mut self, text: impl Into<String>) {
        self.header.push(text.into());
    }

    /// A warning: printed on stderr by `import`, and a comment line above the sections.
    pub fn warn(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.header.push(format!("Warning: {text}"));
        self.warnings.push(text);
    }

    /// The warnings, in the order given.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// `key = value` in `[section]` (a TOML value, already formatted), commented `from`.
    pub fn set(&mut self, section: &str, key: &str, value: String, from: impl Into<String>) {
        let line = Line {
            key: key.into(),
            value,
            comment: from.into(),
        };
        match self.sections.iter_mut().find(|(s, _)| s == section) {
            Some((_, lines)) => lines.push(line),
            None => self.sections.push((section.into(), vec![line])),
        }
    }

    /// The TOML text: header comments, then each section with aligned comments.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for h in &self.header {
            out.push_str(&format!("# {h}\n"));
        }
        for (name, lines) in &self.sections {
            out.push_str(&format!("\n[{name}]\n"));
            let width = lines
                .iter()
                .map(|l| l.key.len() + l.value.len() + 3)
                .max()
                .unwrap_or(0);
            for l in lines {
                let kv = format!("{} = {}", l.key, l.value);
                out.push_str(&format!("{kv:<width$}  # {}\n", l.comment));
            }
        }
        out
    }
}

/// A TOML string literal.
pub fn quoted(s: &str) -> String {
    toml_string(s)
}

fn toml_string(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A duration as the model writes it, in the largest unit that is exact: `"100ms"`, `"2s"`.
pub fn duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let text = if ns == 0 {
        "0".to_string()
    } else if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    };
    toml_string(&text)
}

/// A number as TOML writes it (`2.0`, `1.5`).
pub fn float(x: f64) -> String {
    let s = format!("{x}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// Decimal seconds (`"0.1"`, `"2"`, `"1.000000001"`) to a duration, exactly, in integers.
pub fn decimal_seconds(text: &str) -> Option<Duration> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty() && frac.is_empty()
        || frac.len() > 9
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let secs: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let frac_ns: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    let ns = secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)?;
    Some(Duration::from_nanos(ns))
}

/// An importer's refusal: `FILE: FIELD: MESSAGE`, exit 2.
pub fn refuse(file: &str, field: &str, message: impl std::fmt::Display) -> CliError {
    if field.is_empty() {
        CliError::Input(format!("{file}: {message}"))
    } else {
        CliError::Input(format!("{file}: {field}: {message}"))
    }
}

/// The sections `SOURCE`'s file `path` stands for (`pick` = `--method` / `--profile`), for
/// `target`.
pub fn sections(
    source: &str,
    origin: &str,
    text: &str,
    pick: Option<&str>,
    target: Target,
) -> Result<Emit, CliError> {
    match source {
        "grpc" => grpc::import(origin, text, pick),
        "aws" => aws::import(origin, text, pick),
        "envoy" => match pick {
            None => envoy::import(origin, text, target),
            Some(_) => Err(CliError::Input(
                "import envoy: --method and --profile are for grpc and aws".into(),
            )),
        },
        _ => Err(CliError::Input(format!(
            "import {source}: unknown source; supported: {}",
            SOURCES.join(", ")
        ))),
    }
}

/// Resolves a model file's `retry.from = "SOURCE:FILE[:PICK]"` (`PICK` = the gRPC method or the
/// AWS profile): reads FILE relative to the model file `model` and returns the imported
/// sections as TOML, or `FILE: FIELD: why` for the loader to put after the model's own line.
pub fn resolve_from(model: &str, reference: &str) -> Result<String, String> {
    let usage = "expected \"SOURCE:FILE\" (envoy:route.yaml, grpc:service-config.json[:SERVICE/METHOD], aws:config[:PROFILE])";
    let (source, rest) = reference
        .split_once(':')
        .ok_or_else(|| format!("{reference:?}: {usage}"))?;
    if !SOURCES.contains(&source) {
        return Err(format!(
            "{reference:?}: unknown source {source:?}; supported: {}",
            SOURCES.join(", ")
        ));
    }
    let (file, pick) = match (source, rest.split_once(':')) {
        ("grpc" | "aws", Some((f, p))) if !p.is_empty() => (f, Some(p)),
        _ => (rest, None),
    };
    if file.is_empty() {
        return Err(format!("{reference:?}: {usage}"));
    }
    let dir = std::path::Path::new(model)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    let path = dir.join(file);
    let origin = path.display().to_string();
    let text = output::read_text(&path, "the configuration file", MAX_CONFIG_BYTES)
        .map_err(|e| e.to_string())?;
    let emit =
        sections(source, &origin, &text, pick, Target::RetryFrom).map_err(|e| e.to_string())?;
    Ok(emit.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_seconds_are_exact() {
        assert_eq!(decimal_seconds("0.1"), Some(Duration::from_millis(100)));
        assert_eq!(decimal_seconds("2"), Some(Duration::from_secs(2)));
        assert_eq!(decimal_seconds(".5"), Some(Duration::from_millis(500)));
        assert_eq!(
            decimal_seconds("1.000000001"),
            Some(Duration::from_nanos(1_000_000_001))
        );
        assert_eq!(decimal_seconds("1.0000000001"), None);
        assert_eq!(decimal_seconds("-1"), None);
        assert_eq!(decimal_seconds(""), None);
        assert_eq!(decimal_seconds("1e3"), None);
    }

    #[test]
    fn durations_use_the_largest_exact_unit() {
        assert_eq!(duration(Duration::from_millis(100)), "\"100ms\"");
        assert_eq!(duration(Duration::from_secs(3)), "\"3s\"");
        assert_eq!(duration(Duration::from_nanos(1500)), "\"1500ns\"");
    }
}
