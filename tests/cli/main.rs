//! The `retrystorm` binary end to end, one test binary by topic (ripgrep's `tests/`): each module
//! runs the command as a user would (`assert_cmd`) and checks what it prints and writes. The
//! allocation guard (`tests/alloc_free.rs`) is its own binary: it swaps the global allocator. So
//! is the check of the source tree's structure (`tests/structure.rs`): it reads the sources and
//! runs no command.
//!
//! `cargo test --test cli MODULE` runs one topic, e.g. `cargo test --test cli errors_doc`.

mod chain;
mod charts;
mod ci_action;
mod commands;
mod contract;
mod engine_path;
mod errors_doc;
mod explain;
mod fixtures;
mod import;
mod import_cluster;
mod interrupt;
mod junit;
mod killed;
mod map;
mod map_adaptive;
mod map_verdict;
mod merge;
mod messages;
mod model_keys;
mod only_variant;
mod outputs;
mod path;
mod peak_window;
mod python_docs;
mod rare;
mod regression;
mod replicas_errors;
mod replicas_outputs;
mod reports;
mod schema;
mod slow_windows;
mod trace;
mod trace_workload;
mod tune;
mod tune_bounds;
mod tune_chart;
mod util;
mod validate;
mod verdict;
mod warnings;
