//! Putting a retry policy under test from your own Rust tests, without the command line.
//!
//! This example builds a scenario (a burst of 300 clients against a server that always fails),
//! runs it with a few seeds, reads the summary through its typed fields and by metric name, and
//! asserts two things: without jitter every client retries in the same 10 ms bucket, and with full
//! jitter the mean peak over seeds is far lower, with its 95% confidence interval.
//!
//! Run it with `cargo run --example assert_policy`. The same checks as a model file's
//! `[[expect]]` tables run with `retrystorm check` (see `docs/cli.md`).

use retrystorm::expect::{Expectation, Over};
use retrystorm::load::{Override, load};
use retrystorm::stats::{Estimate, replication_seeds};

const MODEL: &str = r#"
name = "my-policy"
bucket = "10ms"

[workload]
clients = 300

[retry]
max_attempts = 5
base = "100ms"
cap = "10s"

[server]
fail = "always"
"#;

fn main() {
    // 1. Build the scenario: the text above, with the policy under test set as an override
    //    (as `--set retry.jitter=none` would).
    let no_jitter = load(
        "my-policy.toml",
        MODEL,
        &[Override::parse("retry.jitter=none").unwrap()],
    )
    .expect("a valid model")
    .base;
    let full = load(
        "my-policy.toml",
        MODEL,
        &[Override::parse("retry.jitter=full").unwrap()],
    )
    .expect("a valid model")
    .base;

    // 2. Run with a seed and read the summary through its typed fields.
    let r = retrystorm::run_model(&no_jitter, 42, &mut |_| {});
    let peak: u64 = r.summary.peak_retries;
    println!(
        "no jitter: peak {peak} retries in one bucket, {} retries in all",
        r.summary.retries
    );
    assert_eq!(
        peak, 300,
        "without jitter every client retries in the same bucket"
    );
    assert_eq!(r.summary.retries, 300 * 4);

    // 3. Several seeds, and the mean with its 95% confidence interval (Student t).
    let seeds = replication_seeds(42, 5);
    let summaries: Vec<_> = seeds
        .iter()
        .map(|s| retrystorm::run_model(&full, *s, &mut |_| {}).summary)
        .collect();
    let peaks: Vec<f64> = summaries.iter().map(|s| s.peak_retries as f64).collect();
    let e = Estimate::of(&peaks);
    let (lo, hi) = e.interval();
    println!(
        "full jitter: mean peak {:.1} ± {:.1} over {} seeds (95% CI {lo:.1}..{hi:.1})",
        e.mean, e.half_width, e.n
    );

    // 4. The same assertion as a model file's [[expect]], by metric name.
    let expect = Expectation::parse("peak_retries < 100, over=mean").unwrap();
    let runs: Vec<(u64, &retrystorm::summary::Summary)> =
        seeds.iter().copied().zip(summaries.iter()).collect();
    let outcome = expect.evaluate(&full.name, &runs);
    println!("{expect}: {}", outcome.seen(Over::Mean));
    assert!(outcome.passed, "full jitter keeps the mean peak under 100");
    assert!(hi < 100.0, "and so does the top of its confidence interval");
    assert_eq!(expect.holds(&summaries[0]), Ok(true));
}
