//! The file's text: where a key is (line and column), how deep it nests, and TOML syntax errors
//! in words.

use super::*;

pub(super) struct Doc<'a> {
    pub(super) origin: &'a str,
    pub(super) text: &'a str,
    pub(super) spans: Option<toml_edit::Document<&'a str>>,
}

impl Doc<'_> {
    pub(super) fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rfind('\n')
            .map_or(before.len(), |p| before.len() - p - 1)
            + 1;
        (line, col)
    }

    /// The span of the deepest existing key along `path`; a segment `name[i]` descends into the
    /// `i`-th table of an array of tables (`[[tier]]`) or of an inline array.
    pub(super) fn find(&self, path: &[String]) -> Option<usize> {
        let doc = self.spans.as_ref()?;
        let mut table: Option<&dyn toml_edit::TableLike> = Some(doc.as_table());
        let mut best = None;
        for seg in path {
            let (name, index) = match seg.split_once('[') {
                Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
                None => (seg.as_str(), None),
            };
            let Some(t) = table else { break };
            let Some((key, item)) = t.get_key_value(name) else {
                break;
            };
            best = key
                .span()
                .map(|s| s.start)
                .or(item.span().map(|s| s.start))
                .or(best);
            table = match (item, index) {
                (toml_edit::Item::ArrayOfTables(a), Some(i)) => a.get(i).map(|t| {
                    best = t.span().map(|s| s.start).or(best);
                    t as &dyn toml_edit::TableLike
                }),
                (toml_edit::Item::Value(toml_edit::Value::Array(a)), Some(i)) => {
                    a.get(i).and_then(|v| v.as_inline_table()).map(|t| {
                        best = t.span().map(|s| s.start).or(best);
                        t as &dyn toml_edit::TableLike
                    })
                }
                (it, None) => it.as_table_like(),
                _ => None,
            };
        }
        best
    }

    pub(super) fn error(
        &self,
        at: Option<usize>,
        field: Option<String>,
        message: String,
    ) -> LoadError {
        let (line, column) = match at {
            Some(o) => {
                let (l, c) = self.line_col(o);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        LoadError {
            origin: self.origin.to_string(),
            line,
            column,
            field,
            message,
        }
    }
}

pub(super) fn get_key<'i>(
    item: &'i toml_edit::Item,
    k: &str,
) -> Option<(Option<usize>, &'i toml_edit::Item)> {
    match item {
        toml_edit::Item::Table(t) => t
            .get_key_value(k)
            .map(|(key, it)| (key.span().map(|s| s.start), it)),
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => t
            .get_key_value(k)
            .map(|(key, it)| (key.span().map(|s| s.start), it)),
        _ => None,
    }
}

/// The deepest nesting a model file may have (dotted key segments plus open brackets); the TOML
/// parser gives up far deeper with a bare "recursion limit" that names no line.
pub(super) const MAX_DEPTH: usize = 32;

/// Where the text first nests deeper than [`MAX_DEPTH`] (byte offset, depth): a dotted key or
/// header of many segments, or brackets and braces inside one another. Quoted strings and
/// comments are skipped.
pub(super) fn too_deep(text: &str) -> Option<(usize, usize)> {
    let mut brackets = 0usize;
    let mut dots = 0usize;
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut in_key = true;
    for (i, c) in text.char_indices() {
        if comment {
            if c == '\n' {
                comment = false;
            } else {
                continue;
            }
        }
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '#' => comment = true,
            '[' | '{' => brackets += 1,
            ']' | '}' => brackets = brackets.saturating_sub(1),
            '.' if in_key => dots += 1,
            '=' | ',' => {
                in_key = c == ',';
                dots = 0;
            }
            '\n' => {
                in_key = true;
                dots = 0;
            }
            _ => {}
        }
        if c == '{' {
            in_key = true;
        }
        let depth = brackets + dots + 1;
        if depth > MAX_DEPTH {
            return Some((i, depth));
        }
    }
    None
}

/// A TOML syntax error in words: the key of a duplicate, the field of a number out of range.
pub(super) fn syntax_message(text: &str, at: Option<usize>, msg: &str) -> (Option<String>, String) {
    let msg = msg.lines().next().unwrap_or(msg).trim_end();
    let Some(at) = at.filter(|a| *a <= text.len()) else {
        return (None, msg.to_string());
    };
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    // The dotted key of `key = value` on this line, under the last `[table]` header above it.
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let header = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| {
            l.trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        });
    let field = key.as_ref().map(|k| match &header {
        Some(h) if !h.is_empty() => format!("{h}.{k}"),
        _ => k.clone(),
    });
    if msg == "duplicate key" {
        let what = key.or_else(|| {
            let l = line.trim();
            l.starts_with('[')
                .then(|| l.trim_matches(|c| c == '[' || c == ']').trim().to_string())
        });
        let header = line.trim_start().starts_with('[');
        return match what {
            Some(k) if header => (
                None,
                format!(
                    "duplicate table `[{k}]`: a table may be opened once (move these keys into the first `[{k}]`)"
                ),
            ),
            Some(k) => (
                field,
                format!(
                    "duplicate key `{k}`: a key may be given once per table (remove one, or use a [[variant]] to try another value)"
                ),
            ),
            None => (None, msg.to_string()),
        };
    }
    if msg.contains(" as i128") || msg.contains("integer number overflowed") {
        let number = msg.split('`').nth(1).unwrap_or("the number");
        return (
            field,
            format!(
                "{number} is too large: TOML integers are at most {} (2^63 - 1)",
                i64::MAX
            ),
        );
    }
    (field, msg.to_string())
}
