//! `server.slow_windows` (latency brown-outs) from the command line: the shipped
//! `models/gc-pause.toml`, its trigger in the JSON, the chart's shading, `explain`'s facts and
//! warnings, `init`, and bad windows refused with exit 2.

use super::util::{out, rs, write};

const GC: &str = "models/gc-pause.toml";

#[test]
fn the_pause_is_the_trigger_and_the_chart_shades_it() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("load.svg");
    let (code, stdout, stderr) = out(rs()
        .args(["run", GC, "--variant", "no-jitter", "--json", "-", "--svg"])
        .arg(&svg));
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let s = &v["variants"][0]["summary"];
    assert_eq!(s["trigger_from_ms"], 10000.0);
    assert_eq!(s["trigger_to_ms"], 11000.0);
    assert_eq!(s["recovered"], false, "{s}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.contains("slow ×10"),
        "no slow window label in the chart"
    );
    // Without the window: no trigger, no label.
    let (code, stdout, _) = out(rs().args(["run", GC, "--variant", "no-pause", "--json", "-"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        v["variants"][0]["summary"]
            .get("trigger_to_ms")
            .is_none_or(|t| t.is_null())
    );
}

#[test]
fn explain_states_each_window_and_warns_of_overload_and_timeouts() {
    let (code, stdout, stderr) = out(rs().args(["explain", GC]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("tier 0 server: slow_windows[0] from 10 s to 11 s: work started in it is served 10 times slower (mean 100 ms, capacity 100 requests/s)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("warning: tier 0 server: slow_windows[0] serves 10 times slower from 10 s to 11 s, a capacity of 100 requests/s against the open workload's 700 requests/s: overloaded during the window"),
        "{stdout}"
    );
    // 50 ms timeouts against 10 ms service, 80 ms in the window; little load: only the timeout
    // warning.
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "t.toml",
        "[workload]\nkind = \"open\"\nrate = \"10/s\"\n[retry]\ntimeout = \"50ms\"\n[server]\ncapacity = 4\nservice = \"10ms\"\nslow_windows = [{ from = \"1s\", to = \"2s\", factor = 8 }]\n",
    );
    let (code, stdout, _) = out(rs().arg("explain").arg(&m));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("warning: tier 0 server: in slow_windows[0] (1 s to 2 s) the mean service time is 80 ms, longer than the per-attempt timeout 50ms: most attempts served in it time out"),
        "{stdout}"
    );
    assert!(!stdout.contains("overloaded during the window"), "{stdout}");
    // A factor that keeps the service under the timeout: no warning at all.
    let mild = write(
        dir.path(),
        "m.toml",
        &std::fs::read_to_string(&m)
            .unwrap()
            .replace("factor = 8", "factor = 2"),
    );
    let (_, stdout, _) = out(rs().arg("explain").arg(&mild));
    assert!(stdout.contains("no warnings"), "{stdout}");
}

#[test]
fn init_ships_the_model() {
    let (code, list, _) = out(rs().args(["init", "--list"]));
    assert_eq!(code, 0);
    assert!(list.contains("gc-pause "), "{list}");
    let (code, text, _) = out(rs().args(["init", "gc-pause", "-o", "-"]));
    assert_eq!(code, 0);
    assert_eq!(text, std::fs::read_to_string(GC).unwrap());
}

#[test]
fn bad_windows_exit_2_naming_the_field() {
    let (code, _, stderr) = out(rs().args([
        "run",
        GC,
        "--set",
        "server.slow_windows=[{from=\"1s\",to=\"2s\",factor=0.5}]",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("server.slow_windows[0].factor: must be a finite number >= 1"),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "o.toml",
        "[server]\nslow_windows = [\n  { from = \"1s\", to = \"3s\", factor = 2 },\n  { from = \"2s\", to = \"4s\", factor = 5 },\n]\n",
    );
    let (code, _, stderr) = out(rs().arg("run").arg(&m));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("o.toml:4:")
            && stderr.contains("server.slow_windows[1]: slow windows must not overlap"),
        "{stderr}"
    );
}
