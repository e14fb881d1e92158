use super::*;

const HERD: &str = r#"
name = "herd"
bucket = "10ms"

[workload]
clients = 100

[retry]
max_attempts = 6
jitter = "none"

[[variant]]
name = "full"
retry.jitter = "full"

[[variant]]
name = "equal"
[variant.retry]
jitter = "equal"
"#;

#[test]
fn variants_merge_over_the_base() {
    let s = load("herd.toml", HERD, &[]).unwrap();
    assert_eq!(s.variants.len(), 2);
    assert_eq!(s.variants[0].name, "full");
    assert_eq!(s.variants[0].retry.jitter, crate::backoff::Jitter::Full);
    assert_eq!(s.variants[1].retry.jitter, crate::backoff::Jitter::Equal);
    assert_eq!(s.variants[1].retry.max_attempts, 6);
    assert_eq!(s.variants[1].workload.clients, 100);
}

#[test]
fn set_applies_to_every_variant() {
    let sets = [
        Override::parse("workload.clients=5000").unwrap(),
        Override::parse("retry.base=5ms").unwrap(),
    ];
    let s = load("herd.toml", HERD, &sets).unwrap();
    assert!(
        s.variants
            .iter()
            .all(|m| m.workload.clients == 5000 && m.retry.base.0 == 5_000_000)
    );
}

#[test]
fn unknown_field_points_at_the_line_with_a_suggestion() {
    let e = load(
        "m.toml",
        "[retry]\nmax_attempts = 3\njiter = \"full\"\n",
        &[],
    )
    .unwrap_err();
    assert_eq!((e.line, e.column), (Some(3), Some(1)), "{e}");
    assert!(e.to_string().contains("did you mean `jitter`?"), "{e}");
    assert!(e.to_string().starts_with("m.toml:3:1: retry"), "{e}");
}

#[test]
fn bad_value_in_a_variant_names_the_variant() {
    let text = "[retry]\nbase = \"10ms\"\n\n[[variant]]\nname = \"x\"\nretry.cap = \"1ms\"\n";
    let e = load("m.toml", text, &[]).unwrap_err();
    assert_eq!(e.line, Some(6), "{e}");
    assert!(e.to_string().contains("retry.cap"), "{e}");
    assert!(e.to_string().contains("variant \"x\""), "{e}");
}

#[test]
fn an_override_changes_one_entry_of_an_array() {
    let text = "[server]\noutages = [{ from = \"10s\", to = \"15s\" }]\n";
    let s = load(
        "m.toml",
        text,
        &[Override::parse("server.outages[0].to=20s").unwrap()],
    )
    .unwrap();
    let o = &s.base.server.outages[0];
    assert_eq!((o.from.0, o.to.0), (10_000_000_000, 20_000_000_000));
    let bad = |k: &str| {
        load("m.toml", text, &[Override::parse(k).unwrap()])
            .unwrap_err()
            .to_string()
    };
    assert!(
        bad("server.outages[1].to=20s").contains("has 1 entry"),
        "{}",
        bad("server.outages[1].to=20s")
    );
    assert!(bad("server.capacity[0]=3").contains("not set in the model"));
    assert!(
        bad("server.outages[0].too=20s").contains("did you mean `to`"),
        "{}",
        bad("server.outages[0].too=20s")
    );
    assert!(Override::parse("server.outages[x].to=1s").is_err());
    assert!(Override::parse("server.outages[0.to=1s").is_err());
}

#[test]
fn set_errors_name_the_flag() {
    let e = load(
        "m.toml",
        "",
        &[Override::parse("retry.jitterr=full").unwrap()],
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("--set retry.jitterr=full"), "{e}");
    assert!(e.to_string().contains("did you mean `jitter`"), "{e}");
    let e = load("m.toml", "", &[Override::parse("retry.base=-5ms").unwrap()]).unwrap_err();
    assert!(e.to_string().contains("negative"), "{e}");
}

#[test]
fn duplicate_and_empty_variants_are_refused() {
    let e = load(
        "m.toml",
        "[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n",
        &[],
    )
    .unwrap_err();
    assert!(e.message.contains("duplicate"), "{e}");
    assert_eq!(e.line, Some(4));
    let e = load("m.toml", "variant = []\n", &[]).unwrap_err();
    assert!(e.message.contains("empty variant list"), "{e}");
}

#[test]
fn malformed_toml_has_a_line() {
    let e = load("m.toml", "[retry\n", &[]).unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
}

#[test]
fn unitless_and_negative_durations() {
    let e = load("m.toml", "[retry]\nbase = 100\n", &[]).unwrap_err();
    assert!(e.to_string().contains("m.toml:2:1: retry.base"), "{e}");
    assert!(e.message.contains("unit"), "{e}");
    let e = load("m.toml", "[workload]\nclients = 0\n", &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("workload.clients: must be at least 1"),
        "{e}"
    );
}
