//! `retrystorm import envoy` on a cluster: `load_assignment` imports to replicas, `lb_policy` to
//! the balancer, `outlier_detection` to `[server.outlier_detection]`, and `retry.from` takes a
//! route's retry host predicate but refuses a cluster's keys; a field that cannot act exits 2
//! naming it.

use crate::import::{import_envoy, run_out};

/// `retrystorm import envoy` on `yaml`: the exit code, stdout and stderr (the temp file's path
/// as `FILE`).
fn envoy_out(yaml: &str) -> (Option<i32>, String, String) {
    import_envoy(yaml, "cluster.yaml")
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
