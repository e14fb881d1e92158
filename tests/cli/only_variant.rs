//! `map --variant` and `tune --variant` resolve that variant alone: an override only it can
//! take fails on no other variant and warns of none.

use super::util::{in_temp, out, rs};

/// The base has no slow window; only the variant `slow` has one.
const MODEL: &str = r#"horizon = "4s"
[workload]
kind = "open"
rate = "100/s"
[retry]
max_attempts = 2
timeout = "200ms"
[server]
capacity = 4
service = "5ms"
[[variant]]
name = "fast"
retry.max_attempts = 1
[[variant]]
name = "slow"
server.slow_windows = [{ from = "1s", to = "2s", factor = 4.0 }]
"#;

#[test]
fn map_and_tune_with_a_variant_resolve_that_variant_alone() {
    let (_d, m) = in_temp("m.toml", MODEL);
    let m = m.to_str().unwrap();
    let vary = "server.slow_windows[0].factor=2,8";
    // `retry.max_attempts` is set by `fast`, which is not run: no warning names it.
    let own: [(&str, &[&str]); 2] = [
        ("map", &["--within", "3s"]),
        (
            "tune",
            &["--minimize", "amplification", "--first-stage", "2"],
        ),
    ];
    for (command, flags) in own {
        let (code, stdout, err) = out(rs()
            .args([command, m, "--variant", "slow", "--vary", vary])
            .args(["--vary", "retry.max_attempts=1,3"])
            .args(flags));
        assert_eq!(code, 0, "{command}: {stdout}{err}");
        assert!(!err.contains("\"fast\""), "{command}: {err}");
    }
    // Without --variant the base, which has no slow window, is resolved too, and refused.
    let (code, _, err) = out(rs().args(["tune", m, "--vary", vary, "--minimize", "amplification"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--vary server.slow_windows[0].factor=2"),
        "{err}"
    );
}
