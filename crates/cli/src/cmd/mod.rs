//! One module per subcommand, each with one entry point called by `dispatch` in lib.rs. A
//! command uses the floors below it (resolved model arguments, the runner, the writers), never
//! another command.

pub mod check;
pub mod compare;
pub mod completions;
pub mod explain;
pub mod import;
pub mod init;
pub mod map;
pub mod merge;
pub mod rare;
pub mod report;
pub mod run;
pub mod schema;
pub mod sensitivity;
pub mod sweep;
pub mod tune;
pub mod validate;
