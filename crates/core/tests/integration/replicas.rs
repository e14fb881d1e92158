//! `server.replicas`: a tier of several servers behind load balancers, faults that
//! name a replica, retries to another (or the same) host, and outlier ejection.

use super::util::assert_deterministic;
use retrystorm_core::load::{Override, load};
use retrystorm_core::model::Model;
use retrystorm_core::path::run;
use retrystorm_core::summary::{ReplicaSummary, Summary};

/// Five replicas of four workers each; `extra` is appended (TOML) and `sets` applied.
fn five(extra: &str, sets: &[&str]) -> Model {
    let text = format!(
        r#"
        horizon = "30s"
        [workload]
        kind = "open"
        rate = "200/s"
        intents = 4000
        [retry]
        max_attempts = 3
        timeout = "1s"
        base = "20ms"
        [server]
        replicas = 5
        capacity = 4
        queue = 100
        service = {{ dist = "exponential", mean = "2ms" }}
        {extra}
    "#
    );
    let sets: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    load("test.toml", &text, &sets).unwrap().base
}

/// Replica 2 fails every request it serves, for the whole run.
const BAD_TWO: &str = r#"
    [[server.failure_windows]]
    from = "0s"
    to = "1h"
    probability = 1.0
    replica = 2
"#;

fn replicas(s: &Summary) -> &[ReplicaSummary] {
    &s.tiers[0].replicas
}

#[test]
fn round_robin_splits_arrivals_evenly_and_the_rows_add_up() {
    let s = assert_deterministic(&five("", &[]), 1).summary;
    let rows = replicas(&s);
    assert_eq!(rows.len(), 5);
    let arrivals: Vec<u64> = rows.iter().map(|r| r.arrivals).collect();
    let (lo, hi) = (
        *arrivals.iter().min().unwrap(),
        *arrivals.iter().max().unwrap(),
    );
    assert!(hi - lo <= 1, "round robin: {arrivals:?}");
    let t = &s.tiers[0];
    assert_eq!(arrivals.iter().sum::<u64>(), t.arrivals);
    assert_eq!(rows.iter().map(|r| r.served).sum::<u64>(), t.served);
    assert_eq!(rows.iter().map(|r| r.rejected).sum::<u64>(), t.rejected);
}

#[test]
fn a_failure_window_strikes_only_the_replica_it_names() {
    let s = run(&five(BAD_TWO, &[]), 1).summary;
    for r in replicas(&s) {
        if r.replica == 2 {
            assert_eq!(r.errors, r.served, "replica 2 fails all it serves");
        } else {
            assert_eq!(r.errors, 0, "replica {} is healthy", r.replica);
        }
    }
}

#[test]
fn same_host_retries_fail_with_their_first_host_and_previous_hosts_avoids_it() {
    let rules = ["server.balancer=\"random\""];
    let same = run(
        &five(
            BAD_TWO,
            &[rules[0], "retry.retry_host_predicate=\"same-host\""],
        ),
        1,
    )
    .summary;
    // Every intent whose first try went to replica 2 spends its three attempts there and fails.
    let bad = &replicas(&same)[2];
    assert_eq!(same.failed * 3, bad.arrivals, "{:?}", replicas(&same));
    assert!(same.failed > 0);
    // With enough re-picks, a retry never lands on a host the call already tried.
    let other = run(
        &five(
            BAD_TWO,
            &[
                rules[0],
                "retry.retry_host_predicate=\"previous-hosts\"",
                "retry.host_selection_retry_max_attempts=100",
            ],
        ),
        1,
    )
    .summary;
    assert_eq!(other.failed, 0);
    assert_eq!(
        replicas(&other)[2].arrivals,
        replicas(&other)[2].errors,
        "only first tries reach replica 2"
    );
    let none = run(&five(BAD_TWO, &rules), 1).summary;
    assert!(none.failed > 0, "random re-picks land on replica 2 again");
    assert!(none.failed < same.failed);
    // The workload is the same in all three (common random numbers).
    assert_eq!(none.intents, same.intents);
    assert_eq!(none.intents, other.intents);
}

#[test]
fn envoy_consecutive_5xx_ejects_the_bad_replica_once_max_ejection_percent_allows() {
    let ejecting = "server.outlier_detection.max_ejection_percent=20";
    let s = run(
        &five(
            BAD_TWO,
            &[ejecting, "server.outlier_detection.interval=\"1s\""],
        ),
        1,
    )
    .summary;
    let bad = &replicas(&s)[2];
    assert_eq!(bad.ejections, 1, "{:?}", replicas(&s));
    // Ejected at its 5th consecutive 5xx; with round robin at 200/s nothing else was on the way.
    assert_eq!(bad.errors, 5);
    assert_eq!(bad.arrivals, 5);
    for r in replicas(&s).iter().filter(|r| r.replica != 2) {
        assert_eq!(r.ejections, 0);
    }
    // Envoy's default 10 % ejects no host of five (`100 * 1 / 5 > 10`): the source's rule.
    let default = run(
        &five(BAD_TWO, &["server.outlier_detection.interval=\"1s\""]),
        1,
    )
    .summary;
    assert_eq!(replicas(&default)[2].ejections, 0);
    assert!(replicas(&default)[2].errors > 5);
}

#[test]
fn an_outage_on_one_replica_rejects_only_there() {
    let s = run(
        &five(
            r#"outages = [{ from = "0s", to = "1h", replica = 1 }]"#,
            &[],
        ),
        1,
    )
    .summary;
    for r in replicas(&s) {
        assert_eq!(r.rejected > 0, r.replica == 1, "{r:?}");
    }
}

#[test]
fn every_balancer_and_scope_is_deterministic_and_sends_everything_somewhere() {
    for sets in [
        &["server.balancer=\"random\""][..],
        &["server.balancer=\"least-request\"", "server.choice_count=3"],
        &["server.balancer=\"p2c-ewma\""],
        &[
            "server.balancer=\"round-robin\"",
            "server.balancer_scope=\"client\"",
            "workload.processes=7",
        ],
        &[
            "server.outlier_detection.kind=\"grpc\"",
            "server.outlier_detection.interval=\"1s\"",
        ],
    ] {
        let s = assert_deterministic(&five(BAD_TWO, sets), 3).summary;
        let total: u64 = replicas(&s).iter().map(|r| r.arrivals).sum();
        assert_eq!(total, s.tiers[0].arrivals, "{sets:?}");
        assert!(
            replicas(&s).iter().all(|r| r.arrivals > 0),
            "{sets:?}: {:?}",
            replicas(&s)
        );
    }
}

#[test]
fn least_request_beats_random_on_a_slow_replica() {
    let slow = r#"slow_windows = [{ from = "0s", to = "1h", factor = 20, replica = 0 }]"#;
    let random = run(&five(slow, &["server.balancer=\"random\""]), 1).summary;
    let least = run(&five(slow, &["server.balancer=\"least-request\""]), 1).summary;
    assert!(
        replicas(&least)[0].arrivals < replicas(&random)[0].arrivals,
        "least request sends less to the slow replica: {} vs {}",
        replicas(&least)[0].arrivals,
        replicas(&random)[0].arrivals
    );
    assert!(least.completion_ms.p99 < random.completion_ms.p99);
}

/// Two replicas, one hedged copy per intent 1 ms after the first, both still out when it goes:
/// with `previous-hosts` (and enough re-picks) the copy goes to the other replica, so each
/// replica sees every intent once; placed afresh, the copy often meets the first's replica.
#[test]
fn a_hedged_copy_goes_to_another_replica_with_previous_hosts() {
    let hedged = |predicate: &str| {
        let text = format!(
            r#"
            [workload]
            kind = "open"
            rate = "50/s"
            intents = 500
            [retry]
            max_attempts = 2
            retry_on = []
            {predicate}
            [hedge]
            delay = "1ms"
            [server]
            replicas = 2
            balancer = "random"
            service = "10ms"
        "#
        );
        run(&load("test.toml", &text, &[]).unwrap().base, 1).summary
    };
    let other = hedged(
        "retry_host_predicate = \"previous-hosts\"\nhost_selection_retry_max_attempts = 100",
    );
    let rows = replicas(&other);
    assert_eq!(rows[0].arrivals, 500, "{rows:?}");
    assert_eq!(rows[1].arrivals, 500, "{rows:?}");
    let afresh = hedged("");
    assert_eq!(afresh.tiers[0].arrivals, 1000);
    assert_ne!(
        replicas(&afresh)[0].arrivals,
        500,
        "{:?}",
        replicas(&afresh)
    );
}
