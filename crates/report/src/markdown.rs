//! GitHub-flavoured markdown (`--md`): the comparison table for a pull-request comment.
//!
//! Hand-written rather than from a table crate: comfy-table's markdown preset (checked, 7.2) has
//! no alignment row (`---:`), so numbers would come out left-aligned on GitHub.

use retrystorm_core::summary::{ReplicatedReport, RunReport};

/// Escapes text for a markdown table cell or paragraph: `|`, `\`, and the characters that would
/// start emphasis, code or HTML.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '*' | '_' | '`' | '<' | '>' | '[' | ']' => {
                o.push('\\');
                o.push(c);
            }
            '\n' | '\r' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// A GFM table: a header row, an alignment row (`---:` where `right[i]`), and the rows.
pub fn table(headers: &[String], right: &[bool], rows: &[Vec<String>]) -> String {
    let line = |cells: &mut dyn Iterator<Item = String>| {
        let mut l = String::from("|");
        for c in cells {
            l.push(' ');
            l.push_str(&c);
            l.push_str(" |");
        }
        l.push('\n');
        l
    };
    let mut out = line(&mut headers.iter().map(|h| escape(h)));
    out.push_str(&line(&mut (0..headers.len()).map(|i| {
        if right.get(i).copied().unwrap_or(false) {
            "---:".to_string()
        } else {
            "---".to_string()
        }
    })));
    for r in rows {
        out.push_str(&line(&mut r.iter().map(|c| escape(c))));
    }
    out
}

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
    let mut out = format!("**{}** (seed {})\n\n", escape(&report.model), report.seed);
    out.push_str(&table(&h, &right, &rows));
    out.push_str(&format!(
        "\nmeans over {} seeds ({}..={}), ± the 95% confidence half-width (Student t)\n",
        report.seeds.len(),
        report.seeds.first().copied().unwrap_or(0),
        report.seeds.last().copied().unwrap_or(0)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfm_table_with_alignment_and_escaping() {
        let t = table(
            &["variant".into(), "p99 ms".into()],
            &[false, true],
            &[vec!["a|b".into(), "1,234".into()]],
        );
        assert_eq!(
            t,
            "| variant | p99 ms |\n| --- | ---: |\n| a\\|b | 1,234 |\n"
        );
    }
}
