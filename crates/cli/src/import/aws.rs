//! AWS shared config file (`~/.aws/config`, INI): a profile's `retry_mode` and `max_attempts`
//! (AWS SDKs and Tools Reference Guide, "Retry behavior"; botocore `retries/standard.py`,
//! `data/_retry.json`).
//!
//! - `standard`: botocore `standard.py`: `ExponentialBackoff(max_backoff=20, base=2)`, the n-th
//!   retry waits `random() * 2^(n-1)` seconds, at most 20 s: exponential, full jitter,
//!   `base = "1s"`, `cap = "20s"`; the retry quota (`RetryQuotaChecker`: 500, 5 per retry, 10
//!   after a timeout, 1 back per success) is `[budget] kind = "aws"`, whose defaults are those.
//!   Default `max_attempts` 3.
//! - `legacy`: botocore `_retry.json` (`"base": "rand", "growth_factor": 2`): the same formula
//!   without a cap or quota, default `max_attempts` 5 (other SDKs' legacy modes differ).
//! - `adaptive`: standard plus a client-side rate limiter, which this build does not model:
//!   refused, naming what is supported.
//!
//! The parser is a small one for this file's INI dialect (sections `[default]` and
//! `[profile NAME]`, `key = value`, `#`/`;` comment lines, indented sub-settings), not a general
//! INI crate: no INI crate on crates.io both keeps to this dialect and is maintained.

use super::{Emit, quoted, refuse};
use crate::error::CliError;

/// Keys of a profile that do not concern retries: listed in the output, not imported.
const NOT_RETRIES: [&str; 22] = [
    "region",
    "output",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "role_arn",
    "source_profile",
    "role_session_name",
    "external_id",
    "mfa_serial",
    "duration_seconds",
    "credential_source",
    "credential_process",
    "web_identity_token_file",
    "sso_session",
    "sso_account_id",
    "sso_role_name",
    "sso_start_url",
    "sso_region",
    "ca_bundle",
    "cli_pager",
    "endpoint_url",
];

/// Keys that concern retries and timeouts but have no meaning in the model.
const UNSUPPORTED: [&str; 3] = [
    "metadata_service_num_attempts",
    "metadata_service_timeout",
    "defaults_mode",
];

/// A config key as `(line, key, value)`.
type Entry<'a> = (usize, &'a str, &'a str);

/// Every key directly in section `name` (sub-settings skipped); `None` when there is no such section.
fn section<'a>(file: &str, text: &'a str, name: &str) -> Result<Option<Vec<Entry<'a>>>, CliError> {
    let mut current: Option<String> = None;
    let mut found = false;
    let mut keys = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(h) = trimmed.strip_prefix('[') {
            let h = h.strip_suffix(']').ok_or_else(|| {
                refuse(
                    &format!("{file}:{line_no}"),
                    "",
                    "a section header needs a closing ]",
                )
            })?;
            let h = h.split_whitespace().collect::<Vec<_>>().join(" ");
            found |= h == name;
            current = Some(h);
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            continue; // a sub-setting (`s3 =` then indented keys) or a continuation
        }
        let Some((k, v)) = trimmed.split_once('=') else {
            return Err(refuse(
                &format!("{file}:{line_no}"),
                "",
                format!("expected key = value, got {trimmed:?}"),
            ));
        };
        if current.as_deref() == Some(name) {
            keys.push((line_no, k.trim(), v.trim()));
        }
    }
    Ok(found.then_some(keys))
}

/// Imports profile `profile` (default `default`) of an AWS config file.
pub fn import(file: &str, text: &str, profile: Option<&str>) -> Result<Emit, CliError> {
    let profile = profile.unwrap_or("default");
    let (header, keys) = profile_keys(file, text, profile)?;
    let keys = Keys::read(file, &header, keys)?;
    let Some((mode_line, mode)) = keys.mode else {
        return Err(refuse(
            file,
            &format!("[{header}].retry_mode"),
            "absent: its default differs between SDKs (botocore: legacy, most newer SDKs: standard); set retry_mode = standard or legacy",
        ));
    };
    let src = |line: usize, k: &str, v: &str| format!("{file}:{line} [{header}] {k} = {v}");
    let mut e = Emit::default();
    e.note(format!(
        "Imported by `retrystorm import aws {file}` (profile {profile:?}): AWS SDK retry behavior."
    ));
    if !keys.others.is_empty() {
        e.note(format!(
            "Not about retries, not imported: {}.",
            keys.others.join(", ")
        ));
    }
    let default_attempts = match mode {
        "standard" => 3,
        "legacy" => 5,
        "adaptive" => {
            return Err(refuse(
                &format!("{file}:{mode_line}"),
                &format!("[{header}].retry_mode"),
                "adaptive adds a client-side rate limiter this build does not model; supported: standard, legacy",
            ));
        }
        other => {
            return Err(refuse(
                &format!("{file}:{mode_line}"),
                &format!("[{header}].retry_mode"),
                format!("{other:?} is not a retry mode; supported: standard, legacy"),
            ));
        }
    };
    match keys.attempts {
        Some((line, v)) => {
            let n: u32 = v.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                refuse(
                    &format!("{file}:{line}"),
                    &format!("[{header}].max_attempts"),
                    format!("must be an integer >= 1 (the first try included), got {v:?}"),
                )
            })?;
            e.set(
                "retry",
                "max_attempts",
                n.to_string(),
                src(line, "max_attempts", v),
            );
        }
        None => e.set(
            "retry",
            "max_attempts",
            default_attempts.to_string(),
            format!("{mode} mode's default (botocore)"),
        ),
    }
    backoff(&mut e, &src(mode_line, "retry_mode", mode), mode);
    Ok(e)
}

/// The header of `profile`'s section (`[default]` or `[profile NAME]`) and its keys; a profile
/// the file lacks is refused, listing those it has.
fn profile_keys<'a>(
    file: &str,
    text: &'a str,
    profile: &str,
) -> Result<(String, Vec<Entry<'a>>), CliError> {
    let header = if profile == "default" {
        "default".to_string()
    } else {
        format!("profile {profile}")
    };
    // botocore reads `[profile default]` as the default profile too (build_profile_map).
    let (header, keys) = match section(file, text, &header)? {
        None if profile == "default" => (
            "profile default".to_string(),
            section(file, text, "profile default")?,
        ),
        found => (header, found),
    };
    let Some(keys) = keys else {
        let mut names: Vec<String> = text
            .lines()
            .filter_map(|l| {
                l.trim()
                    .strip_prefix('[')?
                    .strip_suffix(']')
                    .map(str::to_string)
            })
            .filter_map(|h| {
                let h = h.trim().to_string();
                if h == "default" {
                    Some(h)
                } else {
                    h.strip_prefix("profile ").map(|p| p.trim().to_string())
                }
            })
            .collect();
        names.dedup();
        return Err(refuse(
            file,
            &format!("[{header}]"),
            format!("no such profile; the file's profiles: {}", names.join(", ")),
        ));
    };
    Ok((header, keys))
}

/// A profile's keys sorted out: the two it imports, each as `(line, value)`, and those listed
/// as not about retries.
struct Keys<'a> {
    mode: Option<(usize, &'a str)>,
    attempts: Option<(usize, &'a str)>,
    others: Vec<&'a str>,
}

impl<'a> Keys<'a> {
    /// Refuses a key given twice, one with no meaning in the model and one it does not know.
    fn read(file: &str, header: &str, keys: Vec<Entry<'a>>) -> Result<Keys<'a>, CliError> {
        let mut out = Keys {
            mode: None,
            attempts: None,
            others: Vec::new(),
        };
        for (line, k, v) in keys {
            let at = format!("{file}:{line}");
            let slot = match k {
                "retry_mode" => &mut out.mode,
                "max_attempts" => &mut out.attempts,
                k if NOT_RETRIES.contains(&k) => {
                    out.others.push(k);
                    continue;
                }
                k if UNSUPPORTED.contains(&k) => {
                    return Err(refuse(
                        &at,
                        &format!("[{header}].{k}"),
                        "has no meaning in the model; supported: retry_mode, max_attempts",
                    ));
                }
                k => {
                    return Err(refuse(
                        &at,
                        &format!("[{header}].{k}"),
                        format!(
                            "unknown key; supported: retry_mode, max_attempts (and, listed but not imported: {})",
                            NOT_RETRIES.join(", ")
                        ),
                    ));
                }
            };
            if slot.is_some() {
                return Err(refuse(&at, &format!("[{header}].{k}"), "given twice"));
            }
            *slot = Some((line, v));
        }
        Ok(out)
    }
}

/// botocore's backoff for `mode` (`standard` or `legacy`), and standard mode's retry quota;
/// `source` names the `retry_mode` line.
fn backoff(e: &mut Emit, source: &str, mode: &str) {
    e.set(
        "retry",
        "backoff",
        quoted("exponential"),
        format!("{source}: random() * 2^(n-1) s"),
    );
    e.set(
        "retry",
        "jitter",
        quoted("full"),
        "botocore: random() in [0, 1) scales the window",
    );
    e.set(
        "retry",
        "base",
        quoted("1s"),
        "botocore: the first retry's window is 2^0 s",
    );
    e.set(
        "retry",
        "multiplier",
        "2.0".into(),
        "botocore: base 2 (standard) / growth_factor 2 (legacy)",
    );
    e.set(
        "retry",
        "first_exponent",
        "0".into(),
        "attempt_number - 1 = 0 for the first retry",
    );
    if mode == "standard" {
        e.set(
            "retry",
            "cap",
            quoted("20s"),
            "botocore standard: max_backoff = 20",
        );
        quota(e);
    } else {
        e.set(
            "retry",
            "cap",
            quoted("1h"),
            "legacy mode has no cap (a window past 1h is cut to it)",
        );
    }
}

/// Standard mode's retry quota (botocore `RetryQuotaChecker`), as `[budget] kind = "aws"`.
fn quota(e: &mut Emit) {
    e.set(
        "budget",
        "kind",
        quoted("aws"),
        "standard mode's retry quota (RetryQuotaChecker)",
    );
    e.set(
        "budget",
        "quota",
        "500".into(),
        "botocore: INITIAL_RETRY_TOKENS = 500",
    );
    e.set(
        "budget",
        "retry_cost",
        "5".into(),
        "botocore: RETRY_COST = 5",
    );
    e.set(
        "budget",
        "timeout_cost",
        "10".into(),
        "botocore: TIMEOUT_RETRY_COST = 10",
    );
    e.set(
        "budget",
        "no_retry_increment",
        "1".into(),
        "botocore: NO_RETRY_INCREMENT = 1",
    );
    e.set("budget", "scope", quoted("client"), "one quota per client");
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "[default]\nregion = us-east-1\nretry_mode = standard\n\n[profile batch]\nretry_mode = legacy\nmax_attempts = 8\ns3 =\n  max_concurrent_requests = 20\n";

    #[test]
    fn standard_default_profile() {
        let t = import("config", CONFIG, None).unwrap().render();
        assert!(t.contains("max_attempts = 3"), "{t}");
        assert!(t.contains("kind = \"aws\""), "{t}");
        assert!(
            t.contains("Not about retries, not imported: region."),
            "{t}"
        );
        retrystorm_core::load::load("x.toml", &t, &[]).unwrap();
    }

    #[test]
    fn legacy_profile_and_errors() {
        let t = import("config", CONFIG, Some("batch"))
            .unwrap_err()
            .to_string();
        assert!(t.contains("[profile batch].s3: unknown key"), "{t}");
        let c = CONFIG.replace("s3 =\n  max_concurrent_requests = 20\n", "");
        let t = import("config", &c, Some("batch")).unwrap().render();
        assert!(
            t.contains("max_attempts = 8") && !t.contains("[budget]"),
            "{t}"
        );
        // `[profile default]` is the default profile, as botocore reads it.
        let t = import(
            "config",
            "[profile default]\nretry_mode = standard\nmax_attempts = 5\n",
            None,
        )
        .unwrap()
        .render();
        assert!(t.contains("max_attempts = 5"), "{t}");
        let e = import("config", &c, Some("nope")).unwrap_err().to_string();
        assert!(e.contains("the file's profiles: default, batch"), "{e}");
        let e = import("config", &c.replace("legacy", "adaptive"), Some("batch"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("config:6: [profile batch].retry_mode: adaptive"),
            "{e}"
        );
    }
}
