//! `[engine] path` and the direct path from the command line: `explain` names the
//! engine each variant takes and why, and forcing the event loop changes no output byte.

use assert_cmd::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn rs() -> Command {
    let mut c = Command::cargo_bin("retrystorm").unwrap();
    c.current_dir(ROOT);
    c
}

fn stdout(c: &mut Command) -> String {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn explain_names_the_engine_of_each_variant_and_why() {
    let herd = stdout(rs().args(["explain", "models/thundering-herd.toml"]));
    let direct =
        "  engine: direct (clients independent: burst, no capacity limit, no shared state)\n";
    assert_eq!(herd.matches(direct).count(), 4, "{herd}");
    let forced = stdout(rs().args([
        "explain",
        "models/thundering-herd.toml",
        "--set",
        "engine.path=event-loop",
    ]));
    assert_eq!(
        forced
            .matches("  engine: event loop (engine.path = \"event-loop\")\n")
            .count(),
        4,
        "{forced}"
    );
    let overload = stdout(rs().args(["explain", "models/overload-bench.toml"]));
    assert!(
        overload.contains(
            "  engine: event loop (server.capacity makes clients share workers and a queue)\n"
        ),
        "{overload}"
    );
    let brooker = stdout(rs().args(["explain", "models/brooker-retries.toml"]));
    let lines: Vec<&str> = brooker.lines().filter(|l| l.contains("engine:")).collect();
    assert_eq!(
        lines,
        [
            "  engine: direct (clients independent: open workload, no capacity limit, no shared state)",
            "  engine: direct (clients independent: open workload, no capacity limit, no shared state)",
            "  engine: event loop (a retry budget is shared state)",
            "  engine: event loop (a retry budget is shared state)",
        ]
    );
}

/// The JSON, the series CSV and the table of the herd are the same bytes on both paths.
#[test]
fn forcing_the_event_loop_changes_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let run = |tag: &str, extra: &[&str]| {
        let json = dir.path().join(format!("{tag}.json"));
        let csv = dir.path().join(format!("{tag}.csv"));
        let table = stdout(
            rs().args([
                "run",
                "models/thundering-herd.toml",
                "--variant",
                "full",
                "-q",
            ])
            .args(["--set", "workload.clients=20000", "--seed", "9"])
            .arg("--json")
            .arg(&json)
            .arg("--csv")
            .arg(&csv)
            .args(extra),
        );
        (
            table,
            std::fs::read(&json).unwrap(),
            std::fs::read(&csv).unwrap(),
        )
    };
    let auto = run("auto", &[]);
    let forced = run("forced", &["--set", "engine.path=event-loop"]);
    assert!(auto.1.len() > 1000 && auto.2.len() > 1000);
    assert_eq!(auto.0, forced.0, "table");
    assert!(auto.1 == forced.1, "JSON differs");
    assert!(auto.2 == forced.2, "CSV differs");
}
