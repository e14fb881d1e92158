//! `retrystorm merge`: the shards of one sweep (or search) joined into one file, in grid order.

use crate::args::MergeArgs;
use crate::sweep_file::{differs, read_sweep, sweep_text};
use crate::text::plural;
use crate::{CliError, output, progress};
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
                if let Some(why) = differs(h, &f.header) {
                    return Err(CliError::Input(format!(
                        "{name} is not a shard of the same sweep as {first} ({why})"
                    )));
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
    let (header, _) = header.expect("clap requires at least one input");
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
    let missing = header.jobs - runs.len() as u64;
    if missing > 0 {
        eprintln!(
            "warning: {} of {} runs present; {missing} missing (a shard not merged or not finished)",
            runs.len(),
            header.jobs
        );
    }
    output::print(&format!(
        "merged {}: {} of {} into {}\n",
        plural(a.inputs.len() as u64, "file"),
        runs.len(),
        plural(header.jobs, "run"),
        a.out.display()
    ))?;
    Ok(())
}
