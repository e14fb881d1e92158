//! Studies over many runs: parameter grids and their JSON Lines records ([`sweep`]), constrained
//! search ([`tune`]), recovery verdicts per cell ([`map`]), Morris elementary effects
//! ([`sensitivity`]) and, without a run, a model's stability verdict ([`verdict`]).

pub mod map;
pub mod sensitivity;
pub mod sweep;
pub mod tune;
pub mod verdict;
