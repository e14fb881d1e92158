use super::*;

#[test]
fn ranges_and_lists() {
    assert_eq!(
        parse_vary("workload.clients=10..50:20").unwrap().values,
        ["10", "30", "50"]
    );
    assert_eq!(
        parse_vary("a=10..55:20").unwrap().values,
        ["10", "30", "50"]
    );
    assert_eq!(
        parse_vary("a=0.1..0.3:0.1").unwrap().values,
        ["0.1", "0.2", "0.3"]
    );
    assert_eq!(
        parse_vary("retry.base=5ms..15ms:5ms").unwrap().values,
        ["5ms", "10ms", "15ms"]
    );
    assert_eq!(
        parse_vary("retry.base=5ms,1s").unwrap().values,
        ["5ms", "1s"]
    );
    assert_eq!(
        parse_vary("network.latency=uniform(0ms, 6ms),2ms")
            .unwrap()
            .values,
        ["uniform(0ms, 6ms)", "2ms"]
    );
    assert!(parse_vary("a=1..5").is_err());
    assert!(parse_vary("a=5..1:1").is_err());
    assert!(parse_vary("a=1..5:0").is_err());
    assert!(parse_vary("a=x,x").is_err());
    assert!(parse_vary("=1").is_err());
    assert!(parse_vary("a").is_err());
    assert!(parse_vary("a=0..1000000000:1").is_err());
}

#[test]
fn indexed_and_linked_keys() {
    let a = parse_vary("server.outages[0].to=12s,14s").unwrap();
    assert_eq!(a.key, "server.outages[0].to");
    let b = parse_vary("workload.rate+workload.schedule[1].rate=500/s,600/s").unwrap();
    let g = Grid {
        axes: vec![a, b],
        variants: vec!["v".into()],
        seeds: vec![1],
    };
    assert_eq!(
        g.sets(1),
        [
            "server.outages[0].to=12s",
            "workload.rate=600/s",
            "workload.schedule[1].rate=600/s"
        ]
    );
    assert!(parse_vary("a+=1").is_err());
    assert!(parse_vary("a[=1").is_err());
    assert!(parse_vary("a[1]x.b=1").is_err());
}

#[test]
fn ranges_are_counted_without_overflow_and_bounded() {
    let e = parse_vary("workload.clients=1..18446744073709551615:1").unwrap_err();
    assert!(e.contains("at most 1000000"), "{e}");
    let e = parse_vary("network.request_loss=0..1:1e-300").unwrap_err();
    assert!(e.contains("at most 1000000"), "{e}");
    let e = parse_vary("network.request_loss=0..inf:0.1").unwrap_err();
    assert!(e.contains("not a finite number"), "{e}");
    assert!(parse_vary("a=0..1:nan").is_err());
    assert!(parse_vary("a=-inf..1:1").is_err());
    assert!(parse_vary("retry.base=1ms..100000ms:1ns").is_err());
    assert!(parse_vary("retry.base=5ms..1ms:1ms").is_err());
    assert!(parse_vary("retry.base=1ms..5ms:0ms").is_err());
    assert_eq!(
        parse_vary("a=-9223372036854775808..9223372036854775807:9223372036854775807")
            .unwrap()
            .values
            .len(),
        3
    );
    assert_eq!(
        parse_vary("a=1..1000000:1").unwrap().values.len(),
        1_000_000
    );
    let e = parse_vary("retry.jitter=full,full").unwrap_err();
    assert!(e.contains("listed twice"), "{e}");
    assert!(parse_vary("name=\"x\"\n[retry]").is_err());
    // The grid of two big axes is counted, not built.
    let axis = |n: usize| Axis {
        key: "a".into(),
        values: (0..n).map(|i| i.to_string()).collect(),
    };
    let g = Grid {
        axes: vec![axis(100_000), axis(100_000)],
        variants: vec!["v".into()],
        seeds: vec![1],
    };
    assert_eq!(g.checked_jobs(), Some(10_000_000_000));
    let g = Grid {
        axes: vec![axis(0)],
        variants: vec!["v".into()],
        seeds: vec![1],
    };
    assert!(g.invalid().is_some());
}

#[test]
fn grid_order_and_shards() {
    let g = Grid {
        axes: vec![
            Axis {
                key: "a".into(),
                values: vec!["1".into(), "2".into()],
            },
            Axis {
                key: "b".into(),
                values: vec!["x".into(), "y".into(), "z".into()],
            },
        ],
        variants: vec!["v".into(), "w".into()],
        seeds: vec![7, 8],
    };
    assert_eq!(g.points(), 6);
    assert_eq!(g.jobs(), 24);
    let j = g.job(13);
    assert_eq!((j.point, j.variant, j.replication), (3, 0, 1));
    assert_eq!(
        g.params(3),
        vec![("a".into(), "2".into()), ("b".into(), "x".into())]
    );
    let mut all: Vec<u64> = (1..=3)
        .flat_map(|i| g.shard(i, 3).collect::<Vec<_>>())
        .collect();
    all.sort();
    assert_eq!(all, (0..24).collect::<Vec<_>>());
    assert_eq!(parse_shard("2/3"), Ok((2, 3)));
    let items: Vec<u64> = (10..17).collect();
    assert_eq!(shard_slice(&items, 1, 3), [10, 13, 16]);
    assert_eq!(shard_slice(&items, 3, 3), [12, 15]);
    assert_eq!(shard_slice(&items[..1], 2, 3), Vec::<u64>::new());
    assert!(
        parse_shard("0/3").is_err() && parse_shard("4/3").is_err() && parse_shard("x").is_err()
    );
}

#[test]
fn axis_positions() {
    assert_eq!(Axis::x("5ms"), Some(5.0));
    assert_eq!(Axis::x("2s"), Some(2000.0));
    assert_eq!(Axis::x("0.5"), Some(0.5));
    assert_eq!(Axis::x("full"), None);
}
