//! `retrystorm sensitivity MODEL --vary ... --metric M`: which parameters move a metric, by
//! Morris elementary effects (`retrystorm_core::sensitivity`), as a ranked table, a bar chart
//! and JSON. Every point runs on the same seeds, and a point two trajectories share runs once.
//! `--candidates M` keeps the most spread out of `M` trajectories (Campolongo et al. 2007); `μ*`
//! carries SALib's bootstrap confidence interval.

use crate::args::SensitivityArgs;
use crate::grid::parse_axes;
use crate::prepare::{StudyView, VariantGrid, show, study_outputs, variant_grid};
use crate::run::Runner;
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_core::expect;
use retrystorm_core::model::Model;
use retrystorm_core::sensitivity::{self, Factor, Trajectory};
use retrystorm_core::stats;
use retrystorm_core::sweep::{Axis, Grid};
use retrystorm_report::{Bar, bar_chart, fmt, text_table};
use serde_json::json;
use std::collections::BTreeMap;

pub fn sensitivity(a: SensitivityArgs) -> Result<(), CliError> {
    let outs = study_outputs(&[("--json", &a.json), ("--svg", &a.svg)], &a.model)?;
    expect::check_metric(&a.metric)
        .map_err(|e| CliError::Input(format!("--metric {}: {e}", a.metric)))?;
    let axes = parameters(&a.study.vary)?;
    let study = variant_grid(&a.model, a.study.variant.as_deref(), axes)?;
    let design = design(&a, &study)?;
    let points = Points::of(&design);
    let models = points.models(&study)?;
    output::refuse_inputs(&outs)?;
    let per_point = run_points(&a, &study.grid, &models)?;
    let ranked = rank(&a, &study, &design, &points, &per_point);
    let scenario = &study.model.scenario;
    let name = if study.chosen.name == scenario.name {
        scenario.name.clone()
    } else {
        format!("{} ({})", scenario.name, study.chosen.name)
    };
    let shown = Shown {
        a: &a,
        study: &study,
        design: &design,
        ranked: &ranked,
        runs: models.len() * study.grid.seeds.len(),
        distinct: models.len(),
        name,
    };
    show(&shown, &a.json, &a.svg)
}

/// The `--vary` axes, refused unless there is at least one and each has two values or more.
fn parameters(vary: &[String]) -> Result<Vec<Axis>, CliError> {
    let axes = parse_axes(vary)?;
    if axes.is_empty() {
        return Err(CliError::Input(
            "sensitivity needs the parameters to rank: --vary KEY=V1,V2,... for each, e.g. --vary retry.max_attempts=1..6:1 --vary retry.base=10ms,100ms,1s".into(),
        ));
    }
    if let Some(x) = axes.iter().find(|x| x.values.len() < 2) {
        return Err(CliError::Input(format!(
            "--vary {}: a parameter needs at least two values to have an effect",
            x.key
        )));
    }
    Ok(axes)
}

/// The Morris design: each parameter's number of levels and the trajectories through them,
/// seeded from the base seed; with `--candidates M`, the most spread out of `M` (Campolongo).
struct Design {
    levels: Vec<usize>,
    trajs: Vec<Trajectory>,
    chosen: Option<sensitivity::Design>,
}

fn design(a: &SensitivityArgs, study: &VariantGrid) -> Result<Design, CliError> {
    let levels: Vec<usize> = study.grid.axes.iter().map(|x| x.values.len()).collect();
    let (r, base_seed) = (a.trajectories as usize, study.model.base_seed);
    let chosen = match a.candidates {
        None => None,
        Some(m) if r < 2 => {
            return Err(CliError::Input(format!(
                "--candidates {m} needs --trajectories of at least 2: the spread it maximises is between trajectories (got --trajectories {r})"
            )));
        }
        Some(m) if m as usize <= r => {
            return Err(CliError::Input(format!(
                "--candidates {m} must exceed --trajectories {r}: it draws M candidate trajectories and keeps the R most spread out"
            )));
        }
        Some(m) => Some(sensitivity::campolongo(&levels, r, m as usize, base_seed)),
    };
    let trajs = match &chosen {
        Some(d) => d.trajectories.clone(),
        None => sensitivity::trajectories(&levels, r, base_seed),
    };
    Ok(Design {
        levels,
        trajs,
        chosen,
    })
}

/// The distinct grid points the trajectories visit, each numbered once in the order first
/// visited: a point two trajectories share runs once.
struct Points<'d> {
    levels: &'d [usize],
    index: BTreeMap<u64, usize>,
}

impl<'d> Points<'d> {
    fn of(design: &'d Design) -> Points<'d> {
        let mut points = Points {
            levels: &design.levels,
            index: BTreeMap::new(),
        };
        for t in &design.trajs {
            for c in &t.points {
                let n = points.index.len();
                let p = points.point_of(c);
                points.index.entry(p).or_insert(n);
            }
        }
        points
    }

    /// The grid point of a trajectory's level coordinates.
    fn point_of(&self, c: &[usize]) -> u64 {
        c.iter()
            .zip(self.levels)
            .fold(0u64, |p, (i, m)| p * *m as u64 + *i as u64)
    }

    /// The number of a trajectory's point among the distinct ones.
    fn number(&self, c: &[usize]) -> usize {
        self.index[&self.point_of(c)]
    }

    /// Every distinct point's model, resolved (and so validated) before the first run.
    fn models(&self, study: &VariantGrid) -> Result<Vec<Model>, CliError> {
        let mut models = vec![None; self.index.len()];
        for (p, i) in &self.index {
            models[*i] = Some(study.model_at(*p)?);
        }
        Ok(models.into_iter().map(|m| m.expect("resolved")).collect())
    }
}

/// Runs every distinct point on every seed; the metric's mean over the seeds, by point.
fn run_points(a: &SensitivityArgs, grid: &Grid, models: &[Model]) -> Result<Vec<f64>, CliError> {
    let runs: Vec<(usize, u64)> = (0..models.len())
        .flat_map(|i| grid.seeds.iter().map(move |s| (i, *s)))
        .collect();
    let runner = Runner::new(a.model.jobs)?;
    let bar = progress::bar(runs.len() as u64, "runs");
    let values: Vec<f64> = runner.map(&runs, &bar, |(i, seed)| {
        let s = retrystorm_core::run_model(&models[*i], *seed, &mut |_| {}).summary;
        expect::metric(&s, &a.metric).unwrap_or(f64::NAN)
    });
    bar.finish_and_clear();
    Ok(values.chunks(grid.seeds.len()).map(stats::mean).collect())
}

/// Each parameter's Morris measures, the bootstrap half-width of its `μ*`, and the ranking.
struct Ranked {
    factors: Vec<Factor>,
    conf: Vec<f64>,
    order: Vec<usize>,
}

/// The elementary effects of the trajectories' means, measured and ranked; says on stderr how
/// many effects a run without the metric left out.
fn rank(
    a: &SensitivityArgs,
    study: &VariantGrid,
    design: &Design,
    points: &Points,
    per_point: &[f64],
) -> Ranked {
    let trajs = &design.trajs;
    let y: Vec<Vec<f64>> = trajs
        .iter()
        .map(|t| {
            t.points
                .iter()
                .map(|c| per_point[points.number(c)])
                .collect()
        })
        .collect();
    let ee = sensitivity::elementary_effects(&design.levels, trajs, &y);
    let factors = sensitivity::measures(&ee);
    let conf = sensitivity::mu_star_confs(&ee, study.model.base_seed);
    let order = sensitivity::ranking(&factors);
    let missing = factors
        .iter()
        .map(|f| trajs.len() - f.effects)
        .sum::<usize>();
    if missing > 0 {
        progress::note(&format!(
            "{} of {} elementary effects left out: {} was absent in some run (e.g. recovery_ms of a run that never recovered)",
            missing,
            trajs.len() * factors.len(),
            a.metric
        ));
    }
    Ranked {
        factors,
        conf,
        order,
    }
}

/// What the table, the JSON and the chart show.
struct Shown<'s> {
    a: &'s SensitivityArgs,
    study: &'s VariantGrid<'s>,
    design: &'s Design,
    ranked: &'s Ranked,
    runs: usize,
    distinct: usize,
    /// The model's name, with the variant's when it has one of its own.
    name: String,
}

/// A value of the table: `-` for one absent.
fn num(x: f64) -> String {
    if x.is_nan() {
        "-".to_string()
    } else {
        fmt::num(x)
    }
}

impl StudyView for Shown<'_> {
    /// The ranked table, with its heading and a key to its columns.
    fn table(&self) -> String {
        let (a, grid, factors) = (self.a, &self.study.grid, &self.ranked.factors);
        let levels = &self.design.levels;
        let r = self.design.trajs.len();
        let mut t = format!(
            "{}: Morris elementary effects on {}: {r} trajector{} of {} points, {} ({} distinct points x {})\n\n",
            self.name,
            a.metric,
            if r == 1 { "y" } else { "ies" },
            factors.len() + 1,
            plural(self.runs as u64, "run"),
            self.distinct,
            plural(grid.seeds.len() as u64, "seed"),
        );
        if let (Some(d), Some(m)) = (&self.design.chosen, a.candidates) {
            t.push_str(&format!(
                "the {r} most spread out of {m} candidates (Campolongo et al. 2007, {}): spread {} against {} for the first {r}\n\n",
                match d.selection {
                    sensitivity::Selection::BruteForce => "by brute force",
                    sensitivity::Selection::Local => "by Ruano et al. 2012's local method",
                },
                fmt::num(d.spread),
                fmt::num(d.spread_first),
            ));
        }
        let headers: Vec<String> = [
            "rank",
            "parameter",
            "levels",
            "mu*",
            "mu*_conf",
            "mu",
            "sigma",
            "effects",
        ]
        .map(String::from)
        .to_vec();
        let rows: Vec<Vec<String>> = self
            .ranked
            .order
            .iter()
            .enumerate()
            .map(|(r, i)| {
                let f: &Factor = &factors[*i];
                vec![
                    (r + 1).to_string(),
                    grid.axes[*i].key.clone(),
                    levels[*i].to_string(),
                    num(f.mu_star),
                    num(self.ranked.conf[*i]),
                    num(f.mu),
                    num(f.sigma),
                    f.effects.to_string(),
                ]
            })
            .collect();
        t.push_str(&text_table(&headers, &rows));
        t.push_str(&format!(
            "\nmu*: the mean |effect| on {} of moving the parameter across its whole range;\nmu*_conf: the half-width of its {:.0}% bootstrap interval ({} resamples of the effects);\nsigma large against mu*: the effect depends on the other parameters or is not linear\n",
            a.metric,
            sensitivity::CONF_LEVEL * 100.0,
            sensitivity::RESAMPLES,
        ));
        t
    }

    /// The JSON document (`docs/tune.md`), pretty-printed.
    fn json(&self) -> String {
        let (a, grid, design) = (self.a, &self.study.grid, &self.design.chosen);
        let (factors, conf) = (&self.ranked.factors, &self.ranked.conf);
        let jnum = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
        let v = json!({
            "schema_version": 1,
            "kind": "sensitivity",
            "method": "morris-elementary-effects",
            "model": self.study.model.scenario.name,
            "variant": self.study.chosen.name,
            "metric": a.metric,
            "trajectories": self.design.trajs.len(),
            "seeds": grid.seeds,
            "runs": self.runs,
            "selection": match design {
                None => "random".to_string(),
                Some(d) => format!("campolongo-{}", d.selection.name()),
            },
            "candidates": a.candidates,
            "chosen": design.as_ref().map(|d| &d.chosen),
            "spread": design.as_ref().map(|d| jnum(d.spread)),
            "spread_first": design.as_ref().map(|d| jnum(d.spread_first)),
            "conf_level": sensitivity::CONF_LEVEL,
            "resamples": sensitivity::RESAMPLES,
            "parameters": self.ranked.order.iter().enumerate().map(|(r, i)| {
                let f = &factors[*i];
                json!({
                    "rank": r + 1,
                    "key": grid.axes[*i].key,
                    "values": grid.axes[*i].values,
                    "mu_star": jnum(f.mu_star),
                    "mu_star_conf": jnum(conf[*i]),
                    "mu": jnum(f.mu),
                    "sigma": jnum(f.sigma),
                    "effects": f.effects,
                })
            }).collect::<Vec<_>>(),
        });
        let mut t = serde_json::to_string_pretty(&v).expect("JSON of plain values");
        t.push('\n');
        t
    }

    /// The bar chart: `μ*` with its interval, and `σ`, by rank.
    fn svg(&self) -> Result<String, CliError> {
        let (metric, ranked) = (&self.a.metric, self.ranked);
        let bars: Vec<Bar> = ranked
            .order
            .iter()
            .map(|i| Bar {
                label: self.study.grid.axes[*i].key.clone(),
                value: ranked.factors[*i].mu_star,
                conf: ranked.conf[*i],
                second: ranked.factors[*i].sigma,
            })
            .collect();
        bar_chart(
            &format!("{}: which parameters move {metric}", self.name),
            &format!("Morris μ* and σ of {metric} (per full range)"),
            (
                "μ* (mean |effect|)",
                "σ",
                &format!("μ* {:.0}% interval", sensitivity::CONF_LEVEL * 100.0),
            ),
            &bars,
        )
        .map_err(|e| CliError::Output(format!("--svg: {e}")))
    }
}
