use super::ewma::{PENALTY, PeakEwma};
use super::retry_host::{Attempt, PreviousHosts, choose};
use super::*;
use crate::base::rng::Purpose;

/// Scripted draws: each test says which raw values the balancer gets, so the picks are exact.
pub(crate) struct Script(pub Vec<u64>);

impl Draw for Script {
    fn next_u64(&mut self) -> u64 {
        assert!(
            !self.0.is_empty(),
            "the balancer drew more than the script holds"
        );
        self.0.remove(0)
    }
}

const ALL5: [u32; 5] = [0, 1, 2, 3, 4];

/// A kind with its settings, as `Server::balancer_spec` resolves them.
type Spec = (BalancerKind, Params);

fn spec(kind: BalancerKind) -> Spec {
    (kind, Params::default())
}

fn least_request(choice_count: u32) -> Spec {
    let p = Params {
        choice_count,
        ..Params::default()
    };
    (BalancerKind::LeastRequest, p)
}

fn p2c_ewma(decay: Duration) -> Spec {
    let p = Params {
        decay,
        ..Params::default()
    };
    (BalancerKind::P2cEwma, p)
}

fn build((kind, p): Spec, replicas: u32, now: Time, draw: &mut impl Draw) -> Balancer {
    Balancer::new(kind, &p, replicas, now, draw)
}

fn picks(b: &mut Balancer, hosts: &[u32], draws: Vec<u64>, n: usize) -> Vec<u32> {
    let mut s = Script(draws);
    let out = (0..n)
        .map(|_| b.pick(hosts, &mut s, Time(0)).unwrap())
        .collect();
    assert!(s.0.is_empty(), "draws left over: {:?}", s.0);
    out
}

#[test]
fn round_robin_starts_at_its_seed_and_keeps_its_index_when_hosts_change() {
    let mut b = build(
        spec(BalancerKind::RoundRobin),
        5,
        Time(0),
        &mut Script(vec![7]),
    );
    assert_eq!(picks(&mut b, &ALL5, vec![], 5), [2, 3, 4, 0, 1]);
    // Replicas 2 and 4 ejected: the index (now 12) goes on, modulo the shorter list.
    assert_eq!(picks(&mut b, &[0, 1, 3], vec![], 4), [0, 1, 3, 0]);
    assert_eq!(b.pick(&[], &mut Script(vec![]), Time(0)), None);
}

#[test]
fn random_takes_a_draw_modulo_the_hosts() {
    let mut b = build(spec(BalancerKind::Random), 5, Time(0), &mut Script(vec![]));
    assert_eq!(picks(&mut b, &[0, 2, 4], vec![12, 4, 3], 3), [0, 2, 0]);
}

#[test]
fn least_request_takes_the_less_loaded_of_two_random_choices() {
    let kind = least_request(DEFAULT_CHOICE_COUNT);
    let mut b = build(kind, 5, Time(0), &mut Script(vec![]));
    for _ in 0..3 {
        b.start(1);
    }
    b.start(3);
    assert_eq!((b.active(1), b.active(3), b.active(0)), (3, 1, 0));
    // 1 (3 active) then 3 (1 active): the second wins; in the other order the first stays.
    assert_eq!(picks(&mut b, &ALL5, vec![1, 3, 3, 1], 2), [3, 3]);
    // A tie keeps the first sample; the choices are with replacement (6 % 5 is 1 again).
    assert_eq!(picks(&mut b, &ALL5, vec![2, 0, 1, 6], 2), [2, 1]);
    b.finish(1, Time(0), Time(5));
    b.finish(1, Time(0), Time(5));
    b.finish(1, Time(0), Time(5));
    b.finish(1, Time(0), Time(5));
    assert_eq!(b.active(1), 0, "more answers than sends saturate at 0");
    assert_eq!(picks(&mut b, &ALL5, vec![3, 1], 1), [1]);
    let three = least_request(3);
    let mut b3 = build(three, 5, Time(0), &mut Script(vec![]));
    b3.start(1);
    b3.start(3);
    assert_eq!(picks(&mut b3, &ALL5, vec![1, 3, 4], 1), [4]);
}

#[test]
fn least_request_on_two_hosts_takes_the_busier_one_a_quarter_of_the_time() {
    // The proto's own example (`least_request.proto`, `FULL_SCAN`): "Consider a workload type
    // that is only deployed on 2 hosts. With default settings, the N_CHOICES method will return
    // the host with more active requests 25% of the time." Every pair of draws, once each:
    let kind = least_request(DEFAULT_CHOICE_COUNT);
    let mut b = build(kind, 2, Time(0), &mut Script(vec![]));
    b.start(0);
    let got = picks(&mut b, &[0, 1], vec![0, 0, 0, 1, 1, 0, 1, 1], 4);
    assert_eq!(
        got,
        [0, 1, 1, 1],
        "the busier replica 0 only when both draws are 0"
    );
}

#[test]
fn least_request_beats_random_on_the_maximum_load() {
    // The power of two choices: with 50 replicas and 5000 sends that never finish, the busiest
    // replica under random balancing holds far more than under least request.
    let mut stream = Stream::new(1, 2, Purpose::Start, 0);
    let mut max_load = |kind| {
        let mut b = build(kind, 50, Time(0), &mut Script(vec![]));
        let hosts: Vec<u32> = (0..50).collect();
        for _ in 0..5000 {
            let r = b.pick(&hosts, &mut stream, Time(0)).unwrap();
            b.start(r);
        }
        (0..50).map(|r| b.active(r)).max().unwrap()
    };
    let random = max_load(spec(BalancerKind::Random));
    let lr = max_load(least_request(2));
    assert!(
        lr <= 103 && random >= 115,
        "least request {lr}, random {random}"
    );
}

#[test]
fn p2c_ewma_samples_two_distinct_replicas() {
    let kind = p2c_ewma(DEFAULT_DECAY);
    let mut b = build(kind, 5, Time(0), &mut Script(vec![]));
    // a = 2, b = 2 % 4 = 2 hits the hole and moves to 3; both cost 0, so `a` wins ties.
    assert_eq!(picks(&mut b, &ALL5, vec![2, 2], 1), [2]);
    // Make 2 slow: its cost is now above 3's and 4's zero.
    b.start(2);
    b.finish(2, Time(0), Time(1_000_000));
    assert_eq!(picks(&mut b, &ALL5, vec![2, 2], 1), [3]);
    assert_eq!(
        picks(&mut b, &ALL5, vec![4, 2], 1),
        [4],
        "b = 2 is below the hole at 4"
    );
    assert_eq!(picks(&mut b, &[1], vec![], 1), [1], "one host: no draw");
}

#[test]
fn peak_ewma_cost_and_decay_by_hand() {
    let ms = |x: u64| Time(x * 1_000_000);
    let mut m = PeakEwma::new(Duration::from_secs(10), Time(0));
    assert_eq!(m.cost(Time(0)), 0.0, "no history, nothing pending: 0");
    // One round trip of 100 ms ending at 0.1 s: the first observation is the average.
    m.start();
    m.end(Time(0), ms(100));
    assert_eq!(m.cost(ms(100)), 1e8);
    // Ten seconds (one decay time) later it has decayed by e: 1e8 / e.
    let c = m.cost(ms(10_100));
    assert!((c - 36_787_944.117).abs() < 1e-3, "{c}");
    // Two pending: cost × (2 + 1).
    m.start();
    m.start();
    assert!((m.cost(ms(10_100)) - 3.0 * 36_787_944.117).abs() < 1e-2);
    // A 50 ms round trip is above the decayed average: the peak resets it to 50 ms exactly.
    m.end(ms(10_050), ms(10_100));
    assert_eq!(m.last(), 5e7);
    // A 10 ms one 5 s later is below: 1e7·(1 − e^−0.5) + 5e7·e^−0.5 = 34 261 226.39.
    let mut quiet = m.clone();
    quiet.end(ms(15_090), ms(15_100));
    assert!(
        (quiet.last() - 34_261_226.39).abs() < 1e-2,
        "{}",
        quiet.last()
    );
    // The same with a read at 12.6 s between: the read observed 0 and shortened Δt to 2.5 s, so
    // 1e7·(1 − e^−0.25) + 5e7·e^−0.5 = 32 538 525.16 (Finagle's `get` decays as it reads).
    let mut read = m.clone();
    read.cost(ms(12_600));
    read.end(ms(15_090), ms(15_100));
    assert!(
        (read.last() - 32_538_525.16).abs() < 1e-2,
        "{}",
        read.last()
    );
}

#[test]
fn an_unmeasured_replica_with_pending_work_costs_the_penalty() {
    let kind = p2c_ewma(DEFAULT_DECAY);
    let mut b = build(kind, 2, Time(0), &mut Script(vec![]));
    b.start(0);
    b.start(1);
    b.finish(1, Time(0), Time(1_000_000_000));
    let now = Time(1_000_000_000);
    assert_eq!(b.ewma_cost(0, now), Some(PENALTY + 1.0));
    assert_eq!(b.ewma_cost(1, now), Some(1e9));
    assert_eq!(PENALTY, 140_737_488_355_327.0);
    // Replica 0 is sampled first, yet the measured replica 1 wins.
    assert_eq!(picks(&mut b, &[0, 1], vec![0, 0], 1), [1]);
    assert_eq!(
        build(spec(BalancerKind::Random), 2, now, &mut Script(vec![])).ewma_cost(0, now),
        None
    );
}

#[test]
fn previous_hosts_asks_again_then_lets_the_last_pick_stand() {
    let mut b = build(spec(BalancerKind::Random), 5, Time(0), &mut Script(vec![]));
    let mut prev = PreviousHosts::default();
    prev.attempted(2);
    let retry = |max_attempts| Attempt::Retry {
        previous: &prev,
        max_attempts,
    };
    let mut go = |attempt, draws: Vec<u64>| {
        let mut s = Script(draws);
        let h = choose(&mut b, &ALL5, attempt, &mut s, Time(0));
        assert!(s.0.is_empty(), "draws left over: {:?}", s.0);
        h
    };
    // The first try does not consult the predicate.
    assert_eq!(go(Attempt::First, vec![7]), Some(2));
    // 7 % 5 = 2 was tried: ask again, 3 is new.
    assert_eq!(go(retry(1), vec![7, 3]), Some(3));
    // Both picks land on 2: after the one re-pick the last pick stands.
    assert_eq!(go(retry(1), vec![2, 7]), Some(2));
    // With 3 re-picks allowed the fourth pick may still find another host.
    assert_eq!(go(retry(3), vec![2, 7, 12, 4]), Some(4));
    assert_eq!(go(retry(0), vec![2]), Some(2));
    prev.clear();
    assert!(!prev.rejects(2));
}

#[test]
fn previous_hosts_makes_a_retry_to_the_failed_host_rare() {
    // Five replicas, random balancing, the first try went to replica 0: a retry goes back to it
    // with probability 1/5 without the predicate and (1/5)^2 = 0.04 with the default one re-pick.
    let mut stream = Stream::new(3, 4, Purpose::Start, 0);
    let mut b = build(spec(BalancerKind::Random), 5, Time(0), &mut stream);
    let mut prev = PreviousHosts::default();
    prev.attempted(0);
    let n = 20_000;
    let back = |attempt, b: &mut Balancer, stream: &mut Stream| {
        (0..n)
            .filter(|_| choose(b, &ALL5, attempt, stream, Time(0)) == Some(0))
            .count() as f64
            / n as f64
    };
    let without = back(Attempt::First, &mut b, &mut stream);
    let with = back(
        Attempt::Retry {
            previous: &prev,
            max_attempts: retry_host::DEFAULT_HOST_SELECTION_RETRY_MAX_ATTEMPTS,
        },
        &mut b,
        &mut stream,
    );
    assert!((without - 0.2).abs() < 0.012, "{without}");
    assert!((with - 0.04).abs() < 0.006, "{with}");
}

#[test]
fn panic_threshold_routes_to_every_replica_when_too_few_are_healthy() {
    let mut out = Vec::new();
    let ejected = |set: &'static [u32]| move |r: u32| set.contains(&r);
    assert!(!hosts_to_use(5, ejected(&[1, 3]), 50, &mut out));
    assert_eq!(out, [0, 2, 4], "60 % healthy is not below 50 %");
    assert!(hosts_to_use(5, ejected(&[1, 2, 3]), 50, &mut out));
    assert_eq!(out, ALL5, "40 % healthy: panic, all replicas");
    assert!(!hosts_to_use(2, ejected(&[0, 1]), 0, &mut out));
    assert!(out.is_empty(), "threshold 0 never panics: no host at all");
    let mut b = build(spec(BalancerKind::Random), 2, Time(0), &mut Script(vec![]));
    assert_eq!(b.pick(&out, &mut Script(vec![]), Time(0)), None);
}

#[test]
fn kinds_are_checked_and_named() {
    let ((lr, lr1), (p2c, zero)) = (least_request(1), p2c_ewma(Duration::ZERO));
    let lr1 = lr.validate(&lr1, "t").unwrap_err();
    assert_eq!(lr1.path, "t.choice_count");
    assert_eq!(
        lr1.message,
        "must be at least 2 (Envoy's least request), got 1"
    );
    assert_eq!(p2c.validate(&zero, "t").unwrap_err().path, "t.ewma_decay");
    let (lr, two) = least_request(2);
    assert!(lr.validate(&two, "t").is_ok());
    assert_eq!(
        lr.describe(&two).as_deref(),
        Some(" (best of 2 random choices)")
    );
    assert_eq!(BalancerKind::Random.describe(&Params::default()), None);
    let kinds = [
        BalancerKind::RoundRobin,
        BalancerKind::Random,
        BalancerKind::LeastRequest,
        BalancerKind::P2cEwma,
    ];
    let names: Vec<_> = kinds.iter().map(|k| k.name()).collect();
    assert_eq!(
        names,
        ["round-robin", "random", "least-request", "p2c-ewma"]
    );
    assert_eq!(
        BalancerKind::reader_of("ewma_decay"),
        Some((BalancerKind::P2cEwma, "keeps a latency EWMA"))
    );
    assert_eq!(BalancerKind::reader_of("balancer_scope"), None);
}
