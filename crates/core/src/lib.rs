pub mod queue;
pub mod rng;
pub mod time;
