//! GitHub-flavoured markdown (`--md`): the comparison table for a pull-request comment (the
//! syntax in `gfm`).

use retrystorm_core::summary::{ReplicatedReport, RunReport};

pub use crate::gfm::{escape, table};

/// The comparison table of `run`/`compare` as markdown.
pub fn comparison_table(report: &RunReport) -> String {
    crate::table::comparison_markdown(report)
}

/// [`comparison_table`] with a column per `--metric` (`crate::table::comparison_table_with`).
pub fn comparison_table_with(report: &RunReport, extra: &[String]) -> String {
    crate::table::comparison_markdown_with(report, extra)
}

/// The replicated table (`--seeds N`) as markdown: `mean ± half-width` cells.
pub fn ci_table(report: &ReplicatedReport) -> String {
    ci_table_with(report, &[])
}

/// [`ci_table`] with a column per `--metric` (`crate::ci::ci_rows_with`).
pub fn ci_table_with(report: &ReplicatedReport, extra: &[String]) -> String {
    let (h, rows) = crate::ci::ci_rows_with(report, extra);
    let right: Vec<bool> = (0..h.len()).map(|i| i > 0).collect();
    let seeds = u32::try_from(report.seeds.len()).unwrap_or(u32::MAX);
    let mut out = format!(
        "**{}** ({})\n\n",
        escape(&report.model),
        crate::fmt::seeds_label(report.seed, seeds)
    );
    out.push_str(&table(&h, &right, &rows));
    out.push_str(&format!(
        "\nmeans over {} seeds ({}..={}), ± the 95% confidence half-width (Student t)\n",
        report.seeds.len(),
        report.seeds.first().copied().unwrap_or(0),
        report.seeds.last().copied().unwrap_or(0)
    ));
    if let Some((h, rows)) = crate::ci::ci_replica_grid(report) {
        out.push('\n');
        out.push_str(&crate::replica_rows::replica_markdown(&h, &rows));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfm_table_with_alignment_and_escaping() {
        let t = table(
            &["variant", "p99 ms"],
            &[false, true],
            &[vec!["a|b".into(), "1,234".into()]],
        );
        assert_eq!(
            t,
            "| variant | p99 ms |\n| --- | ---: |\n| a\\|b | 1,234 |\n"
        );
    }
}
