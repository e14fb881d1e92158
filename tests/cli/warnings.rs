//! Issue 18 end to end: truncation warnings, refused keys and the same verdict on a model file
//! from every command.

use super::util::{out, rs, shipped, write};

#[test]
fn a_burst_cut_by_the_horizon_warns() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "cut.toml",
        "horizon = \"10s\"\n[workload]\nclients = 1000\nspread = \"100s\"\n[server]\nservice = \"1ms\"\n",
    );
    let (code, stdout, stderr) = out(rs().args(["run"]).arg(&m).args(["--json", "-"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"truncated\": true"), "{stdout}");
    assert!(stderr.contains("warning: cut:"), "{stderr}");
    assert!(stderr.contains("after starting only"), "{stderr}");
}

#[test]
fn a_seed_in_a_variant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "s.toml",
        "[[variant]]\nname = \"a\"\nseed = 9\n",
    );
    for cmd in ["run", "check", "compare"] {
        let (code, _, stderr) = out(rs().arg(cmd).arg(&m));
        assert_eq!(code, 2, "{cmd}: {stderr}");
        assert!(
            stderr.contains("s.toml:3:1: variant[0].seed"),
            "{cmd}: {stderr}"
        );
    }
}

/// `run`, `compare`, `check` and `report` give the same verdict on the same bad `[[expect]]`.
#[test]
fn every_command_refuses_a_bad_expect_table() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[workload]\nclients = 3\n\n[[expect]]\nmetric = \"retries\"\nop = \"<\"\nvalue = 5\novr = \"mean\"\n",
            "e.toml:8:1: expect.ovr: unknown key; did you mean `over`?",
        ),
        (
            "[workload]\nclients = 3\n\n[[expect]]\nmetric = \"retrie\"\nop = \"<\"\nvalue = 5\n",
            "e.toml:5:1: expect.metric: unknown metric `retrie`; did you mean `retries`?",
        ),
        (
            "[workload]\nclients = 3\n\n[[expect]]\nassert = \"retries < 5\"\nover = \"median\"\n",
            "e.toml:6:1: expect.over:",
        ),
        (
            "[[variant]]\nname = \"full\"\n\n[[expect]]\nassert = \"retries < 5\"\nvariant = \"ful\"\n",
            "e.toml:6:1: expect.variant: no variant \"ful\" in the model; did you mean `full`?",
        ),
    ];
    for (text, want) in cases {
        let m = write(dir.path(), "e.toml", text);
        for cmd in ["run", "compare", "check"] {
            let (code, _, stderr) = out(rs().arg(cmd).arg(&m));
            assert_eq!(code, 2, "{cmd}: {stderr}");
            assert!(stderr.contains(want), "{cmd}: {stderr}\nwanted {want}");
        }
        let html = dir.path().join("r.html");
        let (code, _, stderr) = out(rs().arg("report").arg(&m).arg("-o").arg(&html));
        assert_eq!(code, 2, "report: {stderr}");
        assert!(stderr.contains(want), "report: {stderr}");
    }
}

#[test]
fn explain_warns_of_overload_short_timeouts_and_dead_breakers() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "o.toml",
        "[workload]\nkind = \"open\"\nrate = \"500/s\"\n[retry]\ntimeout = \"5ms\"\n[server]\ncapacity = 2\nservice = \"10ms\"\n",
    );
    let (code, stdout, stderr) = out(rs().arg("explain").arg(&m));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("capacity 200 requests/s"), "{stdout}");
    assert!(
        stdout.contains("warning: tier 0 server: the open workload sends at least 500 requests/s against a capacity of 200 requests/s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("timeout 5ms is shorter than the mean service time 10 ms"),
        "{stdout}"
    );
    let b = write(
        dir.path(),
        "b.toml",
        "[workload]\nclients = 10\n[retry]\nmax_attempts = 3\n[breaker]\nenabled = true\nminimum_calls = 20\n",
    );
    let (code, stdout, _) = out(rs().arg("explain").arg(&b));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("minimum_calls = 20 but one client makes at most 3 calls"),
        "{stdout}"
    );
    let (code, stdout, _) = out(rs().arg("explain").arg("models/thundering-herd.toml"));
    assert_eq!(code, 0);
    assert!(stdout.contains("no warnings"), "{stdout}");
    let bad = write(dir.path(), "bad.toml", "[retry]\njitter = true\n");
    let (code, _, stderr) = out(rs().arg("explain").arg(&bad));
    assert_eq!(code, 2, "{stderr}");
    // A library's mode: explain says what it set, and a key written beside it wins.
    let (code, stdout, _) = out(rs()
        .arg("explain")
        .arg("models/library-backoffs.toml")
        .args(["--set", "retry.max_attempts=6"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains(
            "retry.mode \"tenacity\" set retry.backoff = \"exponential\", retry.base = \"1s\""
        ),
        "{stdout}"
    );
    assert!(stdout.contains("retry.jitter_max = \"1s\""), "{stdout}");
    assert!(
        stdout.contains("its callers make up to 6 attempts"),
        "{stdout}"
    );
}

/// `--set` edits the base and every variant; when that erases a difference between variants,
/// stderr says so once (also for a sweep's `--vary`, which loads the model at every point).
#[test]
fn a_set_that_overrides_variants_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "v.toml",
        "[workload]\nclients = 20\n[server]\nfail = \"always\"\n[[variant]]\nname = \"a\"\nretry.jitter = \"none\"\n[[variant]]\nname = \"b\"\nretry.jitter = \"equal\"\n[[variant]]\nname = \"c\"\n",
    );
    let (code, _, stderr) = out(rs()
        .arg("compare")
        .arg(&m)
        .args(["--set", "retry.jitter=full"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(
        stderr.contains("--set retry.jitter: replaces the value that variants \"a\", \"b\" set"),
        "{stderr}"
    );
    assert!(stderr.contains("retry.jitter = \"full\""), "{stderr}");
    // A key no variant sets: no warning.
    let (_, _, quiet) = out(rs()
        .arg("compare")
        .arg(&m)
        .args(["--set", "retry.base=5ms"]));
    assert!(!quiet.contains("warning"), "{quiet}");
    // A sweep warns once, not once per point.
    let o = dir.path().join("o.jsonl");
    let (code, _, stderr) = out(rs()
        .arg("sweep")
        .arg(&m)
        .args(["--vary", "retry.jitter=full,none,equal", "--out"])
        .arg(&o));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(stderr.contains("the point's retry.jitter"), "{stderr}");
}

/// `explain` weighs each capacity drop against the open load offered in its window: the stack's
/// database down to 10 connections (500 queries/s) while 2,000 requests/s arrive must warn,
/// naming the window; a drop after the workload's last expected arrival must not.
#[test]
fn explain_warns_of_a_capacity_drop_below_the_offered_load() {
    let (code, stdout, stderr) = out(rs().arg("explain").arg("models/stack.toml"));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("warning: tier 2 server: capacity_drops[0] leaves 10 workers from 60 s to 90 s, a capacity of 500 requests/s against the open workload's 2000 requests/s"),
        "{stdout}"
    );
    let dir = tempfile::tempdir().unwrap();
    let base = "horizon = \"20s\"\n[workload]\nkind = \"open\"\nrate = \"100/s\"\nintents = 500\n[[tier]]\nname = \"front\"\nserver = { capacity = 4, service = \"10ms\", capacity_drops = [{ from = \"1s\", to = \"2s\", capacity = 1 }] }\n[server]\ncapacity = 10\nservice = \"10ms\"\ncapacity_drops = [{ from = \"10s\", to = \"12s\", capacity = 1 }]\n";
    let m = write(dir.path(), "d.toml", base);
    let (code, stdout, _) = out(rs().arg("explain").arg(&m));
    assert_eq!(code, 0);
    // The front tier: 1 worker at 10 ms is 100 requests/s, exactly the offered rate: no warning.
    // The last tier's drop starts at 10 s, after the 500th arrival is expected (5 s).
    assert!(stdout.contains("no warnings"), "{stdout}");
    // A rate step to 300/s at 1.5 s, inside the front tier's drop, overloads it.
    let stepped = base.replace(
        "intents = 500\n",
        "intents = 500\nschedule = [{ at = \"1500ms\", rate = \"300/s\" }]\n",
    );
    let m = write(dir.path(), "s.toml", &stepped);
    let (code, stdout, _) = out(rs().arg("explain").arg(&m));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("warning: tier 0 front: capacity_drops[0] leaves 1 workers from 1 s to 2 s, a capacity of 100 requests/s against the open workload's 300 requests/s"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("tier 1 server: capacity_drops"),
        "{stdout}"
    );
}

/// `run`, `compare` and `check` print `explain`'s warnings on stderr: those every variant shares
/// once, unnamed; one that only a variant causes once, with the variant's name; none with
/// `--quiet`.
#[test]
fn run_compare_and_check_show_explains_warnings_once() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "w.toml",
        "name = \"w\"\n[workload]\nkind = \"open\"\nrate = \"300/s\"\nintents = 300\n[retry]\ntimeout = \"5ms\"\n[server]\ncapacity = 2\nservice = \"10ms\"\n\n[[variant]]\nname = \"roomy\"\nserver.capacity = 100\n\n[[variant]]\nname = \"tight\"\n\n[[expect]]\nmetric = \"intents\"\nop = \"==\"\nvalue = 300\n",
    );
    let short = "warning: tier 0 server: the per-attempt timeout 5ms is shorter than the mean service time 10 ms";
    let over = "warning: tight: tier 0 server: the open workload sends at least 300 requests/s against a capacity of 200 requests/s";
    for cmd in ["compare", "check"] {
        let (code, _, stderr) = out(rs().arg(cmd).arg(&m));
        assert_eq!(code, 0, "{cmd}: {stderr}");
        assert_eq!(stderr.matches(short).count(), 1, "{cmd}: {stderr}");
        assert_eq!(stderr.matches(over).count(), 1, "{cmd}: {stderr}");
        assert!(!stderr.contains("roomy:"), "{cmd}: {stderr}");
        let (code, _, stderr) = out(rs().arg("--quiet").arg(cmd).arg(&m));
        assert_eq!(code, 0, "{cmd}: {stderr}");
        assert!(!stderr.contains("warning"), "{cmd} --quiet: {stderr}");
    }
    let (code, _, stderr) = out(rs().args(["run"]).arg(&m).args(["--variant", "tight"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches(short).count(), 1, "{stderr}");
    assert!(
        stderr.contains("warning: tier 0 server: the open workload sends at least 300"),
        "{stderr}"
    );
    let (code, _, stderr) = out(rs().args(["run"]).arg(&m).args(["--variant", "roomy"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("overloaded"), "{stderr}");
}

/// Issue 30, item 8: `explain` prints each tier's retry policy, budget, breaker, limiter and rate
/// limit (only the keys of the kind in use), a rate limit caps the capacity it reports, and a
/// variant that changes nothing is folded into one line.
#[test]
fn explain_prints_the_policies_that_decide_a_result_and_folds_identical_variants() {
    let (code, stdout, _) = out(rs().arg("explain").arg(shipped("aws-adaptive.toml")));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("tier 0 server: callers' budget: kind = aws, scope = client, no_retry_increment = 1, quota = 500, retry_cost = 5, timeout_cost = 10, version = classic\n"),
        "the classic AWS quota without the 2026 costs: {stdout}"
    );
    assert!(
        stdout.contains("callers' limiter: kind = aws-adaptive, scope = client, cubic_beta = 0.7, cubic_c = 0.4, min_fill_rate = 0.5, rate_bucket = 500ms"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tier 0 server: rate limit: burst = 50, rate = 500/s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("capacity 500 requests/s (its rate limit)"),
        "not `capacity unlimited` beside a rate limit: {stdout}"
    );
    assert!(stdout.contains("callers' retry: max_attempts = 3, backoff = exponential, base = 1s, cap = 20s, jitter = full"), "{stdout}");

    let d = tempfile::tempdir().unwrap();
    let m = write(
        d.path(),
        "m.toml",
        r#"
name = "policies"
[workload]
clients = 10
[retry]
max_attempts = 4
[budget]
kind = "envoy"
max_retries = 3
[breaker]
enabled = true
minimum_calls = 5
[[variant]]
name = "a"
[[variant]]
name = "b"
retry.max_attempts = 4
[[variant]]
name = "c"
retry.max_attempts = 2
"#,
    );
    let (code, stdout, stderr) = out(rs().arg("explain").arg(&m));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("callers' budget: kind = envoy, scope = client, max_retries = 3\n"),
        "{stdout}"
    );
    assert!(stdout.contains("callers' breaker: "), "{stdout}");
    assert!(stdout.contains("minimum_calls = 5"), "{stdout}");
    assert!(
        stdout.contains("b\n  same as a: the variant changes nothing the run reads\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("c\n  workload: burst of 10 clients"),
        "{stdout}"
    );
    assert!(
        stdout.contains("callers' retry: max_attempts = 2,"),
        "{stdout}"
    );
}

/// Issue 30, item 2: a run whose size means minutes says so before it starts (also when stderr
/// is not a terminal), and `explain` gives every model's size.
#[test]
fn a_large_run_says_how_large_before_it_starts() {
    use std::io::{BufRead, BufReader};
    let d = tempfile::tempdir().unwrap();
    // 10^7 requests/s for a minute: 6 * 10^8 intents.
    let m = write(
        d.path(),
        "firehose.toml",
        "name = \"firehose\"\nhorizon = \"1m\"\n[workload]\nkind = \"open\"\nrate = \"10000000/s\"\n",
    );
    let (code, stdout, _) = out(rs().arg("explain").arg(&m));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("size: about 600,000,000 intents, 600,000,000 to 2,000,000,000 events (max_events 2,000,000,000)"),
        "{stdout}"
    );
    // The note is the first thing the run says; the test stops the run once it has read it.
    let mut child = std::process::Command::new(super::util::bin())
        .arg("run")
        .arg(&m)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        first.starts_with("note: firehose: about 600,000,000 intents, so at least 600,000,000 events (up to 2,000,000,000 with every attempt); at about 5 M events/s that is 120 s or more; --max-events N caps a run"),
        "{first}"
    );
    // A millisecond of it is small: no note.
    let (code, _, stderr) = out(rs().arg("run").arg(&m).args(["--set", "horizon=1ms"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("note: firehose"), "{stderr}");
    let (code, stdout, _) = out(rs()
        .arg("explain")
        .arg(&m)
        .args(["--set", "max_events=1000"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("1,000 to 1,000 events (max_events 1,000)"),
        "{stdout}"
    );
}

/// Issue 27: `explain` says where the breaker sits against the retries and what that means,
/// and a per-client breaker around the retries counts one call per burst client.
#[test]
fn explain_prints_the_breaker_placement() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[workload]\nclients = 10\n[retry]\nmax_attempts = 3\n[breaker]\nenabled = true\nminimum_calls = 2\n";
    let per = write(dir.path(), "per.toml", text);
    let (code, stdout, stderr) = out(rs().arg("explain").arg(&per));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "tier 0 server: callers' breaker placement: per-attempt, Retry(CircuitBreaker(call)): asked before every attempt"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("no warnings"), "{stdout}");
    let around = write(
        dir.path(),
        "around.toml",
        &format!("{text}placement = \"around-retries\"\n"),
    );
    let (code, stdout, stderr) = out(rs().arg("explain").arg(&around));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("placement = around-retries"), "{stdout}");
    assert!(
        stdout.contains(
            "tier 0 server: callers' breaker placement: around-retries, CircuitBreaker(Retry(call)): asked once per call"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("minimum_calls = 2 but one client makes one call (placement = \"around-retries\" counts calls, not attempts)"),
        "{stdout}"
    );
    // A model without a breaker says nothing of a placement.
    let (code, stdout, _) = out(rs().arg("explain").arg("models/thundering-herd.toml"));
    assert_eq!(code, 0);
    assert!(!stdout.contains("placement"), "{stdout}");
}
