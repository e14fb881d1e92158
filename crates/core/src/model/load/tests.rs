use super::*;
use crate::policy::adaptive::Adaptive;

/// A variant per jitter over a base with equal jitter, one written as a `[variant.retry]` table.
const HERD: &str = include_str!("../../../../../tests/fixtures/herd-500.toml");

#[test]
fn variants_merge_over_the_base() {
    use crate::policy::backoff::Jitter;
    let s = load("herd.toml", HERD, &[]).unwrap();
    let names: Vec<_> = s.variants.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["equal", "full", "decorrelated", "none"]);
    let jitters: Vec<_> = s.variants.iter().map(|m| m.retry.jitter).collect();
    assert_eq!(
        jitters,
        [
            Jitter::Equal,
            Jitter::Full,
            Jitter::Decorrelated,
            Jitter::None
        ]
    );
    assert_eq!(s.variants[2].retry.max_attempts, 6);
    assert_eq!(s.variants[2].workload.clients, 500);
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

#[test]
fn a_check_against_a_default_says_it_is_the_default() {
    // `--vary retry.cap=1ms` on a model that never wrote retry.base: the 100ms is the default.
    let set = Override::parse_as("--vary", "retry.cap=1ms").unwrap();
    let e = load("m.toml", "[retry]\nmax_attempts = 3\n", &[set])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "--vary retry.cap=1ms: retry.cap: must be >= retry.base (100ms, the default), got 1ms"
    );
    // Written (in the file, a variant or a flag), it is the user's value.
    let e = load("m.toml", "[retry]\nbase = \"1s\"\ncap = \"10ms\"\n", &[])
        .unwrap_err()
        .to_string();
    assert!(e.ends_with("must be >= retry.base (1s), got 10ms"), "{e}");
    let e = load(
        "m.toml",
        "[server.shedding]\nkind = \"codel\"\ninterval = \"5ms\"\n",
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("must be longer than server.shedding.target (5ms, the default), as folly's"),
        "{e}"
    );
}

/// The `[retry]` a model with `retry.mode = mode` (and `extra` keys beside it) resolves to.
fn resolved(mode: &str, extra: &str) -> crate::model::Retry {
    let text = format!("[retry]\nmode = \"{mode}\"\n{extra}");
    load("m.toml", &text, &[])
        .unwrap_or_else(|e| panic!("{mode}: {e}"))
        .base
        .retry
}

#[test]
fn the_libraries_defaults() {
    use crate::base::time::Duration;
    use crate::policy::backoff::{BackoffKind, CapApplies, Jitter};
    let ms = Duration::from_millis;
    let g = resolved("grpc-connect", "");
    assert_eq!(
        (g.backoff, g.jitter),
        (BackoffKind::Grpc, Jitter::Proportional)
    );
    assert_eq!((g.base, g.multiplier, g.cap), (ms(1000), 1.6, ms(120_000)));
    assert_eq!(
        (g.randomization_factor, g.timeout),
        (Some(0.2), Some(Adaptive::Fixed(ms(20_000))))
    );
    let k = resolved("client-go", "");
    assert_eq!((k.max_attempts, k.base, k.multiplier), (4, ms(10), 5.0));
    assert_eq!((k.jitter, k.jitter_factor), (Jitter::Additive, Some(0.1)));
    let r = resolved("client-go-retry", "");
    assert_eq!((r.max_attempts, r.base, r.multiplier), (5, ms(10), 1.0));
    let c = resolved("cenkalti", "");
    assert_eq!((c.base, c.multiplier, c.cap), (ms(500), 1.5, ms(60_000)));
    assert_eq!(
        (c.randomization_factor, c.deadline),
        (Some(0.5), Some(ms(900_000)))
    );
    assert_eq!(c.backoff().spread.cap_applies, CapApplies::BeforeJitter);
    let j = resolved("resilience4j-random", "");
    assert_eq!((j.max_attempts, j.base, j.multiplier), (3, ms(500), 1.5));
    assert_eq!(j.cap_applies, Some(CapApplies::AfterJitter));
    let t = resolved("tenacity", "");
    assert_eq!(
        (t.jitter, t.jitter_max, t.base),
        (Jitter::Absolute, Some(ms(1000)), ms(1000))
    );
    assert_eq!(t.cap_applies, Some(CapApplies::AfterJitter));
    let s = resolved("spring-random", "");
    assert_eq!((s.max_attempts, s.base, s.cap), (3, ms(100), ms(30_000)));
    assert_eq!((s.jitter, s.jitter_factor), (Jitter::Additive, Some(1.0)));
    for m in crate::model::preset::MODES {
        assert_eq!(resolved(m, "").mode.as_deref(), Some(m));
    }
}

#[test]
fn a_jitter_written_beside_a_mode_drops_the_modes_sizing() {
    use crate::policy::backoff::Jitter;
    let r = resolved("cenkalti", "jitter = \"full\"\n");
    assert_eq!(
        (r.jitter, r.randomization_factor, r.base),
        (
            Jitter::Full,
            None,
            crate::base::time::Duration::from_millis(500)
        )
    );
    let r = resolved("tenacity", "jitter = \"additive\"\njitter_factor = 0.5\n");
    assert_eq!((r.jitter_factor, r.jitter_max), (Some(0.5), None));
    // A sizing key the user wrote stays, and is refused when it has no effect.
    let text = "[retry]\nmode = \"cenkalti\"\njitter = \"full\"\nrandomization_factor = 0.3\n";
    let e = load("m.toml", text, &[]).unwrap_err().to_string();
    assert!(
        e.contains("retry.randomization_factor: has no effect"),
        "{e}"
    );
}
