use super::*;

const A6: &str = r#"{
  "methodConfig": [{
    "name": [{"service": "helloworld.Greeter", "method": "SayHello"}],
    "timeout": "10s",
    "retryPolicy": {
      "maxAttempts": 7, "initialBackoff": "0.1s", "maxBackoff": "1s",
      "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", 8]
    }
  }],
  "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1}
}"#;

#[test]
fn a6_example_maps_to_retry_and_budget() {
    let toml = import("sc.json", A6, None).unwrap().render();
    assert!(toml.contains("max_attempts = 5"), "{toml}");
    assert!(toml.contains("capped at 5"), "{toml}");
    assert!(toml.contains("base = \"100ms\""), "{toml}");
    assert!(toml.contains("cap = \"1s\""), "{toml}");
    assert!(toml.contains("deadline = \"10s\""), "{toml}");
    assert!(toml.contains("retry_on = [\"503\", \"429\"]"), "{toml}");
    assert!(toml.contains("kind = \"grpc\""), "{toml}");
    let s = retrystorm_core::load::load("x.toml", &toml, &[]).unwrap();
    assert_eq!(s.base.retry.max_attempts, 5);
    assert_eq!(s.base.budget.max_tokens, 10.0);
}

#[test]
fn unknown_fields_and_codes_are_named() {
    let e = import("sc.json", r#"{"loadBalancingPolicy": "round_robin"}"#, None).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("sc.json: loadBalancingPolicy: not supported"),
        "{e}"
    );
    let bad = A6.replace("\"UNAVAILABLE\"", "\"NOT_FOUND\"");
    let e = import("sc.json", &bad, None).unwrap_err().to_string();
    assert!(
        e.contains("retryableStatusCodes[0]") && e.contains("no answer class"),
        "{e}"
    );
}

#[test]
fn a_name_twice_is_refused() {
    let two = r#"{"methodConfig": [
      {"name": [{"service": "a.A", "method": "M"}], "timeout": "1s"},
      {"name": [{"service": "b.B"}, {"service": "a.A", "method": "M"}], "timeout": "2s"}]}"#;
    let e = import("sc.json", two, Some("a.A/M"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("sc.json: methodConfig[1].name[1]: has no effect: a.A/M is named already by methodConfig[0].name[0]"),
        "{e}"
    );
}

#[test]
fn several_method_configs_need_a_method() {
    let two = r#"{"methodConfig": [
      {"name": [{"service": "a.A"}], "timeout": "1s"},
      {"name": [{"service": "b.B", "method": "M"}], "timeout": "2s"}]}"#;
    let e = import("sc.json", two, None).unwrap_err().to_string();
    assert!(e.contains("a.A/, b.B/M"), "{e}");
    let t = import("sc.json", two, Some("b.B/M")).unwrap().render();
    assert!(t.contains("deadline = \"2s\""), "{t}");
    let t = import("sc.json", two, Some("a.A/Other")).unwrap().render();
    assert!(t.contains("deadline = \"1s\""), "{t}");
}

#[test]
fn a_byte_order_mark_is_no_part_of_the_json() {
    let plain = import("sc.json", A6, None).unwrap().render();
    let marked = import("sc.json", &format!("\u{feff}{A6}"), None)
        .unwrap()
        .render();
    assert_eq!(marked, plain);
}
