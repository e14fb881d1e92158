//! `retrystorm rare MODEL --event EXPR --score NAME`: the probability of a rare event by
//! multilevel splitting (`retrystorm_core::rare`), one splitting run per `--seeds` seed, each
//! stage's particles spread over the `--jobs` pool; the estimate, its 95% interval, each seed's
//! levels with their pass rates, and the events spent against brute force, as a table or JSON.

use crate::args::RareArgs;
use crate::emit::is_stdout;
use crate::model_args::{Resolved, pick_variant};
use crate::prepare::study_outputs;
use crate::run::Runner;
use crate::{error::CliError, output, progress};
use indicatif::ProgressBar;
use retrystorm_core::base::time::{Duration, Time};
use retrystorm_core::model::Model;
use retrystorm_core::rare::interval::{IntervalKind, RareEstimate, combine};
use retrystorm_core::rare::target::{parse_score, parse_target};
use retrystorm_core::rare::{Levels, RareError, RareSpec, Spread, Target, pilot, split, split_at};
use retrystorm_report::{fmt, text_table};
use serde_json::json;
use std::sync::atomic::AtomicBool;

pub fn rare(a: RareArgs) -> Result<(), CliError> {
    let outs = study_outputs(&[("--json", &a.json)], &a.model)?;
    let spec = spec(&a)?;
    let resolved = Resolved::read_variant(&a.model, a.variant.as_deref())?;
    let model = pick_variant(&resolved.scenario, a.variant.as_deref(), &resolved.origin)?;
    let seeds = resolved.seeds();
    output::refuse_inputs(&outs)?;
    let runner = Runner::new(a.model.jobs)?;
    let bar = progress::bar(seeds.len() as u64, "seeds");
    let pool = Pool {
        runner: &runner,
        bar: ProgressBar::hidden(),
    };
    // Ctrl-C ends the process, as in the other studies (`map`, `sweep`): a stopped estimate has
    // nothing to report, so no flag is ever set.
    let never = AtomicBool::new(false);
    // With --fixed-levels, one pilot of the first seed places the levels every seed uses.
    let levels = match (a.fixed_levels, seeds.first()) {
        (true, Some(&first)) => Some(Pilot {
            seed: first,
            levels: pilot(&model, first, spec, &never, &pool).map_err(refused)?,
        }),
        _ => None,
    };
    let mut runs = Vec::with_capacity(seeds.len());
    for &seed in &seeds {
        let run = match &levels {
            Some(p) => split_at(&model, seed, spec, &p.levels, &never, &pool),
            None => split(&model, seed, spec, &never, &pool),
        };
        runs.push(run.map_err(refused)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut estimate = combine(runs);
    if let Some(p) = &levels {
        estimate.events += p.levels.events;
    }
    let shown = Shown {
        model: &model,
        spec,
        event: &a.event,
        estimate,
        pilot: levels,
    };
    if !a.json.as_deref().is_some_and(is_stdout) {
        output::print(&shown.table())?;
    }
    if let Some(p) = &a.json {
        output::write(output::Out::new("--json", p), &shown.json())?;
    }
    Ok(())
}

/// The study the flags ask for; a bad `--event` or `--score` names what is allowed.
fn spec(a: &RareArgs) -> Result<RareSpec, CliError> {
    let target =
        parse_target(&a.event).map_err(|e| CliError::Input(format!("--event {}: {e}", a.event)))?;
    let score = match (&a.score, target) {
        (Some(name), _) => {
            parse_score(name).map_err(|e| CliError::Input(format!("--score {name}: {e}")))?
        }
        (None, Target::Reaches { gauge, .. }) => gauge,
        (None, Target::NotRecovered) => retrystorm_core::path::gauge::Gauge::Queue,
    };
    let spec = RareSpec::new(target, score, a.until_empty).map_err(CliError::Input)?;
    let score_from = match &a.score_from {
        None => Time::ZERO,
        Some(t) => {
            let d = Duration::parse(t).map_err(|e| {
                CliError::Input(format!("--score-from {t}: {e} (a duration such as 26s)"))
            })?;
            Time::ZERO + d
        }
    };
    Ok(RareSpec {
        particles: a.particles,
        score_from,
        excess: a.excess,
        ..spec
    })
}

/// A refused estimate: exit 1 with the reason.
fn refused(e: RareError) -> CliError {
    CliError::Failed(format!("rare: no estimate: {e}"))
}

/// A stage's particles on the `--jobs` pool, in index order.
struct Pool<'a> {
    runner: &'a Runner,
    bar: ProgressBar,
}

impl Spread for Pool<'_> {
    fn spread<T: Send>(&self, n: usize, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
        let items: Vec<usize> = (0..n).collect();
        self.runner.map(&items, &self.bar, |&i| f(i))
    }
}

/// The pilot run that placed the levels (`--fixed-levels`): its seed and what it placed.
struct Pilot {
    seed: u64,
    levels: Levels,
}

/// What `rare` shows.
struct Shown<'a> {
    model: &'a Model,
    spec: RareSpec,
    event: &'a str,
    estimate: RareEstimate,
    pilot: Option<Pilot>,
}

/// What brute force would spend for the same relative half-width; where no such number exists
/// (every plain run reaches the event, or the seeds agree exactly), why.
fn brute_force(e: &RareEstimate, ratio: f64) -> String {
    if e.probability >= 1.0 {
        return "not needed: every run reaches the event (probability 1), so one plain run shows it"
            .into();
    }
    if !(e.brute_force_runs.is_finite() && ratio.is_finite()) {
        return "no width to match: every seed gave the same estimate".into();
    }
    format!(
        "{} plain runs, {} events for the same relative half-width ({} the events spent)",
        fmt::int(e.brute_force_runs.round() as u64),
        fmt::int(e.brute_force_events.round() as u64),
        fmt::times(ratio)
    )
}

/// A probability in scientific notation: `6.104e-5`.
fn sci(p: f64) -> String {
    format!("{p:.3e}")
}

impl Shown<'_> {
    fn table(&self) -> String {
        let e = &self.estimate;
        let how = match e.interval {
            IntervalKind::Seeds => format!(
                "over {} independent seeds (log-normal, Student t)",
                e.runs.len()
            ),
            IntervalKind::Stages => "from one seed's stages as if their particles were independent (too narrow: give --seeds 5 or more)".to_string(),
        };
        let ratio = e.brute_force_events / e.events as f64;
        let mut rows = vec![
            ("model", self.model.name.clone()),
            ("event", self.event.to_string()),
            ("score", self.score_label()),
            ("probability", sci(e.probability)),
            (
                "95% interval",
                format!("{} .. {}, {how}", sci(e.low), sci(e.high)),
            ),
            ("relative half-width", fmt::pct(e.relative_half_width())),
            (
                "events spent",
                format!(
                    "{} (a plain run: {})",
                    fmt::int(e.events),
                    fmt::num(e.events_per_plain_run)
                ),
            ),
            ("brute force", brute_force(e, ratio)),
        ];
        if let Some(p) = &self.pilot {
            let levels: Vec<String> = p.levels.levels.iter().map(u64::to_string).collect();
            let levels = if levels.is_empty() {
                "none (the event is the first stage)".to_string()
            } else {
                format!("{} >= {}", self.score_name(), levels.join(", "))
            };
            rows.insert(
                3,
                (
                    "levels",
                    format!(
                        "fixed by a pilot run of seed {} ({} events, counted in the events spent): {levels}",
                        p.seed,
                        fmt::int(p.levels.events)
                    ),
                ),
            );
        }
        let lines: String = rows.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        format!("{lines}\n{}", self.stages())
    }

    /// The score, what it is measured against and from when.
    fn score_label(&self) -> String {
        let mut label = self.spec.score.name().to_string();
        if self.spec.excess {
            label.push_str(", its excess over the typical value at each time");
        }
        if self.spec.score_from > Time::ZERO {
            let from = self.spec.score_from.since(Time::ZERO);
            label.push_str(&format!(", from {}", fmt::duration(from.as_millis_f64())));
        }
        label
    }

    /// The score the levels are on, as the stages name it.
    fn score_name(&self) -> String {
        if self.spec.excess {
            format!("{} excess", self.spec.score.name())
        } else {
            self.spec.score.name().to_string()
        }
    }

    /// Each seed's stages, one a row: the level (the event itself last) and its pass rate.
    fn stages(&self) -> String {
        let score = self.score_name();
        let headers = ["seed", "stage", "level", "passed", "pass rate"].map(String::from);
        let mut rows = Vec::new();
        for r in &self.estimate.runs {
            for (k, s) in r.stages.iter().enumerate() {
                rows.push(vec![
                    r.seed.to_string(),
                    (k + 1).to_string(),
                    s.level
                        .map_or("the event".to_string(), |l| format!("{score} >= {l}")),
                    format!("{}/{}", s.passed, s.particles),
                    fmt::fixed(s.rate(), 2),
                ]);
            }
            rows.push(vec![
                String::new(),
                String::new(),
                "estimate".into(),
                String::new(),
                sci(r.estimate),
            ]);
        }
        text_table(&headers, &rows)
    }

    fn json(&self) -> String {
        let mut v = json!({
            "model": self.model.name,
            "event": self.event,
            "score": self.spec.score.name(),
            "score_from_ms": self.spec.score_from.since(Time::ZERO).as_millis_f64(),
            "excess": self.spec.excess,
            "until_empty": self.spec.until_empty,
            "particles": self.spec.particles,
            "keep": self.spec.keep,
        });
        if let (Some(o), Some(p)) = (v.as_object_mut(), &self.pilot) {
            o.insert("fixed_levels".into(), json!(true));
            o.insert(
                "pilot".into(),
                json!({"seed": p.seed, "levels": p.levels.levels, "events": p.levels.events}),
            );
        }
        if let (Some(o), Ok(serde_json::Value::Object(e))) =
            (v.as_object_mut(), serde_json::to_value(&self.estimate))
        {
            o.extend(e);
        }
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
    }
}
