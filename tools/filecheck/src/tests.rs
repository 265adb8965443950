//! Unit tests for the tricky semantics; see also `differential.rs`.
