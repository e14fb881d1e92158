//! Shards of one sweep (or search) joined into one file: every file's header must be the
//! first's, a run found twice must be the same run, and what is missing is named as whole shards
//! (`--shard I/N`) or ranges.

use crate::sweep::format::{Record, SweepFile, SweepRecord};
use crate::sweep::header::{Mismatch, SweepHeader, input_name, made_by, mismatch};
use std::collections::BTreeMap;

/// The shards read so far, joined in grid order.
pub struct Merge<R = SweepRecord> {
    /// The first file's header, and its name.
    first: Option<(SweepHeader, String)>,
    /// Every run, by its index in the grid, with the file it was first read from.
    runs: BTreeMap<u64, (R, String)>,
}

impl<R> Default for Merge<R> {
    fn default() -> Self {
        Merge {
            first: None,
            runs: BTreeMap::new(),
        }
    }
}

impl<R: Record> Merge<R> {
    /// Adds the shard `name`: refused (why, in words) when it is of another sweep than the
    /// first file or holds a run that differs from the same run of an earlier file.
    pub fn add(&mut self, name: &str, file: SweepFile<R>) -> Result<(), String> {
        match &self.first {
            None => self.first = Some((file.header, name.to_string())),
            Some((h, first)) => {
                if let Some(m) = mismatch(h, &file.header) {
                    return Err(other_shard(name, first, &m));
                }
            }
        }
        for r in file.records {
            match self.runs.get(&r.job()) {
                Some((old, from)) if *old != r => {
                    return Err(format!("run {} differs between {from} and {name}", r.job()));
                }
                Some(_) => {}
                None => {
                    self.runs.insert(r.job(), (r, name.to_string()));
                }
            }
        }
        Ok(())
    }

    /// The first file's header and name (`None` before any file).
    pub fn first(&self) -> Option<(&SweepHeader, &str)> {
        self.first.as_ref().map(|(h, n)| (h, n.as_str()))
    }

    /// The runs found, in grid order.
    pub fn records(&self) -> impl Iterator<Item = &R> {
        self.runs.values().map(|(r, _)| r)
    }

    /// How many runs were found.
    pub fn runs(&self) -> u64 {
        self.runs.len() as u64
    }

    /// The merged file's text: the header, then every run in grid order.
    pub fn text(&self) -> Option<String> {
        let (h, _) = self.first()?;
        Some(crate::sweep::format::sweep_text(h, self.records()))
    }

    /// What is missing of the header's grid, in words, if anything is (a search's file holds
    /// the runs it asked for, not its whole grid: none is missing).
    pub fn missing(&self) -> Option<String> {
        let (header, _) = self.first()?;
        let missing = header.jobs - self.runs();
        if header.search.is_some() || missing == 0 {
            return None;
        }
        let which = missing_runs(header.jobs, |j| self.runs.contains_key(&j));
        Some(format!(
            "{} of {} runs present; {missing} missing: {which}",
            self.runs(),
            header.jobs
        ))
    }
}

/// Why the shard `name` is not of the same sweep as `first`.
fn other_shard(name: &str, first: &str, m: &Mismatch) -> String {
    match m {
        Mismatch::Version(ours, theirs) => format!(
            "shard {name} was made by {}, {first} by {}; merge shards made by one retrystorm version (rerun the odd ones)",
            made_by(theirs),
            made_by(ours)
        ),
        Mismatch::Input(r) => format!(
            "shard {name} read other contents of {} than {first}: the file changed between the shards; rerun them from the same files",
            input_name(r)
        ),
        Mismatch::Sweep(why) => {
            format!("{name} is not a shard of the same sweep as {first} ({why})")
        }
    }
}

/// The runs of `0..jobs` that are not present, named as whole shards when they are exactly some
/// shards of `--shard I/N` (N up to 64, each of two runs or more), else as ranges (the first ten).
fn missing_runs(jobs: u64, present: impl Fn(u64) -> bool) -> String {
    let missing: Vec<u64> = (0..jobs).filter(|j| !present(*j)).collect();
    for n in 2..=jobs.min(64) {
        // Shard I/N runs j mod N = I - 1: which residues are wholly missing, and is that all?
        let mut count = vec![0u64; n as usize];
        for j in &missing {
            count[(j % n) as usize] += 1;
        }
        let size = |r: u64| (jobs - r).div_ceil(n);
        // A shard of one run is a range, not a shard left out.
        let whole: Vec<u64> = (0..n)
            .filter(|r| size(*r) >= 2 && count[*r as usize] == size(*r))
            .collect();
        let covered: u64 = whole.iter().map(|r| size(*r)).sum();
        if !whole.is_empty() && covered == missing.len() as u64 {
            let names: Vec<String> = whole.iter().map(|r| format!("{}/{n}", r + 1)).collect();
            return format!(
                "{} {} (--shard)",
                if names.len() == 1 { "shard" } else { "shards" },
                names.join(", ")
            );
        }
    }
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for j in missing {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == j => *end = j,
            _ => ranges.push((j, j)),
        }
    }
    let shown: Vec<String> = ranges
        .iter()
        .take(10)
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let more = if ranges.len() > 10 {
        format!(" and {} more ranges", ranges.len() - 10)
    } else {
        String::new()
    };
    format!("runs {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::missing_runs;

    #[test]
    fn missing_runs_name_shards_or_ranges() {
        // 10 runs, shard 2/2 (odd jobs) missing.
        assert_eq!(missing_runs(10, |j| j % 2 == 0), "shard 2/2 (--shard)");
        // Shards 1/3 and 3/3 missing.
        assert_eq!(missing_runs(7, |j| j % 3 == 1), "shards 1/3, 3/3 (--shard)");
        // A shard cut short: ranges.
        assert_eq!(missing_runs(10, |j| j < 7), "runs 7-9");
        assert_eq!(
            missing_runs(10, |j| j != 3 && j != 5 && j < 8),
            "runs 3, 5, 8-9"
        );
    }
}
