//! What `validate` compares: an experiment (a model, its seeds) and its cases, each a number
//! of our runs against a cited reference.

/// What a case is compared with.
#[derive(Clone, Copy, Debug)]
pub(super) enum Reference {
    /// A closed form or a deterministic count: no noise of its own.
    Exact(f64),
    /// The mean over `n` runs of a reference implementation whose runs have sample sd `sd`.
    Mean { value: f64, sd: f64, n: u32 },
    /// One run of a reference implementation: its noise is one run's spread, which we estimate
    /// from our own runs' sd (same model, same size).
    OneRun(f64),
    /// `count` of `n` runs of a reference implementation had the property (Wilson interval).
    Share { count: u32, n: u32 },
    /// A published ranking: our metric is below (`true`) or above (`false`) the same metric of
    /// `other`, with the 95% intervals of the paired differences excluding zero.
    Order { other: &'static str, below: bool },
    /// A reference model's computed number (no noise), matched within a relative `share`.
    Within { value: f64, share: f64 },
}

/// Which number of a run is compared.
#[derive(Clone, Copy, Debug)]
pub(super) enum Value {
    /// A summary metric by its dotted name (`peak_retries`, `layered.amplification_bottom`).
    Metric(&'static str),
    /// One metric over another (`succeeded` / `intents`).
    Ratio(&'static str, &'static str),
    /// A field of the variant's Markov chain (`time_to_tip_s`): computed from the model, no run.
    Chain(&'static str),
}

pub(super) struct Case {
    pub(super) variant: &'static str,
    pub(super) what: &'static str,
    pub(super) value: Value,
    pub(super) reference: Reference,
    pub(super) source: &'static str,
    /// Why a known difference differs (docs/validation.md explains it), if it does.
    pub(super) known: Option<&'static str>,
}

pub(super) struct Experiment {
    pub(super) id: &'static str,
    pub(super) title: &'static str,
    /// The model file's text and the name shown for it.
    pub(super) model: fn() -> String,
    pub(super) file: &'static str,
    pub(super) sets: &'static [&'static str],
    pub(super) seeds: u32,
    /// Cheap enough for `--quick` (the part `cargo test` runs).
    pub(super) quick: bool,
    pub(super) cases: Vec<Case>,
}

/// A case with no source named yet and no known difference.
pub(super) fn case(
    variant: &'static str,
    what: &'static str,
    value: Value,
    reference: Reference,
) -> Case {
    Case {
        variant,
        what,
        value,
        reference,
        source: "",
        known: None,
    }
}

impl Case {
    /// The case with its reference's source named.
    pub(super) fn from(mut self, source: &'static str) -> Case {
        self.source = source;
        self
    }
}
