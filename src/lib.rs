//! retrystorm: see the core crate.
pub use retrystorm_core::*;
