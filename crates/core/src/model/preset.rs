//! `retry.mode`: the retry settings of a named SDK mode, as published, filled in under what the
//! user wrote (a key written beside `mode` wins). The loader expands a mode before deserializing,
//! for the top-level `[retry]`/`[budget]` and for each `[[tier]]`'s `retry`/`budget`.
//!
//! Sources (each constant checked there; `docs/policies.md`, "SDK retry modes"):
//! - `aws-legacy`: botocore `data/_retry.json` (`__default__`: `max_attempts = 5`, delay
//!   `base = "rand"`, `growth_factor = 2`) and `retryhandler.delay_exponential`
//!   (`rand * 2^(attempts - 1)` seconds, no cap; 1 h stands in for none). No quota.
//! - `aws-standard`: botocore `retries/standard.py` (`DEFAULT_MAX_ATTEMPTS = 3`,
//!   `ExponentialBackoff`: `rand * min(2^(attempt - 1), 20)` s), `retries/quota.py`
//!   (`INITIAL_CAPACITY = 500`), `RetryQuotaChecker` (`_RETRY_COST = 5`,
//!   `_TIMEOUT_RETRY_REQUEST = 10`, `_NO_RETRY_INCREMENT = 1`). No `Retry-After`.
//! - `aws-adaptive`: `aws-standard` plus the client rate limiter of `retries/adaptive.py`
//!   (botocore's `_register_retries` registers the standard handler, then the adaptive one):
//!   `[limiter] kind = "aws-adaptive"` with `throttling.py`'s and `bucket.py`'s constants.
//! - `aws-standard-2026` (botocore behind `AWS_NEW_RETRIES_2026`, 1.43.3): backoff
//!   `rand * min(scale * 2^(attempt - 1), 20)` s with `non_throttling_base_scale = 0.05` and
//!   `throttling_base_scale = 1`, `x-amz-retry-after` kept within `[t, t + 5 s]`, quota
//!   `_RETRY_COST_V2 = 14`, `_THROTTLING_RETRY_COST = 5`. `-dynamodb`: `_SERVICE_MAX_ATTEMPTS` 4
//!   and scale 0.025.
//! - `aws-js-standard` (smithy-typescript `util-retry`, used by aws-sdk-js-v3): `constants.ts`
//!   (`DEFAULT_RETRY_DELAY_BASE = 100`, `THROTTLING_RETRY_DELAY_BASE = 500`,
//!   `MAXIMUM_RETRY_DELAY = 20000` ms, `RETRY_COST = 5`, `TIMEOUT_RETRY_COST = 10` for every
//!   transient error), `DefaultRetryBackoffStrategy` (`rand * min(x * 2^i, 20000)`),
//!   `StandardRetryStrategy` (the retry-after hint within `[t, t + 5000 ms]`).
//!   `aws-js-standard-2026`: `retries-2026-config.ts` (50 ms, 1000 ms, cost 14, throttling 5).
//!
//! Classes: these SDKs retry timeouts, connection errors, 500/502/503/504 and throttling errors
//! (429 here); never a 409.
//!
//! Backoff as the libraries ship it (`docs/policies.md`, "Backoff as the libraries ship it"): the
//! backoff and attempt count of each library's defaults, nothing else (no classes, no budget).
//! "No limit" is `max_attempts = 10000`, the most a model allows; "no cap" is `cap = "1h"`.
//! - `grpc-connect`: gRPC `doc/connection-backoff.md` and grpc-go 4793ad0 `backoff/backoff.go`
//!   `DefaultConfig` (1 s, 1.6, jitter 0.2, 120 s), the first delay unjittered
//!   (`internal/backoff/backoff.go` line 57: `backoff = "grpc"`), `MIN_CONNECT_TIMEOUT` 20 s as
//!   the per-attempt timeout; it reconnects without limit.
//! - `client-go`: client-go 32ce75a `util/retry/util.go` `DefaultBackoff` (`Steps: 4`, 10 ms,
//!   factor 5, jitter 0.1; `Steps` is the attempt count of `wait.ExponentialBackoff`, no cap).
//! - `client-go-retry`: the same file's `DefaultRetry` (`Steps: 5`, 10 ms, factor 1.0, jitter 0.1).
//! - `cenkalti`: cenkalti/backoff v4 720b789 `exponential.go` defaults (500 ms, randomization
//!   0.5, multiplier 1.5, max interval 60 s, `MaxElapsedTime` 15 min as `deadline`; no attempt
//!   limit).
//! - `resilience4j-random`: resilience4j af9e7c9 `IntervalFunction.ofExponentialRandomBackoff()`
//!   (500 ms, 1.5, 0.5, no max; a max given is applied after the jitter) and `RetryConfig`
//!   `DEFAULT_MAX_ATTEMPTS = 3`.
//! - `tenacity`: tenacity c650fb4 `wait_exponential_jitter()` (initial 1 s, exp_base 2, jitter
//!   1 s, max `MAX_WAIT`: none; capped after the jitter) and its default `stop_never`.
//! - `spring-random`: spring-retry c8977dd `ExponentialRandomBackOffPolicy` with
//!   `ExponentialBackOffPolicy`'s defaults (100 ms, multiplier 2, max 30 s, capped after the
//!   jitter; jitter factor `multiplier − 1` = 1) and `SimpleRetryPolicy.DEFAULT_MAX_ATTEMPTS = 3`.

use crate::base::diagnostics::closest;
use crate::model::table::{fill_under, merge};
use toml::{Table, Value};

/// The mode names, in the order a "did you mean" lists them.
pub const MODES: [&str; 14] = [
    "aws-legacy",
    "aws-standard",
    "aws-adaptive",
    "aws-standard-2026",
    "aws-standard-2026-dynamodb",
    "aws-js-standard",
    "aws-js-standard-2026",
    "grpc-connect",
    "client-go",
    "client-go-retry",
    "cenkalti",
    "resilience4j-random",
    "tenacity",
    "spring-random",
];

/// The `[retry]` of a backoff library's defaults (no classes, no budget), or `None`.
fn library(mode: &str) -> Option<&'static str> {
    Some(match mode {
        "grpc-connect" => {
            r#"
            max_attempts = 10000
            timeout = "20s"
            backoff = "grpc"
            jitter = "proportional"
            randomization_factor = 0.2
            base = "1s"
            multiplier = 1.6
            cap = "120s"
            first_exponent = 0
        "#
        }
        "client-go" => {
            r#"
            max_attempts = 4
            backoff = "exponential"
            jitter = "additive"
            jitter_factor = 0.1
            base = "10ms"
            multiplier = 5.0
            cap = "1h"
            first_exponent = 0
        "#
        }
        "client-go-retry" => {
            r#"
            max_attempts = 5
            backoff = "exponential"
            jitter = "additive"
            jitter_factor = 0.1
            base = "10ms"
            multiplier = 1.0
            cap = "1h"
            first_exponent = 0
        "#
        }
        "cenkalti" => {
            r#"
            max_attempts = 10000
            deadline = "15m"
            backoff = "exponential"
            jitter = "proportional"
            randomization_factor = 0.5
            base = "500ms"
            multiplier = 1.5
            cap = "60s"
            first_exponent = 0
        "#
        }
        "resilience4j-random" => {
            r#"
            max_attempts = 3
            backoff = "exponential"
            jitter = "proportional"
            randomization_factor = 0.5
            cap_applies = "after-jitter"
            base = "500ms"
            multiplier = 1.5
            cap = "1h"
            first_exponent = 0
        "#
        }
        "tenacity" => {
            r#"
            max_attempts = 10000
            backoff = "exponential"
            jitter = "absolute"
            jitter_max = "1s"
            cap_applies = "after-jitter"
            base = "1s"
            multiplier = 2.0
            cap = "1h"
            first_exponent = 0
        "#
        }
        "spring-random" => {
            r#"
            max_attempts = 3
            backoff = "exponential"
            jitter = "additive"
            jitter_factor = 1.0
            cap_applies = "after-jitter"
            base = "100ms"
            multiplier = 2.0
            cap = "30s"
            first_exponent = 0
        "#
        }
        _ => return None,
    })
}

const AWS_CLASSES: &str = r#"retry_on = ["timeout", "connection", "503", "429", "5xx"]"#;

/// The preset tables of `mode` (`retry`, `budget`, `limiter`), or `None` for an unknown name.
pub fn preset(mode: &str) -> Option<Table> {
    if let Some(retry) = library(mode) {
        let retry: Table = retry.parse().expect("a preset is valid TOML");
        return Some(Table::from_iter([(
            "retry".to_string(),
            Value::Table(retry),
        )]));
    }
    aws(mode).map(|text| sections(&text))
}

/// The sections of an AWS SDK's `mode` as TOML text: botocore's standard mode, then what the
/// mode changes in it (a section may repeat); `None` for another name.
fn aws(mode: &str) -> Option<String> {
    let standard = r#"
        [retry]
        max_attempts = 3
        backoff = "exponential"
        jitter = "full"
        base = "1s"
        cap = "20s"
        multiplier = 2.0
        first_exponent = 0
        retry_after = "ignore"
        [budget]
        kind = "aws"
        version = "classic"
        quota = 500
        retry_cost = 5
        timeout_cost = 10
        no_retry_increment = 1
    "#;
    Some(match mode {
        "aws-legacy" => r#"
            [retry]
            max_attempts = 5
            backoff = "exponential"
            jitter = "full"
            base = "1s"
            cap = "1h"
            multiplier = 2.0
            first_exponent = 0
            retry_after = "ignore"
            [budget]
            kind = "none"
        "#
        .to_string(),
        "aws-standard" => standard.to_string(),
        "aws-adaptive" => format!(
            r#"{standard}
            [limiter]
            kind = "aws-adaptive"
            "#
        ),
        "aws-standard-2026" | "aws-standard-2026-dynamodb" => {
            let dynamo = mode.ends_with("dynamodb");
            format!(
                r#"{standard}
                [retry]
                max_attempts = {}
                base = "{}"
                throttling_base = "1s"
                retry_after = "aws"
                [budget]
                version = "2026"
                retry_cost_v2 = 14
                throttling_cost = 5
                "#,
                if dynamo { 4 } else { 3 },
                if dynamo { "25ms" } else { "50ms" },
            )
        }
        "aws-js-standard" | "aws-js-standard-2026" => {
            let new = mode.ends_with("2026");
            format!(
                r#"{standard}
                [retry]
                base = "{}"
                throttling_base = "{}"
                retry_after = "aws"
                [budget]
                version = "{}"
                retry_cost_v2 = 14
                throttling_cost = 5
                "#,
                if new { "50ms" } else { "100ms" },
                if new { "1s" } else { "500ms" },
                if new { "2026" } else { "js" },
            )
        }
        _ => return None,
    })
}

/// The tables of a preset's text, merged in order: a section that repeats (standard, then its
/// changes) overrides the keys it sets; every `[retry]` starts with the classes the SDKs retry.
fn sections(text: &str) -> Table {
    let mut out = Table::new();
    let mut section = String::new();
    let mut body = String::new();
    let flush = |section: &str, body: &str, out: &mut Table| {
        if section.is_empty() {
            return;
        }
        let t: Table = body.parse().expect("a preset is valid TOML");
        let mut one = Table::new();
        one.insert(section.to_string(), Value::Table(t));
        merge(out, one);
    };
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            flush(&section, &body, &mut out);
            section = name.to_string();
            body.clear();
            if name == "retry" {
                body.push_str(AWS_CLASSES);
                body.push('\n');
            }
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    flush(&section, &body, &mut out);
    out
}

/// Expands `retry.mode` in `scope` (the top level or one `[[tier]]` table): the preset's
/// sections go under the user's. Returns the path and message of a bad mode.
pub fn expand(scope: &mut Table, prefix: &str) -> Result<(), (String, String)> {
    let Some(Value::Table(retry)) = scope.get_mut("retry") else {
        return Ok(());
    };
    let Some(mode) = retry.remove("mode") else {
        return Ok(());
    };
    let path = format!("{prefix}retry.mode");
    let name = mode.as_str().ok_or_else(|| {
        (
            path.clone(),
            format!("expected a mode name, one of: {}", MODES.join(", ")),
        )
    })?;
    let preset = preset(name).ok_or_else(|| {
        let hint = closest(name, &MODES)
            .map(|m| format!(" (did you mean `{m}`?)"))
            .unwrap_or_default();
        (
            path.clone(),
            format!(
                "unknown retry mode `{name}`{hint}; allowed: {}",
                MODES.join(", ")
            ),
        )
    })?;
    if !prefix.is_empty() && preset.contains_key("limiter") {
        return Err((
            path,
            format!(
                "`{name}` needs a client-side [limiter], which only the clients (the top-level [retry]) have; use it there, or aws-standard here"
            ),
        ));
    }
    let written: Vec<String> = match scope.get("retry") {
        Some(Value::Table(user)) => user.keys().cloned().collect(),
        _ => Vec::new(),
    };
    fill_under(scope, preset);
    // Kept as `Retry::mode`, so that `explain` can say what the mode set.
    let name = name.to_string();
    if let Some(Value::Table(retry)) = scope.get_mut("retry") {
        drop_unused_sizing(retry, &written);
        retry.insert("mode".into(), Value::String(name));
    }
    Ok(())
}

/// A mode's jitter sizing that the user's own `jitter` made moot: `retry.mode = "cenkalti"` with
/// `jitter = "full"` is cenkalti's schedule with full jitter, not a `randomization_factor` with
/// nothing to size. Keys the user wrote stay (and are refused later if they have no effect).
fn drop_unused_sizing(retry: &mut Table, written: &[String]) {
    let jitter = retry.get("jitter").and_then(Value::as_str).unwrap_or("");
    let used = match jitter {
        "proportional" => "randomization_factor",
        "additive" => "jitter_factor",
        "absolute" => "jitter_max",
        _ => "",
    };
    for key in [
        "randomization_factor",
        "jitter_factor",
        "jitter_max",
        "cap_applies",
    ] {
        let moot = if key == "cap_applies" {
            used.is_empty()
        } else {
            key != used
        };
        if moot && !written.iter().any(|w| w == key) {
            retry.remove(key);
        }
    }
}

/// Resolves a `retry.from` reference (`"envoy:route.yaml"`) to the model sections it stands for
/// (`retry`, `budget`, `hedge`) as TOML text, or a message naming the imported file's field. The
/// core does no I/O: the command line passes one that reads the file; [`no_files`] refuses
/// every reference. `"trace:FILE"` (a `workload.trace`) asks for the file's text as it is.
pub type Resolver<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// The resolver of a loader without file access: every `retry.from` is refused.
pub fn no_files(from: &str) -> Result<String, String> {
    Err(format!(
        "{from:?}: this loader reads no files; `retry.from` and `workload.trace` are resolved by the retrystorm command"
    ))
}

/// Expands `retry.from` in `scope`: the imported sections go under the user's (a key written
/// beside `from` wins). Returns the path and message of a bad reference.
pub fn expand_from(
    scope: &mut Table,
    prefix: &str,
    resolve: Resolver<'_>,
) -> Result<(), (String, String)> {
    let Some(Value::Table(retry)) = scope.get_mut("retry") else {
        return Ok(());
    };
    let Some(from) = retry.remove("from") else {
        return Ok(());
    };
    let path = format!("{prefix}retry.from");
    if retry.contains_key("mode") {
        return Err((
            path,
            "give retry.from or retry.mode, not both: each fills in the whole retry policy".into(),
        ));
    }
    let reference = from.as_str().ok_or_else(|| {
        (
            path.clone(),
            "expected \"SOURCE:FILE\" (envoy:route.yaml, grpc:service-config.json[:SERVICE/METHOD], aws:config[:PROFILE])".to_string(),
        )
    })?;
    let text = resolve(reference).map_err(|m| (path.clone(), m))?;
    let imported: Table = text.parse().map_err(|e: toml::de::Error| {
        (
            path.clone(),
            format!(
                "{reference}: the imported sections are not TOML: {}",
                e.message()
            ),
        )
    })?;
    fill_under(scope, imported);
    Ok(())
}

/// Expands every `retry.mode` of a model table (the top level and each `[[tier]]`).
pub fn expand_model(model: &mut Table) -> Result<(), (String, String)> {
    expand_model_from(model, &no_files)
}

/// Expands every `retry.from` and then every `retry.mode` of a model table (the top level and
/// each `[[tier]]`).
pub fn expand_model_from(model: &mut Table, resolve: Resolver<'_>) -> Result<(), (String, String)> {
    expand_from(model, "", resolve)?;
    expand(model, "")?;
    if let Some(Value::Array(tiers)) = model.get_mut("tier") {
        for (i, t) in tiers.iter_mut().enumerate() {
            if let Value::Table(t) = t {
                expand_from(t, &format!("tier[{i}]."), resolve)?;
                expand(t, &format!("tier[{i}]."))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_has_a_preset_and_the_user_wins() {
        for m in MODES {
            assert!(preset(m).is_some(), "{m}");
        }
        let mut t: Table = "[retry]\nmode = \"aws-standard-2026\"\nmax_attempts = 7\n"
            .parse()
            .unwrap();
        expand_model(&mut t).unwrap();
        let r = t["retry"].as_table().unwrap();
        assert_eq!(r["max_attempts"].as_integer(), Some(7));
        assert_eq!(r["base"].as_str(), Some("50ms"));
        assert_eq!(
            r["mode"].as_str(),
            Some("aws-standard-2026"),
            "kept for explain"
        );
        assert_eq!(t["budget"]["version"].as_str(), Some("2026"));
        let mut bad: Table = "[retry]\nmode = \"aws-standart\"\n".parse().unwrap();
        let (path, msg) = expand_model(&mut bad).unwrap_err();
        assert_eq!(path, "retry.mode");
        assert!(msg.contains("did you mean `aws-standard`"), "{msg}");
    }
}
