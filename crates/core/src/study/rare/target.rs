//! What a rare-event study estimates the probability of (`--event`), what it scores a run by
//! (`--score`), and when a run ends (`--until-empty`): the contract, parsed once.

use crate::base::time::Time;
use crate::sim::path::gauge::Gauge;

/// The event whose probability is estimated, for one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `GAUGE >= LEVEL`: the gauge reaches the level before the run ends.
    Reaches { gauge: Gauge, level: u64 },
    /// `recovered == false`: the run ends without its goodput back after the trigger (the
    /// summary's `recovered`, as `map` judges it).
    NotRecovered,
}

/// The event the text of `--event` names; the error says what is allowed.
pub fn parse_target(text: &str) -> Result<Target, String> {
    // The operators need no spaces around them: `queue>=100` is `queue >= 100`.
    let spaced = text.replace(">=", " >= ").replace("==", " == ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let allowed = || {
        format!(
            "expected `SCORE >= N` with SCORE one of {} and N a whole number of at least 1, or `recovered == false`",
            Gauge::names()
        )
    };
    match words.as_slice() {
        ["recovered", "==", "false"] => Ok(Target::NotRecovered),
        [name, ">=", n] => {
            let gauge =
                Gauge::parse(name).ok_or_else(|| format!("no score `{name}`: {}", allowed()))?;
            match n.parse::<u64>() {
                Ok(level) if level >= 1 => Ok(Target::Reaches { gauge, level }),
                _ => Err(format!("`{n}` is no level: {}", allowed())),
            }
        }
        _ => Err(allowed()),
    }
}

/// The score named by `--score`; the error lists the names.
pub fn parse_score(name: &str) -> Result<Gauge, String> {
    Gauge::parse(name).ok_or_else(|| format!("no score `{name}`; one of {}", Gauge::names()))
}

/// One rare-event study: the event, the score its levels are placed on, and how a run ends.
#[derive(Clone, Copy, Debug)]
pub struct RareSpec {
    pub target: Target,
    pub score: Gauge,
    /// The score reads 0 before this time (`--score-from`): levels are placed on what a run
    /// does from then on, after a trigger every run passes through, say.
    pub score_from: Time,
    /// Levels on the score's excess over its typical value at that time of the run (the mean of
    /// the first stage's plain runs, per thousandth of the horizon), not on the score itself
    /// (`--excess`).
    pub excess: bool,
    /// A run ends the first time its score, having risen above 0, is back at 0 (a busy period
    /// of the score), if it has not ended before.
    pub until_empty: bool,
    /// Particles per stage (fixed effort).
    pub particles: u32,
    /// The share of particles kept at each level (the quantile the next level is placed at).
    pub keep: f64,
}

impl RareSpec {
    /// The spec, refused when its parts do not fit together.
    pub fn new(target: Target, score: Gauge, until_empty: bool) -> Result<RareSpec, String> {
        if until_empty && target == Target::NotRecovered {
            return Err(
                "`recovered == false` is judged at the horizon: it does not go with --until-empty"
                    .to_string(),
            );
        }
        Ok(RareSpec {
            target,
            score,
            score_from: Time::ZERO,
            excess: false,
            until_empty,
            particles: 100,
            keep: 0.25,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_parse_and_bad_ones_name_what_is_allowed() {
        assert_eq!(
            parse_target("queue >= 14"),
            Ok(Target::Reaches {
                gauge: Gauge::Queue,
                level: 14
            })
        );
        assert_eq!(
            parse_target(" recovered  ==  false"),
            Ok(Target::NotRecovered)
        );
        assert_eq!(parse_target("recovered==false"), Ok(Target::NotRecovered));
        assert_eq!(parse_target("queue>=14"), parse_target("queue >= 14"));
        let e = parse_target("depth >= 3").unwrap_err();
        assert!(
            e.starts_with("no score `depth`") && e.contains("queue, in_flight, orbit, attempts"),
            "{e}"
        );
        assert!(
            parse_target("queue >= 0")
                .unwrap_err()
                .contains("at least 1")
        );
        assert!(
            parse_target("queue > 3")
                .unwrap_err()
                .contains("recovered == false")
        );
        assert!(
            parse_score("depth")
                .unwrap_err()
                .contains("queue, in_flight")
        );
        assert!(RareSpec::new(Target::NotRecovered, Gauge::Queue, true).is_err());
    }
}
