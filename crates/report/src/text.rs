//! Aligned plain-text tables for stdout, laid out by comfy-table: no borders, two
//! spaces between columns, a rule of dashes under the header exactly as wide as each column, no
//! trailing spaces.
//!
//! ```text
//! variant   intents  p99 ms
//! --------  -------  ------
//! baseline   10,000     851
//! ```

use comfy_table::{CellAlignment, Table, presets::NOTHING};

/// The space between two columns.
const GAP: u16 = 2;

/// Renders `headers` and `rows` as an aligned text table; column `i` is right-aligned when
/// `right(i)` (numbers), else left-aligned (names). A row may be shorter than the header. A
/// column with no text at all (empty header and cells) is one character wide (comfy-table's
/// minimum), its rule one dash.
pub fn aligned(headers: &[String], rows: &[Vec<String>], right: impl Fn(usize) -> bool) -> String {
    // comfy-table's own header line spans the padding between columns too, so the rule is a row
    // of dashes as wide as the widest cell of each column, measured by comfy-table itself.
    let mut measure = Table::new();
    measure.set_header(headers).add_rows(rows.iter().cloned());
    let rule: Vec<String> = measure
        .column_max_content_widths()
        .iter()
        .map(|w| "-".repeat(usize::from(*w)))
        .collect();

    let mut table = Table::new();
    table
        .load_preset(NOTHING)
        .set_header(headers)
        .add_row(rule)
        .add_rows(rows.iter().cloned());
    let last = table.column_count().saturating_sub(1);
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, if i < last { GAP } else { 0 }));
        column.set_cell_alignment(if right(i) {
            CellAlignment::Right
        } else {
            CellAlignment::Left
        });
    }
    table.lines().fold(String::new(), |mut out, line| {
        out.push_str(line.trim_end());
        out.push('\n');
        out
    })
}

/// `key: value` lines, the values aligned one space after the longest key (the one-variant
/// views).
pub fn key_values(rows: &[(String, String)]) -> String {
    let width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 1;
    let mut out = String::new();
    for (k, val) in rows {
        let key = format!("{k}:");
        let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{key:<width$} {val}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn names_left_numbers_right_rule_as_wide_as_each_column() {
        let headers = strings(&["variant", "n", "p99 ms"]);
        let rows = vec![
            strings(&["a", "10,000", "1.5"]),
            strings(&["long name", "7", "851"]),
        ];
        let t = aligned(&headers, &rows, |i| i > 0);
        assert_eq!(
            t,
            "variant         n  p99 ms\n\
             ---------  ------  ------\n\
             a          10,000     1.5\n\
             long name       7     851\n"
        );
    }

    #[test]
    fn no_trailing_spaces_and_short_rows_end_early() {
        let headers = strings(&["key", "value"]);
        let rows = vec![strings(&["a"]), strings(&["b", "xyz"])];
        let t = aligned(&headers, &rows, |_| false);
        assert_eq!(t, "key  value\n---  -----\na\nb    xyz\n");
        assert!(t.lines().all(|l| l == l.trim_end()));
    }

    #[test]
    fn header_only() {
        let t = aligned(&strings(&["a", "bb"]), &[], |i| i == 1);
        assert_eq!(t, "a  bb\n-  --\n");
    }

    #[test]
    fn an_empty_column_is_one_space_wide() {
        let t = aligned(
            &strings(&["a", "", "b"]),
            &[strings(&["x", "", "y"])],
            |_| false,
        );
        assert_eq!(t, "a     b\n-  -  -\nx     y\n");
    }

    #[test]
    fn width_counts_characters_not_bytes() {
        let headers = strings(&["x", "mean"]);
        let rows = vec![strings(&["µ", "1 ± 2"])];
        let t = aligned(&headers, &rows, |i| i == 1);
        assert_eq!(t, "x   mean\n-  -----\nµ  1 ± 2\n");
    }
}
