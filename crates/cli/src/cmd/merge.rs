//! `retrystorm merge`: the shards of one sweep (or search) joined into one file, in grid order.

use crate::args::MergeArgs;
use crate::sweep_file::{
    Mismatch, input_name, made_by, mismatch, read_sweep, sweep_text, unchecked_note,
};
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_core::sweep::{SweepHeader, SweepRecord};
use std::collections::BTreeMap;

pub fn merge(a: MergeArgs) -> Result<(), CliError> {
    output::check(&[output::Out::new("--out", &a.out)], &[])?;
    let mut header: Option<(SweepHeader, String)> = None;
    let mut runs: BTreeMap<u64, (SweepRecord, String)> = BTreeMap::new();
    for p in &a.inputs {
        let name = p.display().to_string();
        let f = read_sweep(p)?;
        if f.torn {
            progress::note(&format!(
                "{name}: ignoring a torn last line (an interrupted write)"
            ));
        }
        match &header {
            None => header = Some((f.header, name.clone())),
            Some((h, first)) => {
                if let Some(m) = mismatch(h, &f.header) {
                    return Err(CliError::Input(other_shard(&name, first, &m)));
                }
            }
        }
        for r in f.records {
            match runs.get(&r.job) {
                Some((old, from)) if *old != r => {
                    return Err(CliError::Input(format!(
                        "run {} differs between {from} and {name}",
                        r.job
                    )));
                }
                Some(_) => {}
                None => {
                    runs.insert(r.job, (r, name.clone()));
                }
            }
        }
    }
    let (header, first) = header.expect("clap requires at least one input");
    unchecked_note(&first, &header);
    let text = sweep_text(&header, runs.values().map(|(r, _)| r));
    // The runs so far may be one of the inputs (`merge runs.jsonl shard-*.jsonl -o runs.jsonl`):
    // every input is read whole by now, and the file is replaced at once.
    output::write(output::Out::new("--out", &a.out).in_place(), &text)?;
    // A search's file holds the runs it asked for, not its whole grid: none is missing.
    if let Some(command) = &header.search {
        return output::print(&format!(
            "merged {}: {} of a {command} search into {}\n",
            plural(a.inputs.len() as u64, "file"),
            plural(runs.len() as u64, "run"),
            a.out.display()
        ));
    }
    output::print(&format!(
        "merged {}: {} of {} into {}\n",
        plural(a.inputs.len() as u64, "file"),
        runs.len(),
        plural(header.jobs, "run"),
        a.out.display()
    ))?;
    let missing = header.jobs - runs.len() as u64;
    if missing == 0 {
        return Ok(());
    }
    let which = missing_runs(header.jobs, |j| runs.contains_key(&j));
    let what = format!(
        "{} of {} runs present; {missing} missing: {which}",
        runs.len(),
        header.jobs
    );
    if a.partial {
        eprintln!("warning: {what} (--partial: merged what there is)");
        return Ok(());
    }
    Err(CliError::Missing(format!(
        "{what}; merge the missing shards too (or finish them with --resume), or pass --partial to accept a partial merge"
    )))
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
