//! The Markov chain of a one-tier model (`retrystorm_core::study::verdict::chain`) in words:
//! `explain`'s `chain:` lines and its JSON fields (`chain` when solved, `chain_refused` when not).

use retrystorm_core::study::verdict::chain::{ChainError, ChainReport};
use serde_json::{Map, Value, json};

/// `explain`'s lines: the chain's size and answers; a refusal for size or a singular solve. A
/// model outside what the chain models prints nothing (its reason is in the JSON).
pub fn lines(chain: &Result<ChainReport, ChainError>) -> Vec<String> {
    let c = match chain {
        Ok(c) => c,
        Err(ChainError::Outside { .. }) => return Vec::new(),
        Err(e) => return vec![format!("chain: not solved: {e}")],
    };
    vec![
        format!(
            "chain: Metafor's Markov chain, {} queue lengths x {} orbit sizes ({} states)",
            c.queue_lengths, c.orbit_sizes, c.states
        ),
        format!(
            "chain: from an empty tier it tips ({} or more requests) in {} on average, and comes back (under {}, one timeout of work) {} after that",
            c.tipped_at,
            span(c.time_to_tip_s),
            c.healthy_below,
            span(c.time_to_recover_s)
        ),
        format!(
            "chain: of all time {} tipped, {} healthy",
            percent(c.tipped_share),
            percent(c.healthy_share)
        ),
    ]
}

/// The JSON fields `explain --json` adds to a variant.
pub fn fields(chain: &Result<ChainReport, ChainError>, into: &mut Map<String, Value>) {
    match chain {
        Ok(c) => into.insert("chain".into(), json!(c)),
        Err(e) => into.insert("chain_refused".into(), json!(e.to_string())),
    };
}

/// Seconds in the unit a reader takes in: seconds, minutes, hours, days or years.
fn span(s: f64) -> String {
    let units = [
        (365.25 * 86_400.0, "years"),
        (86_400.0, "days"),
        (3_600.0, "hours"),
        (60.0, "minutes"),
    ];
    for (size, name) in units {
        if s >= 2.0 * size {
            return format!("{} {name}", figure(s / size));
        }
    }
    format!("{} s", figure(s))
}

/// Three significant figures, in powers of ten past a million.
fn figure(x: f64) -> String {
    if x >= 1e6 {
        format!("{x:.2e}")
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A share as a percentage; tiny ones in powers of ten.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p != 0.0 && p < 0.01 {
        format!("{p:.1e} %")
    } else {
        format!("{p:.2} %")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_shares_read_in_their_unit() {
        assert_eq!(span(60.31), "60.3 s");
        assert_eq!(span(7200.0), "2.00 hours");
        assert_eq!(span(7.42e11), "23513 years");
        assert_eq!(span(7.42e14), "2.35e7 years");
        assert_eq!(percent(0.99024), "99.02 %");
        assert_eq!(percent(1.3e-12), "1.3e-10 %");
    }
}
