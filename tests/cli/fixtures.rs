//! The models the CLI tests share, written once.

/// The shipped one-bad-replica model's `ejection` variant over 20 s: a replicated tier whose bad
/// replica is ejected, the run the replica outputs are read from.
pub(crate) const EJECTION_RUN: [&str; 6] = [
    "run",
    concat!(env!("CARGO_MANIFEST_DIR"), "/models/one-bad-replica.toml"),
    "--variant",
    "ejection",
    "--set",
    "horizon=20s",
];

/// A map of the shipped metastable-spike model's `no-backoff` variant, the one
/// `docs/verdict.md` documents; a test adds its axes and seeds.
pub(crate) const SPIKE_MAP: [&str; 4] = [
    "map",
    concat!(env!("CARGO_MANIFEST_DIR"), "/models/metastable-spike.toml"),
    "--variant",
    "no-backoff",
];

/// A small herd (`tests/fixtures/small-herd.toml`): 40 clients failing always, 4 attempts from
/// 100 ms, no jitter against full jitter. A literal (a macro), so that a test module can add its
/// `[[expect]]`s with `concat!`.
macro_rules! small_herd {
    () => {
        include_str!("../fixtures/small-herd.toml")
    };
}
pub(crate) use small_herd;

/// 10 clients, 3 attempts each, against a server that always fails: the `[workload]`, `[retry]`
/// and `[server]` tables, six lines a test puts its top-level keys before and its variants and
/// `[[expect]]`s after, with `concat!`.
macro_rules! always_failing {
    () => {
        "[workload]\nclients = 10\n[retry]\nmax_attempts = 3\n[server]\nfail = \"always\"\n"
    };
}
pub(crate) use always_failing;
