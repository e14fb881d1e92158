//! `retrystorm import`: the shipped example configs import to the sections their models hold,
//! `-o` writes the same text, and a field that cannot be mapped exits 2 naming it.

use assert_cmd::Command;

fn retrystorm() -> Command {
    let mut c = Command::cargo_bin("retrystorm").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn import(args: &[&str]) -> String {
    let out = retrystorm().arg("import").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn example_models_hold_what_import_prints() {
    for (args, model) in [
        (
            ["grpc", "examples/configs/grpc-service-config.json"],
            "examples/configs/grpc-greeter.toml",
        ),
        (
            ["aws", "examples/configs/aws-config"],
            "examples/configs/aws-standard.toml",
        ),
    ] {
        let sections = import(&args);
        let text =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(model))
                .unwrap();
        assert!(
            text.contains(&sections),
            "{model} is stale; regenerate it with `retrystorm import {}`",
            args.join(" ")
        );
        retrystorm().args(["check", model]).assert().success();
    }
}

#[test]
fn out_writes_the_printed_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.toml");
    let printed = import(&["aws", "examples/configs/aws-config", "--profile", "batch"]);
    retrystorm()
        .args([
            "import",
            "aws",
            "examples/configs/aws-config",
            "--profile",
            "batch",
            "-o",
        ])
        .arg(&path)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), printed);
    assert!(printed.contains("max_attempts = 5"), "{printed}");
}

#[test]
fn unmappable_fields_exit_2_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("sc.json");
    std::fs::write(
        &f,
        r#"{"methodConfig": [{"name": [{"service": "s.S"}], "retryPolicy": {"maxAttempts": 3,
        "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
        "retryableStatusCodes": ["PERMISSION_DENIED"]}}]}"#,
    )
    .unwrap();
    let out = retrystorm()
        .arg("import")
        .arg("grpc")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("methodConfig[0].retryPolicy.retryableStatusCodes[0]: \"PERMISSION_DENIED\" has no answer class")
            && err.contains("UNAVAILABLE (503)"),
        "{err}"
    );
    std::fs::write(&f, r#"{"methodConfig": [], "healthCheckConfig": {}}"#).unwrap();
    let out = retrystorm()
        .arg("import")
        .arg("grpc")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("healthCheckConfig: not supported")
            && err.contains("supported here: methodConfig, retryThrottling"),
        "{err}"
    );
}
