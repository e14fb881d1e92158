//! Issue 30 end to end: the sharp edges a new user (or an attacker) found.

use assert_cmd::Command;

fn rs() -> Command {
    Command::cargo_bin("retrystorm").unwrap()
}

fn out(c: &mut Command) -> (i32, String, String) {
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn shipped(name: &str) -> String {
    format!("{}/models/{name}", env!("CARGO_MANIFEST_DIR"))
}

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
