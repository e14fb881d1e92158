//! Messages that named the wrong cause, each now the real one (`docs/errors.md`).

use super::util::{in_temp, out, rs, write};

const SMALL: &str = "horizon = \"2s\"\n[workload]\nclients = 5\n[server]\nservice = \"1ms\"\n";

#[test]
fn a_sweep_out_through_a_dangling_link_writes_the_links_target() {
    let (d, m) = in_temp("m.toml", SMALL);
    let link = d.path().join("runs.jsonl");
    let target = d.path().join("real.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (code, stdout, err) = out(rs()
        .arg("sweep")
        .arg(&m)
        .args(["--vary", "workload.clients=5,6", "--out"])
        .arg(&link));
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let runs = std::fs::read_to_string(&target).unwrap();
    assert!(runs.lines().count() >= 3, "a header and two runs: {runs}");
}

#[test]
fn an_html_report_of_an_absolute_model_path_does_not_publish_its_folders() {
    let d = tempfile::tempdir().unwrap();
    let text = format!("{SMALL}[[expect]]\nmetric = \"retries\"\nop = \"<\"\nvalue = 1\n");
    let m = write(d.path(), "m.toml", &text);
    assert!(m.is_absolute());
    let html = d.path().join("r.html");
    let (code, stdout, err) = out(rs().arg("report").arg(&m).arg("-o").arg(&html));
    assert_eq!(code, 0, "{stdout}{err}");
    let page = std::fs::read_to_string(&html).unwrap();
    let folder = d.path().to_str().unwrap();
    assert!(!page.contains(folder), "the report shows {folder}");
    assert!(page.contains("m.toml"), "the report names the model file");
}

#[test]
fn merging_shards_of_two_models_names_the_models_not_an_edit() {
    let d = tempfile::tempdir().unwrap();
    let shard = |model: &str, i: &str| {
        let m = write(
            d.path(),
            &format!("{model}.toml"),
            &format!("name = \"{model}\"\n{SMALL}"),
        );
        let o = d.path().join(format!("{model}.jsonl"));
        let (code, stdout, err) = out(rs()
            .arg("sweep")
            .arg(&m)
            .args(["--vary", "workload.clients=5,6", "--shard", i, "--out"])
            .arg(&o));
        assert_eq!(code, 0, "{stdout}{err}");
        o
    };
    let (a, b) = (shard("a", "1/2"), shard("b", "2/2"));
    let merged = d.path().join("all.jsonl");
    let (code, _, err) = out(rs().arg("merge").arg(&a).arg(&b).arg("-o").arg(&merged));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("(it is a sweep of another model (\"b\", not \"a\"))"),
        "{err}"
    );
}

#[test]
fn a_trace_without_a_timestamp_column_shows_its_own_columns() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "t.csv", "class,key\nread,a\n");
    let m = write(
        d.path(),
        "m.toml",
        "[workload]\nkind = \"trace\"\ntrace = \"t.csv\"\n",
    );
    let (code, _, err) = out(rs().arg("run").arg(&m));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the header row (class, key) has no `timestamp` column; a trace has `timestamp` and optionally `class` and `key`"),
        "{err}"
    );
}
