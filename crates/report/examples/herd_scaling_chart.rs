//! The herd's time and memory against the number of clients, log-log, from the TSV
//! that `benches/peers/herd_scaling.sh` writes (`what clients wall_s cpu_s peak_mb runs`). Time is
//! CPU seconds (user + system): on a shared machine the wall clock includes other processes' turns.
//!
//! ```text
//! cargo run --release -p retrystorm-report --example herd_scaling_chart -- \
//!     benches/peers/herd_scaling.tsv docs/herd-scaling.svg
//! ```
//!
//! The x axis is log10 of the clients (the line chart's x axis is linear); both y axes are
//! logarithmic, so a line of slope 1 is linear cost. The issue's 64 bytes a client is drawn as
//! a line of its own in the memory panel.

use retrystorm_report::{Line, LineChart, LinePanel, line_chart};
use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let tsv = args.next().ok_or("usage: herd_scaling_chart TSV SVG")?;
    let svg = args.next().ok_or("usage: herd_scaling_chart TSV SVG")?;
    // what -> [(log10 clients, seconds, MB)], in file order.
    let mut rows: BTreeMap<String, Vec<(f64, f64, f64)>> = BTreeMap::new();
    let mut order = Vec::new();
    for line in std::fs::read_to_string(&tsv)?.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let [what, clients, _wall, secs, mb, ..] = f[..] else {
            return Err(format!("{tsv}: not a row: {line:?}").into());
        };
        if !rows.contains_key(what) {
            order.push(what.to_string());
        }
        rows.entry(what.to_string()).or_default().push((
            clients.parse::<f64>()?.log10(),
            secs.parse()?,
            mb.parse()?,
        ));
    }
    let lines = |pick: fn(&(f64, f64, f64)) -> f64| -> Vec<Line> {
        order
            .iter()
            .map(|w| Line {
                name: w.clone(),
                points: rows[w].iter().map(|r| (r.0, pick(r))).collect(),
            })
            .collect()
    };
    let mut memory = lines(|r| r.2);
    memory.push(Line {
        name: "target (64 B a client)".into(),
        points: rows[&order[0]]
            .iter()
            .map(|r| (r.0, 10f64.powf(r.0) * 64.0 / 1e6))
            .collect(),
    });
    let chart = LineChart {
        title: "Thundering herd, full jitter, 6 attempts: end to end from the CLI".into(),
        x_desc: "clients (log10)".into(),
        panels: vec![
            LinePanel {
                title: "CPU time, user + system (median)".into(),
                y_desc: "seconds".into(),
                log_y: true,
                lines: lines(|r| r.1),
            },
            LinePanel {
                title: "peak resident memory (median)".into(),
                y_desc: "MB".into(),
                log_y: true,
                lines: memory,
            },
        ],
    };
    std::fs::write(&svg, line_chart(&chart)?)?;
    println!("wrote {svg}");
    Ok(())
}
