//! Keys the user wrote that the chosen kind never reads: `[limiter]` tuning keys of another
//! kind (or of no limiter), `[server.shedding]` keys without a shedding kind, `[breaker]` keys
//! that need `enabled = true` (its key table says which). The model's values cannot tell a
//! default from a written key, so these checks read the merged table.

use super::*;
use crate::base::keys::{KeyTable, Needs};
use crate::policy::breaker::BREAKER_KEYS;
use crate::policy::shedding::SheddingKind;
use toml::{Table, Value};

/// The keys of the table at `path` (dotted), empty when it is absent.
fn keys_at<'a>(t: &'a Table, path: &[&str]) -> Vec<&'a str> {
    let mut cur = t;
    for seg in path {
        match cur.get(*seg) {
            Some(Value::Table(next)) => cur = next,
            _ => return Vec::new(),
        }
    }
    cur.keys().map(String::as_str).collect()
}

/// `p.shedding`'s keys written while nothing reads them: `target` without `kind = "codel"`,
/// `interval` without it or `discipline = "adaptive-lifo"`.
fn check_shedding(p: &str, written: &[&str], s: &Server) -> Result<(), Invalid> {
    if s.shedding.kind != SheddingKind::None {
        return Ok(());
    }
    for key in written {
        let read = match *key {
            "target" => false,
            "interval" => s.discipline == Discipline::AdaptiveLifo,
            _ => true,
        };
        if !read {
            let also = if *key == "interval" {
                format!(" or {p}.discipline = \"adaptive-lifo\"")
            } else {
                String::new()
            };
            return Err(invalid(
                &format!("{p}.shedding.{key}"),
                format!(
                    "has no effect without a shedding kind: set {p}.shedding.kind = \"codel\"{also}, or remove it"
                ),
            ));
        }
    }
    Ok(())
}

/// `p`'s keys written while `p.enabled = false` that `table` says act only when it is true.
fn check_enabled(
    p: &str,
    written: &[&str],
    enabled: bool,
    table: &KeyTable,
) -> Result<(), Invalid> {
    if enabled {
        return Ok(());
    }
    let needs_it = |key: &&str| table.get(key).is_some_and(|k| k.needs == Needs::Enabled);
    match written.iter().copied().find(needs_it) {
        Some(key) => Err(invalid(
            &format!("{p}.{key}"),
            format!(
                "has no effect while {p}.enabled = false: set {p}.enabled = true, or remove it"
            ),
        )),
        None => Ok(()),
    }
}

impl Model {
    /// Refuses keys of `table` (this model's merged file table) that this model never reads.
    pub fn check_written(&self, table: &Table) -> Result<(), Invalid> {
        self.limiter.check_written(keys_at(table, &["limiter"]))?;
        check_shedding(
            "server",
            &keys_at(table, &["server", "shedding"]),
            &self.server,
        )?;
        check_enabled(
            "breaker",
            &keys_at(table, &["breaker"]),
            self.breaker.enabled,
            &BREAKER_KEYS,
        )?;
        if let Some(Value::Array(tiers)) = table.get("tier") {
            for (i, (t, spec)) in tiers.iter().zip(&self.tiers).enumerate() {
                if let Value::Table(t) = t {
                    check_shedding(
                        &format!("tier[{i}].server"),
                        &keys_at(t, &["server", "shedding"]),
                        &spec.server,
                    )?;
                    check_enabled(
                        &format!("tier[{i}].breaker"),
                        &keys_at(t, &["breaker"]),
                        spec.breaker.enabled,
                        &BREAKER_KEYS,
                    )?;
                }
            }
        }
        Ok(())
    }
}
