//! `retrystorm import`: the shipped example configs import to the sections their models hold,
//! `-o` writes the same text, and a field that cannot be mapped exits 2 naming it. An Envoy
//! cluster's keys (endpoints, balancer, outlier detection) are `import_cluster`.

use assert_cmd::Command;

pub(crate) fn retrystorm() -> Command {
    let mut c = Command::cargo_bin("retrystorm").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn import(args: &[&str]) -> String {
    let out = retrystorm().arg("import").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn example_models_hold_what_import_prints() {
    for (args, model) in [
        (
            ["grpc", "examples/configs/grpc-service-config.json"],
            "examples/configs/grpc-greeter.toml",
        ),
        (
            ["aws", "examples/configs/aws-config"],
            "examples/configs/aws-standard.toml",
        ),
        (
            ["envoy", "examples/configs/envoy-route.yaml"],
            "examples/configs/envoy-route.toml",
        ),
    ] {
        let sections = import(&args);
        let text =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(model))
                .unwrap();
        assert!(
            text.contains(&sections),
            "{model} is stale; regenerate it with `retrystorm import {}`",
            args.join(" ")
        );
        retrystorm().args(["check", model]).assert().success();
    }
}

#[test]
fn out_writes_the_printed_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    let printed = import(&["aws", "examples/configs/aws-config", "--profile", "batch"]);
    retrystorm()
        .args([
            "import",
            "aws",
            "examples/configs/aws-config",
            "--profile",
            "batch",
            "-o",
        ])
        .arg(&path)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), printed);
    assert!(printed.contains("max_attempts = 5"), "{printed}");
}

#[test]
fn unmappable_fields_exit_2_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("sc.json");
    std::fs::write(
        &f,
        r#"{"methodConfig": [{"name": [{"service": "s.S"}], "retryPolicy": {"maxAttempts": 3,
        "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
        "retryableStatusCodes": ["PERMISSION_DENIED"]}}]}"#,
    )
    .unwrap();
    let (code, _, err) = run_out(&["import", "grpc", f.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("methodConfig[0].retryPolicy.retryableStatusCodes[0]: \"PERMISSION_DENIED\" has no answer class")
            && err.contains("UNAVAILABLE (503)"),
        "{err}"
    );
    std::fs::write(&f, r#"{"methodConfig": [], "healthCheckConfig": {}}"#).unwrap();
    let (code, _, err) = run_out(&["import", "grpc", f.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("healthCheckConfig: not supported")
            && err.contains("supported here: methodConfig, retryThrottling"),
        "{err}"
    );
}

/// `retrystorm import envoy` on `yaml` written to a temp file named `name`: the exit code, stdout
/// and stderr, the file's path written `FILE`.
pub(crate) fn import_envoy(yaml: &str, name: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(name);
    std::fs::write(&f, yaml).unwrap();
    let out = retrystorm()
        .arg("import")
        .arg("envoy")
        .arg(&f)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| {
        String::from_utf8(b)
            .unwrap()
            .replace(&f.display().to_string(), "FILE")
    };
    (out.status.code(), text(out.stdout), text(out.stderr))
}

/// `retrystorm import envoy` on `yaml` (written to a temp file): stdout or the stderr of exit 2.
fn envoy(yaml: &str, ext: &str) -> Result<String, String> {
    match import_envoy(yaml, &format!("route.{ext}")) {
        (Some(0), out, _) => Ok(out),
        (Some(2), _, err) => Err(err),
        (c, _, err) => panic!("exit {c:?}: {err}"),
    }
}

#[test]
fn envoy_defaults_are_the_protos() {
    // route_components.proto: num_retries 1, base_interval 25 ms, max 10 x base; RouteAction
    // timeout 15 s (also each try's without per_try_timeout); no rate_limited_retry_back_off:
    // Retry-After ignored; circuit_breaker.proto: max_retries 3.
    let out = envoy("retry_policy:\n  retry_on: gateway-error\n", "yaml").unwrap();
    for line in [
        "max_attempts = 2 ",
        "retry_on = [\"503\", \"timeout\", \"connection\"]",
        "timeout = \"15s\"",
        "deadline = \"15s\"",
        "backoff = \"envoy\"",
        "base = \"25ms\"",
        "cap = \"250ms\"",
        "retry_after = \"ignore\"",
        "kind = \"envoy\"",
        "max_retries = 3 ",
    ] {
        assert!(out.contains(line), "{line:?} missing in\n{out}");
    }
    // No retry_on: Envoy retries nothing.
    let out = envoy("retry_policy:\n  num_retries: 4\n", "yaml").unwrap();
    assert!(out.contains("max_attempts = 1 "), "{out}");
    // A base below 1 ms is rounded up; max_interval defaults to 10 x base.
    let out = envoy(
        "retry_policy:\n  retry_on: 5xx\n  retry_back_off: {base_interval: 0.0005s}\n",
        "yaml",
    )
    .unwrap();
    assert!(
        out.contains("base = \"1ms\"") && out.contains("cap = \"10ms\""),
        "{out}"
    );
}

#[test]
fn envoy_json_form_imports_as_the_yaml() {
    let yaml = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/configs/envoy-route.yaml"),
    )
    .unwrap();
    let json = r#"{"match": {"prefix": "/"}, "route": {"cluster": "backend", "timeout": "3s",
      "retry_policy": {"retry_on": "5xx,reset,connect-failure,retriable-status-codes",
        "retriable_status_codes": [429], "num_retries": 3, "per_try_timeout": "0.5s",
        "retry_back_off": {"base_interval": "0.025s", "max_interval": "0.25s"},
        "rate_limited_retry_back_off": {"reset_headers": [{"name": "Retry-After",
          "format": "SECONDS"}], "max_interval": "300s"}}},
      "circuit_breakers": {"thresholds": [{"priority": "DEFAULT", "max_retries": 3,
        "retry_budget": {"budget_percent": {"value": 20.0}, "min_retry_concurrency": 3}}]}}"#;
    assert_eq!(envoy(&yaml, "yaml").unwrap(), envoy(json, "json").unwrap());
}

#[test]
fn envoy_fields_that_cannot_act_exit_2_naming_them() {
    let cases = [
        (
            "retry_policy:\n  retry_on: 5xx\n  host_selection_retry_max_attempts: 3\n",
            "FILE: retry_policy.host_selection_retry_max_attempts: acts only with a retry_host_predicate",
        ),
        (
            "retry_policy:\n  retry_on: 5xx\n  retry_bakc_off: {}\n",
            "retry_policy.retry_bakc_off: not supported by the import; supported here: retry_on",
        ),
        (
            "retry_policy:\n  retry_on: 5xx,refused-stream\n",
            "retry_policy.retry_on: \"refused-stream\" cannot act",
        ),
        (
            "retry_policy:\n  retry_on: 5xx\n  retriable_status_codes: [429]\n",
            "retry_policy.retriable_status_codes: acts only with retriable-status-codes",
        ),
        (
            "retry_policy:\n  retry_on: retriable-status-codes\n  retriable_status_codes: [418]\n",
            "retry_policy.retriable_status_codes[0]: 418 has no answer class",
        ),
        (
            "retry_policy:\n  retry_on: 5xx\n  rate_limited_retry_back_off:\n    reset_headers: [{name: X-RateLimit-Reset, format: UNIX_TIMESTAMP}]\n",
            "reset_headers[0]: \"X-RateLimit-Reset\" (UNIX_TIMESTAMP) cannot act",
        ),
        (
            "circuit_breakers:\n  thresholds: [{max_connections: 10}]\n",
            "circuit_breakers.thresholds[0].max_connections: connection limits",
        ),
        (
            "circuit_breakers:\n  thresholds: [{priority: HIGH, max_retries: 1}]\n",
            "circuit_breakers.thresholds[0].priority: \"HIGH\"",
        ),
        (
            "retry_policy:\n  retry_on: 5xx\n  retry_back_off: {base_interval: 1s, max_interval: 0.5s}\n",
            "retry_back_off.max_interval: must be >= base_interval",
        ),
        ("retry_policy: {retry_on: 5xx\n", "not valid YAML or JSON"),
        (
            "hedge_policy: {}\n",
            "hedge_policy: Envoy's hedging is not modelled",
        ),
    ];
    for (yaml, want) in cases {
        let err = envoy(yaml, "yaml").expect_err(yaml);
        assert!(err.contains(want), "{yaml}\nwant {want:?}\ngot {err}");
    }
}

pub(crate) fn run_out(args: &[&str]) -> (Option<i32>, String, String) {
    let out = retrystorm().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn retry_from_loads_the_file_as_import_prints_it() {
    // envoy-from.toml reads envoy-route.yaml at load time; envoy-route.toml holds the printed
    // sections. Same workload, same seed: the same table but for the model's name.
    let (c1, a, _) = run_out(&["compare", "examples/configs/envoy-from.toml"]);
    let (c2, b, _) = run_out(&["compare", "examples/configs/envoy-route.toml"]);
    assert_eq!((c1, c2), (Some(0), Some(0)));
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&a), body(&b));
    assert!(a.contains("no-budget"), "{a}");
    retrystorm()
        .args(["check", "examples/configs/envoy-from.toml"])
        .assert()
        .success();
}

#[test]
fn retry_from_keys_beside_it_win_and_tiers_resolve_too() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir(dir.path().join("conf")).unwrap();
    std::fs::copy(
        root.join("examples/configs/grpc-service-config.json"),
        dir.path().join("conf/sc.json"),
    )
    .unwrap();
    std::fs::copy(
        root.join("examples/configs/aws-config"),
        dir.path().join("conf/aws"),
    )
    .unwrap();
    let model = dir.path().join("m.toml");
    let write = |text: &str| std::fs::write(&model, text).unwrap();
    let path = model.display().to_string();
    let base = "[workload]\nclients = 50\n[server]\nfail = \"always\"\n";
    // The gRPC config retries 503 up to 4 attempts: 50 x 4.
    write(&format!("[retry]\nfrom = \"grpc:conf/sc.json\"\n{base}"));
    let (c, out, err) = run_out(&["run", &path, "--json", "-"]);
    assert_eq!(c, Some(0), "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let attempts =
        |j: &serde_json::Value| j["variants"][0]["summary"]["attempts"].as_u64().unwrap();
    assert!(attempts(&j) > 50, "{out}");
    // A key beside `from` wins: no retries at all.
    write(&format!(
        "[retry]\nfrom = \"grpc:conf/sc.json\"\nmax_attempts = 1\n{base}"
    ));
    let (c, out, err) = run_out(&["run", &path, "--json", "-"]);
    assert_eq!(c, Some(0), "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(attempts(&j), 50, "{out}");
    // `from` and `mode` both: refused at the line of `from`.
    write("[retry]\nfrom = \"aws:conf/aws\"\nmode = \"aws-standard\"\n");
    let (c, _, err) = run_out(&["run", &path]);
    assert_eq!(c, Some(2));
    assert!(
        err.contains("m.toml:2:1: retry.from: give retry.from or retry.mode"),
        "{err}"
    );
    // In a tier: the error names the tier's line and the imported file's field.
    std::fs::write(
        dir.path().join("conf/route.yaml"),
        "retry_policy:\n  retry_on: 5xx,envoy-ratelimited\n",
    )
    .unwrap();
    write(
        "[[tier]]\nname = \"proxy\"\nretry.from = \"envoy:conf/route.yaml\"\n[tier.server]\ncapacity = 4\n",
    );
    let (c, _, err) = run_out(&["run", &path]);
    assert_eq!(c, Some(2));
    assert!(
        err.contains("m.toml:3:7: tier[0].retry.from: ")
            && err.contains("route.yaml: retry_policy.retry_on: \"envoy-ratelimited\" cannot act"),
        "{err}"
    );
    std::fs::write(
        dir.path().join("conf/route.yaml"),
        "retry_policy:\n  retry_on: 5xx\n  num_retries: 2\n",
    )
    .unwrap();
    let (c, _, err) = run_out(&["run", &path]);
    assert_eq!(c, Some(0), "{err}");
}
