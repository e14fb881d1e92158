//! One function per subcommand.

use crate::args::{Cli, Command, CompareArgs, ModelArgs, OutputArgs, RunArgs};
use crate::{CliError, output, progress};
use rayon::prelude::*;
use retrystorm_core::load::{self, Override, Scenario};
use retrystorm_core::model::Model;
use retrystorm_core::summary::{RunReport, SCHEMA_VERSION, VariantResult};
use retrystorm_report as report;

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run(a) => run(a),
        Command::Compare(a) => compare(a),
    }
}

/// Reads and resolves the model file with its `--set` overrides.
pub fn load_model(args: &ModelArgs) -> Result<Scenario, CliError> {
    let origin = args.model.display().to_string();
    let text = std::fs::read_to_string(&args.model)
        .map_err(|e| CliError::Input(format!("{origin}: cannot read the model file: {e}")))?;
    let sets = args
        .sets
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(load::load(&origin, &text, &sets)?)
}

/// Runs every model in parallel (one per core); the result order is the input order.
pub fn simulate(models: &[Model], seed: u64) -> Vec<VariantResult> {
    let bar = progress::bar(models.len() as u64, "variants");
    let results = models
        .par_iter()
        .map(|m| {
            let r = retrystorm_core::run_model(m, seed, &mut |_| {});
            bar.inc(1);
            r
        })
        .collect();
    bar.finish_and_clear();
    results
}

fn run(a: RunArgs) -> Result<(), CliError> {
    let scenario = load_model(&a.model)?;
    let model = match &a.variant {
        None => scenario.base.clone(),
        Some(v) => scenario
            .variants
            .iter()
            .find(|m| &m.name == v)
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = scenario.variants.iter().map(|m| m.name.as_str()).collect();
                CliError::Input(format!(
                    "--variant {v}: no such variant in {}; variants: {}",
                    a.model.model.display(),
                    names.join(", ")
                ))
            })?,
    };
    let seed = a.model.seed.unwrap_or(model.seed);
    let results = simulate(std::slice::from_ref(&model), seed);
    let rep = RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: results,
    };
    emit(&rep, &a.output, report::run_view(&rep))
}

fn compare(a: CompareArgs) -> Result<(), CliError> {
    let scenario = load_model(&a.model)?;
    let models = vary(&scenario, &a.vary, &a.model)?;
    let seed = a.model.seed.unwrap_or(scenario.base.seed);
    let results = simulate(&models, seed);
    let rep = RunReport {
        schema_version: SCHEMA_VERSION,
        model: scenario.name.clone(),
        seed,
        variants: results,
    };
    emit(&rep, &a.output, report::comparison_table(&rep))
}

/// Splits `V1,V2,...` at commas outside parentheses (so `uniform(0ms, 60ms)` stays whole).
pub fn split_values(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    out.push(cur.trim().to_string());
    out
}

/// The file's variants crossed with every `--vary KEY=V1,V2` (each value re-validated).
fn vary(s: &Scenario, varies: &[String], args: &ModelArgs) -> Result<Vec<Model>, CliError> {
    if varies.is_empty() {
        return Ok(s.variants.clone());
    }
    let origin = args.model.display().to_string();
    let text = std::fs::read_to_string(&args.model)
        .map_err(|e| CliError::Input(format!("{origin}: {e}")))?;
    let base_sets = args
        .sets
        .iter()
        .map(|x| Override::parse(x))
        .collect::<Result<Vec<_>, _>>()?;
    // Each grid point is a list of extra overrides with a label.
    let mut points: Vec<(String, Vec<Override>)> = vec![(String::new(), Vec::new())];
    for v in varies {
        let (key, values) = v.split_once('=').ok_or_else(|| {
            CliError::Input(format!(
                "--vary {v}: expected KEY=V1,V2,..., e.g. retry.jitter=none,full"
            ))
        })?;
        let values = split_values(values);
        if values.iter().any(String::is_empty) {
            return Err(CliError::Input(format!(
                "--vary {v}: empty value in the list"
            )));
        }
        let mut next = Vec::new();
        for (label, sets) in &points {
            for val in &values {
                let o = Override::parse_as("--vary", &format!("{key}={val}"))?;
                let mut sets = sets.clone();
                sets.push(o);
                let label = if label.is_empty() {
                    format!("{key}={val}")
                } else {
                    format!("{label} {key}={val}")
                };
                next.push((label, sets));
            }
        }
        points = next;
    }
    let named = s.variants.len() > 1 || s.variants[0].name != s.base.name;
    let mut out = Vec::new();
    for (label, extra) in points {
        let sets: Vec<Override> = base_sets.iter().cloned().chain(extra).collect();
        let loaded = load::load(&origin, &text, &sets)?;
        for mut m in loaded.variants {
            m.name = if named {
                format!("{} {label}", m.name)
            } else {
                label.clone()
            };
            out.push(m);
        }
    }
    Ok(out)
}

/// Prints the table (unless JSON goes to stdout) and writes the requested files.
fn emit(rep: &RunReport, out: &OutputArgs, table: String) -> Result<(), CliError> {
    let json_to_stdout = out.json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let csv_to_stdout = out.csv.as_ref().is_some_and(|p| p.as_os_str() == "-");
    // Render everything first, so a failing chart leaves no output half-written.
    let mut files = Vec::new();
    if let Some(p) = &out.json {
        files.push((p, report::to_json(rep)));
    }
    if let Some(p) = &out.csv {
        files.push((
            p,
            report::series_csv(rep).map_err(|e| CliError::Output(format!("csv: {e}")))?,
        ));
    }
    if let Some(p) = &out.svg {
        files.push((
            p,
            report::load_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.outcomes_svg {
        files.push((
            p,
            report::outcome_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if let Some(p) = &out.cdf_svg {
        files.push((
            p,
            report::cdf_chart(rep).map_err(|e| CliError::Output(format!("svg: {e}")))?,
        ));
    }
    if !json_to_stdout && !csv_to_stdout {
        println!("{} (seed {})", rep.model, rep.seed);
        print!("{table}");
    }
    for (p, text) in files {
        output::write(p, &text)?;
    }
    Ok(())
}
