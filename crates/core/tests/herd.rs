use retrystorm_core::{load::load, path::run};

fn herd() -> Vec<retrystorm_core::model::Model> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/thundering-herd.toml"
    ))
    .unwrap();
    load("thundering-herd.toml", &text, &[]).unwrap().variants
}

#[test]
fn no_jitter_peak_is_the_client_count() {
    let v = herd();
    let r = run(&v[0], 42);
    assert_eq!(r.summary.peak_retries, 1000);
    assert_eq!(r.summary.retries, 5000);
    assert_eq!(r.summary.attempts, 6000);
    assert_eq!(r.summary.failed, 1000);
    // Retries at 100, 300, 700, 1500 and 3100 ms.
    assert_eq!(r.summary.last_arrival_ms, 3100.0);
}

#[test]
fn jitter_lowers_the_peak() {
    let v = herd();
    for m in &v[1..] {
        let r = run(m, 42);
        println!(
            "{} peak_retries={} last={}",
            m.name, r.summary.peak_retries, r.summary.last_arrival_ms
        );
        assert_eq!(r.summary.retries, 5000);
        assert!(
            r.summary.peak_retries < 300,
            "{}: {}",
            m.name,
            r.summary.peak_retries
        );
    }
}
