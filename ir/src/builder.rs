//! Builder.
