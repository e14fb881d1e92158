use super::*;

fn min(m: &str) -> Objective {
    Objective {
        metric: m.into(),
        maximize: false,
    }
}

fn settings(budget: u64) -> Settings {
    Settings {
        n0: 5,
        alpha: 0.05,
        indifference: Indifference::Absolute(0.5),
        budget,
    }
}

/// Candidate `c`'s replication `r` is `means[c] + noise(r)` (shared noise: CRN) plus a small
/// candidate-specific wobble.
fn synthetic(means: Vec<f64>, wobble: f64) -> impl FnMut(&[(usize, usize)]) -> Vec<Vec<f64>> {
    move |asked| {
        asked
            .iter()
            .map(|(c, r)| {
                let shared = ((*r as f64) * 1.7).sin() * 3.0;
                let own = ((*r as f64 + *c as f64 * 13.0) * 2.3).cos() * wobble;
                vec![means[*c] + shared + own]
            })
            .collect()
    }
}

#[test]
fn the_best_by_construction_is_found_and_resolved() {
    let mut f = synthetic(vec![10.0, 4.0, 12.0, 8.0], 0.2);
    let o = search(4, &[min("x")], &[], &settings(1000), &mut f);
    assert_eq!(o.best, Some(1));
    assert!(o.resolved(), "{:?}", o.open);
    assert_eq!(o.status[1], Status::Best);
    assert_eq!(o.status[0], Status::Eliminated);
}

#[test]
fn a_near_tie_is_reported_open_within_the_budget() {
    let mut f = synthetic(vec![5.0, 5.05, 9.0], 1.0);
    let mut s = settings(60);
    s.indifference = Indifference::Absolute(0.4);
    let o = search(3, &[min("x")], &[], &s, &mut f);
    assert!(!o.resolved());
    assert!(o.runs <= 60);
    assert_eq!(o.status[2], Status::Eliminated);
    let open: Vec<usize> = o.open.iter().flat_map(|(a, b)| [*a, *b]).collect();
    assert!(open.contains(&0) && open.contains(&1), "{:?}", o.open);
}

#[test]
fn constraints_remove_candidates_and_name_the_closest() {
    let mut f = synthetic(vec![10.0, 4.0, 12.0], 0.2);
    let e = Expectation::parse("peak_retries > 100").unwrap();
    let mut e = e;
    e.metric = "x".into();
    let o = search(3, &[min("x")], &[e.clone()], &settings(1000), &mut f);
    assert_eq!(o.best, None);
    assert_eq!(o.closest, Some(2));
    assert!(o.status.iter().all(|s| *s == Status::Infeasible));
    e.value = 9.0;
    let mut f = synthetic(vec![10.0, 4.0, 12.0], 0.2);
    let o = search(3, &[min("x")], &[e], &settings(1000), &mut f);
    assert_eq!(o.best, Some(0));
    assert_eq!(o.status[1], Status::Infeasible);
}

#[test]
fn feasibility_uses_the_interval() {
    let e = Expectation::parse("duplicated == 0").unwrap();
    assert_eq!(feasibility(&e, &[0.0, 0.0, 0.0]), Feasibility::Feasible);
    assert_eq!(feasibility(&e, &[0.0, 1.0, 0.0]), Feasibility::Undecided);
    assert_eq!(feasibility(&e, &[2.0, 2.0, 2.0]), Feasibility::Infeasible);
    let e = Expectation::parse("amplification < 2").unwrap();
    assert_eq!(feasibility(&e, &[1.0, 1.1, 0.9]), Feasibility::Feasible);
    assert_eq!(feasibility(&e, &[1.0, 3.0, 2.0]), Feasibility::Undecided);
    assert_eq!(feasibility(&e, &[1.0, f64::NAN]), Feasibility::Infeasible);
}

#[test]
fn indifference_parses_shares_numbers_and_durations() {
    assert_eq!(
        parse_indifference("5%", "amplification"),
        Ok(Indifference::Relative(0.05))
    );
    assert_eq!(
        parse_indifference("20ms", "completion_ms.p99"),
        Ok(Indifference::Absolute(20.0))
    );
    assert!(parse_indifference("0", "x").is_err());
    assert!(parse_indifference("fast", "amplification").is_err());
}

#[test]
fn a_snippet_groups_keys_by_table() {
    let p = vec![
        ("retry.base".to_string(), "50ms".to_string()),
        ("seed".to_string(), "3".to_string()),
        ("retry.max_attempts".to_string(), "4".to_string()),
        ("budget.kind".to_string(), "grpc".to_string()),
    ];
    assert_eq!(
        snippet(&p),
        "seed = 3\n\n[retry]\nbase = \"50ms\"\nmax_attempts = 4\n\n[budget]\nkind = \"grpc\"\n"
    );
}
