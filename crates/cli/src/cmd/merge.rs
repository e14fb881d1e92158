//! `retrystorm merge`: the shards of one sweep, search or `rare` study joined into one file, in
//! grid order (the joining itself is the report crate's `sweep::merge`).

use crate::args::MergeArgs;
use crate::sweep_file::{holds_rare, read_records, unchecked_note};
use crate::text::plural;
use crate::{error::CliError, output, progress};
use retrystorm_report::sweep::format::{Record, SweepRecord};
use retrystorm_report::sweep::merge::Merge;
use retrystorm_report::sweep::split::SplitRecord;

pub fn merge(a: MergeArgs) -> Result<(), CliError> {
    output::check(&[output::Out::new("--out", &a.out)], &[])?;
    // The first file says what is merged: every other file must be of the same study.
    match a.inputs.first() {
        Some(p) if holds_rare(p) => join::<SplitRecord>(&a),
        _ => join::<SweepRecord>(&a),
    }
}

/// Joins the inputs, files of `R` records.
fn join<R: Record>(a: &MergeArgs) -> Result<(), CliError> {
    let mut merged = Merge::<R>::default();
    for p in &a.inputs {
        let name = p.display().to_string();
        let f = read_records::<R>(p)?;
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
