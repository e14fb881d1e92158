//! What a run produces and how it is judged, from the bottom up: `stats` (means, confidence and
//! Wilson intervals, replication seeds), `summary` (the JSON contract), `catalogue` (the one
//! metric catalogue: every number of a summary by its dotted name), `aggregate` (replications
//! reduced to an estimate per metric) and `expect` (expectations on a summary by metric name).

pub mod aggregate;
pub mod catalogue;
pub mod expect;
pub mod stats;
pub mod summary;
