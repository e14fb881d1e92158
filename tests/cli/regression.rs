//! Issue-pinned cases (as ripgrep's `tests/regression.rs`): each block names the issue whose bug
//! it pins, so that a failure points at the report that found it. A new case goes here, under its
//! issue's heading, when it pins one bug rather than a topic's behaviour.
//!
//! Issue 30, the sharp edges a new user (or an attacker) found: bounded grids, trace rows out of
//! order, a base left out of the table, help that names every source, quiet checks, and one rule
//! for numbers and column names.

use super::util::{check_against, in_temp, out, rs, shipped, write};

#[test]
fn compare_bounds_its_grid_before_building_it() {
    // A million points x 4 variants: refused at once, naming the size and the limit.
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = out(rs().args([
        "compare",
        &shipped("thundering-herd.toml"),
        "--vary",
        "workload.clients=1..1000000:1",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr.trim_end(),
        "error: --vary: compare would hold 4000000 rows in memory (1000000 points x 4 variants), each a model and its series, for its table; at most 10000 per process: use larger steps, or `retrystorm sweep` for a larger grid"
    );
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    // A small grid runs; 2501 points x 4 variants is just over the limit.
    let (code, _, stderr) = out(rs().args([
        "compare",
        &shipped("thundering-herd.toml"),
        "--vary",
        "workload.clients=10,20",
        "-q",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = out(rs().args([
        "compare",
        &shipped("thundering-herd.toml"),
        "--vary",
        "workload.clients=1..2501:1",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("10004 rows"), "{stderr}");
}

const TRACE_MODEL: &str = "seed = 1\nhorizon = \"10s\"\n[workload]\nkind = \"trace\"\ntrace = \"t.csv\"\n[retry]\nmax_attempts = 3\n[server]\ncapacity = 1\nservice = \"exp(300ms)\"\n";

#[test]
fn a_trace_out_of_order_is_replayed_in_order_with_a_note() {
    let (dir, m) = in_temp("m.toml", TRACE_MODEL);
    write(
        dir.path(),
        "t.csv",
        "timestamp,class\n0,a\n0.5,b\n1,a\n1.5,b\n2,a\n",
    );
    let (code, sorted, stderr) = out(rs().args(["run"]).arg(&m).args(["--json", "-"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("note:"), "{stderr}");
    // The same rows shuffled: the same run, and a note naming the first row out of order.
    write(
        dir.path(),
        "t.csv",
        "timestamp,class\n1,a\n0,a\n2,a\n0.5,b\n1.5,b\n",
    );
    let (code, shuffled, stderr) = out(rs().args(["run"]).arg(&m).args(["--json", "-"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(sorted, shuffled);
    let t = dir.path().join("t.csv");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "note: {}: the rows are not in time order (line 3 is earlier than the row before it); replayed in time order, 5 of 5 rows moved",
            t.display()
        )
    );
    // --quiet hides it.
    let (code, _, stderr) = out(rs().args(["run", "-q"]).arg(&m).args(["--json", "-"]));
    assert_eq!((code, stderr.as_str()), (0, ""));
}

#[test]
fn a_negative_trace_timestamp_is_refused_naming_its_row() {
    let (dir, m) = in_temp("m.toml", TRACE_MODEL);
    write(dir.path(), "t.csv", "timestamp\n5\n3\n-1\n");
    let (code, stdout, stderr) = out(rs().args(["run"]).arg(&m));
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: {}:4:1: timestamp: \"-1\" is negative; a timestamp is seconds since the epoch or since the trace's start, >= 0",
            dir.path().join("t.csv").display()
        )
    );
}

#[test]
fn compare_says_when_the_base_is_not_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[workload]\nclients = 50\n[retry]\nmax_attempts = 3\n[[variant]]\nname = \"change\"\nretry.max_attempts = 2\n";
    let m = write(dir.path(), "m.toml", text);
    let (code, stdout, stderr) = out(rs().args(["compare"]).arg(&m));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("change")).count(),
        1
    );
    assert_eq!(
        stderr.trim_end(),
        format!(
            "note: {} runs its 1 variant, not its base by itself; to have the base as a row, add a [[variant]] with only a name, e.g. name = \"base\"",
            m.display()
        )
    );
    // With a variant that is the base, nothing to say; nor without variants, nor with --quiet.
    let both = write(
        dir.path(),
        "both.toml",
        &text.replace(
            "[[variant]]\nname = \"change\"",
            "[[variant]]\nname = \"current\"\n[[variant]]\nname = \"change\"",
        ),
    );
    let (code, stdout, stderr) = out(rs().args(["compare"]).arg(&both));
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert!(
        stdout.contains("current") && stdout.contains("change"),
        "{stdout}"
    );
    let plain = write(dir.path(), "plain.toml", "[workload]\nclients = 50\n");
    let (code, _, stderr) = out(rs().args(["compare"]).arg(&plain));
    assert_eq!((code, stderr.as_str()), (0, ""));
    let (code, _, stderr) = out(rs().args(["compare", "-q"]).arg(&m));
    assert_eq!((code, stderr.as_str()), (0, ""));
}

/// The values clap accepts for `import`'s SOURCE, read from its help.
fn import_sources() -> Vec<String> {
    let (code, help, _) = out(rs().args(["import", "--help"]));
    assert_eq!(code, 0);
    let list = help
        .split("[possible values: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .expect("SOURCE lists its possible values");
    list.split(", ").map(str::to_string).collect()
}

#[test]
fn import_help_names_every_source_it_takes() {
    let sources = import_sources();
    assert!(sources.len() >= 3, "{sources:?}");
    let (_, help, _) = out(rs().args(["import", "--help"]));
    let about = help.lines().next().unwrap().to_lowercase();
    let (_, top, _) = out(rs().args(["--help"]));
    let listed = top
        .lines()
        .find(|l| l.trim_start().starts_with("import "))
        .unwrap()
        .to_lowercase();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    let synopsis = doc
        .lines()
        .find(|l| l.starts_with("retrystorm import "))
        .unwrap();
    for s in &sources {
        assert!(
            about.contains(s.as_str()),
            "import --help does not name {s}: {about}"
        );
        assert!(
            listed.contains(s.as_str()),
            "--help's import line does not name {s}: {listed}"
        );
        assert!(synopsis.contains(s.as_str()), "docs/cli.md: {synopsis}");
    }
}

#[test]
fn check_quiet_prints_only_failures_and_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.toml",
        "[workload]\nclients = 300\n[retry]\nmax_attempts = 4\nbase = \"100ms\"\n[server]\nfail = \"always\"\n[[variant]]\nname = \"full\"\nretry.jitter = \"full\"\n[[variant]]\nname = \"none\"\nretry.jitter = \"none\"\n[[expect]]\nassert = \"attempts > 0\"\n",
    );
    let base = dir.path().join("base.json");
    let (code, _, stderr) = out(rs().arg("compare").arg(&m).arg("--json").arg(&base));
    assert_eq!(code, 0, "{stderr}");
    // Everything passes: the verdict alone.
    let (code, stdout, stderr) = out(rs()
        .args(["check", "-q"])
        .arg(&m)
        .arg("--baseline")
        .arg(&base));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(!stdout.contains("PASS"), "{stdout}");
    // Without -q the same check lists every comparison.
    let (_, loud, _) = out(&mut check_against(&m, &base));
    assert!(loud.matches("PASS").count() > 2, "{loud}");
    // A regression: its FAIL lines and the verdict, no PASS line.
    let (code, stdout, stderr) = out(rs()
        .args(["check", "-q"])
        .arg(&m)
        .arg("--baseline")
        .arg(&base)
        .args(["--set", "retry.base=20ms", "--metric", "peak_retries"]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("FAIL  full  peak_retries:"), "{stdout}");
    assert!(!stdout.contains("PASS"), "{stdout}");
    assert!(!stdout.contains(" against "), "{stdout}");
}

#[test]
fn one_set_of_column_names_and_one_rule_for_intervals() {
    let herd = shipped("thundering-herd.toml");
    let (code, one, stderr) = out(rs().args(["compare", &herd]));
    assert_eq!(code, 0, "{stderr}");
    let (code, many, stderr) = out(rs().args(["compare", &herd, "--seeds", "3"]));
    assert_eq!(code, 0, "{stderr}");
    let header = |t: &str| {
        t.lines()
            .nth(1)
            .unwrap()
            .split("  ")
            .filter(|c| !c.is_empty())
            .map(|c| c.trim().to_string())
            .collect::<Vec<_>>()
    };
    let (h1, hn) = (header(&one), header(&many));
    // The replicated table's columns are the one-seed table's, with the outcomes after them.
    assert_eq!(h1[..], hn[..h1.len()], "{one}\n{many}");
    assert!(h1.contains(&"peak/10 ms".to_string()), "{one}");
    // Amplification keeps its `x` with or without an interval; no interval prints as zero.
    let row = many.lines().find(|l| l.starts_with("no-jitter")).unwrap();
    assert!(row.contains(" 6.00x "), "{row}");
    assert!(!many.contains("± 0.0") && !many.contains("± 0 "), "{many}");
    // The `run` view names the bucket as the one-seed view does.
    let (_, view, _) = out(rs().args(["run", &herd, "--variant", "full", "--seeds", "3"]));
    assert!(view.contains(" per 10 ms bucket "), "{view}");
    assert!(view.contains("amplification 6.00x)"), "{view}");
}
