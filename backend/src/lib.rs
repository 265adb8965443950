//! C backend.
