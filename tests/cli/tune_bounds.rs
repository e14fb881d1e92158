//! `tune`'s first stage is bounded as a sweep is: at most 100,000 runs in one process, refused
//! before any candidate is loaded, naming the bound and the shards that split it.

use super::util::{in_temp, out, rs};

const MODEL: &str = "horizon = \"10s\"\n[workload]\nkind = \"open\"\nrate = \"100/s\"\n[retry]\nmax_attempts = 3\n[server]\nservice = \"5ms\"\n";

#[test]
fn a_first_stage_over_the_per_process_bound_is_refused_naming_the_shards() {
    let (_dir, m) = in_temp("m.toml", MODEL);
    let m = m.to_str().unwrap();
    let search = [
        "tune",
        m,
        "--vary",
        "retry.base=1ms..100s:1ms",
        "--candidates",
        "100000",
        "--minimize",
        "amplification",
    ];
    let (code, stdout, err) = out(rs().args(search));
    assert_eq!(code, 2, "{stdout}");
    assert!(
        err.contains("--candidates 100000: the first stage would run 500000 runs (100000 candidates x 5 seeds) in this process; at most 100000 per process: split it with --shard I/5"),
        "{err}"
    );
}
