//! The built-in shell that runs RUN lines: parsing (`parse`), execution (`exec`) and the builtin
//! commands (`builtins`). No `/bin/sh` is involved, so RUN lines behave the same on every machine.

mod builtins;
pub mod exec;
pub mod parse;

pub use exec::{quote_args, Input, Shell, Status, Tools};
pub use parse::{parse, CommandLine};

#[cfg(test)]
mod tests;
