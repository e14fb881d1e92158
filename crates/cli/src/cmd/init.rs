//! `retrystorm init [TEMPLATE]`: write a commented starter model, and `retrystorm completions
//! SHELL`: shell completions from the clap definition (clap_complete).

use crate::args::InitArgs;
use crate::{error::CliError, output};
use retrystorm_core::load;

/// The generic starter: every section a new model usually touches, commented.
const STARTER: &str = r#"# A retrystorm model: clients, their retry policy, the network and the server.
# Every field has a default (docs/model.md lists them all with units and sources), so a model
# states only what it changes. Run it with:
#   retrystorm compare starter.toml --svg load.svg
name = "starter"
description = "open load near capacity, a short outage, retries with and without jitter"
seed = 1                 # the default seed; --seed overrides it, --seeds N replicates
horizon = "30s"          # simulated time after which the run stops
bucket = "100ms"         # width of the time-series buckets (the "peak per 100 ms")

[workload]
kind = "open"            # burst | open | closed
rate = "80/s"            # Poisson arrivals of new intents

[retry]
max_attempts = 4         # first try + 3 retries
timeout = "500ms"        # per-attempt timeout
backoff = "exponential"
base = "50ms"
cap = "2s"
jitter = "full"          # none | full | equal | decorrelated

[network]
latency = "1ms"

[server]
capacity = 10            # concurrent workers
service = "exp(100ms)"   # service time distribution
# A 3 s window in which every request fails at once; the charts shade it.
outages = [{ from = "10s", to = "13s" }]

# Variants override the base model; `compare` runs them side by side.
[[variant]]
name = "full-jitter"

[[variant]]
name = "no-jitter"
retry.jitter = "none"

# Expectations for `retrystorm check` (exit 1 when one fails, for CI).
[[expect]]
metric = "amplification"
op = "<"
value = 3
"#;

/// The templates: the starter, then every shipped model by file name, but those that read a
/// trace file beside them (`trace-replay`, `trace-keys`: a template is one file).
pub const TEMPLATES: &[(&str, &str)] = &[
    ("starter", STARTER),
    (
        "thundering-herd",
        include_str!("../../../../models/thundering-herd.toml"),
    ),
    (
        "three-clients",
        include_str!("../../../../models/three-clients.toml"),
    ),
    (
        "atomic-dedupe",
        include_str!("../../../../models/atomic-dedupe.toml"),
    ),
    (
        "metastable-spike",
        include_str!("../../../../models/metastable-spike.toml"),
    ),
    (
        "outage-recovery",
        include_str!("../../../../models/outage-recovery.toml"),
    ),
    ("gc-pause", include_str!("../../../../models/gc-pause.toml")),
    (
        "one-bad-replica",
        include_str!("../../../../models/one-bad-replica.toml"),
    ),
    (
        "autoscale-spike",
        include_str!("../../../../models/autoscale-spike.toml"),
    ),
    (
        "reconnect-storm",
        include_str!("../../../../models/reconnect-storm.toml"),
    ),
    (
        "retry-after",
        include_str!("../../../../models/retry-after.toml"),
    ),
    ("budgets", include_str!("../../../../models/budgets.toml")),
    ("layered", include_str!("../../../../models/layered.toml")),
    (
        "occ-contention",
        include_str!("../../../../models/occ-contention.toml"),
    ),
    (
        "aws-adaptive",
        include_str!("../../../../models/aws-adaptive.toml"),
    ),
    (
        "brooker-collapse",
        include_str!("../../../../models/brooker-collapse.toml"),
    ),
    (
        "brooker-retries",
        include_str!("../../../../models/brooker-retries.toml"),
    ),
    (
        "library-backoffs",
        include_str!("../../../../models/library-backoffs.toml"),
    ),
    ("metafor", include_str!("../../../../models/metafor.toml")),
    (
        "osdi-retry",
        include_str!("../../../../models/osdi-retry.toml"),
    ),
    (
        "overload-bench",
        include_str!("../../../../models/overload-bench.toml"),
    ),
    (
        "periodic-resync",
        include_str!("../../../../models/periodic-resync.toml"),
    ),
    (
        "proxy-dedupe",
        include_str!("../../../../models/proxy-dedupe.toml"),
    ),
    (
        "sdk-modes",
        include_str!("../../../../models/sdk-modes.toml"),
    ),
    (
        "sdk-quota-bug",
        include_str!("../../../../models/sdk-quota-bug.toml"),
    ),
    ("shedding", include_str!("../../../../models/shedding.toml")),
    ("stack", include_str!("../../../../models/stack.toml")),
    ("fanout", include_str!("../../../../models/fanout.toml")),
];

pub fn init(a: InitArgs) -> Result<(), CliError> {
    if a.list {
        for (name, text) in TEMPLATES {
            let description = text
                .lines()
                .find_map(|l| l.strip_prefix("description = "))
                .unwrap_or("")
                .trim_matches('"');
            println!("{name:<18} {description}");
        }
        return Ok(());
    }
    let name = a.template.as_deref().unwrap_or("starter");
    let text = template(name)?;
    let path = a
        .out
        .clone()
        .unwrap_or_else(|| format!("{name}.toml").into());
    let out = output::Out::new("--out", &path);
    output::check(&[out], &[])?;
    if a.force {
        output::write(out, text)?;
    } else {
        // Created exclusively: of two `init` racing for one path, one writes and one is refused.
        output::claim(out, "pass --force to overwrite it, or choose another -o")?.write(text)?;
    }
    if path.as_os_str() != "-" {
        println!(
            "wrote {}; try: retrystorm compare {} --svg load.svg",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

/// The text of template `name`, or an input error listing the names.
pub fn template(name: &str) -> Result<&'static str, CliError> {
    if let Some((_, t)) = TEMPLATES.iter().find(|(n, _)| *n == name) {
        return Ok(t);
    }
    let names: Vec<&str> = TEMPLATES.iter().map(|(n, _)| *n).collect();
    let hint = load::closest(name, &names)
        .map(|b| format!("did you mean `{b}`? "))
        .unwrap_or_default();
    Err(CliError::Input(format!(
        "TEMPLATE {name}: no such template; {hint}templates: {}",
        names.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_loads_and_the_starter_runs() {
        for (name, text) in TEMPLATES {
            let s = load::load(&format!("{name}.toml"), text, &[])
                .unwrap_or_else(|e| panic!("template {name}: {e}"));
            assert!(!s.variants.is_empty(), "{name}");
        }
        let s = load::load("starter.toml", STARTER, &[]).unwrap();
        for m in &s.variants {
            let r = retrystorm_core::run_model(m, 1, &mut |_| {});
            assert!(
                r.summary.intents > 1000,
                "{}: {:?}",
                m.name,
                r.summary.intents
            );
            assert!(!r.summary.truncated);
            assert_eq!(r.summary.trigger_from_ms, Some(10_000.0));
        }
    }

    /// Every shipped model is a template, but the ones that read a trace file.
    #[test]
    fn every_shipped_model_is_offered() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&p).unwrap();
            let reads_a_trace = text.contains("kind = \"trace\"");
            let offered = TEMPLATES.iter().find(|(n, _)| *n == stem);
            match (offered, reads_a_trace) {
                (Some((_, t)), false) => assert_eq!(*t, text, "{stem}: the template is the file"),
                (None, true) => {}
                (Some(_), true) => panic!("{stem} reads a trace file: init cannot write it"),
                (None, false) => panic!("{stem} is shipped but `init --list` does not offer it"),
            }
        }
    }

    #[test]
    fn unknown_template_suggests() {
        let e = template("thundering").unwrap_err().to_string();
        assert!(e.contains("did you mean `thundering-herd`"), "{e}");
    }
}
