//! Analyses shared by passes and reports.

pub mod memory;
