//! `retrystorm compare MODEL`: every variant of the file (crossed with `--vary`) side by side.

use crate::args::CompareArgs;
use crate::grid::{check_grid_size, parse_axes};
use crate::model_args::{Resolved, base_is_a_variant, has_named_variants};
use crate::prepare::{self, Views};
use crate::text::plural;
use crate::{error::CliError, output};
use retrystorm_core::model::Model;
use retrystorm_core::stats;
use retrystorm_core::study::verdict::judge;
use retrystorm_core::sweep::Grid;
use retrystorm_report as report;

pub fn compare(a: CompareArgs) -> Result<(), CliError> {
    let p = prepare::traced(&a.output, &a.trace, &a.model)?;
    let scenario = &p.model.scenario;
    let models = vary(&p.model, &a.vary)?;
    crate::trace::check_total(&a.trace, models.len())?;
    output::refuse_inputs(&p.outs)?;
    if !base_is_a_variant(scenario) {
        crate::progress::note(&format!(
            "note: {} runs its {}, not its base by itself; to have the base as a row, add a [[variant]] with only a name, e.g. name = \"base\"",
            a.model.model.display(),
            plural(scenario.variants.len() as u64, "variant")
        ));
    }
    let metrics = &a.output.metrics;
    // `--verdict`: each row's model judged before it runs (`docs/verdict.md`).
    let labels: Vec<report::Labels> = a
        .verdict
        .then(|| report::Labels {
            header: "verdict".into(),
            cells: models
                .iter()
                .map(|m| crate::stability::cell(&judge(m)))
                .collect(),
        })
        .into_iter()
        .collect();
    let views = Views {
        one: |rep: &_| report::comparison_table_labelled(rep, metrics, &labels),
        many: |rep: &_| report::ci_table_labelled(rep, metrics, &labels),
    };
    p.run_and_emit(&models, p.model.base_seed, views)
}

/// The most rows `compare --vary` builds: every row is a resolved model and a result with its
/// series, all held for the table (a sweep keeps one line of numbers per run instead).
pub const MAX_COMPARE_ROWS: u64 = 10_000;

/// The file's variants crossed with every `--vary KEY=V1,V2` (or a range, as `sweep` takes it;
/// each value re-validated). A key varied twice, a value listed twice, a grid over [`MAX_RUNS`](retrystorm_core::sweep::MAX_RUNS)
/// runs and one of more than [`MAX_COMPARE_ROWS`] rows are refused, before any is built.
fn vary(model: &Resolved, varies: &[String]) -> Result<Vec<Model>, CliError> {
    let s = &model.scenario;
    if varies.is_empty() {
        return Ok(s.variants.clone());
    }
    let axes = parse_axes(varies)?;
    let grid = Grid {
        axes,
        variants: s.variants.iter().map(|m| m.name.clone()).collect(),
        seeds: stats::replication_seeds(0, model.args.seeds),
    };
    check_grid_size(&grid)?;
    check_rows(&grid)?;
    let named = has_named_variants(s);
    let mut out = Vec::new();
    for point in 0..grid.points() {
        let label = grid
            .params(point)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        for mut m in model.at(&grid, point)?.variants {
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

/// Refuses a grid of more than [`MAX_COMPARE_ROWS`] rows (its points times the variants).
fn check_rows(grid: &Grid) -> Result<(), CliError> {
    let rows = grid
        .checked_points()
        .and_then(|p| p.checked_mul(grid.variants.len() as u64));
    if rows.is_none_or(|r| r > MAX_COMPARE_ROWS) {
        return Err(CliError::Input(format!(
            "--vary: compare would hold {} rows in memory ({} points x {}), each a model and its series, for its table; at most {MAX_COMPARE_ROWS} per process: use larger steps, or `retrystorm sweep` for a larger grid",
            rows.map_or_else(
                || "more than 18446744073709551615".to_string(),
                |r| r.to_string()
            ),
            grid.checked_points()
                .map_or_else(|| "too many".to_string(), |n| n.to_string()),
            plural(grid.variants.len() as u64, "variant")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::ModelArgs;

    fn args(seeds: u32) -> ModelArgs {
        ModelArgs {
            model: "not-on-disk/model.toml".into(),
            seed: None,
            sets: Vec::new(),
            max_events: None,
            seeds,
            jobs: None,
        }
    }

    /// The `--vary` points load from the model text resolved once: the file is not read again
    /// (here there is none), each row is named by its point's values after its variant's name.
    #[test]
    fn vary_loads_its_points_from_the_resolved_text() {
        let text = "name = \"m\"\n[workload]\nkind = \"burst\"\nclients = 10\n\
                    [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nretry.max_attempts = 7\n";
        let args = args(1);
        let model = Resolved::from_text(&args, args.model.display().to_string(), text.into())
            .expect("a valid model");
        let rows = vary(&model, &["retry.base=10ms,20ms".into()]).expect("a valid grid");
        let names: Vec<&str> = rows.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "a retry.base=10ms",
                "b retry.base=10ms",
                "a retry.base=20ms",
                "b retry.base=20ms"
            ]
        );
        assert_eq!(
            rows[3].retry.max_attempts, 7,
            "a variant keeps its own keys"
        );
        let plain = Resolved::from_text(&args, "m.toml".into(), "name = \"m\"\n".into())
            .expect("a valid model");
        let rows = vary(&plain, &["retry.max_attempts=2,3".into()]).expect("a valid grid");
        let names: Vec<&str> = rows.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["retry.max_attempts=2", "retry.max_attempts=3"]);
        assert_eq!(rows[1].retry.max_attempts, 3);
    }

    /// Rows are the grid's points times the file's variants, refused past the limit.
    #[test]
    fn a_grid_of_too_many_rows_is_refused_before_any_is_built() {
        let args = args(1);
        let model = Resolved::from_text(&args, "m.toml".into(), "name = \"m\"\n".into())
            .expect("a valid model");
        let e = vary(&model, &["retry.max_attempts=1..10001:1".into()])
            .expect_err("too many rows")
            .to_string();
        assert!(e.contains("compare would hold 10001 rows"), "{e}");
    }
}
