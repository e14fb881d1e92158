//! Invariants of the request path over random small models (proptest).
//!
//! Each case draws a workload (burst, open, closed), a lossy network, a server (capacity, queue
//! bound, discipline, service distribution, failures, crashes, deadline propagation), a retry
//! policy (timeouts, deadline, jitter, client restarts) and idempotency modes (key, store, TTL,
//! commit), runs it, and checks:
//!
//! - every intent is accounted for: `succeeded + failed + unsettled == intents`;
//! - every attempt ends exactly once: it is dropped before arrival or it arrives
//!   (`requests_lost + arrivals == attempts` when the run settles), and `retries = attempts -
//!   intents <= intents * (max_attempts - 1)`;
//! - applied counts add up: `lost + applied_once + duplicated` is the number of finalised intents
//!   (all of them when the run settles), `effects >= applied_once + 2 * duplicated`, and from the
//!   client's view `failed == lost - phantom + false_failures`;
//! - the clock never goes back: progress reports are non-decreasing, the last is the end, and
//!   `last_arrival <= end <= horizon` (the event queue also `debug_assert`s every pop);
//! - the same seed gives an identical `VariantResult`;
//! - the article's guarantee: a per-intent key (kept across restarts), a record-before store, an
//!   atomic commit and no TTL give `duplicated == 0` and `phantom == 0`, whatever else happens;
//! - phantoms need a key-then-effect commit and crashes; no store means no phantoms.

use proptest::prelude::*;
use retrystorm_core::backoff::Jitter;
use retrystorm_core::dist::Dist;
use retrystorm_core::model::{
    CommitMode, CrashPoint, Discipline, FailMode, Idempotency, KeyMode, Limit, LossNotice, Model,
    Network, Rate, Server, StoreMode, Workload, WorkloadKind,
};
use retrystorm_core::run_model;
use retrystorm_core::summary::{Ended, VariantResult};
use retrystorm_core::time::{Duration, Time};

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn dist() -> impl Strategy<Value = Dist> {
    prop_oneof![
        (0u64..20).prop_map(|a| Dist::Constant(ms(a))),
        (0u64..20, 0u64..40).prop_map(|(a, b)| Dist::Uniform {
            min: ms(a),
            max: ms(a + b)
        }),
        (1u64..20).prop_map(|a| Dist::Exponential { mean: ms(a) }),
        (1u64..20, 0.0f64..1.5).prop_map(|(a, s)| Dist::Lognormal {
            mean: ms(a),
            sigma: s
        }),
    ]
}

fn opt_ms(lo: u64, hi: u64) -> impl Strategy<Value = Option<Duration>> {
    prop_oneof![Just(None), (lo..hi).prop_map(|x| Some(ms(x)))]
}

fn limit(hi: u64) -> impl Strategy<Value = Limit> {
    prop_oneof![Just(Limit(None)), (1..hi).prop_map(|n| Limit(Some(n)))]
}

fn prob(hi: f64) -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), 0.0..hi]
}

prop_compose! {
    fn workload_part()(
        kind in prop_oneof![
            Just(WorkloadKind::Burst),
            Just(WorkloadKind::Open),
            Just(WorkloadKind::Closed)
        ],
        n in 1u64..40,
        spread in 0u64..50,
        rate in 50.0f64..2000.0,
        workers in 1u64..6,
        think in prop_oneof![Just(Dist::Constant(Duration::ZERO)), dist()],
    ) -> Workload {
        Workload {
            kind,
            clients: n,
            intents: n,
            spread: ms(spread),
            rate: Rate(rate),
            workers,
            think,
            ..Workload::default()
        }
    }
}

prop_compose! {
    fn retry_part()(
        attempts in 1u32..6,
        timeout in opt_ms(1, 80),
        deadline in opt_ms(1, 300),
        jitter in prop_oneof![
            Just(Jitter::None),
            Just(Jitter::Full),
            Just(Jitter::Equal),
            Just(Jitter::Decorrelated)
        ],
        base in 1u64..10,
        cap in 0u64..200,
        restart in prob(1.0),
        persist in any::<bool>(),
    ) -> (u32, Option<Duration>, Option<Duration>, Jitter, u64, u64, f64, bool) {
        (attempts, timeout, deadline, jitter, base, cap, restart, persist)
    }
}

prop_compose! {
    fn network_part()(
        latency in prop_oneof![Just(Dist::Constant(Duration::ZERO)), dist()],
        back in prop_oneof![Just(None), dist().prop_map(Some)],
        req_loss in prob(0.5),
        notice in prop_oneof![Just(LossNotice::Error), Just(LossNotice::Timeout)],
        resp_loss in prob(0.5),
    ) -> Network {
        Network {
            latency,
            response_latency: back,
            request_loss: req_loss,
            loss_notice: notice,
            response_loss: resp_loss,
            ..Network::default()
        }
    }
}

prop_compose! {
    fn server_part()(
        capacity in limit(5),
        queue in prop_oneof![Just(Limit(None)), (0u64..6).prop_map(|n| Limit(Some(n)))],
        lifo in any::<bool>(),
        service in dist(),
        fail in prop_oneof![
            4 => Just(FailMode::Never),
            3 => (0.0f64..0.5).prop_map(FailMode::Probability),
            1 => Just(FailMode::Always)
        ],
        drop_expired in any::<bool>(),
        crash in prob(0.5),
        after_key in any::<bool>(),
    ) -> Server {
        Server {
            capacity,
            queue,
            discipline: if lifo { Discipline::Lifo } else { Discipline::Fifo },
            service,
            fail,
            drop_expired,
            crash_probability: crash,
            crash_point: if after_key { CrashPoint::AfterKey } else { CrashPoint::AfterEffect },
            ..Server::default()
        }
    }
}

prop_compose! {
    fn idem_part()(
        key in prop_oneof![Just(KeyMode::None), Just(KeyMode::PerIntent), Just(KeyMode::PerAttempt)],
        store in prop_oneof![
            Just(StoreMode::None),
            Just(StoreMode::RecordBefore),
            Just(StoreMode::RecordBefore409),
            Just(StoreMode::RecordAfter)
        ],
        ttl in opt_ms(1, 100),
        commit in prop_oneof![
            Just(CommitMode::Atomic),
            Just(CommitMode::EffectThenKey),
            Just(CommitMode::KeyThenEffect)
        ],
    ) -> Idempotency {
        Idempotency {
            key,
            store,
            ttl,
            commit,
            ..Idempotency::default()
        }
    }
}

fn model() -> impl Strategy<Value = Model> {
    (
        workload_part(),
        retry_part(),
        network_part(),
        server_part(),
        idem_part(),
    )
        .prop_map(|(workload, r, network, server, idempotency)| {
            let mut m = Model {
                name: "random".into(),
                horizon: Duration::from_secs(20),
                workload,
                network,
                server,
                idempotency,
                ..Model::default()
            };
            m.retry.max_attempts = r.0;
            m.retry.timeout = r.1.map(retrystorm_core::policy::adaptive::Adaptive::Fixed);
            m.retry.deadline = r.2;
            m.retry.jitter = r.3;
            m.retry.base = ms(r.4);
            m.retry.cap = ms(r.4 + r.5);
            m.retry.restart_probability = r.6;
            m.idempotency.persist_key = r.7;
            sane(m)
        })
}

/// Drops what the loader refuses as having no effect: a store without keys (or keys without a
/// store), its settings, and server settings behind `fail = "always"`.
fn sane(mut m: Model) -> Model {
    let i = &mut m.idempotency;
    if i.key == KeyMode::None || i.store == StoreMode::None {
        i.key = KeyMode::None;
        i.store = StoreMode::None;
        i.ttl = None;
        i.persist_key = true;
    }
    if m.server.fail == FailMode::Always {
        let fail = m.server.fail;
        m.server = Server {
            fail,
            ..Server::default()
        };
        m.idempotency = Default::default();
    }
    m
}

/// Runs `m` and records every progress report (the clock as the engine saw it).
fn run_traced(m: &Model, seed: u64) -> (VariantResult, Vec<Time>) {
    let mut clock = Vec::new();
    let r = run_model(m, seed, &mut |t| clock.push(t));
    (r, clock)
}

fn check(m: &Model, seed: u64) -> Result<(), TestCaseError> {
    prop_assert!(m.validate().is_ok(), "{:?}", m.validate());
    let (r, clock) = run_traced(m, seed);
    let s = &r.summary;
    let settled = s.ended == Ended::Settled;

    // Every intent and every attempt is accounted for once.
    prop_assert_eq!(s.succeeded + s.failed + s.unsettled, s.intents);
    prop_assert_eq!(
        s.lost + s.applied_once + s.duplicated + s.outcome_pending,
        s.intents
    );
    prop_assert_eq!(s.retries, s.attempts - s.intents);
    prop_assert!(s.attempts <= s.intents * u64::from(m.retry.max_attempts));
    prop_assert!(s.requests_lost + s.arrivals <= s.attempts);
    if settled {
        prop_assert_eq!(s.unsettled, 0);
        prop_assert_eq!(s.requests_lost + s.arrivals, s.attempts);
    }
    if let Some(n) = m.planned_intents()
        && settled
    {
        prop_assert_eq!(s.intents, n);
    }

    // Applied counts add up.
    let finalised = s.lost + s.applied_once + s.duplicated;
    prop_assert!(finalised <= s.succeeded + s.failed);
    if settled {
        prop_assert_eq!(finalised, s.intents);
        prop_assert_eq!(s.failed + s.phantom, s.lost + s.false_failures);
    }
    prop_assert!(s.effects >= s.applied_once + 2 * s.duplicated);
    prop_assert!(s.phantom <= s.succeeded.min(s.lost));
    prop_assert!(s.false_failures <= s.failed);
    if m.server.fail == FailMode::Always {
        prop_assert_eq!(s.effects, 0);
    }
    if m.retry.max_attempts == 1 {
        prop_assert_eq!(s.duplicated, 0);
    }

    // The clock never goes back.
    prop_assert!(clock.windows(2).all(|w| w[0] <= w[1]), "{:?}", clock);
    let end = *clock.last().expect("a final progress report");
    prop_assert_eq!(end.as_millis_f64(), s.end_ms);
    prop_assert!(s.last_arrival_ms <= s.end_ms);
    prop_assert!(s.end_ms <= m.horizon.as_millis_f64());
    let p = &s.completion_ms;
    prop_assert!(p.p50 <= p.p90 && p.p90 <= p.p99 && p.p99 <= p.max);

    // Same seed, same result.
    prop_assert_eq!(&run_model(m, seed, &mut |_| {}), &r);

    // The article's guarantee and where phantoms can come from.
    let i = &m.idempotency;
    if i.key == KeyMode::PerIntent
        && matches!(
            i.store,
            StoreMode::RecordBefore | StoreMode::RecordBefore409
        )
        && i.commit == CommitMode::Atomic
        && i.ttl.is_none()
        && (i.persist_key || m.retry.restart_probability == 0.0)
    {
        prop_assert_eq!((s.duplicated, s.phantom), (0, 0), "{:?}", m);
    }
    if s.phantom > 0 {
        prop_assert!(i.commit == CommitMode::KeyThenEffect && s.crashes > 0);
        prop_assert!(i.store != StoreMode::None && i.key != KeyMode::None);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_models_keep_the_invariants(m in model(), seed in any::<u64>()) {
        check(&m, seed)?;
    }

    /// The guarantee again, with every model forced into the safe configuration.
    #[test]
    fn keyed_atomic_record_before_never_duplicates(
        mut m in model(),
        seed in any::<u64>(),
        conflict in any::<bool>(),
    ) {
        m.idempotency.key = KeyMode::PerIntent;
        m.idempotency.store = if conflict { StoreMode::RecordBefore409 } else { StoreMode::RecordBefore };
        m.idempotency.commit = CommitMode::Atomic;
        m.idempotency.ttl = None;
        m.idempotency.persist_key = true;
        if m.server.fail == FailMode::Always {
            m.server.fail = FailMode::Probability(0.5);
        }
        check(&m, seed)?;
        let s = run_model(&m, seed, &mut |_| {}).summary;
        prop_assert_eq!((s.duplicated, s.phantom), (0, 0));
    }
}
