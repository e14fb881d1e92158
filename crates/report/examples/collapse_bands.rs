//! Brooker's `simple_collapse_sim` over many seeds: per-second successes of
//! `models/brooker-collapse.toml`, the median over seeds with the 10th-90th percentile band, and
//! the mean (what his published curve shows, an average of 10 runs).
//!
//! ```text
//! cargo run --release -p retrystorm-report --example collapse_bands -- [SEEDS] [SVG]
//! ```
//!
//! Writes `docs/brooker-collapse-bands.svg` by default and prints the median, band and mean
//! every 4 s. The band shows what the mean hides: after the spike, a run without backoff either
//! comes back to 40/s or stays at zero.

mod seeded;

use retrystorm_core::load::load;
use retrystorm_core::stats::replication_seeds;
use retrystorm_report::{Band, Line, LineChart, LinePanel, line_chart_with_bands};

/// The `q` quantile of sorted `xs` (nearest rank).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let i = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seeded::Run {
        seeds,
        svg: svg_path,
        model: text,
    } = seeded::from_args("brooker-collapse.toml", "brooker-collapse-bands.svg")?;
    let scenario = load("brooker-collapse.toml", &text, &[])?;

    let mut panels = Vec::new();
    let mut bands = Vec::new();
    for load_shape in ["spike", "ramp"] {
        let (mut medians, mut means, mut own) = (Vec::new(), Vec::new(), Vec::new());
        for m in scenario
            .variants
            .iter()
            .filter(|m| m.name.starts_with(load_shape))
        {
            // per_second[t] = successes in second t, one value per seed.
            let mut per_second: Vec<Vec<f64>> = Vec::new();
            for seed in replication_seeds(m.seed, seeds) {
                let r = retrystorm_core::run_model(m, seed, &mut |_| {});
                let per_bucket = 1000.0 / r.series.bucket_ms;
                for (t, &n) in r.series.succeeded.iter().enumerate() {
                    if per_second.len() <= t {
                        per_second.resize(t + 1, Vec::new());
                    }
                    per_second[t].push(f64::from(n) * per_bucket);
                }
            }
            let secs = per_second.len().min(100);
            let mut mid = Vec::new();
            let mut mean = Vec::new();
            let mut band = Vec::new();
            println!(
                "{}: second, median [p10, p90], mean over {seeds} seeds",
                m.name
            );
            for (t, xs) in per_second.iter_mut().enumerate().take(secs) {
                xs.resize(seeds as usize, 0.0); // a run that ended early had no successes
                xs.sort_by(f64::total_cmp);
                let x = t as f64;
                let (lo, med, hi) = (quantile(xs, 0.1), quantile(xs, 0.5), quantile(xs, 0.9));
                let avg = xs.iter().sum::<f64>() / xs.len() as f64;
                if t % 4 == 0 {
                    println!("  {t:>3} s: {med:>5.0} [{lo:.0}, {hi:.0}]  mean {avg:.1}");
                }
                mid.push((x, med));
                mean.push((x, avg));
                band.push((x, lo, hi));
            }
            own.push(Band {
                line: medians.len(),
                points: band,
            });
            medians.push(Line {
                name: format!("{}: median", m.name),
                points: mid,
            });
            means.push(Line {
                name: format!("{}: mean (Brooker's curve)", m.name),
                points: mean,
            });
        }
        let mut lines = medians;
        lines.extend(means);
        panels.push(LinePanel {
            title: format!(
                "{load_shape}: successes per second; band: 10th-90th percentile over {seeds} seeds"
            ),
            y_desc: "successes per second".into(),
            log_y: false,
            lines,
        });
        bands.push(own);
    }
    let chart = LineChart {
        title: "Brooker's collapse simulator (models/brooker-collapse.toml): recover or collapse"
            .into(),
        x_desc: "simulated time (s)".into(),
        panels,
    };
    std::fs::write(&svg_path, line_chart_with_bands(&chart, &bands)?)?;
    println!("wrote {svg_path}");
    Ok(())
}
