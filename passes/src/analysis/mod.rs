//! Analyses shared by passes and reports.

pub mod liveness;
pub mod memory;
