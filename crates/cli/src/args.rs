//! Flags, as clap derive structs (the low floor); each command turns them into domain values
//! once, through `model_args` (the model, `--set`, `--variant`, `--seed`) and `grid` (`--vary`).

use clap::{Args, Parser, Subcommand};
use retrystorm_core::trace::OutcomeFilter;
use std::path::PathBuf;

mod rare;
pub use rare::{DEFAULT_PARTICLES, RareArgs};

/// The names `--trace-outcome` takes.
pub const OUTCOMES: [&str; 7] = {
    let mut names = [""; 7];
    let mut i = 0;
    while i < 7 {
        names[i] = OutcomeFilter::ALL[i].0;
        i += 1;
    }
    names
};

#[derive(Parser, Debug)]
#[command(
    name = "retrystorm",
    version,
    about = "Deterministic simulator for retry and backoff storms"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print less: no progress bars, no notes on stderr, and in `check` only the failures and
    /// the verdict.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one model (the base, or one variant with --variant) and print its summary.
    Run(RunArgs),
    /// Run every variant of a model side by side and print a comparison table.
    Compare(CompareArgs),
    /// Run a model's expectations ([[expect]] tables and --expect) and report pass/fail.
    /// Exit 0 when all hold, 1 when any fails, 2 on bad input.
    Check(CheckArgs),
    /// Run a grid of parameter points x variants x seeds in parallel, streaming JSON Lines.
    Sweep(SweepArgs),
    /// Join sweep shard files into one file, identical to an unsharded run's.
    Merge(MergeArgs),
    /// Write a self-contained HTML report of a model; or, given a sweep file, print its
    /// aggregated table (and chart / HTML).
    Report(ReportArgs),
    /// Print the resolved model's key facts per tier (workers, service time, capacity, retry
    /// policy), its stability verdict (stable, vulnerable to a retry storm, or overloaded, from
    /// the model alone) and warnings: offered load above capacity, a breaker that can never
    /// open, a timeout shorter than the service time.
    Explain(ExplainArgs),
    /// Search --vary settings for the best that meets every --constraint, on --minimize /
    /// --maximize objectives: paired seeds, Kim-Nelson sequential selection, Pareto front.
    /// Exit 1 when no candidate meets the constraints.
    Tune(TuneArgs),
    /// Map the vulnerable region: two --vary axes (e.g. outage length x offered load), each cell
    /// on the same seeds, its verdict the share of runs that recover within --within; a table,
    /// a heat map (--svg) and JSON. Given a merged sweep file of two axes, maps it.
    Map(MapArgs),
    /// Rank the --vary parameters by how much they move --metric: Morris elementary effects
    /// (mu*, sigma) over seeded trajectories on common seeds; a table, a bar chart and JSON.
    Sensitivity(SensitivityArgs),
    /// The probability of a rare event (a score reaching a level, or no recovery) by multilevel
    /// splitting: the estimate, its 95% interval, the levels with their pass rates, and the
    /// events spent against what brute force would need.
    Rare(RareArgs),
    /// Write a commented starter model (or one of the shipped models) to start from.
    Init(InitArgs),
    /// Print shell completions for bash, zsh, fish, elvish or powershell.
    Completions(CompletionsArgs),
    /// Print a JSON Schema of the model file, for editors (taplo, Even Better TOML).
    Schema(SchemaArgs),
    /// Print (or write, -o) the model sections a real client's or proxy's retry configuration
    /// stands for, each key commented with the field it came from: a gRPC service config, an AWS
    /// config file or an Envoy route (with its cluster). Exit 2 naming any field that cannot be
    /// mapped.
    Import(ImportArgs),
    /// Run every published comparison (the article, queueing theory, layered retries, Brooker's
    /// two simulators, the AWS blog's rankings) and print reference, ours, noise and verdict.
    /// Exit 1 when a comparison differs from its reference (a finding).
    Validate(ValidateArgs),
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// Only the cheap experiments (the part `cargo test` runs).
    #[arg(long)]
    pub quick: bool,
    /// Only the experiment with this id (herd, three-clients, mm1, brooker-collapse, ...).
    #[arg(long, value_name = "ID")]
    pub only: Option<String>,
    /// Worker threads (default: every core); the numbers do not depend on it.
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,
    /// Write the rows as JSON here ("-" for stdout, which replaces the text).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the table as GitHub-flavoured markdown here.
    #[arg(long, value_name = "PATH")]
    pub md: Option<PathBuf>,
    /// Replace the suite's table in this markdown file (between its validate:begin/end lines):
    /// `--docs docs/validation.md`.
    #[arg(long, value_name = "PATH")]
    pub docs: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// Write it here instead of stdout (e.g. retrystorm.schema.json).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The kind of file: grpc (service config JSON), aws (shared config file) or envoy (a route
    /// retry_policy, and a cluster's circuit_breakers and load balancing, YAML or JSON).
    #[arg(value_parser = ["grpc", "aws", "envoy"])]
    pub source: String,
    /// The configuration file.
    pub file: PathBuf,
    /// grpc: the method whose methodConfig to import (SERVICE/METHOD), when there are several.
    #[arg(long, value_name = "SERVICE/METHOD")]
    pub method: Option<String>,
    /// aws: the profile to import (default: default).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Where to write the sections (default: stdout).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Explain this variant only (default: every variant of the file).
    #[arg(long)]
    pub variant: Option<String>,
    /// Write every variant's facts, warnings and stability verdict as JSON here ("-" for
    /// stdout, which replaces the text).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the vulnerable and overloaded verdicts as SARIF 2.1.0 here, each at the line of
    /// the table that decides it, for code scanning (docs/ci.md).
    #[arg(long, value_name = "PATH")]
    pub sarif: Option<PathBuf>,
    /// Exit 1 when a variant's verdict is at least this bad: `vulnerable` (vulnerable or
    /// overloaded) or `overloaded`.
    #[arg(long, value_name = "VERDICT")]
    pub fail_on: Option<FailOn>,
}

/// `explain --fail-on`: the verdict from which explain exits 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Vulnerable,
    Overloaded,
}

impl FailOn {
    pub fn name(self) -> &'static str {
        match self {
            FailOn::Vulnerable => "vulnerable",
            FailOn::Overloaded => "overloaded",
        }
    }
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The template: `starter` (default) or a shipped model (`--list` shows them).
    pub template: Option<String>,
    /// Where to write it (default: TEMPLATE.toml; "-" for stdout).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
    /// List the templates and exit.
    #[arg(long)]
    pub list: bool,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell, e.g. `retrystorm completions bash > /etc/bash_completion.d/retrystorm`.
    pub shell: clap_complete::Shell,
}

/// Flags shared by every command that runs a model.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// The model file (TOML), e.g. models/thundering-herd.toml.
    pub model: PathBuf,
    /// The seed (default: the model's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Override a model field, e.g. --set retry.jitter=full --set workload.clients=5000.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Stop each run after N events (the model's `max_events`); a run stopped so is reported as
    /// truncated, with a partial summary.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_events: Option<u64>,
    /// Run N replications with seeds SEED, SEED+1, ..., SEED+N-1 and report means with 95%
    /// confidence intervals (Student t).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub seeds: u32,
    /// Worker threads for the runs (default: every core).
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: Option<u32>,
}

/// Where to write results.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArgs {
    /// Write the JSON report here ("-" for stdout, which replaces the table).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the per-bucket time series as CSV here ("-" for stdout).
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// Write the load chart (arrivals per bucket, one panel per variant) as SVG here.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Write the per-intent outcome chart (applied once / duplicated / lost / phantom) as SVG here.
    #[arg(long, value_name = "PATH")]
    pub outcomes_svg: Option<PathBuf>,
    /// Write the completion-time CDF chart as SVG here.
    #[arg(long, value_name = "PATH")]
    pub cdf_svg: Option<PathBuf>,
    /// Write the per-tier series (arrivals, queue, busy at every tier of the path) as CSV here.
    #[arg(long, value_name = "PATH")]
    pub tiers_csv: Option<PathBuf>,
    /// Write the per-tier chart (arrivals at each tier, one panel per tier) as SVG here.
    #[arg(long, value_name = "PATH")]
    pub tiers_svg: Option<PathBuf>,
    /// Write the per-replica series (arrivals, served, rejected, ejections of each replica of a
    /// replicated tier) as CSV here ("-" for stdout); the header only without replicas.
    #[arg(long, value_name = "PATH")]
    pub replicas_csv: Option<PathBuf>,
    /// Write the replicas chart (arrivals at each replica, one panel per variant and
    /// replicated tier, ejections marked) as SVG here; refused for a model without replicas.
    #[arg(long, value_name = "PATH")]
    pub replicas_svg: Option<PathBuf>,
    /// Load chart (--svg): every variant as a line on one axis instead of one panel each.
    #[arg(long)]
    pub overlay: bool,
    /// Load chart (--svg): a logarithmic y axis. Without it the axis is logarithmic anyway
    /// when the first burst is over 20 times the median column (the chart says so).
    #[arg(long)]
    pub log_y: bool,
    /// Load chart (--svg): a linear y axis, even when the first burst dwarfs the rest.
    #[arg(long, conflicts_with = "log_y")]
    pub linear_y: bool,
    /// Load chart (--svg): retries split by attempt number, one shade of the variant's colour
    /// each (attempt 6 and later share the darkest), so decorrelation shows.
    #[arg(long)]
    pub by_attempt: bool,
    /// Add a column for this summary metric to the comparison table (stdout and --md), e.g.
    /// peak_arrivals_window or attempt_peaks.2.peak_window; repeatable.
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Write the comparison table as GitHub-flavoured markdown here ("-" for stdout), e.g. for
    /// a pull-request comment.
    #[arg(long, value_name = "PATH")]
    pub md: Option<PathBuf>,
}

/// `--trace`: the event history of a few intents (`docs/output.md`, "Traces").
#[derive(Args, Debug, Clone, Default)]
pub struct TraceArgs {
    /// Write the event history of a few intents as JSON Lines here ("-" for stdout): time,
    /// intent, hop, attempt, event, class.
    #[arg(long, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// How many intents --trace keeps per variant: the lowest ids, or the first that ended in
    /// --trace-outcome.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "trace",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub trace_intents: u64,
    /// Keep only the intents that ended so.
    #[arg(long, value_name = "OUTCOME", requires = "trace",
          value_parser = clap::builder::PossibleValuesParser::new(OUTCOMES))]
    pub trace_outcome: Option<String>,
    /// The most events --trace holds at once per variant (an intent that does not fit is left
    /// out whole); at most 5,000,000 over all the variants traced.
    #[arg(long, value_name = "N", default_value_t = 100_000, requires = "trace",
          value_parser = clap::value_parser!(u64).range(1..=5_000_000))]
    pub trace_max_events: u64,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Run this variant instead of the base model.
    #[arg(long)]
    pub variant: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Make variants from values of a field, e.g. --vary retry.jitter=none,full (crossed with the
    /// file's variants and with each other).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub vary: Vec<String>,
    /// Add a column with each row's stability verdict from its model alone (docs/verdict.md):
    /// stable, vulnerable or overloaded, the deciding ratio, and whether the model's trigger
    /// tips it.
    #[arg(long)]
    pub verdict: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub trace: TraceArgs,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// An extra expectation, e.g. --expect 'peak_retries<200' or
    /// --expect 'completion_ms.p99 < 2s, over=mean, variant=full'.
    #[arg(long = "expect", value_name = "EXPR")]
    pub expects: Vec<String>,
    /// Write a JUnit XML report here (one testcase per expectation and variant, and with
    /// --baseline one per variant and metric compared).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Give each JUnit test case a `time`: the wall seconds its variant's runs took, shared
    /// equally among that variant's test cases. Off by default, so the file is deterministic.
    #[arg(long, requires = "junit")]
    pub junit_time: bool,
    /// Write the verdicts as a GitHub-flavoured markdown table here ('-' for stdout), e.g.
    /// `--md - >> "$GITHUB_STEP_SUMMARY"`.
    #[arg(long, value_name = "PATH")]
    pub md: Option<PathBuf>,
    /// Compare with a saved `--json` report of this model and fail (exit 1) when a metric got
    /// worse by more than --tolerance. Seeds default to the baseline's.
    #[arg(long, value_name = "OLD.json")]
    pub baseline: Option<PathBuf>,
    /// How much worse a metric may get against --baseline: a share (5%) or an amount (3).
    #[arg(long, value_name = "T", default_value = "0%", requires = "baseline")]
    pub tolerance: String,
    /// A metric to compare with --baseline (repeatable; default: amplification, peaks,
    /// p50/p99, succeeded, failed, lost, duplicated, phantom, recovery_ms).
    #[arg(long = "metric", value_name = "NAME", requires = "baseline")]
    pub metrics: Vec<String>,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// A varied field: a range FROM..TO:STEP (numbers or durations, e.g. retry.base=5ms..50ms:5ms)
    /// or a list (retry.jitter=none,full). Several --vary make a cartesian grid.
    #[arg(long, value_name = "KEY=RANGE_OR_LIST")]
    pub vary: Vec<String>,
    /// Stream results here, one JSON line per (point, variant, seed).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Continue the sweep in --out: keep its finished runs, run the rest.
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// Run only slice I of N of the grid (1-based), e.g. --shard 2/8; join with `merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Stop after writing this many runs (for testing --resume).
    #[arg(long, hide = true)]
    pub limit: Option<u64>,
    #[command(flatten)]
    pub chart: SweepChartArgs,
}

/// The aggregated view of a sweep.
#[derive(Args, Debug, Clone, Default)]
pub struct SweepChartArgs {
    /// Draw METRIC against the varied parameter (one line per variant, 95% CI band) as SVG here.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// The metric of the table's last column and of the chart (default: amplification).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard files written by `sweep --shard I/N --out ...`.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The merged file.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: PathBuf,
    /// Accept a merge with runs missing (a shard not given or not finished): exit 0 with a
    /// warning instead of exit 5.
    #[arg(long)]
    pub partial: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The HTML file to write ("-" for stdout).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub chart: SweepChartArgs,
}

/// The flags of a study of one variant of the model over a grid of `--vary` axes (`tune`, `map`,
/// `sensitivity`), defined once; each command words their help for what it does with them
/// (`mut_arg` on its struct).
#[derive(Args, Debug)]
pub struct StudyArgs {
    /// Study this variant of the file (default: the base model).
    #[arg(long)]
    pub variant: Option<String>,
    /// A varied field, as in `sweep` (a range FROM..TO:STEP or a list).
    #[arg(long, value_name = "KEY=RANGE_OR_LIST")]
    pub vary: Vec<String>,
}

#[derive(Args, Debug)]
#[command(
    mut_arg("variant", |a| a.help("Search this variant of the file only (default: every variant is a candidate per point)")),
    mut_arg("vary", |a| a.help("A searched field, as in `sweep` (a range FROM..TO:STEP or a list); several make a grid")),
)]
pub struct TuneArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub study: StudyArgs,
    /// A constraint in the expectation language, e.g. 'completion_ms.p99 < 2s', judged on the
    /// 95% interval of the mean.
    #[arg(long = "constraint", value_name = "EXPR")]
    pub constraints: Vec<String>,
    /// A metric to make small (repeatable; the first objective decides the recommendation).
    #[arg(long, value_name = "METRIC")]
    pub minimize: Vec<String>,
    /// A metric to make large (objectives after every --minimize).
    #[arg(long, value_name = "METRIC")]
    pub maximize: Vec<String>,
    /// Differences on the first objective not worth telling apart: a share of its best mean
    /// (5%) or an amount in its unit (0.05, 20ms).
    #[arg(long, value_name = "D", default_value = "5%")]
    pub indifference: String,
    /// First-stage seeds per candidate.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub first_stage: u32,
    /// The most runs in all (default: 20 per candidate).
    #[arg(long, value_name = "RUNS", value_parser = clap::value_parser!(u64).range(1..))]
    pub budget: Option<u64>,
    /// A grid of more points than this is sampled by a Latin hypercube of this many.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub candidates: u64,
    /// Successive halving before KN for large candidate sets: stages from 2 seeds keep the best
    /// 1/ETA and multiply the seeds by ETA until at most ETA candidates are left.
    #[arg(long)]
    pub halving: bool,
    /// Successive halving's reduction factor ETA (with --halving).
    #[arg(long, value_name = "ETA", default_value_t = 3, requires = "halving",
          value_parser = clap::value_parser!(u32).range(2..=100))]
    pub eta: u32,
    /// Write the result as JSON here ("-" for stdout, which replaces the table).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a chart as SVG here: the Pareto front of the first two objectives, or with one
    /// objective each candidate's mean of it.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Run only slice I of N of the next stage the search needs (the first stage, without
    /// --first-stage-from) and stop (needs --out); join the slices with `merge` (and the runs so
    /// far) and go on with --first-stage-from MERGED.jsonl, until it says the search is complete.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// With --shard: write the slice's runs as a sweep file here.
    #[arg(long, short = 'o', value_name = "PATH", requires = "shard")]
    pub out: Option<PathBuf>,
    /// Take the runs already done from this merged sweep file of `tune --shard` runs (or a
    /// sweep of the same grid), then search on: with --shard, to the next stage; without, to the
    /// end, running what is not in it.
    #[arg(long, visible_alias = "runs-from", value_name = "MERGED.jsonl")]
    pub first_stage_from: Option<PathBuf>,
}

#[derive(Args, Debug)]
#[command(
    mut_arg("variant", |a| a.help("Map this variant of the file (default: the base model)")),
    mut_arg("vary", |a| a.help("The x axis, then the y axis, as in `sweep` (a range FROM..TO:STEP or a list)")),
)]
pub struct MapArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub study: StudyArgs,
    /// A run recovers when goodput is back for good within this time of the trigger's end
    /// (default: any time before the horizon).
    #[arg(long, value_name = "T")]
    pub within: Option<String>,
    /// The verdict: `recovered` (the share of runs that recover) or any summary metric (its
    /// mean over the seeds).
    #[arg(long, value_name = "NAME", default_value = "recovered")]
    pub metric: String,
    /// Put each cell's analytic stability verdict (as `explain` judges it, no run) beside the
    /// simulation: table columns, JSON fields and a letter in each cell of the chart.
    #[arg(long)]
    pub verdict: bool,
    /// Write the heat map as SVG here.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Write the cells as JSON here ("-" for stdout, which replaces the table).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Run only slice I of N of the runs (needs --out); join with `merge`, then map the merged
    /// file.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Write the runs as a sweep file (JSON Lines) here.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Spend the seeds where the verdict is unclear: each cell runs its seeds in rounds of 5 and
    /// stops once the 95% interval of its share that stays down lies wholly above or below half
    /// (or at --seeds); then --refine.
    #[arg(long)]
    pub adaptive: bool,
    /// With --adaptive: how many times to bisect each edge between neighbouring cells whose
    /// verdicts differ, adding cells between them (0: none) [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=8))]
    pub refine: Option<u32>,
}

#[derive(Args, Debug)]
#[command(
    mut_arg("variant", |a| a.help("Analyse this variant of the file (default: the base model)")),
    mut_arg("vary", |a| a.help("A parameter and its levels, as in `sweep` (at least two values each)")),
)]
pub struct SensitivityArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub study: StudyArgs,
    /// The summary metric whose sensitivity is measured, e.g. amplification.
    #[arg(long, value_name = "NAME")]
    pub metric: String,
    /// Morris trajectories (each runs parameters + 1 points x --seeds).
    #[arg(long, value_name = "R", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub trajectories: u32,
    /// Draw M candidate trajectories and analyse the --trajectories most spread out of them
    /// (Campolongo et al. 2007; brute force when small, else Ruano et al. 2012's local method).
    /// Default: off, the trajectories are drawn at random. M > --trajectories, at most 1000.
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub candidates: Option<u32>,
    /// Write the ranking as a bar chart (mu* with its 95% interval, and sigma) as SVG here.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
    /// Write the result as JSON here ("-" for stdout, which replaces the table).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}
