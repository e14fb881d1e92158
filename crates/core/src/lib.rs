pub mod queue;
pub mod rng;
pub mod time;
pub mod dist;
pub mod backoff;
pub mod model;
pub mod summary;
