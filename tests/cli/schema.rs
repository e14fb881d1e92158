//! `retrystorm schema`: the JSON Schema of the model file accepts every shipped
//! model and `init`'s starter, and flags what the loader refuses (an unknown key, a
//! duration without a unit, a variant that sets `seed`).

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn schema() -> Value {
    let o = Command::cargo_bin("retrystorm")
        .unwrap()
        .arg("schema")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn json_of(toml_text: &str) -> Value {
    let t: toml::Table = toml_text.parse().unwrap();
    serde_json::to_value(t).unwrap()
}

fn errors(v: &jsonschema::Validator, toml_text: &str) -> Vec<String> {
    let doc = json_of(toml_text);
    v.iter_errors(&doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn every_shipped_model_validates() {
    let s = schema();
    let v = jsonschema::validator_for(&s).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let errs = errors(&v, &std::fs::read_to_string(&p).unwrap());
            assert!(errs.is_empty(), "{}: {errs:#?}", p.display());
            n += 1;
        }
    }
    assert!(n >= 10, "only {n} models found");
    let starter = Command::cargo_bin("retrystorm")
        .unwrap()
        .args(["init", "starter", "-o", "-"])
        .output()
        .unwrap();
    let errs = errors(&v, &String::from_utf8(starter.stdout).unwrap());
    assert!(errs.is_empty(), "init starter: {errs:#?}");
    // The custom forms: a table distribution, limits, fail modes, aliases, Retry-After.
    let forms = r#"
        [network]
        latency = { dist = "uniform", min = "1ms", max = "5ms" }
        [server]
        capacity = 8
        queue = "unlimited"
        fail = 0.25
        service = "lognormal(10ms, 0.5)"
        retry_after = "2s"
        [retry]
        retry_on = ["timeout", "unavailable", "5xx"]
        retry_after = "honor"
        [workload]
        kind = "open"
        rate = "1.5e2/s"
        [[expect]]
        metric = "completion_ms.p99"
        op = "<"
        value = "200ms"
    "#;
    assert_eq!(errors(&v, forms), Vec::<String>::new());
    // Replicas: the balancer keys, outlier detection, windows on one replica, and the
    // retry keys that choose among replicas.
    let replicas = r#"
        [server]
        replicas = 4
        balancer = "least-request"
        choice_count = 3
        balancer_scope = "client"
        panic_threshold = 25
        outages = [{ from = "1s", to = "2s", replica = 1 }]
        failure_windows = [{ from = "3s", to = "9s", probability = 0.5, replica = 0 }]
        [server.outlier_detection]
        kind = "envoy"
        interval = "5s"
        base_ejection_time = "15s"
        max_ejection_percent = 50
        consecutive_5xx = 3
        always_eject_one_host = true
        [retry]
        retry_host_predicate = "previous-hosts"
        host_selection_retry_max_attempts = 3
    "#;
    assert_eq!(errors(&v, replicas), Vec::<String>::new());
}

#[test]
fn bad_input_is_flagged() {
    let s = schema();
    let v = jsonschema::validator_for(&s).unwrap();
    for (bad, at) in [
        ("[retry]\nmax_atempts = 3\n", "/retry"),
        ("[retry]\nbase = \"100\"\n", "/retry/base"),
        ("[server]\nfail = \"sometimes\"\n", "/server/fail"),
        ("[server]\ncapacity = -1\n", "/server/capacity"),
        ("[workload]\nrate = \"80\"\n", "/workload/rate"),
        ("[[variant]]\nname = \"a\"\nseed = 3\n", "/variant/0"),
        ("[[variant]]\nretry.base = \"1ms\"\n", "/variant/0"),
        (
            "[[expect]]\nmetric = \"failed\"\nop = \"=\"\nvalue = 1\n",
            "/expect/0/op",
        ),
        ("colour = \"red\"\n", ""),
        ("[server]\nbalancer = \"weighted\"\n", "/server/balancer"),
        ("[server]\nreplicas = -2\n", "/server/replicas"),
        (
            "[server.outlier_detection]\nconsecutive5xx = 3\n",
            "/server/outlier_detection",
        ),
        (
            // An optional table: the validator names the table, not the key.
            "[server.outlier_detection]\nkind = \"finagle\"\n",
            "/server/outlier_detection",
        ),
        (
            "[retry]\nretry_host_predicate = \"other-hosts\"\n",
            "/retry/retry_host_predicate",
        ),
    ] {
        let errs = errors(&v, bad);
        assert!(
            errs.iter().any(|e| e.starts_with(&format!("{at}:"))),
            "{bad:?} should be flagged at {at:?}: {errs:#?}"
        );
    }
}

#[test]
fn schema_is_written_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("retrystorm.schema.json");
    Command::cargo_bin("retrystorm")
        .unwrap()
        .args(["schema", "-o"])
        .arg(&p)
        .assert()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(v, schema());
}
