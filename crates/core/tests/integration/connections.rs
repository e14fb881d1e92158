//! Connection cost (`server.connections`) against its closed form: when every attempt opens a
//! connection, a saturated server spends `service + connect` of a worker's time per request, so
//! its steady throughput is `capacity / (E[service] + E[connect])`. Plus what drops a
//! connection, the cap per replica, and the same bytes for the same seed.

use crate::util::assert_deterministic;
use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::run_model;
use retrystorm_core::summary::{ConnectionSummary, Summary};

/// A closed loop of 40 workers (one client process each, one request at a time, no think time)
/// into 4 workers of `exp(10ms)`: always saturated. `connections` is the table's body.
fn model(intents: u64, timeout: &str, connections: &str) -> Model {
    let text = format!(
        r#"
        [workload]
        kind = "closed"
        workers = 40
        intents = {intents}
        [retry]
        max_attempts = 1
        {timeout}
        [server]
        capacity = 4
        service = "exp(10ms)"
        [server.connections]
        {connections}
        "#
    );
    load("connections.toml", &text, &[]).unwrap().base
}

fn conn(s: &Summary) -> &ConnectionSummary {
    assert_eq!(s.connections.len(), 1, "one tier with connections");
    &s.connections[0]
}

fn run(intents: u64, timeout: &str, connections: &str) -> Summary {
    run_model(&model(intents, timeout, connections), 1, &mut |_| {}).summary
}

/// `got` attempts/s within 1.2 % of `capacity / (service + connect)` = 4 / 25 ms = 160/s: the
/// mean of 20,000 draws of 25 ms is within about 1 % (four standard errors).
fn near_closed_form(got: f64) {
    let want = 4.0 / 0.025;
    assert!(
        (got - want).abs() < 0.012 * want,
        "{got}/s, closed form {want}/s"
    );
}

#[test]
fn every_attempt_reconnecting_serves_capacity_over_service_plus_connect() {
    // No keep-alive: each of a worker's requests opens its own connection.
    let s = run(
        20_000,
        "",
        "connect = \"exp(15ms)\"\ndrop_on = [\"answer\"]",
    );
    let c = conn(&s);
    assert_eq!(c.connects, 20_000);
    assert!((c.connects_per_intent - 1.0).abs() < 1e-12);
    // The intents done over the time the last one settled.
    near_closed_form(s.intents as f64 / (s.drain_ms.unwrap() / 1e3));
    // Connects are 15 of every 25 ms of work.
    let share = c.connect_work_share;
    assert!((share - 0.6).abs() < 0.01, "{share}");
}

#[test]
fn a_drop_on_every_timeout_reconnects_every_attempt() {
    // Every attempt times out long before its answer, and each timeout drops the worker's
    // connection: each attempt connects, and the workers serve them (orphans now) until the run
    // ends at capacity / (service + connect).
    let s = run(
        20_000,
        "timeout = \"1ms\"",
        "connect = \"exp(15ms)\"\ndrop_on = [\"timeout\"]",
    );
    assert_eq!(conn(&s).connects, 20_000);
    assert_eq!(s.tiers[0].served, 20_000);
    near_closed_form(s.tiers[0].served as f64 / (s.end_ms / 1e3));
}

#[test]
fn kept_connections_connect_once_per_client() {
    let s = run(5_000, "", "connect = \"exp(15ms)\"");
    let c = conn(&s);
    assert_eq!(
        (c.connects, c.drops, c.open_at_end, c.peak_open),
        (40, 0, 40, 40)
    );
    // 40 connects of 15 ms against 5,000 requests of 10 ms.
    assert!(c.connect_work_share < 0.02, "{}", c.connect_work_share);
}

#[test]
fn a_full_replica_refuses_connects() {
    let s = run(2_000, "", "connect = \"1ms\"\nmax_per_replica = 10");
    let c = conn(&s);
    assert_eq!((c.connects, c.peak_open), (10, 10));
    assert!(c.connects_refused > 0);
    // A refused connect is a connection error the worker never sees.
    assert_eq!(s.failed, c.connects_refused);
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let m = model(
        3_000,
        "timeout = \"20ms\"",
        "connect = \"exp(15ms)\"\ndrop_on = [\"timeout\"]\nreconnect_backoff = { min_connect_timeout = \"0s\" }",
    );
    let r = assert_deterministic(&m, 3);
    assert!(conn(&r.summary).connects_deferred > 0);
}

#[test]
fn without_connections_the_summary_has_none() {
    let m = load(
        "plain.toml",
        "[server]\ncapacity = 4\nservice = \"10ms\"",
        &[],
    )
    .unwrap()
    .base;
    let r = run_model(&m, 1, &mut |_| {});
    assert!(r.summary.connections.is_empty());
    let json = serde_json::to_string(&r.summary).unwrap();
    assert!(!json.contains("\"connections\""));
}
