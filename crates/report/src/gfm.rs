//! GitHub-flavoured markdown syntax: escaping a cell and laying out a table. The tables built
//! with it live in `table`, `ci` and `markdown`.
//!
//! Hand-written rather than from a table crate: comfy-table's markdown preset (checked, 7.2) has
//! no alignment row (`---:`), so numbers would come out left-aligned on GitHub.

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
pub fn table<H: AsRef<str>>(headers: &[H], right: &[bool], rows: &[Vec<String>]) -> String {
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
    let mut out = line(&mut headers.iter().map(|h| escape(h.as_ref())));
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
