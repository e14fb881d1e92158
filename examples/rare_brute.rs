//! Brute force for `retrystorm rare`'s `SCORE >= N` events: plain runs of one variant, each
//! run until its score reaches the level or the run ends, and the share that reached it with
//! its Wilson interval. It is the check `docs/rare.md` measures splitting against.
//!
//! ```text
//! cargo build --release --example rare_brute
//! target/release/examples/rare_brute MODEL VARIANT 'queue >= 100' RUNS THREADS [KEY=VALUE ...]
//! ```
//!
//! Run `i` (0-based) is the plain run of seed `i + 1`; thread `t` of `T` takes the runs with
//! `i mod T = t`, so the count does not depend on the threads.

use retrystorm::load::{Override, load};
use retrystorm::path::PathSim;
use retrystorm::rare::target::{Target, parse_target};
use retrystorm::stats::wilson;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, variant, event, runs, threads, sets @ ..] = args.as_slice() else {
        return Err(
            "usage: rare_brute MODEL VARIANT 'SCORE >= N' RUNS THREADS [KEY=VALUE ...]".into(),
        );
    };
    let Target::Reaches { gauge, level } = parse_target(event)? else {
        return Err("rare_brute counts `SCORE >= N` events only".into());
    };
    let (runs, threads): (u32, u64) = (runs.parse()?, threads.parse::<u64>()?.max(1));
    let sets = sets
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let m = load(path, &std::fs::read_to_string(path)?, &sets)?
        .variants
        .into_iter()
        .find(|m| &m.name == variant)
        .ok_or_else(|| format!("no variant {variant}"))?;
    let m = &m;
    let (hits, events) = std::thread::scope(|s| {
        let each: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let (mut hits, mut events) = (0u32, 0u64);
                    for i in (t..u64::from(runs)).step_by(threads as usize) {
                        let mut sim = PathSim::new(m, i + 1).gauged();
                        if sim.gauge(gauge) >= level
                            || sim.advance_until(|s| s.gauge(gauge) >= level)
                        {
                            hits += 1;
                        }
                        events += sim.events_handled();
                    }
                    (hits, events)
                })
            })
            .collect();
        each.into_iter()
            .map(|h| h.join().expect("a thread panicked"))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d))
    });
    let (low, high) = wilson(hits, runs);
    let p = f64::from(hits) / f64::from(runs);
    println!(
        "{event}: {hits} of {runs} plain runs, {p:.3e} (95% Wilson {low:.3e} .. {high:.3e}), {events} events ({:.0} a run)",
        events as f64 / f64::from(runs)
    );
    Ok(())
}
