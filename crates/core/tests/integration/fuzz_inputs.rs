//! Fuzzing the input parsers with proptest: arbitrary strings and structure-aware model files
//! must give a value or an error, never a panic, and every accepted model must run to an end.
//! (cargo-fuzz needs a nightly toolchain, which this project's machines do not have.)

use proptest::prelude::*;
use retrystorm_core::dist::Dist;
use retrystorm_core::load::{Override, load, parse_value};
use retrystorm_core::model::Rate;
use retrystorm_core::time::Duration;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn scalar_parsers_never_panic(s in "\\PC{0,24}") {
        let _ = Duration::parse(&s);
        let _ = Dist::parse(&s);
        let _ = Rate::parse(&s);
        let _ = parse_value(&s);
        let _ = Override::parse(&s);
    }

    #[test]
    fn duration_like_strings_never_panic(n in "-?[0-9_.e+]{0,12}", unit in "(ns|us|ms|s|m|h|x|)") {
        let s = format!("{n}{unit}");
        if let Ok(d) = Duration::parse(&s) {
            prop_assert!(!s.starts_with('-') || d.0 == 0);
        }
    }

    #[test]
    fn arbitrary_text_as_a_model_never_panics(s in "\\PC{0,200}") {
        let _ = load("fuzz.toml", &s, &[]);
    }
}

/// Fragments of model files, valid and invalid, for structure-aware generation.
fn line() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "workload.kind",
        "workload.clients",
        "workload.rate",
        "workload.workers",
        "workload.intents",
        "workload.spread",
        "workload.think",
        "retry.max_attempts",
        "retry.timeout",
        "retry.deadline",
        "retry.jitter",
        "retry.backoff",
        "retry.base",
        "retry.cap",
        "retry.multiplier",
        "retry.first_exponent",
        "network.latency",
        "network.request_loss",
        "network.response_loss",
        "network.loss_notice",
        "server.capacity",
        "server.queue",
        "server.service",
        "server.fail",
        "server.crash_probability",
        "idempotency.key",
        "idempotency.store",
        "idempotency.ttl",
        "idempotency.commit",
        "horizon",
        "bucket",
        "max_events",
        "nosuch.field",
        "retry.nosuch",
    ]);
    let value = prop::sample::select(vec![
        "0",
        "1",
        "3",
        "-1",
        "0.5",
        "1.5",
        "nan",
        "inf",
        "true",
        "\"5ms\"",
        "\"0\"",
        "\"-5ms\"",
        "\"2s\"",
        "\"exp(5ms)\"",
        "\"uniform(1ms, 3ms)\"",
        "\"uniform(3ms, 1ms)\"",
        "\"lognormal(5ms, 0.5)\"",
        "\"80/s\"",
        "\"0/s\"",
        "\"open\"",
        "\"closed\"",
        "\"burst\"",
        "\"full\"",
        "\"none\"",
        "\"decorrelated\"",
        "\"immediate\"",
        "\"always\"",
        "\"never\"",
        "\"per-intent\"",
        "\"per-attempt\"",
        "\"record-before\"",
        "\"record-after\"",
        "\"record-before-409\"",
        "\"atomic\"",
        "\"key-then-effect\"",
        "\"error\"",
        "\"timeout\"",
        "\"unlimited\"",
        "[]",
        "{}",
        "\"\"",
    ]);
    (key, value).prop_map(|(k, v)| format!("{k} = {v}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    /// Random combinations of plausible keys and values: loading never panics, and a model that
    /// loads runs to an end within its guards.
    #[test]
    fn structured_models_load_or_fail_cleanly(lines in prop::collection::vec(line(), 0..10), seed in 0u64..1000) {
        let text = model_text(&lines);
        match load("fuzz.toml", &text, &[]) {
            Ok(s) => {
                for m in &s.variants {
                    let r = retrystorm_core::run_model(m, seed, &mut |_| {});
                    let sm = &r.summary;
                    prop_assert_eq!(sm.succeeded + sm.failed + sm.unsettled, sm.intents);
                    prop_assert!(sm.events <= m.max_events);
                }
            }
            Err(e) => {
                let shown = e.to_string();
                prop_assert!(shown.starts_with("fuzz.toml"), "{}", shown);
                prop_assert!(!shown.contains('\n'), "one line: {}", shown);
            }
        }
    }
}

/// Groups `section.field = value` lines under `[section]` headers, over small, bounded defaults
/// (a later duplicate key is a TOML error, which is a fine case too).
fn model_text(lines: &[String]) -> String {
    let mut top = vec![
        "horizon = \"20s\"".to_string(),
        "max_events = 200000".to_string(),
    ];
    let mut sections: Vec<(String, Vec<String>)> = vec![(
        "workload".into(),
        vec!["clients = 20".into(), "intents = 20".into()],
    )];
    for l in lines {
        let (k, v) = l.split_once(" = ").unwrap();
        match k.split_once('.') {
            None => top.push(l.clone()),
            Some((sec, field)) => {
                let entry = format!("{field} = {v}");
                match sections.iter_mut().find(|(s, _)| s == sec) {
                    Some((_, fields)) => fields.push(entry),
                    None => sections.push((sec.to_string(), vec![entry])),
                }
            }
        }
    }
    let mut text = top.join("\n") + "\n";
    for (sec, fields) in sections {
        text += &format!("[{sec}]\n{}\n", fields.join("\n"));
    }
    text
}

#[test]
fn structured_generator_reaches_valid_models() {
    // Guard against a generator that only ever produces parse errors.
    let lines = vec![
        "retry.jitter = \"none\"".to_string(),
        "server.fail = \"always\"".to_string(),
    ];
    let s = load("fuzz.toml", &model_text(&lines), &[]).unwrap();
    let r = retrystorm_core::run_model(&s.variants[0], 1, &mut |_| {});
    assert_eq!(r.summary.intents, 20);
}
