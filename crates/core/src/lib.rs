//! # retrystorm-core
//!
//! The engine, models and metrics of retrystorm, a deterministic discrete-event simulator for
//! retry and backoff storms. This crate does no I/O: it turns a [`model::Model`] and a seed into
//! a [`summary::VariantResult`], and the same model and seed always give the same result.
//!
//! ```
//! use retrystorm_core::load::load;
//!
//! // 200 clients fail together and retry with full jitter; the server always fails.
//! let text = r#"
//!     [workload]
//!     clients = 200
//!     [retry]
//!     max_attempts = 4
//!     jitter = "none"
//!     base = "100ms"
//!     cap = "10s"
//!     [server]
//!     fail = "always"
//! "#;
//! let scenario = load("herd.toml", text, &[]).expect("a valid model");
//! let result = retrystorm_core::run_model(&scenario.base, 42, &mut |_| {});
//! // Without jitter every client retries in the same 10 ms bucket, every round.
//! assert_eq!(result.summary.peak_retries, 200);
//! assert_eq!(result.summary.retries, 600);
//! ```
//!
//! Six floors, each importing only from those below it (`docs/architecture.md`):
//! [`base`] (time, keyed random streams, distributions, the event queue), [`policy`] (backoff,
//! retry budgets, circuit breakers, hedging, rate limits, shedding, recovery), [`result`] (the
//! summary, expectations by metric name, replications), [`model`] (the scenario, its validation
//! and its language: TOML with located errors, `retry.mode` presets, trace rows), [`sim`] (the
//! one engine: clients, tiers, calls, the store; streaming metrics) and [`study`] (sweeps,
//! `tune`, `map`, `sensitivity`). The modules keep their short paths too ([`load`], [`summary`],
//! [`path`], ...).
//!
//! ## Testing a retry policy in your own tests
//!
//! Load or build a scenario, run it with a seed, read the [`summary::Summary`] through its typed
//! fields (or any metric by its JSON name with [`expect::metric`]), and assert. Over several
//! seeds, [`stats::Estimate`] gives the mean and its 95% confidence interval, and an
//! [`expect::Expectation`] evaluates the same assertions a model file's `[[expect]]` tables hold.
//! `examples/assert_policy.rs` at the repository root does all of it.
//!
//! ```
//! use retrystorm_core::{expect::Expectation, load::load, stats::{Estimate, replication_seeds}};
//!
//! let text = "[workload]\nclients = 100\n[retry]\njitter = \"full\"\n[server]\nfail = \"always\"\n";
//! let model = load("policy.toml", text, &[]).unwrap().base;
//! let peaks: Vec<f64> = replication_seeds(1, 5)
//!     .into_iter()
//!     .map(|seed| retrystorm_core::run_model(&model, seed, &mut |_| {}).summary.peak_retries as f64)
//!     .collect();
//! let e = Estimate::of(&peaks);
//! assert!(e.mean + e.half_width < 100.0, "full jitter spreads the retries");
//! let r = retrystorm_core::run_model(&model, 1, &mut |_| {});
//! assert_eq!(Expectation::parse("retries == 200").unwrap().holds(&r.summary), Ok(true));
//! ```

pub mod base;
pub mod model;
pub mod policy;
pub mod result;
pub mod sim;
pub mod study;

// For users only: the paths of before the floors, kept for users' code, the examples and the
// other crates (`retrystorm_core::load::load`, `retrystorm_core::summary::Summary`, ...), and the
// entry points. Nothing inside this crate names an item through them: a path names the module
// that defines it (`crate::base::time`), so this file is the roof and never the ground
// (tests/structure.rs checks it).
pub use base::{dist, invalid, queue, rng, time};
pub use model::{load, preset, replay, schema};
pub use policy::{backoff, shedding};
pub use result::{aggregate, catalogue, expect, stats, summary};
pub use sim::path::{
    run_model, run_model_traced, run_model_traced_until, run_model_until, run_summary,
    run_summary_until,
};
pub use sim::{engine, layered, metrics, path, trace};
pub use study::{map, rare, sensitivity, sweep, tune};
