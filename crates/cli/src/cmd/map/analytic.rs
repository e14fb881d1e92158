//! `map --verdict`: each cell's analytic stability verdict (`retrystorm_core::study::verdict`,
//! no run) beside the simulated share of runs that stay down, and whether the two agree. The
//! verdict says *down* for `overloaded`, and for `vulnerable` unless the fluid model of the
//! cell's own trigger says it recovers (`docs/verdict.md`, "Against the simulator").

use super::CellRuns;
use super::shown::{self, share_down};
use crate::error::CliError;
use retrystorm_core::map::adaptive::DOWN_AT;
use retrystorm_core::model::Model;
use retrystorm_core::study::verdict::{Verdict, judge_brief};
use serde_json::{Value, json};

/// `--verdict` with a sweep file: refused (the cells' models are not at hand).
pub(super) fn refuse_sweep_file(verdict: bool) -> Result<(), CliError> {
    if verdict {
        return Err(CliError::Input(
            "--verdict judges each cell's model: give the model file and --vary, not a sweep file"
                .into(),
        ));
    }
    Ok(())
}

/// `--verdict`: every cell's model judged, by point; none without the flag.
pub(super) fn judged(verdict: bool, models: &[Model]) -> Option<Vec<Analytic>> {
    verdict.then(|| models.iter().map(Analytic::of).collect())
}

/// Puts each cell's judgement beside its runs (the cells are in point order).
pub(super) fn attach(cells: &mut [CellRuns], judged: Option<Vec<Analytic>>) {
    for (c, a) in cells.iter_mut().zip(judged.into_iter().flatten()) {
        c.analytic = Some(a);
    }
}

/// Whether the map was asked for `--verdict`.
fn asked(cells: &[CellRuns]) -> bool {
    cells.iter().any(|c| c.analytic.is_some())
}

/// The table's headers for the verdict's columns (none without `--verdict`).
pub(super) fn headers(cells: &[CellRuns]) -> Vec<String> {
    let names = ["analytic verdict", "agrees"];
    if asked(cells) {
        names.map(String::from).to_vec()
    } else {
        Vec::new()
    }
}

/// A cell's columns for the table.
pub(super) fn columns(c: &CellRuns, v: &shown::Verdict) -> Vec<String> {
    c.analytic
        .as_ref()
        .map_or_else(Vec::new, |a| a.columns(share_down(v)))
}

/// A cell's JSON fields.
pub(super) fn fields(c: &CellRuns, v: &shown::Verdict, cell: &mut Value) {
    if let Some(a) = &c.analytic {
        a.fields(share_down(v), cell);
    }
}

/// A cell's label on the chart, with the verdict's letter.
pub(super) fn label(c: &CellRuns, v: &shown::Verdict, label: String) -> String {
    match &c.analytic {
        Some(a) => format!("{label} {}", a.mark(share_down(v))),
        None => label,
    }
}

/// The legend's addition: what the letters mean.
pub(super) fn legend(cells: &[CellRuns]) -> &'static str {
    if asked(cells) {
        "; letter: the analytic verdict (S stable, V vulnerable, O overloaded), * where it disagrees"
    } else {
        ""
    }
}

/// The table's closing line: how many judged cells agree (empty without `--verdict`).
pub(super) fn agreement(cells: &[CellRuns], shown: &[shown::Verdict]) -> String {
    if !asked(cells) {
        return String::new();
    }
    let judged: Vec<bool> = cells
        .iter()
        .zip(shown)
        .filter_map(|(c, v)| c.analytic.as_ref()?.agrees(share_down(v)?))
        .collect();
    let agree = judged.iter().filter(|x| **x).count();
    format!(
        "the analytic verdict agrees with the simulation on {agree} of {} judged cells\n",
        judged.len()
    )
}

/// One cell judged without a run.
#[derive(Clone, Debug)]
pub(super) struct Analytic {
    pub verdict: Verdict,
    /// The deciding ratio (none: unknown).
    pub ratio: Option<f64>,
    /// Whether the cell's trigger tips it, when the fluid model followed it.
    pub tips: Option<bool>,
}

impl Analytic {
    pub fn of(m: &Model) -> Analytic {
        let j = judge_brief(m);
        Analytic {
            verdict: j.verdict,
            ratio: j.ratio,
            tips: j.trigger.as_ref().and_then(|t| t.tips),
        }
    }

    /// Whether the verdict says the cell stays down after its trigger; none when unknown.
    pub fn down(&self) -> Option<bool> {
        match self.verdict {
            Verdict::Overloaded => Some(true),
            Verdict::Vulnerable => Some(self.tips != Some(false)),
            Verdict::Stable => Some(false),
            Verdict::Unknown => None,
        }
    }

    /// Whether it agrees with the simulation: half or more of the runs stay down exactly where
    /// the verdict says down.
    pub fn agrees(&self, share_down: f64) -> Option<bool> {
        self.down().map(|d| d == (share_down >= DOWN_AT))
    }

    /// The chart's mark: the verdict's letter, with `*` where it disagrees.
    pub fn mark(&self, share_down: Option<f64>) -> String {
        let letter = match self.verdict {
            Verdict::Stable => "S",
            Verdict::Vulnerable => "V",
            Verdict::Overloaded => "O",
            Verdict::Unknown => "?",
        };
        let off = share_down.and_then(|s| self.agrees(s)) == Some(false);
        format!("{letter}{}", if off { "*" } else { "" })
    }

    /// The table's columns: the verdict with its ratio, and whether it agrees.
    pub fn columns(&self, share_down: Option<f64>) -> Vec<String> {
        let v = match self.ratio {
            Some(r) => format!("{} {r:.2}", self.verdict.name()),
            None => self.verdict.name().to_string(),
        };
        let agrees = match share_down.and_then(|s| self.agrees(s)) {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        vec![v, agrees.to_string()]
    }

    /// The cell's JSON fields.
    pub fn fields(&self, share_down: Option<f64>, cell: &mut Value) {
        cell["analytic_verdict"] = json!(self.verdict.name());
        cell["analytic_ratio"] = json!(self.ratio.filter(|r| r.is_finite()));
        cell["analytic_tips"] = json!(self.tips);
        cell["analytic_down"] = json!(self.down());
        if let Some(s) = share_down {
            cell["agrees"] = json!(self.agrees(s));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(verdict: Verdict, tips: Option<bool>) -> Analytic {
        Analytic {
            verdict,
            ratio: Some(1.5),
            tips,
        }
    }

    #[test]
    fn down_follows_the_verdict_and_the_trigger() {
        assert_eq!(cell(Verdict::Overloaded, None).down(), Some(true));
        assert_eq!(cell(Verdict::Vulnerable, Some(false)).down(), Some(false));
        assert_eq!(cell(Verdict::Vulnerable, None).down(), Some(true));
        assert_eq!(cell(Verdict::Stable, None).down(), Some(false));
        assert_eq!(cell(Verdict::Unknown, None).down(), None);
        let v = cell(Verdict::Vulnerable, Some(true));
        assert_eq!(
            (v.mark(Some(1.0)), v.mark(Some(0.0))),
            ("V".into(), "V*".into())
        );
        assert_eq!(v.columns(Some(0.4)), vec!["vulnerable 1.50", "no"]);
    }
}
