//! The commands as a library, for embedders (the Python package in `crates/python`): the same
//! steps as `run --json`, `compare --json`, `sweep --out` and `check`, returning the text those
//! commands write instead of printing tables. The model flags are the CLI's own (`--set`,
//! `--seed`, `--seeds`, `--jobs`, `--max-events`), parsed by the same clap definition, and the
//! model is loaded, run and reported by the same functions as the commands'.

use crate::args::ModelArgs;
use crate::model_args::{Resolved, base_seed, load_with, pick_variant, read_model};
use crate::run::{Runner, replicate_until, run_all_until};
use crate::verdict::{Timing, evaluate, expectations, render, verdict};
use crate::{error::CliError, progress};

use clap::Parser;
use retrystorm_core::load::Scenario;
use retrystorm_core::stats;
use retrystorm_core::summary::{RunReport, SCHEMA_VERSION};
use retrystorm_report as report;
use retrystorm_report::sweep::format::{SweepRecord, header_line, record_line};
/// The version of retrystorm the embedder runs: what `retrystorm --version` prints and a sweep
/// file's header records (Python's `retrystorm.__version__`).
pub use retrystorm_report::sweep::header::VERSION;
use std::sync::atomic::AtomicBool;

/// The model flags alone, parsed as every command parses them.
#[derive(Parser, Debug)]
#[command(name = "retrystorm", no_binary_name = false)]
struct Flags {
    #[command(flatten)]
    model: ModelArgs,
}

/// A model file (or its text) and the model flags of one call.
pub struct Source {
    args: ModelArgs,
    origin: String,
    text: String,
}

impl Source {
    /// `origin` names the model in messages (a path; the file is read unless `text` is given)
    /// and `flags` are the CLI's model flags, e.g. `["--set", "retry.jitter=full", "--seeds", "5"]`.
    pub fn new(origin: &str, text: Option<String>, flags: &[String]) -> Result<Source, CliError> {
        let argv = std::iter::once("retrystorm".to_string())
            .chain(std::iter::once(origin.to_string()))
            .chain(flags.iter().cloned());
        // clap's message without its `error: ` and its `--help` hint, as one error.
        let args = Flags::try_parse_from(argv)
            .map_err(|e| {
                let text = e.to_string();
                let first = text.split("\n\n").next().unwrap_or(&text);
                CliError::Input(first.strip_prefix("error: ").unwrap_or(first).to_string())
            })?
            .model;
        let (origin, text) = match text {
            Some(t) => (origin.to_string(), t),
            None => read_model(&args)?,
        };
        Ok(Source { args, origin, text })
    }

    /// The model resolved with its `--set` flags, as every command loads it.
    pub fn scenario(&self) -> Result<Scenario, CliError> {
        load_with(&self.args, &self.origin, &self.text, &[])
    }

    /// What `run MODEL [--variant V] --json - --csv -` write: the JSON report (one seed, or the
    /// replicated report with `--seeds N`) and the series CSV. The runs stop once `stop` is set
    /// (at their next progress point), as the CLI's do on Ctrl-C: the report is then truncated.
    pub fn run_outputs(
        &self,
        variant: Option<&str>,
        stop: &AtomicBool,
    ) -> Result<(String, String), CliError> {
        let scenario = self.scenario()?;
        let model = pick_variant(&scenario, variant, &self.origin)?;
        let seed = base_seed(&self.args, &model);
        let csv = |rep: &RunReport| {
            report::series_csv(rep).map_err(|e| CliError::Output(format!("csv: {e}")))
        };
        if self.args.seeds > 1 {
            let rep = replicate_until(
                &scenario.name,
                std::slice::from_ref(&model),
                seed,
                self.args.seeds,
                self.args.jobs,
                stop,
            )?;
            return Ok((report::to_json_replicated(&rep), csv(&rep.to_run_report())?));
        }
        let results = run_all_until(&[(&model, seed)], self.args.jobs, stop)?;
        let rep = RunReport {
            schema_version: SCHEMA_VERSION,
            model: scenario.name.clone(),
            seed,
            variants: results,
        };
        Ok((report::to_json(&rep), csv(&rep)?))
    }

    /// What `compare MODEL --json -` writes: every variant, one seed or `--seeds N`. The runs
    /// stop once `stop` is set, as in [`Source::run_outputs`].
    pub fn compare_json(&self, stop: &AtomicBool) -> Result<String, CliError> {
        let scenario = self.scenario()?;
        let seed = base_seed(&self.args, &scenario.base);
        let models = &scenario.variants;
        if self.args.seeds > 1 {
            let rep = replicate_until(
                &scenario.name,
                models,
                seed,
                self.args.seeds,
                self.args.jobs,
                stop,
            )?;
            return Ok(report::to_json_replicated(&rep));
        }
        let runs: Vec<_> = models.iter().map(|m| (m, seed)).collect();
        let results = run_all_until(&runs, self.args.jobs, stop)?;
        Ok(report::to_json(&RunReport {
            schema_version: SCHEMA_VERSION,
            model: scenario.name.clone(),
            seed,
            variants: results,
        }))
    }

    /// The lines `sweep MODEL --vary ... --out FILE` writes: the header, then one line per run
    /// in grid order. Stops taking new runs once `stop` is set (then returns the runs done so
    /// far, still in grid order, and `false`).
    pub fn sweep_lines(
        &self,
        vary: &[String],
        stop: &AtomicBool,
    ) -> Result<(Vec<String>, bool), CliError> {
        let model = Resolved::from_text(&self.args, self.origin.clone(), self.text.clone())?;
        let (grid, total, header) = crate::sweep_file::plan(&model, vary)?;
        // Every point resolved (and so validated) before the first run, as `sweep` does.
        let mut models = Vec::new();
        for p in 0..grid.points() {
            models.push(model.at(&grid, p)?.variants);
        }
        let jobs: Vec<u64> = (0..total).collect();
        let runner = Runner::new(self.args.jobs)?;
        let (tx, rx) = std::sync::mpsc::channel::<(u64, String)>();
        runner.stream(&jobs, tx, stop, |j| {
            let job = grid.job(j);
            let seed = grid.seeds[job.replication];
            let r = retrystorm_core::run_summary(&models[job.point as usize][job.variant], seed);
            let rec = SweepRecord::run(&grid, j, r.summary);
            Some((j, record_line(&rec)))
        });
        let mut rows: Vec<(u64, String)> = rx.into_iter().collect();
        rows.sort_by_key(|(j, _)| *j);
        // Keep only the prefix in grid order: a stopped sweep is a `--limit`ed one.
        let done = rows
            .iter()
            .enumerate()
            .take_while(|(i, (j, _))| *i as u64 == *j)
            .count();
        rows.truncate(done);
        let complete = rows.len() as u64 == total;
        let mut lines = vec![header_line(&header)];
        lines.extend(rows.into_iter().map(|(_, l)| l));
        Ok((lines, complete))
    }

    /// `check MODEL [--expect EXPR]...` as JSON: each expectation on each variant with its
    /// verdict, the lines `check` prints, and its verdict line. Refuses a model without
    /// expectations as `check` does. The runs stop once `stop` is set, as in
    /// [`Source::run_outputs`].
    pub fn check_json(&self, extra: &[String], stop: &AtomicBool) -> Result<String, CliError> {
        let scenario = self.scenario()?;
        let exps = expectations(&scenario, &self.origin, extra)?;
        if exps.is_empty() {
            return Err(CliError::Input(format!(
                "{}: no expectations; add [[expect]] tables to the model or pass --expect 'METRIC OP VALUE'",
                self.origin
            )));
        }
        let base = base_seed(&self.args, &scenario.base);
        let seeds = stats::replication_seeds(base, self.args.seeds);
        let results = evaluate(&scenario, &self.args, &exps, &seeds, Timing::Untimed, stop)?;
        let (failed, line) = verdict(&exps, &results);
        let checks: Vec<serde_json::Value> = results
            .iter()
            .map(|c| {
                let (e, o) = (&c.expectation, &c.outcome);
                serde_json::json!({
                    "expectation": e.to_string(),
                    "source": e.source,
                    "metric": e.metric,
                    "op": e.op.as_str(),
                    "value": e.value_text,
                    "variant": o.variant,
                    "passed": o.passed,
                    "seen": o.seen(e.over),
                    "values": o.values,
                    "seed": o.seed,
                    "reproduce": c.reproduce,
                })
            })
            .collect();
        let out = serde_json::json!({
            "model": scenario.name,
            "seeds": seeds,
            "checks": checks,
            "failed": failed,
            "passed": failed == 0,
            "verdict": line,
            "text": render(&results, progress::quiet()),
        });
        Ok(serde_json::to_string_pretty(&out).expect("plain JSON values"))
    }
}
