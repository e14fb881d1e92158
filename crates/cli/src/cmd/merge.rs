//! `retrystorm merge`: the shards of one sweep (or search) joined into one file, in grid order
//! (the joining itself is the report crate's `sweep::merge`).

use crate::args::MergeArgs;
use crate::sweep_file::{read_sweep, unchecked_note};
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_report::sweep::merge::Merge;

pub fn merge(a: MergeArgs) -> Result<(), CliError> {
    output::check(&[output::Out::new("--out", &a.out)], &[])?;
    let mut merged = Merge::default();
    for p in &a.inputs {
        let name = p.display().to_string();
        let f = read_sweep(p)?;
        if f.torn {
            progress::note(&format!(
                "{name}: ignoring a torn last line (an interrupted write)"
            ));
        }
        merged.add(&name, f).map_err(CliError::Input)?;
    }
    let (header, first) = merged.first().expect("clap requires at least one input");
    unchecked_note(first, header);
    let text = merged.text().expect("a file was read");
    // The runs so far may be one of the inputs (`merge runs.jsonl shard-*.jsonl -o runs.jsonl`):
    // every input is read whole by now, and the file is replaced at once.
    output::write(output::Out::new("--out", &a.out).in_place(), &text)?;
    if let Some(command) = &header.search {
        return output::print(&format!(
            "merged {}: {} of a {command} search into {}\n",
            plural(a.inputs.len() as u64, "file"),
            plural(merged.runs(), "run"),
            a.out.display()
        ));
    }
    output::print(&format!(
        "merged {}: {} of {} into {}\n",
        plural(a.inputs.len() as u64, "file"),
        merged.runs(),
        plural(header.jobs, "run"),
        a.out.display()
    ))?;
    let Some(what) = merged.missing() else {
        return Ok(());
    };
    if a.partial {
        eprintln!("warning: {what} (--partial: merged what there is)");
        return Ok(());
    }
    Err(CliError::Missing(format!(
        "{what}; merge the missing shards too (or finish them with --resume), or pass --partial to accept a partial merge"
    )))
}
