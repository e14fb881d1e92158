//! Helpers the topic modules share: models from a shipped file or from TOML text, the shipped files, and the
//! run-twice determinism check.

use retrystorm_core::load::{Override, load};
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::VariantResult;

/// The variants of `models/NAME` (the base alone when it has none), with `--set` overrides.
pub fn shipped(name: &str, sets: &[&str]) -> Vec<Model> {
    read_variants(&format!("models/{name}"), sets)
}

/// The same for the test model `tests/fixtures/NAME`, which the command line's tests share.
pub fn fixture(name: &str, sets: &[&str]) -> Vec<Model> {
    read_variants(&format!("tests/fixtures/{name}"), sets)
}

/// The variants of the file at `path` below the repository's root, with `--set` overrides.
fn read_variants(path: &str, sets: &[&str]) -> Vec<Model> {
    let text = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR")));
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let name = path.rsplit('/').next().unwrap();
    load(name, &text.unwrap(), &sets).unwrap().variants
}

/// Every shipped model file (`models/*.toml`), sorted by name.
pub fn shipped_files() -> Vec<std::path::PathBuf> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Runs `model` with `seed` twice and asserts that the two results (summary, series, CDFs and
/// tiers, compared as their JSON) are the same: madsim's determinism check. Returns the result.
pub fn assert_deterministic(model: &Model, seed: u64) -> VariantResult {
    let first = run_model(model, seed, &mut |_| {});
    let again = run_model(model, seed, &mut |_| {});
    assert_eq!(
        serde_json::to_string(&first).unwrap(),
        serde_json::to_string(&again).unwrap(),
        "{}: the same model and seed {seed} gave two different results",
        model.name
    );
    assert_eq!(first, again, "{}", model.name);
    first
}

/// Four clients at once on `capacity` workers of `service` each (a fixed duration), first come
/// first served: the event loop (a shared queue). Ends in `[server]`, so that a test can add to it.
pub fn four_at_once(capacity: u32, service: &str) -> String {
    format!("[workload]\nclients = 4\n[server]\ncapacity = {capacity}\nservice = \"{service}\"\n")
}

/// 1000 clients in 1 s against a server that fails every attempt, 3 attempts with no backoff, under
/// the shared retry budget `budget` (the lines of `[budget]`): the load a budget must hold back.
pub fn always_failing(budget: &str) -> String {
    format!(
        r#"
        [workload]
        clients = 1000
        spread = "1s"
        [retry]
        max_attempts = 3
        backoff = "immediate"
        [server]
        fail = "always"
        [budget]
        scope = "shared"
        {budget}
    "#
    )
}
