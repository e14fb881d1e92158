//! What the load chart marks besides the data: windows of trouble (outages, capacity drops, slow
//! windows, load spikes), shaded and labelled, and the moment goodput recovered after them.

use retrystorm_core::model::{Model, WorkloadKind};
use retrystorm_core::summary::Summary;

use crate::fmt;

/// A window `[from_ms, to_ms)` of simulated time, shaded in the load chart with its label.
#[derive(Clone, Debug, PartialEq)]
pub struct Shade {
    pub from_ms: f64,
    pub to_ms: f64,
    /// `outage`, `capacity 2`, `slow ×10`, `load 2,500/s`, ...
    pub label: String,
}

/// The windows a model declares: `server.outages`, `server.capacity_drops`,
/// `server.slow_windows`, and the stretches of
/// `workload.schedule` (open workloads) whose rate is above the base `workload.rate`, each ending
/// at the next schedule point (or at the horizon).
pub fn model_windows(m: &Model) -> Vec<Shade> {
    windows(m, false)
}

/// [`model_windows`]; with `name_replica`, a window that strikes one replica says which
/// (`replica 2: outage`).
fn windows(m: &Model, name_replica: bool) -> Vec<Shade> {
    let label = |replica: Option<u32>, what: String| match replica {
        Some(k) if name_replica => format!("replica {k}: {what}"),
        _ => what,
    };
    let mut out = Vec::new();
    for o in &m.server.outages {
        out.push(Shade {
            from_ms: o.from.as_millis_f64(),
            to_ms: o.to.as_millis_f64(),
            label: label(o.replica, "outage".into()),
        });
    }
    for d in &m.server.capacity_drops {
        out.push(Shade {
            from_ms: d.from.as_millis_f64(),
            to_ms: d.to.as_millis_f64(),
            label: label(d.replica, format!("capacity {}", fmt::int(d.capacity))),
        });
    }
    for w in &m.server.slow_windows {
        out.push(Shade {
            from_ms: w.from.as_millis_f64(),
            to_ms: w.to.as_millis_f64(),
            label: label(w.replica, format!("slow ×{}", factor(w.factor))),
        });
    }
    let w = &m.workload;
    if w.kind == WorkloadKind::Open {
        let base = w.rate.0;
        for (i, p) in w.schedule.iter().enumerate() {
            if p.rate.0 <= base {
                continue;
            }
            let to = w
                .schedule
                .get(i + 1)
                .map_or(m.horizon.as_millis_f64(), |n| n.at.as_millis_f64());
            out.push(Shade {
                from_ms: p.at.as_millis_f64(),
                to_ms: to,
                label: format!("load {}/s", fmt::num(p.rate.0)),
            });
        }
    }
    out.retain(|s| s.from_ms.is_finite() && s.to_ms.is_finite() && s.to_ms > s.from_ms);
    out
}

/// The windows the replicas chart shades: [`model_windows`], each naming the replica it
/// strikes (`replica 1: capacity 2`), then `server.failure_windows` (`replica 2: fails 100%`,
/// or `fails 50%` on every replica).
pub fn replica_windows(m: &Model) -> Vec<Shade> {
    let mut out = windows(m, true);
    for w in &m.server.failure_windows {
        let pct = fmt::pct(w.probability).replace(".0%", "%");
        out.push(Shade {
            from_ms: w.from.as_millis_f64(),
            to_ms: w.to.as_millis_f64(),
            label: match w.replica {
                Some(k) => format!("replica {k}: fails {pct}"),
                None => format!("fails {pct}"),
            },
        });
    }
    out.retain(|s| s.from_ms.is_finite() && s.to_ms.is_finite() && s.to_ms > s.from_ms);
    out
}

/// A slow window's factor as short as it is exact: `10`, `2.5`, `1.33`.
fn factor(f: f64) -> String {
    let s = format!("{f:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The summary's trigger window, when the run had one and no model windows are known.
pub(crate) fn summary_window(s: &Summary) -> Option<Shade> {
    match (s.trigger_from_ms, s.trigger_to_ms) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() && b > a => Some(Shade {
            from_ms: a,
            to_ms: b,
            label: "trigger".into(),
        }),
        _ => None,
    }
}

/// When goodput was back for good (trigger end + `recovery_ms`), if it came back.
pub(crate) fn recovered_at(s: &Summary) -> Option<f64> {
    match (s.recovered, s.trigger_to_ms, s.recovery_ms) {
        (Some(true), Some(to), Some(r)) if (to + r).is_finite() => Some(to + r),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrystorm_core::model::{CapacityDrop, Outage, Rate, RatePoint, SlowWindow};
    use retrystorm_core::time::Duration;

    #[test]
    fn windows_of_a_model() {
        let mut m = Model::default();
        m.server.outages.push(Outage::window(
            Duration::from_secs(1),
            Duration::from_secs(2),
        ));
        m.server.capacity_drops.push(CapacityDrop {
            from: Duration::from_secs(3),
            to: Duration::from_secs(4),
            capacity: 2,
            replica: None,
        });
        m.server.slow_windows.push(SlowWindow {
            from: Duration::from_millis(4500),
            to: Duration::from_millis(4600),
            factor: 10.0,
            replica: None,
        });
        m.server.slow_windows.push(SlowWindow {
            from: Duration::from_millis(7000),
            to: Duration::from_millis(8000),
            factor: 2.5,
            replica: None,
        });
        m.workload.kind = WorkloadKind::Open;
        m.workload.rate = Rate(100.0);
        m.workload.schedule = vec![
            RatePoint {
                at: Duration::from_secs(5),
                rate: Rate(2500.0),
                ramp: false,
            },
            RatePoint {
                at: Duration::from_secs(6),
                rate: Rate(100.0),
                ramp: false,
            },
        ];
        let w = model_windows(&m);
        let labels: Vec<&str> = w.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "outage",
                "capacity 2",
                "slow ×10",
                "slow ×2.5",
                "load 2,500/s"
            ]
        );
        assert_eq!((w[2].from_ms, w[2].to_ms), (4500.0, 4600.0));
        assert_eq!((w[4].from_ms, w[4].to_ms), (5000.0, 6000.0));
    }
}
