//! Studies over many runs: parameter grids, their order and shards ([`sweep`]), constrained
//! search ([`tune`]), recovery verdicts per cell ([`map`]), rare-event probabilities by
//! splitting ([`rare`]), Morris elementary effects
//! ([`sensitivity`]) and, without a run, a model's stability verdict ([`verdict`]).

pub mod map;
pub mod rare;
pub mod sensitivity;
pub mod sweep;
pub mod tune;
pub mod verdict;
