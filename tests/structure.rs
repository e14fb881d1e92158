//! The source tree's structure, read from the files (it needs no build of the binary): every
//! `.rs` file under `crates/*/src`, its comments and doc comments ignored, and the paths it names
//! (`use crate::...` with its groups, `super::...`, `crate::...` in code, a child module's
//! `name::...`), each resolved to the file that defines the longest module it names (a path
//! through a `pub use` counts as naming the file that re-exports it).
//!
//! - **No import circle between files.** The module tree is no circle: a `mod.rs` (or `lib.rs`)
//!   using the files of its folder while they use what it defines. Every other circle fails:
//!   one closed without the references down into a file's own folder, or without the references
//!   up to an enclosing `mod.rs`.
//! - **The core's floors in order** (`crates/core/src/lib.rs`, docs/architecture.md): a file
//!   on one floor names nothing on a higher one, and every module at the core's root is a floor.
//! - **Nothing through a crate's root inside the crate**: `lib.rs` re-exports short paths for
//!   users (`retrystorm_core::time`); inside the crate, a path names the module that defines
//!   the item (`crate::base::time`), so `lib.rs` is the roof and never the ground.
//!
//! `cargo test --test structure` runs it; its own tests (`checker`) run it on a small tree with
//! each fault, so it can fail.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The core's floors, lowest first: a file imports only from its own floor and those below.
const CORE_FLOORS: [&str; 6] = ["base", "policy", "result", "model", "sim", "study"];

#[test]
fn no_import_circles_floors_in_order_nothing_through_a_crate_root() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let faults = check(root);
    assert!(
        faults.is_empty(),
        "the source tree's structure (tests/structure.rs):\n{}",
        faults.join("\n")
    );
}

/// Every fault of the tree under `root`, one line each; empty when the structure holds.
fn check(root: &Path) -> Vec<String> {
    let crates = read_crates(root);
    let mut faults = Vec::new();
    for c in &crates {
        let refs = references(c);
        faults.extend(circles(c, &refs));
        faults.extend(through_root(c, &refs));
        if c.name == "core" {
            faults.extend(floors(c, &refs));
        }
    }
    faults
}

/// One crate's source files, by module path (`["sim", "path"]` for `sim/path/mod.rs`).
struct Crate {
    name: String,
    files: BTreeMap<Vec<String>, SourceFile>,
}

struct SourceFile {
    /// The path shown in a fault, from the repository's root.
    shown: String,
    text: String,
}

fn read_crates(root: &Path) -> Vec<Crate> {
    let mut crates = Vec::new();
    let Ok(dirs) = std::fs::read_dir(root.join("crates")) else {
        return crates;
    };
    let mut dirs: Vec<PathBuf> = dirs.filter_map(|d| Some(d.ok()?.path())).collect();
    dirs.sort();
    for dir in dirs {
        let src = dir.join("src");
        if !src.join("lib.rs").is_file() {
            continue;
        }
        let mut files = BTreeMap::new();
        let mut paths = Vec::new();
        rust_files(&src, &mut paths);
        for p in paths {
            let rel = p.strip_prefix(&src).unwrap();
            let text = std::fs::read_to_string(&p).unwrap();
            let shown = p.strip_prefix(root).unwrap().display().to_string();
            files.insert(module_of(rel), SourceFile { shown, text });
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        crates.push(Crate { name, files });
    }
    crates
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module a file under `src` defines: `lib.rs` the root, `a/mod.rs` and `a.rs` the module `a`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut m: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(m.last().map(String::as_str), Some("lib" | "main" | "mod")) {
        m.pop();
    }
    m
}

/// A reference from one file to another: the target file's module and the path as written.
struct Ref {
    from: Vec<String>,
    to: Vec<String>,
    written: String,
}

/// Every reference of every file of `c` to another file of `c`.
fn references(c: &Crate) -> Vec<Ref> {
    let mut out = Vec::new();
    for (module, file) in &c.files {
        for (scope, path) in paths(&tokens(&file.text)) {
            let Some(full) = resolve(c, module, &scope, &path) else {
                continue;
            };
            let to = defining_file(c, &full);
            if &to != module {
                out.push(Ref {
                    from: module.clone(),
                    to,
                    written: path.join("::"),
                });
            }
        }
    }
    out
}

/// The absolute module path `path` names from inside `module` (inline modules `scope` deep), or
/// `None` when it is not a path into this crate (std, another crate, a local name).
fn resolve(c: &Crate, module: &[String], scope: &[String], path: &[String]) -> Option<Vec<String>> {
    let here: Vec<String> = module.iter().chain(scope).cloned().collect();
    let (first, rest) = path.split_first()?;
    match first.as_str() {
        "crate" | "$crate" => Some(rest.to_vec()),
        "self" => Some(here.iter().chain(rest).cloned().collect()),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let base = here.get(..here.len().checked_sub(ups)?)?;
            Some(base.iter().chain(&path[ups..]).cloned().collect())
        }
        // A child module named without `self::`, as its parent file may.
        _ => {
            let mut child = module.to_vec();
            child.push(first.clone());
            c.files
                .contains_key(&child)
                .then(|| module.iter().chain(path).cloned().collect())
        }
    }
}

/// The file that defines the longest prefix of `full` that is a file's module.
fn defining_file(c: &Crate, full: &[String]) -> Vec<String> {
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| c.files.contains_key(m))
        .unwrap_or_default()
}

/// Whether `inner` is a strict submodule of `outer`.
fn is_inside(inner: &[String], outer: &[String]) -> bool {
    inner.len() > outer.len() && inner.starts_with(outer)
}

/// (a) The circles among the files' references. The module tree is no circle: a `mod.rs` (or
/// `lib.rs`) using the files of its folder while they use what it defines. So the circles are
/// looked for twice, once with the references down into a file's own folder left out and once
/// with the references up to an enclosing `mod.rs` left out; one fault per circle found, naming
/// each file and the path that closes it.
fn circles(c: &Crate, refs: &[Ref]) -> Vec<String> {
    let down = circles_among(c, refs.iter().filter(|r| !is_inside(&r.to, &r.from)));
    let up = circles_among(c, refs.iter().filter(|r| !is_inside(&r.from, &r.to)));
    let all: BTreeSet<String> = down.into_iter().chain(up).collect();
    all.into_iter().collect()
}

/// The circles among `refs`, depth first.
fn circles_among<'a>(c: &Crate, refs: impl Iterator<Item = &'a Ref>) -> Vec<String> {
    let mut edges: BTreeMap<&[String], BTreeMap<&[String], &str>> = BTreeMap::new();
    for r in refs {
        edges
            .entry(r.from.as_slice())
            .or_default()
            .entry(r.to.as_slice())
            .or_insert(r.written.as_str());
    }
    let next = |m: &[String]| -> Vec<(&[String], &str)> {
        let e = edges.get(m).into_iter().flatten();
        e.map(|(to, written)| (*to, *written)).rev().collect()
    };
    // Depth first, files in order: a reference back to a file still on the stack closes a
    // circle; a file whose references are all followed is done. Each stack entry holds a file,
    // the references still to follow and the path that led to it.
    let mut done: BTreeSet<&[String]> = BTreeSet::new();
    let mut faults = Vec::new();
    for start in c.files.keys() {
        if done.contains(start.as_slice()) {
            continue;
        }
        let mut stack = vec![(start.as_slice(), next(start), "")];
        while let Some((at, todo, _)) = stack.last_mut() {
            let at = *at;
            let Some((to, written)) = todo.pop() else {
                done.insert(at);
                stack.pop();
                continue;
            };
            if let Some(i) = stack.iter().position(|(m, _, _)| *m == to) {
                // Each file of the circle with the path it names the next one by.
                let mut circle: Vec<(&[String], &str)> = stack[i..]
                    .iter()
                    .zip(
                        stack[i + 1..]
                            .iter()
                            .map(|(_, _, via)| *via)
                            .chain([written]),
                    )
                    .map(|((m, _, _), via)| (*m, via))
                    .collect();
                faults.push(circle_fault(c, &mut circle));
            } else if !done.contains(to) {
                stack.push((to, next(to), written));
            }
        }
    }
    faults
}

/// One circle as a fault, starting from its first file in order (the same circle found from
/// another file reads the same).
fn circle_fault(c: &Crate, circle: &mut [(&[String], &str)]) -> String {
    let first = (0..circle.len()).min_by_key(|&k| circle[k].0).unwrap_or(0);
    circle.rotate_left(first);
    let mut line = String::from("import circle:");
    for (m, via) in circle.iter() {
        let _ = write!(line, " {} (`{via}`) ->", c.files[*m].shown);
    }
    let _ = write!(line, " {}", c.files[circle[0].0].shown);
    line
}

/// (c) References to the crate's root from its other files: `lib.rs` re-exports for users only.
fn through_root(c: &Crate, refs: &[Ref]) -> Vec<String> {
    let faults: BTreeSet<String> = refs
        .iter()
        .filter(|r| r.to.is_empty())
        .map(|r| {
            format!(
                "{} names `{}` through the crate's root (lib.rs re-exports for users only): \
                 name the module that defines it",
                c.files[&r.from].shown, r.written
            )
        })
        .collect();
    faults.into_iter().collect()
}

/// (b) The core's floors: a file names nothing on a floor above its own; every module at the
/// core's root is a floor.
fn floors(c: &Crate, refs: &[Ref]) -> Vec<String> {
    let mut faults: BTreeSet<String> = c
        .files
        .iter()
        .filter(|(m, _)| m.len() == 1 && floor(m).is_none())
        .map(|(_, f)| {
            format!(
                "{} is at the core's root but not a floor ({}): put it in one",
                f.shown,
                CORE_FLOORS.join(" < ")
            )
        })
        .collect();
    for r in refs
        .iter()
        .filter(|r| !r.from.is_empty() && !r.to.is_empty())
    {
        let (Some(a), Some(b)) = (floor(&r.from), floor(&r.to)) else {
            continue;
        };
        if b > a {
            faults.insert(format!(
                "{} (floor {}) names `{}` on the higher floor {} ({})",
                c.files[&r.from].shown,
                CORE_FLOORS[a],
                r.written,
                CORE_FLOORS[b],
                CORE_FLOORS.join(" < ")
            ));
        }
    }
    faults.into_iter().collect()
}

/// The floor of a module of the core: its place in [`CORE_FLOORS`].
fn floor(m: &[String]) -> Option<usize> {
    CORE_FLOORS
        .iter()
        .position(|f| m.first() == Some(&f.to_string()))
}

/// A token of Rust source with comments, strings and character literals removed: an
/// identifier (`$crate` and `r#type` included), `::`, or one character of punctuation.
fn tokens(src: &str) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
    while i < b.len() {
        let c = b[i];
        let rest = &src[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            while i < b.len() {
                if src[i..].starts_with("/*") {
                    depth += 1;
                    i += 2;
                } else if src[i..].starts_with("*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(len) = raw_string(rest) {
            i += len;
        } else if c == b'"' || (c == b'b' && rest.starts_with("b\"")) {
            i += if c == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == b'\'' {
            i += char_literal(rest).unwrap_or(1); // a lifetime's `'` alone
        } else if ident(c) || (c == b'$' && b.get(i + 1).is_some_and(|&n| ident(n))) {
            let start = i;
            i += 1;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let word = &src[start..i];
            // `r#type`: a raw identifier is the identifier.
            if word == "r" && b.get(i) == Some(&b'#') && b.get(i + 1).is_some_and(|&n| ident(n)) {
                i += 1;
                continue;
            }
            out.push(word.to_string());
        } else if rest.starts_with("::") {
            out.push("::".into());
            i += 2;
        } else {
            if !c.is_ascii_whitespace() {
                out.push((c as char).to_string());
            }
            i += 1;
        }
    }
    out
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `s`.
fn raw_string(s: &str) -> Option<usize> {
    let body = s.strip_prefix("br").or_else(|| s.strip_prefix('r'))?;
    let hashes = body.len() - body.trim_start_matches('#').len();
    let open = body[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = open.find(&close)?;
    Some(s.len() - open.len() + end + close.len())
}

/// The length of a character literal (`'a'`, `'\n'`, `'\u{1F600}'`) at the start of `s`;
/// `None` for a lifetime (`'a`).
fn char_literal(s: &str) -> Option<usize> {
    let mut chars = s.char_indices().skip(1);
    let (_, c) = chars.next()?;
    if c == '\\' {
        let close = s[2..].find('\'')?;
        return Some(close + 3);
    }
    let (j, next) = chars.next()?;
    (next == '\'').then_some(j + 1)
}

/// The paths the tokens name, each with the inline modules (`mod tests { ... }`) it sits in:
/// the leaves of every `use` tree, and every other path of two or more segments. Visibility
/// (`pub(in crate::x)`) is not a reference.
fn paths(t: &[String]) -> Vec<(Vec<String>, Vec<String>)> {
    let is_ident = |s: &str| s.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
    let mut out = Vec::new();
    // The inline modules around the current token, each with the brace depth it opened at.
    let mut scope: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < t.len() {
        let here: Vec<String> = scope.iter().map(|(m, _)| m.clone()).collect();
        match t[i].as_str() {
            "mod" if t.get(i + 2).is_some_and(|s| s == "{") => {
                scope.push((t[i + 1].clone(), depth));
                depth += 1;
                i += 3;
                continue;
            }
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if scope.last().is_some_and(|(_, d)| *d == depth) {
                    scope.pop();
                }
            }
            "pub" if t.get(i + 1).is_some_and(|s| s == "(") => {
                i += t[i..].iter().position(|s| s == ")").unwrap_or(0) + 1;
                continue;
            }
            "use" => {
                let mut leaves = Vec::new();
                i = use_tree(t, i + 1, &mut Vec::new(), &mut leaves);
                out.extend(leaves.into_iter().map(|p| (here.clone(), p)));
                continue;
            }
            s if is_ident(s)
                && t.get(i + 1).is_some_and(|n| n == "::")
                && (i == 0 || t[i - 1] != "::") =>
            {
                let mut path = vec![s.to_string()];
                let mut j = i + 1;
                while t.get(j).is_some_and(|n| n == "::")
                    && t.get(j + 1).is_some_and(|n| is_ident(n))
                {
                    path.push(t[j + 1].clone());
                    j += 2;
                }
                out.push((here, path));
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads one use tree from `t[i]` (after `use`), adding its leaves under `prefix` to `leaves`;
/// returns the index after the tree (at its `;`, `,` or `}`).
fn use_tree(
    t: &[String],
    mut i: usize,
    prefix: &mut Vec<String>,
    leaves: &mut Vec<Vec<String>>,
) -> usize {
    let depth = prefix.len();
    while let Some(s) = t.get(i) {
        match s.as_str() {
            "::" => i += 1,
            "{" => {
                i += 1;
                while t.get(i).is_some_and(|s| s != "}") {
                    i = use_tree(t, i, prefix, leaves);
                    if t.get(i).is_some_and(|s| s == ",") {
                        i += 1;
                    }
                }
                prefix.truncate(depth);
                return i + 1;
            }
            "," | ";" | "}" => break,
            "as" => i += 2,
            "*" => i += 1,
            "self" if !prefix.is_empty() => i += 1,
            _ => {
                prefix.push(s.clone());
                i += 1;
            }
        }
    }
    if prefix.len() > depth || t.get(i).is_some_and(|s| s == "," || s == "}" || s == ";") {
        leaves.push(prefix.clone());
    }
    prefix.truncate(depth);
    i
}

/// The checker on a small tree of its own: clean, then with each fault, so it can fail.
mod checker {
    use super::check;

    /// A core crate of two floors: `base` (`time`) and `sim` (`a`, `b`); `changes` replace files.
    fn tree(changes: &[(&str, &str)]) -> tempfile::TempDir {
        let mut files = vec![
            (
                "lib.rs",
                "pub mod base;\npub mod sim;\n/// For users.\npub use base::time;\n",
            ),
            ("base/mod.rs", "pub mod time;\n"),
            (
                "base/time.rs",
                "//! Time; [`crate::sim::a::A`] is a doc link, no import.\npub struct Time;\n",
            ),
            ("sim/mod.rs", "pub mod a;\npub mod b;\npub use a::A;\n"),
            (
                "sim/a.rs",
                "use crate::base::time::Time;\n\
                 // super::b::B in a comment\n\
                 const S: &str = \"use super::b::B;\";\n\
                 const R: &str = r#\"crate::sim::b\"#;\n\
                 const Q: char = '\"';\n\
                 pub struct A<'a>(&'a Time);\n\
                 #[cfg(test)]\n\
                 mod tests {\n    use super::*;\n}\n",
            ),
            (
                "sim/b.rs",
                "pub(in crate::sim) struct B(super::A<'static>);\n\
                 fn f() -> crate::sim::a::A<'static> { todo!() }\n",
            ),
        ];
        for (path, text) in changes {
            files.retain(|(p, _)| p != path);
            files.push((path, text));
        }
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join("crates/core/src").join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_clean_tree_passes() {
        assert_eq!(check(tree(&[]).path()), Vec::<String>::new());
    }

    #[test]
    fn a_circle_between_two_files_fails_naming_both() {
        let cycle =
            "use crate::base::time::Time;\nuse super::b::B;\npub struct A<'a>(&'a Time, B);\n";
        let faults = check(tree(&[("sim/a.rs", cycle)]).path());
        assert_eq!(
            faults,
            [
                "import circle: crates/core/src/sim/a.rs (`super::b::B`) -> \
                 crates/core/src/sim/b.rs (`crate::sim::a::A`) -> crates/core/src/sim/a.rs"
            ]
        );
    }

    #[test]
    fn a_circle_through_a_group_import_fails() {
        let cycle =
            "use crate::{base::time::Time, sim::{b::{self, B}}};\npub struct A<'a>(&'a Time);\n";
        let faults = check(tree(&[("sim/a.rs", cycle)]).path());
        assert_eq!(faults.len(), 1, "{faults:?}");
        assert!(faults[0].starts_with("import circle:"), "{faults:?}");
    }

    #[test]
    fn a_circle_through_a_folder_fails() {
        let faults = check(
            tree(&[
                ("sim/a.rs", "use crate::sim::c::f;\npub struct A;\n"),
                ("sim/c/mod.rs", "mod d;\npub fn f() {\n    d::g()\n}\n"),
                (
                    "sim/c/d.rs",
                    "pub fn g() {\n    let _ = crate::sim::a::A;\n}\n",
                ),
            ])
            .path(),
        );
        assert_eq!(
            faults,
            [
                "import circle: crates/core/src/sim/a.rs (`crate::sim::c::f`) -> \
                 crates/core/src/sim/c/mod.rs (`d::g`) -> crates/core/src/sim/c/d.rs \
                 (`crate::sim::a::A`) -> crates/core/src/sim/a.rs"
            ]
        );
    }

    #[test]
    fn a_lower_floor_naming_a_higher_one_fails() {
        let up = "pub struct Time;\npub fn f(_: &crate::sim::c::C) {}\n";
        let faults = check(tree(&[("base/time.rs", up), ("sim/c.rs", "pub struct C;\n")]).path());
        assert_eq!(
            faults,
            [
                "crates/core/src/base/time.rs (floor base) names `crate::sim::c::C` on the higher \
              floor sim (base < policy < result < model < sim < study)"
            ]
        );
    }

    #[test]
    fn a_path_through_the_root_fails() {
        let root = "use crate::time::Time;\npub struct A<'a>(&'a Time);\n";
        let faults = check(tree(&[("sim/a.rs", root)]).path());
        assert_eq!(
            faults,
            [
                "crates/core/src/sim/a.rs names `crate::time::Time` through the crate's root \
              (lib.rs re-exports for users only): name the module that defines it"
            ]
        );
    }

    #[test]
    fn a_module_at_the_root_that_is_no_floor_fails() {
        let faults = check(tree(&[("util.rs", "pub fn f() {}\n")]).path());
        assert_eq!(faults.len(), 1, "{faults:?}");
        assert!(faults[0].contains("util.rs is at the core's root but not a floor"));
    }
}
