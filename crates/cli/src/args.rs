//! Flags, as clap derive structs; turned into domain values once, in `commands`.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "retrystorm",
    version,
    about = "Deterministic simulator for retry and backoff storms"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one model (the base, or one variant with --variant) and print its summary.
    Run(RunArgs),
    /// Run every variant of a model side by side and print a comparison table.
    Compare(CompareArgs),
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
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Make variants from values of a field, e.g. --vary retry.jitter=none,full (crossed with the
    /// file's variants and with each other).
    #[arg(long, value_name = "KEY=V1,V2,...")]
    pub vary: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}
