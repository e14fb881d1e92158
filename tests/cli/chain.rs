//! `explain`'s Markov chain of a one-tier model: its lines for `models/metafor.toml`, its JSON
//! fields, and the refusal of a chain too large to solve.

use crate::util::{out, rs, shipped};

fn explain(extra: &[&str]) -> (i32, String, String) {
    let mut c = rs();
    c.args(["explain", &shipped("metafor.toml")]).args(extra);
    out(&mut c)
}

#[test]
fn explain_prints_the_chain_of_metafors_server() {
    let (code, text, err) = explain(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains(
            "chain: Metafor's Markov chain, 102 queue lengths x 51 orbit sizes (5202 states)"
        ),
        "{text}"
    );
    assert!(
        text.contains("tips (90 or more requests) in 60.3 s on average"),
        "{text}"
    );
    let (_, json, _) = explain(&["--json", "-"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let variants = v["variants"].as_array().unwrap();
    let chain = &variants[0]["chain"];
    let tip = chain["time_to_tip_s"].as_f64().unwrap();
    assert!((tip / 61.2 - 1.0).abs() < 0.05, "{chain}");
    assert!(chain["tipped_share"].as_f64().unwrap() > 0.9, "{chain}");
    // Without retries the chain refuses, saying why; the verdict is still there.
    let none = variants.iter().find(|x| x["name"] == "no-retries").unwrap();
    assert!(none["chain"].is_null(), "{none}");
    assert!(
        none["chain_refused"]
            .as_str()
            .unwrap()
            .contains("needs retries"),
        "{none}"
    );
    assert!(none["verdict"].is_object());
}

#[test]
fn a_chain_too_large_is_refused_naming_the_model_and_the_limits() {
    let (code, text, err) = explain(&["--set", "server.queue=100000"]);
    assert_eq!(code, 0, "{err}");
    let line = text
        .lines()
        .find(|l| l.contains("retry-at-once: the"))
        .unwrap();
    assert!(
        line.contains("chain: not solved: retry-at-once: the Markov chain would have")
            && line.contains("over its limits of 40000 states and 20000000 units"),
        "{text}"
    );
}
