//! What a run produces and how it is judged: the summary (the JSON contract), the one metric
//! catalogue (every number of a summary by its dotted name), expectations on a summary by
//! metric name, and replications (means and confidence intervals over seeds).

pub mod catalogue;
pub mod expect;
pub mod stats;
pub mod summary;
