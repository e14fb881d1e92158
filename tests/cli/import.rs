//! `retrystorm import`: the shipped example configs import to the sections their models hold,
//! `-o` writes the same text, and a field that cannot be mapped exits 2 naming it.

use assert_cmd::Command;

fn retrystorm() -> Command {
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
    let out = retrystorm()
        .arg("import")
        .arg("grpc")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("methodConfig[0].retryPolicy.retryableStatusCodes[0]: \"PERMISSION_DENIED\" has no answer class")
            && err.contains("UNAVAILABLE (503)"),
        "{err}"
    );
    std::fs::write(&f, r#"{"methodConfig": [], "healthCheckConfig": {}}"#).unwrap();
    let out = retrystorm()
        .arg("import")
        .arg("grpc")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("healthCheckConfig: not supported")
            && err.contains("supported here: methodConfig, retryThrottling"),
        "{err}"
    );
}

/// `retrystorm import envoy` on `yaml` (written to a temp file): stdout or the stderr of exit 2.
fn envoy(yaml: &str, ext: &str) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(format!("route.{ext}"));
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
    match out.status.code() {
        Some(0) => Ok(text(out.stdout)),
        Some(2) => Err(text(out.stderr)),
        c => panic!("exit {c:?}: {}", String::from_utf8_lossy(&out.stderr)),
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

fn run_out(args: &[&str]) -> (Option<i32>, String, String) {
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

/// `retrystorm import envoy` on `yaml`: the exit code, stdout and stderr (the temp file's path
/// as `FILE`).
fn envoy_out(yaml: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cluster.yaml");
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

/// The value of `key` in `[section]` of the printed TOML.
fn toml_at(text: &str, section: &str, key: &str) -> Option<toml::Value> {
    let t: toml::Table = text.parse().unwrap();
    let mut v = &toml::Value::Table(t);
    for s in section.split('.') {
        v = v.get(s)?;
    }
    v.get(key).cloned()
}

#[test]
fn envoy_cluster_imports_to_replicas_and_loads() {
    let (code, out, err) = envoy_out(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/configs/envoy-cluster.yaml"),
        )
        .unwrap(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err, "", "no warning for a cluster of four endpoints");
    let int = |s: &str, k: &str| {
        toml_at(&out, s, k)
            .and_then(|v| v.as_integer())
            .unwrap_or_else(|| panic!("{s}.{k} missing in\n{out}"))
    };
    let text = |s: &str, k: &str| {
        toml_at(&out, s, k)
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_else(|| panic!("{s}.{k} missing in\n{out}"))
    };
    // load_assignment's four lb_endpoints; lb_policy, choice_count, healthy_panic_threshold.
    assert_eq!(int("server", "replicas"), 4);
    assert_eq!(text("server", "balancer"), "least-request");
    assert_eq!(int("server", "choice_count"), 3);
    assert_eq!(int("server", "panic_threshold"), 25);
    // outlier_detection: every field given, under Envoy's names; durations as the import writes
    // them; the rest left to the model's defaults (Envoy's).
    let od = "server.outlier_detection";
    assert_eq!(text(od, "kind"), "envoy");
    assert_eq!(text(od, "interval"), "5s");
    assert_eq!(text(od, "base_ejection_time"), "15s");
    assert_eq!(int(od, "max_ejection_percent"), 50);
    assert_eq!(int(od, "consecutive_5xx"), 3);
    assert_eq!(int(od, "enforcing_consecutive_gateway_failure"), 100);
    assert_eq!(int(od, "enforcing_success_rate"), 0);
    assert_eq!(toml_at(&out, od, "max_ejection_time"), None);
    assert_eq!(toml_at(&out, od, "consecutive_gateway_failure"), None);
    // The route's previous_hosts predicate.
    assert_eq!(text("retry", "retry_host_predicate"), "previous-hosts");
    assert_eq!(int("retry", "host_selection_retry_max_attempts"), 3);
    assert!(
        out.contains("# load_assignment: 4 lb_endpoints")
            && out.contains("# lb_policy = LEAST_REQUEST"),
        "{out}"
    );
    // The printed model loads: explained, and run briefly with a workload added.
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.toml");
    std::fs::write(
        &model,
        format!("{out}\n[workload]\nkind = \"open\"\nrate = \"100/s\"\nintents = 300\n"),
    )
    .unwrap();
    let path = model.display().to_string();
    let (c, _, e) = run_out(&["explain", &path]);
    assert_eq!(c, Some(0), "{e}");
    let (c, stdout, e) = run_out(&["run", &path, "--json", "-"]);
    assert_eq!(c, Some(0), "{e}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["variants"][0]["summary"]["intents"].as_u64(), Some(300));
}

#[test]
fn envoy_cluster_fields_not_given_are_not_written() {
    // Endpoints alone: replicas, and no balancer key (round robin, Envoy's default).
    let eps = |n: usize| {
        let one =
            "    - endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}\n";
        format!(
            "load_assignment:\n  cluster_name: b\n  endpoints:\n  - lb_endpoints:\n{}",
            one.repeat(n)
        )
    };
    let (code, out, err) = envoy_out(&eps(3));
    assert_eq!(code, Some(0), "{err}");
    let t: toml::Table = out.parse().unwrap();
    let server = t["server"].as_table().unwrap();
    assert_eq!(
        server.keys().collect::<Vec<_>>(),
        ["replicas"],
        "only the endpoint count: {out}"
    );
    assert_eq!(server["replicas"].as_integer(), Some(3));
    // An empty outlier_detection turns Envoy's detector on with its defaults.
    let (code, out, err) = envoy_out(&format!("outlier_detection: {{}}\n{}", eps(2)));
    assert_eq!(code, Some(0), "{err}");
    let od = toml_at(&out, "server", "outlier_detection").unwrap();
    assert_eq!(od.as_table().unwrap().len(), 1, "{out}");
    assert_eq!(od["kind"].as_str(), Some("envoy"));
    // Envoy truncates the panic percent: 100 * (29 / 100) is 28.999... in doubles.
    let (_, out, _) = envoy_out(&format!(
        "common_lb_config: {{healthy_panic_threshold: {{value: 29}}}}\n{}",
        eps(2)
    ));
    assert!(
        out.contains("panic_threshold = 28 ") && out.contains("as Envoy truncates it"),
        "{out}"
    );
    let (_, out, _) = envoy_out(&format!(
        "common_lb_config: {{healthy_panic_threshold: {{value: 0}}}}\n{}",
        eps(2)
    ));
    assert_eq!(
        toml_at(&out, "server", "panic_threshold").and_then(|v| v.as_integer()),
        Some(0)
    );
    // host_selection_retry_max_attempts 0 is proto3's unset: Envoy's default (1), not written.
    let (_, out, _) = envoy_out(&format!(
        "retry_policy:\n  retry_on: 5xx\n  retry_host_predicate: [{{name: envoy.retry_host_predicates.previous_hosts}}]\n  host_selection_retry_max_attempts: \"0\"\n{}",
        eps(2)
    ));
    assert_eq!(
        toml_at(&out, "retry", "retry_host_predicate").and_then(|v| v.as_str().map(String::from)),
        Some("previous-hosts".into())
    );
    assert_eq!(
        toml_at(&out, "retry", "host_selection_retry_max_attempts"),
        None
    );
}

#[test]
fn envoy_balancer_keys_without_replicas_are_a_warning_not_a_broken_model() {
    let cluster = "retry_policy:\n  retry_on: 5xx\n  retry_host_predicate: [{name: envoy.retry_host_predicates.previous_hosts}]\n  host_selection_retry_max_attempts: 2\nlb_policy: RANDOM\noutlier_detection: {consecutive_5xx: 2}\n";
    // One endpoint, and none at all: exit 0, a model that loads (import loads it before
    // printing), the keys named in a comment and on stderr.
    for (extra, why) in [
        (
            "load_assignment:\n  endpoints:\n  - lb_endpoints:\n    - endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 80}}}\n",
            "the cluster has fewer than two endpoints",
        ),
        ("", "the file has no load_assignment"),
    ] {
        let (code, out, err) = envoy_out(&format!("{cluster}{extra}"));
        assert_eq!(code, Some(0), "{err}");
        let t: toml::Table = out.parse().unwrap();
        assert!(!t.contains_key("server"), "{out}");
        assert!(
            !t["retry"]
                .as_table()
                .unwrap()
                .contains_key("retry_host_predicate")
        );
        for e in [&out, &err] {
            assert!(
                e.contains("need server.replicas >= 2")
                    && e.contains(why)
                    && e.contains("retry.retry_host_predicate = \"previous-hosts\"")
                    && e.contains("retry.host_selection_retry_max_attempts = 2")
                    && e.contains("server.balancer = \"random\"")
                    && e.contains("[server.outlier_detection]"),
                "{e}"
            );
        }
        assert!(err.starts_with("warning: FILE: not written"), "{err}");
    }
    // Consistent hashing: random picks stand for it, with a warning.
    let (code, out, err) = envoy_out(
        "lb_policy: MAGLEV\nload_assignment:\n  endpoints:\n  - lb_endpoints: [{endpoint: {}}, {endpoint: {}}, {endpoint: {}}]\n",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("balancer = \"random\""), "{out}");
    assert!(
        err.contains("warning: FILE: lb_policy = MAGLEV: consistent hashing is not modelled"),
        "{err}"
    );
}

#[test]
fn envoy_cluster_fields_that_cannot_act_exit_2_naming_them() {
    let two =
        "load_assignment:\n  endpoints:\n  - lb_endpoints: [{endpoint: {}}, {endpoint: {}}]\n";
    let cases = [
        (
            "lb_policy: CLUSTER_PROVIDED\n",
            "FILE: lb_policy: \"CLUSTER_PROVIDED\": the cluster's own balancer is not modelled; supported: ROUND_ROBIN, RANDOM, LEAST_REQUEST",
        ),
        (
            "load_balancing_policy: {policies: []}\n",
            "FILE: load_balancing_policy: typed load balancing policy extensions are not read",
        ),
        (
            "least_request_lb_config: {choice_count: 3}\n",
            "FILE: least_request_lb_config: acts only with lb_policy: LEAST_REQUEST",
        ),
        (
            "lb_policy: LEAST_REQUEST\nleast_request_lb_config: {choice_count: 1}\n",
            "least_request_lb_config.choice_count: must be at least 2",
        ),
        (
            "common_lb_config: {healthy_panic_threshold: {value: 150}}\n",
            "common_lb_config.healthy_panic_threshold.value: a percentage in [0, 100]",
        ),
        (
            "common_lb_config: {zone_aware_lb_config: {}}\n",
            "common_lb_config.zone_aware_lb_config: zone aware routing",
        ),
        (
            "outlier_detection: {max_ejection_percent: 150}\n",
            "FILE: outlier_detection.max_ejection_percent: a percentage in 0..=100 (outlier_detection.proto), got 150",
        ),
        (
            "outlier_detection: {base_ejection_time: 60s, max_ejection_time: 30s}\n",
            "outlier_detection.max_ejection_time: must be >= base_ejection_time (60s",
        ),
        (
            "outlier_detection: {interval: 0s}\n",
            "outlier_detection.interval: must be greater than zero",
        ),
        (
            "outlier_detection: {split_external_local_origin_errors: true}\n",
            "outlier_detection.split_external_local_origin_errors: the model does not tell local-origin errors",
        ),
        (
            "outlier_detection: {consecutive_local_origin_failure: 3}\n",
            "outlier_detection.consecutive_local_origin_failure: acts only with split_external_local_origin_errors",
        ),
        (
            "load_assignment:\n  endpoints:\n  - lb_endpoints: [{endpoint: {}, load_balancing_weight: 1}, {endpoint: {}, load_balancing_weight: 3}]\n",
            "load_assignment.endpoints[0].lb_endpoints[1].load_balancing_weight: 3, and 1 at load_assignment.endpoints[0].lb_endpoints[0]: weighted endpoints are not modelled",
        ),
        (
            "load_assignment:\n  endpoints:\n  - lb_endpoints: [{endpoint: {}}]\n  - priority: 1\n    lb_endpoints: [{endpoint: {}}]\n",
            "load_assignment.endpoints[1].priority: 1: failover priority levels are not modelled",
        ),
        (
            "load_assignment:\n  endpoints:\n  - lb_endpoints: [{endpoint: {}, health_status: DRAINING}]\n",
            "load_assignment.endpoints[0].lb_endpoints[0].health_status: \"DRAINING\": the model's replicas all start healthy",
        ),
        (
            "retry_policy:\n  retry_on: 5xx\n  retry_host_predicate: [{name: envoy.retry_host_predicates.omit_canary_hosts}]\n",
            "retry_policy.retry_host_predicate[0].name: \"envoy.retry_host_predicates.omit_canary_hosts\": the model's replicas are no canaries",
        ),
        (
            "retry_policy:\n  retry_on: 5xx\n  retry_host_predicate: [{name: envoy.retry_host_predicates.previous_hosts}]\n  host_selection_retry_max_attempts: 500\n",
            "retry_policy.host_selection_retry_max_attempts: the model takes 0..=100",
        ),
        (
            "health_checks: []\n",
            "FILE: health_checks: active health checking is not modelled",
        ),
    ];
    for (yaml, want) in cases {
        // Beside two endpoints, unless the case is about the endpoints.
        let doc = if yaml.contains("load_assignment") {
            yaml.to_string()
        } else {
            format!("{yaml}{two}")
        };
        let (code, _, err) = envoy_out(&doc);
        assert_eq!(code, Some(2), "{yaml}\n{err}");
        assert!(err.contains(want), "{yaml}\nwant {want:?}\ngot {err}");
    }
}

#[test]
fn retry_from_takes_the_host_predicate_and_refuses_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.toml");
    let path = model.display().to_string();
    std::fs::write(
        dir.path().join("route.yaml"),
        "retry_policy:\n  retry_on: 5xx\n  num_retries: 2\n  retry_host_predicate: [{name: envoy.retry_host_predicates.previous_hosts}]\n  host_selection_retry_max_attempts: 3\n",
    )
    .unwrap();
    // Into a replicated server: the predicate arrives with the policy.
    std::fs::write(
        &model,
        "[retry]\nfrom = \"envoy:route.yaml\"\n[server]\nreplicas = 3\n[workload]\nclients = 20\n",
    )
    .unwrap();
    let (c, out, err) = run_out(&["explain", &path]);
    assert_eq!(c, Some(0), "{err}");
    assert!(
        out.contains("retry_host_predicate = previous-hosts")
            && out.contains("host_selection_retry_max_attempts = 3"),
        "{out}"
    );
    // Into a server of one replica: the model's own check refuses it, at the `from` line.
    std::fs::write(
        &model,
        "[workload]\nclients = 20\n[retry]\nfrom = \"envoy:route.yaml\"\n",
    )
    .unwrap();
    let (c, _, err) = run_out(&["run", &path]);
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("retry.retry_host_predicate: has no effect: the tier this retry loop calls (server) has one replica"),
        "{err}"
    );
    // The cluster's keys go to a server, which `from` does not write.
    std::fs::write(
        dir.path().join("route.yaml"),
        "retry_policy:\n  retry_on: 5xx\nlb_policy: RANDOM\n",
    )
    .unwrap();
    std::fs::write(
        &model,
        "[retry]\nfrom = \"envoy:route.yaml\"\n[server]\nreplicas = 3\n",
    )
    .unwrap();
    let (c, _, err) = run_out(&["run", &path]);
    assert_eq!(c, Some(2), "{err}");
    assert!(
        err.contains("m.toml:2:1: retry.from: ")
            && err.contains("route.yaml: lb_policy: the cluster's load balancing imports to [server], which retry.from does not write"),
        "{err}"
    );
}
