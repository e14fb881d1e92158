//! What the Python docs promise of `--vary` holds: every range string they show (`"FROM..TO:STEP"`)
//! is one the CLI's `--vary` takes (the Python package passes it through unchanged).

use retrystorm::sweep::parse_vary;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The quoted words of `text` that hold a range (`"10ms..1s:10ms"`): each `..` with the word
/// around it, when a double quote stands on both sides of that word.
fn quoted_ranges(text: &str) -> Vec<&str> {
    let stop = |c: char| c == '"' || c.is_whitespace();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("..") {
        let start = text[..i].rfind(stop).map_or(0, |s| s + 1);
        let end = text[i..].find(stop).map_or(text.len(), |e| i + e);
        let quoted = text[..start].ends_with('"') && text[end..].starts_with('"');
        if quoted && !out.contains(&&text[start..end]) {
            out.push(&text[start..end]);
        }
    }
    out
}

#[test]
fn every_range_the_python_docs_show_is_one_vary_takes() {
    for file in [
        "docs/python.md",
        "crates/python/python/retrystorm/__init__.py",
    ] {
        let text = std::fs::read_to_string(format!("{ROOT}/{file}")).unwrap();
        let ranges = quoted_ranges(&text);
        assert!(!ranges.is_empty(), "{file} shows no range");
        for r in ranges {
            let axis = parse_vary(&format!("retry.base={r}"))
                .unwrap_or_else(|e| panic!("{file}: {r:?} is refused by --vary: {e}"));
            assert!(axis.values.len() > 1, "{file}: {r:?}");
        }
    }
}
