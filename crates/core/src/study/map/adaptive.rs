//! `map --adaptive`, as pure logic: a cell runs its seeds in rounds of [`ROUND`] and stops once
//! the 95% (Wilson) interval of its share that stays down lies wholly on one side of
//! [`DOWN_AT`]; an edge between neighbouring cells whose verdicts differ is bisected at the
//! midpoint of its two values ([`midpoint`]), once per refinement level.

use super::Cell;
use crate::base::time::Duration;
use crate::result::stats;

/// The share of runs that stays down at or above which a cell counts as down: a majority, as
/// the map's `--verdict` agreement and the docs' tables count it.
pub const DOWN_AT: f64 = 0.5;

/// Seeds a cell runs per round: the fewest after which a cell whose runs all agree is decided
/// (0 of 5 down has the interval 0-43%, 5 of 5 has 57-100%).
pub const ROUND: usize = 5;

/// Where a cell's interval for the share that stays down lies against [`DOWN_AT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The whole interval is at or above it.
    Down,
    /// The whole interval is below it.
    Recovers,
    /// The interval straddles it (or the cell has no runs yet).
    Unclear,
}

impl Side {
    /// The word the table and the JSON use.
    pub fn name(self) -> &'static str {
        match self {
            Side::Down => "stays down",
            Side::Recovers => "recovers",
            Side::Unclear => "unclear",
        }
    }
}

impl Cell {
    /// Whether half or more of the runs stay down.
    pub fn down(&self) -> bool {
        self.share_down() >= DOWN_AT
    }

    /// Where the cell's 95% interval lies: decided once it is wholly on one side.
    pub fn side(&self) -> Side {
        if self.runs == 0 {
            return Side::Unclear;
        }
        let down = (self.runs - self.recovered) as u32;
        let (lo, hi) = stats::wilson(down, self.runs as u32);
        if lo >= DOWN_AT {
            Side::Down
        } else if hi < DOWN_AT {
            Side::Recovers
        } else {
            Side::Unclear
        }
    }

    /// Whether an adaptive map runs another round of this cell: it is undecided and has run
    /// fewer than `cap` seeds.
    pub fn open(&self, cap: usize) -> bool {
        self.runs < cap && self.side() == Side::Unclear
    }
}

/// The replications of a cell's next round after `done` of them: the next [`ROUND`] seeds, at
/// most up to `cap`. Fixed rounds make a cell's runs a prefix of the full map's.
pub fn next_round(done: usize, cap: usize) -> std::ops::Range<usize> {
    done..(done + ROUND).min(cap)
}

/// The value halfway between two values of an axis, as `--set` takes it, when there is one:
/// two plain integers give the integer below their mean when it lies strictly between them
/// (`8`, `11` give `9`; `5`, `6` give none: an integer key has no value between them), two
/// durations their mean (`11s`, `13s` give `12s`), and two other numbers with the same unit
/// their mean (`1.0`, `1.5` give `1.25`; `600/s`, `700/s` give `650/s`). Values of other
/// kinds (`full`, `uniform(0ms, 60ms)`) or different units have none.
pub fn midpoint(a: &str, b: &str) -> Option<String> {
    let (a, b) = (a.trim(), b.trim());
    if let (Ok(x), Ok(y)) = (a.parse::<i128>(), b.parse::<i128>()) {
        let (lo, hi) = (x.min(y), x.max(y));
        let m = lo + (hi - lo) / 2;
        return (lo < m && m < hi).then(|| m.to_string());
    }
    if a.parse::<f64>().is_err() {
        if let (Ok(x), Ok(y)) = (Duration::parse(a), Duration::parse(b)) {
            let (lo, hi) = (x.0.min(y.0), x.0.max(y.0));
            let m = lo + (hi - lo) / 2;
            return (lo < m && m < hi).then(|| Duration(m).to_string());
        }
    }
    let (x, unit_a) = split_number(a)?;
    let (y, unit_b) = split_number(b)?;
    let m = (x + y) / 2.0;
    // A decimal stays decimal (`1.0`, `3.0` give `2.0`), as a float range writes its values.
    let decimal = a.contains('.') || b.contains('.');
    let text = match format!("{m}") {
        t if decimal && !t.contains('.') => format!("{t}.0"),
        t => t,
    };
    (unit_a == unit_b && x != y && m.is_finite()).then(|| format!("{text}{unit_a}"))
}

/// A value's leading number and the unit after it (`600/s` is 600 and `/s`).
fn split_number(v: &str) -> Option<(f64, &str)> {
    let end = v
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == '.' || (*i == 0 && *c == '-')))
        .map_or(v.len(), |(i, _)| i);
    let x: f64 = v[..end].parse().ok()?;
    x.is_finite().then_some((x, &v[end..]))
}

/// Two neighbouring points of the map, on one axis, whose verdicts differ: the one axis's
/// values at each end, whether each end stays down, and the other axis's value they share.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// Which axis the edge runs along: 0 for x, 1 for y.
    pub axis: usize,
    /// The other axis's value.
    pub across: String,
    pub from: (String, bool),
    pub to: (String, bool),
}

impl Edge {
    /// The edges of a grid of `nx` by `ny` cells (`down(x, y)`) whose two ends differ, first
    /// along x (by y, then x), then along y (by x, then y).
    pub fn changes(xs: &[String], ys: &[String], down: impl Fn(usize, usize) -> bool) -> Vec<Edge> {
        let mut out = Vec::new();
        for (j, y) in ys.iter().enumerate() {
            for i in 1..xs.len() {
                let (a, b) = (down(i - 1, j), down(i, j));
                if a != b {
                    out.push(Edge {
                        axis: 0,
                        across: y.clone(),
                        from: (xs[i - 1].clone(), a),
                        to: (xs[i].clone(), b),
                    });
                }
            }
        }
        for (i, x) in xs.iter().enumerate() {
            for j in 1..ys.len() {
                let (a, b) = (down(i, j - 1), down(i, j));
                if a != b {
                    out.push(Edge {
                        axis: 1,
                        across: x.clone(),
                        from: (ys[j - 1].clone(), a),
                        to: (ys[j].clone(), b),
                    });
                }
            }
        }
        out
    }

    /// The point halfway along the edge as `(x, y)` values, when its axis has a value there.
    pub fn middle(&self) -> Option<(String, String)> {
        let m = midpoint(&self.from.0, &self.to.0)?;
        Some(match self.axis {
            0 => (m, self.across.clone()),
            _ => (self.across.clone(), m),
        })
    }

    /// The half of the edge where the verdict still changes, once its middle (at `value`) is
    /// known to stay down or not.
    pub fn half(&self, value: &str, down: bool) -> Edge {
        let mid = (value.to_string(), down);
        let (from, to) = if down == self.from.1 {
            (mid, self.to.clone())
        } else {
            (self.from.clone(), mid)
        };
        Edge {
            axis: self.axis,
            across: self.across.clone(),
            from,
            to,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(runs: usize, down: usize) -> Cell {
        Cell {
            runs,
            recovered: runs - down,
            median_ms: None,
        }
    }

    #[test]
    fn a_cell_is_decided_once_its_interval_clears_half() {
        assert_eq!(cell(5, 0).side(), Side::Recovers);
        assert_eq!(cell(5, 5).side(), Side::Down);
        assert_eq!(cell(3, 3).side(), Side::Unclear); // 3 of 3: 44-100%
        assert_eq!(cell(5, 1).side(), Side::Unclear); // 1 of 5: 4-62%
        assert_eq!(cell(20, 4).side(), Side::Recovers); // 4 of 20: 8-42%
        assert_eq!(cell(0, 0).side(), Side::Unclear);
        assert!(cell(10, 5).down() && !cell(10, 4).down());
        assert!(cell(5, 1).open(10) && !cell(10, 1).open(10) && !cell(5, 0).open(10));
        assert_eq!(next_round(0, 12), 0..5);
        assert_eq!(next_round(10, 12), 10..12);
    }

    #[test]
    fn midpoints_keep_the_kind_of_value() {
        assert_eq!(midpoint("8", "11").as_deref(), Some("9"));
        assert_eq!(midpoint("11", "8").as_deref(), Some("9"));
        assert_eq!(midpoint("5", "6"), None);
        assert_eq!(midpoint("11s", "13s").as_deref(), Some("12s"));
        assert_eq!(midpoint("1.0", "1.5").as_deref(), Some("1.25"));
        assert_eq!(midpoint("600/s", "700/s").as_deref(), Some("650/s"));
        assert_eq!(midpoint("600/s", "7/ms"), None);
        assert_eq!(midpoint("full", "none"), None);
        assert_eq!(midpoint("2", "2"), None);
        assert_eq!(midpoint("1.0", "3.0").as_deref(), Some("2.0"));
    }

    #[test]
    fn edges_follow_the_change_and_halve_towards_it() {
        let xs: Vec<String> = ["5", "8", "11"].map(String::from).to_vec();
        let ys: Vec<String> = ["1", "3"].map(String::from).to_vec();
        // Down below x = 11, except (8, 3).
        let edges = Edge::changes(&xs, &ys, |i, j| i == 0 || (i == 1 && j == 0));
        assert_eq!(edges.len(), 3, "{edges:?}");
        assert_eq!(edges[0].middle(), Some(("9".into(), "1".into())));
        assert_eq!(edges[1].middle(), Some(("6".into(), "3".into())));
        assert_eq!(edges[2].middle(), Some(("8".into(), "2".into())));
        let e = &edges[0];
        assert_eq!(e.half("9", true).from, ("9".to_string(), true));
        assert_eq!(e.half("9", false).to, ("9".to_string(), false));
    }
}
