//! The request path: `[[layer]]` and `[[tier]]` tables.

use super::*;

impl Model {
    /// Checks the `[[layer]]` tables: each is a hop of the request path (`docs/layered.md`).
    pub(super) fn validate_layers(&self) -> Result<(), Invalid> {
        if self.layers.is_empty() {
            return Ok(());
        }
        if !self.tiers.is_empty() {
            return Err(invalid(
                "tier",
                "[[layer]] and [[tier]] are two ways to write one request path; use one (a [[tier]] has everything a [[layer]] has)",
            ));
        }
        if self.layers.len() > MAX_LAYERS {
            return Err(invalid(
                "layer",
                format!("{} layers; at most {MAX_LAYERS}", self.layers.len()),
            ));
        }
        let set = |a: toml::Value, b: toml::Value| a != b;
        if set(
            toml::Value::try_from(&self.retry).unwrap_or(toml::Value::Boolean(false)),
            toml::Value::try_from(Retry::default()).unwrap_or(toml::Value::Boolean(false)),
        ) {
            return Err(invalid(
                "retry",
                "with [[layer]] tables the top layer is the clients' retry policy: move these keys into layer[0] (or write the path with [[tier]] tables)",
            ));
        }
        if set(
            toml::Value::try_from(&self.network).unwrap_or(toml::Value::Boolean(false)),
            toml::Value::try_from(Network::default()).unwrap_or(toml::Value::Boolean(false)),
        ) {
            return Err(invalid(
                "network",
                "with [[layer]] tables each layer's `latency` is its hop's network, and layers lose no messages: write the path with [[tier]] tables (each has a `network`) to model loss",
            ));
        }
        if self.layers[0].budget.is_some()
            && self.budget.kind != crate::policy::budget::BudgetKind::None
        {
            return Err(invalid(
                "budget",
                "the top layer is the client: give its budget either in [budget] or in layer[0].budget, not both",
            ));
        }
        for (i, l) in self.layers.iter().enumerate() {
            let at = |f: &str| format!("layer[{i}].{f}");
            validate_attempts(&at("max_attempts"), l.max_attempts)?;
            if l.timeout == Some(Duration::ZERO) {
                return Err(invalid(
                    &at("timeout"),
                    "must be a positive duration (omit it to wait forever)",
                ));
            }
            validate_backoff(&format!("layer[{i}]"), &l.backoff())?;
            validate_sizing(&format!("layer[{i}]"), &l.backoff_spec)?;
            match l.budget {
                Some(LayerBudget::Tokens {
                    max_tokens,
                    token_ratio,
                }) => {
                    positive(&at("budget.max_tokens"), max_tokens)?;
                    non_negative(&at("budget.token_ratio"), token_ratio)?;
                }
                Some(LayerBudget::Ratio { ratio, .. }) => non_negative(&at("budget.ratio"), ratio)?,
                None => {}
            }
        }
        Ok(())
    }

    /// Checks the `[[tier]]` tables with the same rules as the top-level sections.
    pub(super) fn validate_tiers(&self) -> Result<(), Invalid> {
        if self.tiers.len() + 1 > MAX_LAYERS {
            return Err(invalid(
                "tier",
                format!(
                    "{} tiers below the clients; at most {MAX_LAYERS}",
                    self.tiers.len() + 1
                ),
            ));
        }
        for (i, t) in self.tiers.iter().enumerate() {
            let p = format!("tier[{i}]");
            validate_server(&format!("{p}.server"), &t.server)?;
            if t.server.contention {
                return Err(invalid(
                    &format!("{p}.server.contention"),
                    "write contention is a behaviour of the last tier: set it in [server]",
                ));
            }
            validate_retry(&format!("{p}.retry"), &t.retry)?;
            validate_network(&format!("{p}.network"), &t.network)?;
            let prefixed = |e: Invalid| Invalid {
                path: format!("{p}.{}", e.path),
                message: e.message,
            };
            t.budget.validate().map_err(prefixed)?;
            t.breaker.validate().map_err(prefixed)?;
            t.hedge.validate(t.retry.max_attempts).map_err(prefixed)?;
            if t.hedge.delay.is_some() && t.budget.kind == crate::policy::budget::BudgetKind::Envoy
            {
                return Err(prefixed(invalid(
                    "budget.kind",
                    "Envoy's retry budget with hedge is not modelled; use budget.kind = \"grpc\" or no hedging",
                )));
            }
            if t.hedge.delay.is_some() && t.retry.retry_after == RetryAfterPolicy::Envoy {
                return Err(prefixed(invalid(
                    "retry.retry_after",
                    "\"envoy\" (rate_limited_retry_back_off) with hedge is not modelled; use \"honour\" or \"ignore\"",
                )));
            }
            t.server.rate_limit.validate().map_err(|e| Invalid {
                path: format!("{p}.server.{}", e.path.trim_start_matches("server.")),
                message: e.message,
            })?;
        }
        Ok(())
    }
}
