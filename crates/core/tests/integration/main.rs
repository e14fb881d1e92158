//! The core's integration tests, one binary by topic: each module runs models through the public
//! API (`load`, `run_model`, the summary) and checks a published result, an invariant or a
//! contract. `cargo test -p retrystorm-core --test integration MODULE` runs one topic.

mod autoscale;
mod breaker_placement;
mod chain;
mod connections;
mod contention;
mod direct_path;
mod drain;
mod engine;
mod fanout;
mod fork;
mod fuzz_inputs;
mod gauge;
mod herd;
mod invariants;
mod layered;
mod learned_timeout;
mod limits;
mod netflix_limiters;
mod overload;
mod path;
mod peak_window;
mod periodic;
mod policies_real;
mod queueing;
mod rare;
mod replicas;
mod request_path;
mod server_policies;
mod slow_windows;
mod stop;
mod trace_workload;
mod util;
mod verdict;
