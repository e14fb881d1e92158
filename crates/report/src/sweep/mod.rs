//! The sweep file, in one place: its lines and their JSON, a whole file parsed and checked
//! against its grid, and its text ([`format`]); the lines of a `rare` study ([`split`]); the
//! header, its stamp and how two headers differ ([`header`]); shards joined into one file ([`merge`]); and what a sweep shows, the table
//! aggregated per point and variant ([`table`]) and the chart ([`chart`]). The grid itself (its
//! order and shards) is the core's `study::sweep`; opening, locking and appending to the file on
//! disk is the command line's (`sweep_file`).

pub mod chart;
pub mod format;
pub mod header;
pub mod merge;
pub mod split;
pub mod table;

#[cfg(test)]
mod tests;
