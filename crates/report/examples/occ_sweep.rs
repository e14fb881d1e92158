//! The AWS Architecture Blog's write-contention experiment ("Exponential Backoff And Jitter",
//! Marc Brooker, 2015), swept over the number of clients: `models/occ-contention.toml` (one
//! variant per backoff strategy) run for N = 10..200 clients over many seeds, as the blog's
//! simulator averages 100 runs per point.
//!
//! ```text
//! cargo run -p retrystorm-report --example occ_sweep -- [SEEDS] [SVG]
//! ```
//!
//! Prints two Markdown tables (mean calls, i.e. writes, and mean time until the last client has
//! committed, each with the half-width of its 95% confidence interval) and writes a chart of
//! both against N, one line per strategy (default `docs/occ-contention.svg`). It ends by asserting
//! the blog's findings that this model reproduces (see `docs/validation.md` for the ones it
//! does not).

mod seeded;

use retrystorm_core::load::{Override, load};
use retrystorm_core::stats::{Estimate, replication_seeds};
use retrystorm_report::{Line, LineChart, LinePanel, line_chart};

const CLIENTS: [u64; 9] = [10, 25, 50, 75, 100, 125, 150, 175, 200];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seeded::Run {
        seeds,
        svg: svg_path,
        model: text,
    } = seeded::from_args("occ-contention.toml", "occ-contention.svg")?;
    let names: Vec<String> = load("occ-contention.toml", &text, &[])?
        .variants
        .iter()
        .map(|m| m.name.clone())
        .collect();
    let grid = run_grid(&text, names.len(), seeds)?;
    print_table("Calls (writes)", &names, &grid, seeds, &|c| c.0);
    print_table(
        "Time until the last client commits (ms)",
        &names,
        &grid,
        seeds,
        &|c| c.1,
    );
    std::fs::write(&svg_path, line_chart(&chart(&names, &grid, seeds))?)?;
    println!("wrote {svg_path}");
    check_findings(&names, &grid);
    Ok(())
}

/// One strategy at one N: the mean calls (writes) and the mean time until the last client
/// has committed, over the seeds.
type Cell = (Estimate, Estimate);

/// `grid[strategy][n]`: every variant of the model at each of [`CLIENTS`], over `seeds`
/// replications, each asserted to commit every client.
fn run_grid(
    text: &str,
    strategies: usize,
    seeds: u32,
) -> Result<Vec<Vec<Cell>>, Box<dyn std::error::Error>> {
    let mut grid: Vec<Vec<Cell>> = vec![Vec::new(); strategies];
    for &n in &CLIENTS {
        let set = Override::parse(&format!("workload.clients={n}"))?;
        let scenario = load("occ-contention.toml", text, &[set])?;
        for (i, m) in scenario.variants.iter().enumerate() {
            let (mut calls, mut time) = (Vec::new(), Vec::new());
            for seed in replication_seeds(m.seed, seeds) {
                let s = retrystorm_core::run_model(m, seed, &mut |_| {}).summary;
                assert_eq!(
                    s.succeeded, n,
                    "{} N={n} seed {seed}: every client commits",
                    m.name
                );
                calls.push(s.attempts as f64);
                time.push(s.end_ms);
            }
            grid[i].push((Estimate::of(&calls), Estimate::of(&time)));
        }
    }
    Ok(grid)
}

/// A Markdown table of `pick` of every cell: a row per N, a column per strategy, each the mean
/// ± the 95% half-width in whole units.
fn print_table(
    what: &str,
    names: &[String],
    grid: &[Vec<Cell>],
    seeds: u32,
    pick: &dyn Fn(&Cell) -> Estimate,
) {
    println!("{what}, mean ± 95% CI over {seeds} seeds:\n");
    print!("| N |");
    for name in names {
        print!(" {name} |");
    }
    print!("\n|--:|");
    for _ in names {
        print!("--:|");
    }
    println!();
    for (j, n) in CLIENTS.iter().enumerate() {
        print!("| {n} |");
        for row in grid {
            let e = pick(&row[j]);
            print!(" {:.0} ± {:.0} |", e.mean, e.half_width);
        }
        println!();
    }
    println!();
}

/// Both means against N, one line per strategy: calls on a linear axis, time on a log one.
fn chart(names: &[String], grid: &[Vec<Cell>], seeds: u32) -> LineChart {
    let lines = |pick: &dyn Fn(&Cell) -> f64| -> Vec<Line> {
        names
            .iter()
            .zip(grid)
            .map(|(name, row)| Line {
                name: name.clone(),
                points: CLIENTS
                    .iter()
                    .zip(row)
                    .map(|(&n, c)| (n as f64, pick(c)))
                    .collect(),
            })
            .collect()
    };
    LineChart {
        title: format!(
            "OCC write contention (AWS blog model): mean of {seeds} seeds per point, models/occ-contention.toml"
        ),
        x_desc: "clients (N)".into(),
        panels: vec![
            LinePanel {
                title: "calls (writes) until every client has committed".into(),
                y_desc: "calls".into(),
                log_y: false,
                lines: lines(&|c| c.0.mean),
            },
            LinePanel {
                title: "time until the last client has committed (log scale)".into(),
                y_desc: "ms".into(),
                log_y: true,
                lines: lines(&|c| c.1.mean),
            },
        ],
    }
}

/// What the run showed, for N >= 50 (at 10 and 25 clients the strategies are close): the
/// blog's findings this model reproduces.
fn check_findings(names: &[String], grid: &[Vec<Cell>]) {
    let at = |name: &str, j: usize| {
        let i = names.iter().position(|x| x == name).expect("a variant");
        (grid[i][j].0.mean, grid[i][j].1.mean)
    };
    for j in 2..CLIENTS.len() {
        let (none, full, equal, decorr) = (
            at("no jitter", j),
            at("full jitter", j),
            at("equal jitter", j),
            at("decorrelated", j),
        );
        // No-jitter exponential is the clear loser in time, and does more work than jitter.
        assert!(none.1 > 3.0 * full.1.max(equal.1).max(decorr.1));
        assert!(none.0 > full.0 && none.0 > equal.0);
        // Equal jitter takes longer than full jitter; decorrelated does more work than full.
        assert!(equal.1 > full.1);
        assert!(decorr.0 > full.0);
    }
}
