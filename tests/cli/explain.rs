//! `explain --variant`, the run flags it refuses, and its failure-window facts.

use super::util::{out, rs, shipped};

#[test]
fn explain_variant_explains_that_variant_alone() {
    let m = shipped("one-bad-replica.toml");
    let (code, all, err) = out(rs().args(["explain", &m]));
    assert_eq!(code, 0, "{err}");
    let (code, one, err) = out(rs().args(["explain", &m, "--variant", "ejection"]));
    assert_eq!(code, 0, "{err}");
    assert!(one.starts_with("ejection\n"), "{one}");
    assert!(one.lines().count() < all.lines().count() / 2, "{one}");
    assert!(!one.contains("same as"), "{one}");
    let (code, _, err) = out(rs().args(["explain", &m, "--variant", "ejectio"]));
    assert_eq!(code, 2);
    assert!(err.contains("--variant ejectio: no such variant"), "{err}");
}

#[test]
fn explain_refuses_the_run_flags_it_would_ignore() {
    let m = shipped("thundering-herd.toml");
    for (flag, value) in [("--seeds", "5"), ("--jobs", "2")] {
        let (code, stdout, err) = out(rs().args(["explain", &m, flag, value]));
        assert_eq!(code, 2, "{flag}: {stdout}");
        assert!(
            err.contains(&format!("{flag} {value}: explain runs no simulation")),
            "{err}"
        );
    }
}

#[test]
fn explain_states_each_failure_window() {
    let m = shipped("one-bad-replica.toml");
    let (code, text, err) = out(rs().args(["explain", &m]));
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("failure_windows[0] from 10 s to 40 s: served requests fail with probability 1 on replica 2 (outside it, fail: none)"),
        "{text}"
    );
}

#[test]
fn explain_names_hpas_grouping_of_replicas_only_when_set() {
    let d = tempfile::tempdir().unwrap();
    let model = |extra: &str| {
        let path = d.path().join("m.toml");
        std::fs::write(
            &path,
            format!(
                "[server]\ncapacity = 2\n[server.autoscale]\ntarget = 0.5\nmax_replicas = 4\n{extra}"
            ),
        )
        .unwrap();
        let (code, text, err) = out(rs().args(["explain", path.to_str().unwrap()]));
        assert_eq!(code, 0, "{err}");
        text.lines()
            .find(|l| l.contains("autoscale: HPA on utilisation"))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
    };
    let plain = model("");
    assert!(plain.contains("start_time = 0s; up:"), "{plain}");
    let set = model("missing_metrics = \"dampen\"\ncpu_initialization_period = \"5m\"\n");
    assert!(
        set.contains(
            "start_time = 0s, missing samples dampened, cpu_initialization_period = 5m; up:"
        ),
        "{set}"
    );
}
