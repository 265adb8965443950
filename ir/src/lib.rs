//! The Glow instruction IR.
