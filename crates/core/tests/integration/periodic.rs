//! `workload.kind = "periodic"`: clients that call every `period`. With no jitter, clients that
//! start together call in the same bucket every period; a factor (client-go's `JitterUntil`) or
//! a fixed spread spreads the next wave uniformly over `factor * period` or `spread` (a
//! chi-square test on the bucket counts); a spread phase spreads the first wave over one period;
//! a restart starts every client again; bad keys are refused.

use retrystorm_core::load::load;
use retrystorm_core::model::Model;
use retrystorm_core::path::run;

use crate::util::assert_deterministic;

fn one(text: &str) -> Model {
    load("test.toml", text, &[]).unwrap().base
}

fn refused(text: &str) -> String {
    load("test.toml", text, &[]).unwrap_err().to_string()
}

/// `clients` periodic clients every 10 s, 100 ms buckets, a 1 ms service that never fails, and
/// the workload keys `extra`.
fn periodic(clients: u64, horizon: &str, extra: &str) -> Model {
    one(&format!(
        r#"
        horizon = "{horizon}"
        bucket = "100ms"
        [workload]
        kind = "periodic"
        clients = {clients}
        period = "10s"
        {extra}
        [server]
        service = "1ms"
    "#
    ))
}

/// The first attempts of each bucket.
fn first(m: &Model) -> Vec<u32> {
    run(m, 7).series.first
}

/// Pearson's chi-square of `counts` against equal expected counts.
fn chi_square(counts: &[u32]) -> f64 {
    let n: u32 = counts.iter().sum();
    let e = f64::from(n) / counts.len() as f64;
    counts.iter().map(|&c| (f64::from(c) - e).powi(2) / e).sum()
}

/// Chi-square's 99.9th percentile at 9 degrees of freedom: a uniform spread over 10 buckets
/// exceeds it one time in a thousand.
const CHI2_9_999: f64 = 27.877;

#[test]
fn without_jitter_every_client_calls_in_the_same_bucket_each_period() {
    let m = periodic(500, "35s", "");
    let f = first(&m);
    let busy: Vec<(usize, u32)> = f.iter().copied().enumerate().filter(|b| b.1 > 0).collect();
    assert_eq!(busy, vec![(0, 500), (100, 500), (200, 500), (300, 500)]);
    assert_eq!(run(&m, 7).summary.intents, 2000);
}

#[test]
fn a_factor_spreads_the_next_wave_uniformly_over_factor_times_the_period() {
    // factor 0.1 of 10 s: the second wave is uniform over [10 s, 11 s), ten 100 ms buckets.
    let m = periodic(2000, "11s", "jitter = { factor = 0.1 }");
    let f = first(&m);
    assert_eq!(f[0], 2000, "the first calls, aligned");
    let wave = &f[100..110];
    assert_eq!(wave.iter().sum::<u32>(), 2000, "{wave:?}");
    let chi = chi_square(wave);
    assert!(chi < CHI2_9_999, "chi-square {chi:.1} over {wave:?}");
    assert!(f[1..100].iter().all(|&c| c == 0) && f[110..].iter().all(|&c| c == 0));
}

#[test]
fn a_fixed_spread_spreads_the_next_wave_over_the_spread() {
    let m = periodic(2000, "12s", "jitter = { spread = \"2s\" }");
    let f = first(&m);
    // [10 s, 12 s): 20 buckets, summed in pairs to ten of 200 ms.
    let wave: Vec<u32> = f[100..120].chunks(2).map(|c| c[0] + c[1]).collect();
    assert_eq!(wave.iter().sum::<u32>(), 2000, "{wave:?}");
    let chi = chi_square(&wave);
    assert!(chi < CHI2_9_999, "chi-square {chi:.1} over {wave:?}");
}

#[test]
fn a_spread_phase_spreads_the_first_wave_over_one_period() {
    let m = periodic(2000, "9999ms", "phase = \"spread\"");
    let f = first(&m);
    let wave: Vec<u32> = f[..100].chunks(10).map(|c| c.iter().sum()).collect();
    assert_eq!(wave.iter().sum::<u32>(), 2000);
    let chi = chi_square(&wave);
    assert!(chi < CHI2_9_999, "chi-square {chi:.1} over {wave:?}");
}

#[test]
fn a_restart_starts_every_client_again() {
    // Every client at 0 s, then after waits of 10 s plus up to 1 s; all at once again at 15 s
    // (the restart) and 30 s: the old schedule's calls after each restart are gone.
    let m = periodic(
        300,
        "36s",
        "phase = \"aligned\"\njitter = { spread = \"1s\" }\nrestarts = [\"15s\", \"30s\"]",
    );
    let f = first(&m);
    assert_eq!(f[150], 300, "every client at the first restart");
    assert_eq!(f[300], 300, "and at the second");
    let between: u32 = f[151..250].iter().sum();
    assert_eq!(between, 0, "nothing of the old schedule after the restart");
    let next: u32 = f[250..270].iter().sum();
    assert_eq!(next, 300, "one call each in the period after");
}

#[test]
fn periodic_runs_are_deterministic() {
    let m = periodic(200, "30s", "jitter = { factor = 0.2 }\nphase = \"spread\"");
    assert_deterministic(&m, 3);
}

#[test]
fn bad_periodic_keys_are_refused() {
    let base = "[workload]\nkind = \"periodic\"\nclients = 10\n";
    let e = refused(base);
    assert!(e.contains("workload.period") && e.contains("needs"), "{e}");
    let e = refused(&format!("{base}period = \"0s\"\n"));
    assert!(
        e.contains("workload.period") && e.contains("above zero"),
        "{e}"
    );
    let e = refused(&format!(
        "{base}period = \"1s\"\njitter = {{ factor = -1 }}\n"
    ));
    assert!(e.contains("workload.jitter.factor"), "{e}");
    let e = refused(&format!(
        "{base}period = \"1s\"\nrestarts = [\"5s\", \"2s\"]\n"
    ));
    assert!(e.contains("workload.restarts[1]"), "{e}");
    let e = refused("[workload]\nclients = 10\nperiod = \"1s\"\n");
    assert!(
        e.contains("workload.period") && e.contains("periodic"),
        "{e}"
    );
    let e = refused("[workload]\nkind = \"open\"\nrestarts = [\"1s\"]\n");
    assert!(
        e.contains("workload.restarts") && e.contains("periodic"),
        "{e}"
    );
}
