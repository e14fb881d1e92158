//! Studies over many runs: parameter grids and their JSON Lines records ([`sweep`]), constrained
//! search ([`tune`]), recovery verdicts per cell ([`map`]) and Morris elementary effects
//! ([`sensitivity`]).

pub mod map;
pub mod sensitivity;
pub mod sweep;
pub mod tune;
