//! What a run produces and how it is judged: the summary (the JSON contract), expectations on
//! a summary by metric name, and replications (means and confidence intervals over seeds).

pub mod expect;
pub mod stats;
pub mod summary;
