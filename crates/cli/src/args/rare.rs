//! The flags of `retrystorm rare`: the event, the score its levels are placed on, and the
//! splitting's effort.

use super::ModelArgs;
use clap::Args;
use std::path::PathBuf;

/// `--particles` when not given.
pub const DEFAULT_PARTICLES: u32 = 100;

#[derive(Args, Debug)]
pub struct RareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Estimate for this variant of the file (default: the base model).
    #[arg(long)]
    pub variant: Option<String>,
    /// The event: `SCORE >= N` (the score reaches N before the run ends) or `recovered == false`
    /// (goodput not back by the horizon after the trigger). Needed for a model; a study's file
    /// (`--out`, merged shards) holds its own.
    #[arg(long, value_name = "EXPR")]
    pub event: Option<String>,
    /// The score the levels are placed on, read off the engine's state after every event
    /// (default: the event's score, else `queue`); a wrong name lists the scores.
    #[arg(long, value_name = "NAME")]
    pub score: Option<String>,
    /// The score reads 0 before this time of the run (a duration: `26s`): levels are placed on
    /// what a run does from then on, not on a peak every run passes through before.
    #[arg(long, value_name = "TIME")]
    pub score_from: Option<String>,
    /// Place the levels on the score's excess over its typical value at that time of the run
    /// (the mean of the first stage's plain runs), not on the score itself.
    #[arg(long)]
    pub excess: bool,
    /// A run ends the first time its score, having risen above 0, is back at 0: the event is
    /// then "within one busy period of the score".
    #[arg(long)]
    pub until_empty: bool,
    /// Place the levels once, by a pilot splitting run of the first seed on draws of its own,
    /// and split every seed at those levels as they are: an unbiased estimate (levels placed
    /// from the particles they are counted on bias it upward). The pilot's events are counted.
    #[arg(long)]
    pub fixed_levels: bool,
    /// Runs (particles) per stage.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_PARTICLES, value_parser = clap::value_parser!(u32).range(20..=100_000))]
    pub particles: u32,
    /// Write the estimate as JSON here ("-" for stdout, which replaces the table).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Run only the seeds of slice I of N (the seeds at positions j with j mod N = I - 1; with
    /// --fixed-levels every shard runs the same pilot) and stop (needs --out); join the slices
    /// with `merge`, then `retrystorm rare MERGED.jsonl` gives the estimate.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Write each seed's splitting run as a sweep file (JSON Lines) here; `retrystorm rare FILE`
    /// shows its estimate again.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: Option<PathBuf>,
}
