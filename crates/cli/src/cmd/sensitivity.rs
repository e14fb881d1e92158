//! `retrystorm sensitivity MODEL --vary ... --metric M`: which parameters move a metric, by
//! Morris elementary effects (`retrystorm_core::sensitivity`), as a ranked table, a bar chart
//! and JSON. Every point runs on the same seeds, and a point two trajectories share runs once.
//! `--candidates M` keeps the most spread out of `M` trajectories (Campolongo et al. 2007); `μ*`
//! carries SALib's bootstrap confidence interval.

use crate::args::SensitivityArgs;
use crate::emit::{check_outputs, is_stdout};
use crate::grid::parse_axes;
use crate::model_args::{Resolved, pick_variant};
use crate::run::Runner;
use crate::text::plural;
use crate::{CliError, output, progress};
use retrystorm_core::expect;
use retrystorm_core::sensitivity::{self, Factor};
use retrystorm_core::stats;
use retrystorm_core::sweep::Grid;
use retrystorm_report::{Bar, bar_chart, fmt, text_table};
use serde_json::json;
use std::collections::BTreeMap;

pub fn sensitivity(a: SensitivityArgs) -> Result<(), CliError> {
    let mut outs = Vec::new();
    for (flag, p) in [("--json", &a.json), ("--svg", &a.svg)] {
        if let Some(p) = p {
            outs.push(output::Out::new(flag, p));
        }
    }
    check_outputs(&outs, &a.model)?;
    expect::check_metric(&a.metric)
        .map_err(|e| CliError::Input(format!("--metric {}: {e}", a.metric)))?;
    let axes = parse_axes(&a.vary)?;
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
    let model = Resolved::read(&a.model)?;
    let (origin, scenario, base_seed) = (&model.origin, &model.scenario, model.base_seed);
    let chosen = pick_variant(scenario, a.variant.as_deref(), origin)?;
    let grid = Grid {
        axes,
        variants: vec![chosen.name.clone()],
        seeds: model.seeds(),
    };
    let levels: Vec<usize> = grid.axes.iter().map(|x| x.values.len()).collect();
    let r = a.trajectories as usize;
    let design = match a.candidates {
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
    let trajs = match &design {
        Some(d) => d.trajectories.clone(),
        None => sensitivity::trajectories(&levels, r, base_seed),
    };
    let point_of = |c: &[usize]| {
        c.iter()
            .zip(&levels)
            .fold(0u64, |p, (i, m)| p * *m as u64 + *i as u64)
    };
    // The distinct points, each resolved (and so validated) before the first run.
    let mut index: BTreeMap<u64, usize> = BTreeMap::new();
    for t in &trajs {
        for c in &t.points {
            let n = index.len();
            index.entry(point_of(c)).or_insert(n);
        }
    }
    let mut models = vec![None; index.len()];
    for (p, i) in &index {
        let s = model.at(&grid, *p)?;
        models[*i] = Some(pick_variant(&s, a.variant.as_deref(), origin)?);
    }
    let models: Vec<_> = models.into_iter().map(|m| m.expect("resolved")).collect();
    let runs: Vec<(usize, u64)> = (0..models.len())
        .flat_map(|i| grid.seeds.iter().map(move |s| (i, *s)))
        .collect();
    output::refuse_inputs(&outs)?;
    let runner = Runner::new(a.model.jobs)?;
    let bar = progress::bar(runs.len() as u64, "runs");
    let values: Vec<f64> = runner.map(&runs, &bar, |(i, seed)| {
        let s = retrystorm_core::run_model(&models[*i], *seed, &mut |_| {}).summary;
        expect::metric(&s, &a.metric).unwrap_or(f64::NAN)
    });
    bar.finish_and_clear();
    let per_point: Vec<f64> = values.chunks(grid.seeds.len()).map(stats::mean).collect();
    let y: Vec<Vec<f64>> = trajs
        .iter()
        .map(|t| {
            t.points
                .iter()
                .map(|c| per_point[index[&point_of(c)]])
                .collect()
        })
        .collect();
    let ee = sensitivity::elementary_effects(&levels, &trajs, &y);
    let factors = sensitivity::measures(&ee);
    let conf = sensitivity::mu_star_confs(&ee, base_seed);
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
    let name = if chosen.name == scenario.name {
        scenario.name.clone()
    } else {
        format!("{} ({})", scenario.name, chosen.name)
    };
    let num = |x: f64| {
        if x.is_nan() {
            "-".to_string()
        } else {
            fmt::num(x)
        }
    };
    if !a.json.as_deref().is_some_and(is_stdout) {
        let r = trajs.len();
        let mut t = format!(
            "{name}: Morris elementary effects on {}: {r} trajector{} of {} points, {} ({} distinct points x {})\n\n",
            a.metric,
            if r == 1 { "y" } else { "ies" },
            factors.len() + 1,
            plural(runs.len() as u64, "run"),
            models.len(),
            plural(grid.seeds.len() as u64, "seed"),
        );
        if let (Some(d), Some(m)) = (&design, a.candidates) {
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
        let rows: Vec<Vec<String>> = order
            .iter()
            .enumerate()
            .map(|(r, i)| {
                let f: &Factor = &factors[*i];
                vec![
                    (r + 1).to_string(),
                    grid.axes[*i].key.clone(),
                    levels[*i].to_string(),
                    num(f.mu_star),
                    num(conf[*i]),
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
        output::print(&t)?;
    }
    if let Some(p) = &a.json {
        let jnum = |x: f64| if x.is_finite() { json!(x) } else { json!(null) };
        let v = json!({
            "schema_version": 1,
            "kind": "sensitivity",
            "method": "morris-elementary-effects",
            "model": scenario.name,
            "variant": chosen.name,
            "metric": a.metric,
            "trajectories": trajs.len(),
            "seeds": grid.seeds,
            "runs": runs.len(),
            "selection": match &design {
                None => "random".to_string(),
                Some(d) => format!("campolongo-{}", d.selection.name()),
            },
            "candidates": a.candidates,
            "chosen": design.as_ref().map(|d| &d.chosen),
            "spread": design.as_ref().map(|d| jnum(d.spread)),
            "spread_first": design.as_ref().map(|d| jnum(d.spread_first)),
            "conf_level": sensitivity::CONF_LEVEL,
            "resamples": sensitivity::RESAMPLES,
            "parameters": order.iter().enumerate().map(|(r, i)| {
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
        output::write(output::Out::new("--json", p), &t)?;
    }
    if let Some(p) = &a.svg {
        let bars: Vec<Bar> = order
            .iter()
            .map(|i| Bar {
                label: grid.axes[*i].key.clone(),
                value: factors[*i].mu_star,
                conf: conf[*i],
                second: factors[*i].sigma,
            })
            .collect();
        let svg = bar_chart(
            &format!("{name}: which parameters move {}", a.metric),
            &format!("Morris μ* and σ of {} (per full range)", a.metric),
            (
                "μ* (mean |effect|)",
                "σ",
                &format!("μ* {:.0}% interval", sensitivity::CONF_LEVEL * 100.0),
            ),
            &bars,
        )
        .map_err(|e| CliError::Output(format!("--svg: {e}")))?;
        output::write(output::Out::new("--svg", p), &svg)?;
    }
    Ok(())
}
