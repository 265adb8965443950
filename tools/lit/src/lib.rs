//! lit.
