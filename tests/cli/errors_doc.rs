//! Runs every row of the table in `docs/errors.md` and compares stderr exactly, so the documented
//! messages are the real ones. `UPDATE_ERRORS_DOC=1` rewrites the message column instead.

use assert_cmd::Command;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/errors.md");

/// Splits a table row at `|` outside backticks.
pub(crate) fn cells(row: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut code = false;
    let mut chars = row.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'`') => {
                cur.push('\\');
                cur.push(chars.next().unwrap());
            }
            '`' => {
                code = !code;
                cur.push(c);
            }
            '|' if !code => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out
}

/// The text inside a code cell, with `\n` as newline and \` as a backtick.
fn code(cell: &str) -> Option<String> {
    let inner = cell.strip_prefix('`')?.strip_suffix('`')?;
    Some(inner.replace("\\`", "`").replace("\\n", "\n"))
}

fn run(model: Option<&str>, flags: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.toml");
    if let Some(text) = model {
        std::fs::write(&path, text).unwrap();
    }
    let flags: Vec<&str> = flags.split_whitespace().collect();
    let out = Command::cargo_bin("retrystorm")
        .unwrap()
        .current_dir(dir.path())
        .args(["run", "m.toml"])
        .args(&flags)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code for {model:?} {flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn every_documented_error_is_the_real_one() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let update = std::env::var_os("UPDATE_ERRORS_DOC").is_some();
    let mut rewritten = Vec::new();
    let mut rows = 0;
    let mut failures = Vec::new();
    for line in doc.lines() {
        let c = cells(line);
        let is_row = line.starts_with('|') && c.len() == 4 && c[3].starts_with('`');
        if !is_row {
            rewritten.push(line.to_string());
            continue;
        }
        rows += 1;
        let model = match c[1].as_str() {
            "(none)" => None,
            "(empty)" => Some(String::new()),
            other => {
                Some(code(other).unwrap_or_else(|| panic!("model cell must be code: {other}")))
            }
        };
        let flags = code(&c[2]).unwrap_or_default();
        let got = run(model.as_deref(), &flags);
        let got = got.trim_end();
        assert_eq!(
            got.lines().count(),
            1,
            "{}: one line expected, got {got:?}",
            c[0]
        );
        let want = code(&c[3]).unwrap();
        if got != want {
            failures.push(format!("{}:\n  doc: {want}\n  got: {got}", c[0]));
        }
        let escaped = got.replace('`', "\\`");
        rewritten.push(format!("| {} | {} | {} | `{escaped}` |", c[0], c[1], c[2]));
    }
    assert!(rows >= 30, "only {rows} rows found");
    if update {
        std::fs::write(DOC, rewritten.join("\n") + "\n").unwrap();
    } else {
        assert!(
            failures.is_empty(),
            "docs/errors.md disagrees with the binary:\n{}",
            failures.join("\n")
        );
    }
}
