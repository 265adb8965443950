//! Verifier.
