//! FileCheck.
