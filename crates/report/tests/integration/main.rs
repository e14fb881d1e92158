//! Integration tests of every output of the report crate, on hand-built reports.

mod fixture;

mod csv;
mod json;
mod readable;
mod svg;
mod table;
