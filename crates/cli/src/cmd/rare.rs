//! `retrystorm rare MODEL --event EXPR --score NAME`: the probability of a rare event by
//! multilevel splitting (`retrystorm_core::rare`), one splitting run per `--seeds` seed, each
//! stage's particles spread over the `--jobs` pool; the estimate, its 95% interval, each seed's
//! levels with their pass rates, and the events spent against brute force, as a table or JSON.
//! `--shard I/N --out FILE` runs a slice of the seeds into a sweep file, `merge` joins the
//! slices and `rare MERGED.jsonl` shows the estimate, as `map` does with its shards.

use crate::args::{DEFAULT_PARTICLES, RareArgs};
use crate::emit::is_stdout;
use crate::prepare::{study_outputs, variant_grid};
use crate::run::Runner;
use crate::sweep_file::{Slice, looks_like_sweep, read_records};
use crate::text::plural;
use crate::{error::CliError, output, progress};
use indicatif::ProgressBar;
use retrystorm_core::base::time::{Duration, Time};
use retrystorm_core::model::Model;
use retrystorm_core::rare::interval::{IntervalKind, RareEstimate, combine};
use retrystorm_core::rare::target::{parse_score, parse_target};
use retrystorm_core::rare::{RareError, RareSpec, Spread, Target, pilot, split, split_at};
use retrystorm_report::sweep::header::{PilotLevels, RareStudy, SweepHeader, stamped};
use retrystorm_report::sweep::merge::Merge;
use retrystorm_report::sweep::split::SplitRecord;
use retrystorm_report::{fmt, sweep::format::sweep_text, text_table};
use serde_json::json;
use std::sync::atomic::AtomicBool;

pub fn rare(a: RareArgs) -> Result<(), CliError> {
    let outs = study_outputs(&[("--json", &a.json), ("--out", &a.out)], &a.model)?;
    if looks_like_sweep(&a.model.model) {
        return from_file(&a);
    }
    let study = study(&a)?;
    let spec = spec(&study)?;
    let mut slice = Slice::new("rare", a.shard.as_deref(), a.out.as_deref())?;
    let chosen = variant_grid(&a.model, a.variant.as_deref(), vec![])?;
    let (model, grid) = (&chosen.chosen, &chosen.grid);
    let seeds = &grid.seeds;
    slice.check(seeds.len() as u64, || {
        format!("the study has {}", plural(seeds.len() as u64, "seed"))
    })?;
    output::refuse_inputs(&outs)?;
    slice.claim()?;
    let runner = Runner::new(a.model.jobs)?;
    let jobs: Vec<u64> = grid.shard(slice.i, slice.n).collect();
    let (records, pilot) = split_seeds(model, seeds, &jobs, spec, a.fixed_levels, &runner)?;
    let study = RareStudy { pilot, ..study };
    let header = SweepHeader {
        rare: Some(study),
        ..stamped(
            SweepHeader::new(
                &chosen.model.scenario.name,
                &chosen.model.text,
                &a.model.sets,
                grid,
                seeds.len() as u64,
            ),
            chosen.model.inputs.clone(),
        )
    };
    let done = format!(
        "{} of {}",
        plural(records.len() as u64, "seed"),
        seeds.len()
    );
    if slice.write(&header.model, &sweep_text(&header, &records), &done)? {
        return Ok(());
    }
    show(&a, &header, records)
}

/// The splitting runs of the seeds at `jobs` (this shard's), each stage's particles on the
/// `--jobs` pool; with `fixed` at the levels of a pilot of the study's first seed, the same in
/// every shard, which it returns.
fn split_seeds(
    model: &Model,
    seeds: &[u64],
    jobs: &[u64],
    spec: RareSpec,
    fixed: bool,
    runner: &Runner,
) -> Result<(Vec<SplitRecord>, Option<PilotLevels>), CliError> {
    let bar = progress::bar(jobs.len() as u64, "seeds");
    let pool = Pool {
        runner,
        bar: ProgressBar::hidden(),
    };
    // Ctrl-C ends the process, as in the other studies (`map`, `sweep`): a stopped estimate has
    // nothing to report, so no flag is ever set.
    let never = AtomicBool::new(false);
    let levels = match fixed {
        true => Some(pilot(model, seeds[0], spec, &never, &pool).map_err(refused)?),
        false => None,
    };
    let mut records = Vec::with_capacity(jobs.len());
    for &job in jobs {
        let seed = seeds[job as usize];
        let run = match &levels {
            Some(l) => split_at(model, seed, spec, l, &never, &pool),
            None => split(model, seed, spec, &never, &pool),
        };
        records.push(SplitRecord::new(job, run.map_err(refused)?));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let pilot = levels.map(|l| PilotLevels {
        seed: seeds[0],
        levels: l.levels,
        events: l.events,
    });
    Ok((records, pilot))
}

/// What the flags ask to estimate; a missing `--event` says what to give.
fn study(a: &RareArgs) -> Result<RareStudy, CliError> {
    let event = a.event.clone().ok_or_else(|| {
        CliError::Input(
            "--event is needed: the event whose probability to estimate, e.g. --event 'queue >= 100' or --event 'recovered == false'".into(),
        )
    })?;
    Ok(RareStudy {
        event,
        score: a.score.clone(),
        score_from: a.score_from.clone(),
        excess: a.excess,
        until_empty: a.until_empty,
        particles: a.particles,
        pilot: None,
    })
}

/// `rare FILE`: the estimate of a study's file (`--out`, or merged shards), every seed present.
fn from_file(a: &RareArgs) -> Result<(), CliError> {
    let name = a.model.model.display().to_string();
    let given: Vec<&str> = [
        a.event.as_ref().map(|_| "--event"),
        a.score.as_ref().map(|_| "--score"),
        a.score_from.as_ref().map(|_| "--score-from"),
        a.excess.then_some("--excess"),
        a.until_empty.then_some("--until-empty"),
        a.fixed_levels.then_some("--fixed-levels"),
        (a.particles != DEFAULT_PARTICLES).then_some("--particles"),
        a.variant.as_ref().map(|_| "--variant"),
        a.shard.as_ref().map(|_| "--shard"),
        a.out.as_ref().map(|_| "--out"),
        (!a.model.sets.is_empty()).then_some("--set"),
        a.model.seed.map(|_| "--seed"),
        (a.model.seeds != 1).then_some("--seeds"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !given.is_empty() {
        return Err(CliError::Input(format!(
            "{name} is a sweep file: its header fixes the model, the study and the seeds, so {} cannot apply",
            given.join(", ")
        )));
    }
    let mut merged = Merge::<SplitRecord>::default();
    merged
        .add(&name, read_records(&a.model.model)?)
        .map_err(CliError::Input)?;
    if let Some(what) = merged.missing() {
        return Err(CliError::Input(format!(
            "{name}: {what}; merge every shard (`retrystorm merge`) before estimating"
        )));
    }
    let (header, _) = merged.first().expect("a file was added");
    show(a, header, merged.records().cloned().collect())
}

/// The estimate of the seeds' runs, as a table or JSON.
fn show(a: &RareArgs, header: &SweepHeader, records: Vec<SplitRecord>) -> Result<(), CliError> {
    let study = header.rare.as_ref().expect("a rare study's header");
    let mut estimate = combine(records.into_iter().map(|r| r.split).collect());
    if let Some(p) = &study.pilot {
        estimate.events += p.events;
    }
    let shown = Shown {
        model: &header.grid.variants[0],
        spec: spec(study)?,
        study,
        estimate,
    };
    if !a.json.as_deref().is_some_and(is_stdout) {
        output::print(&shown.table())?;
    }
    if let Some(p) = &a.json {
        output::write(output::Out::new("--json", p), &shown.json())?;
    }
    Ok(())
}

/// The study's spec; a bad `--event` or `--score` names what is allowed.
fn spec(study: &RareStudy) -> Result<RareSpec, CliError> {
    let target = parse_target(&study.event)
        .map_err(|e| CliError::Input(format!("--event {}: {e}", study.event)))?;
    let score = match (&study.score, target) {
        (Some(name), _) => {
            parse_score(name).map_err(|e| CliError::Input(format!("--score {name}: {e}")))?
        }
        (None, Target::Reaches { gauge, .. }) => gauge,
        (None, Target::NotRecovered) => retrystorm_core::path::gauge::Gauge::Queue,
    };
    let spec = RareSpec::new(target, score, study.until_empty).map_err(CliError::Input)?;
    let score_from = match &study.score_from {
        None => Time::ZERO,
        Some(t) => {
            let d = Duration::parse(t).map_err(|e| {
                CliError::Input(format!("--score-from {t}: {e} (a duration such as 26s)"))
            })?;
            Time::ZERO + d
        }
    };
    Ok(RareSpec {
        particles: study.particles,
        score_from,
        excess: study.excess,
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

/// What `rare` shows.
struct Shown<'a> {
    /// The variant estimated.
    model: &'a str,
    spec: RareSpec,
    study: &'a RareStudy,
    estimate: RareEstimate,
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
            ("model", self.model.to_string()),
            ("event", self.study.event.clone()),
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
        if let Some(p) = &self.study.pilot {
            let levels: Vec<String> = p.levels.iter().map(u64::to_string).collect();
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
                        fmt::int(p.events)
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
            "model": self.model,
            "event": self.study.event,
            "score": self.spec.score.name(),
            "score_from_ms": self.spec.score_from.since(Time::ZERO).as_millis_f64(),
            "excess": self.spec.excess,
            "until_empty": self.spec.until_empty,
            "particles": self.spec.particles,
            "keep": self.spec.keep,
        });
        if let (Some(o), Some(p)) = (v.as_object_mut(), &self.study.pilot) {
            o.insert("fixed_levels".into(), json!(true));
            o.insert("pilot".into(), json!(p));
        }
        if let (Some(o), Ok(serde_json::Value::Object(e))) =
            (v.as_object_mut(), serde_json::to_value(&self.estimate))
        {
            o.extend(e);
        }
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
    }
}
