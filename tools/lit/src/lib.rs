//! glow-lit: a runner for LLVM-lit-style regression tests (RUN lines + FileCheck).
//!
//! The library does the whole job except argument parsing: [`discovery`] finds test files under a
//! suite root marked by `lit.toml`, [`script`] reads their directives, [`shell`] runs the RUN lines
//! without `/bin/sh`, [`runner`] turns that into verdicts (in parallel, reported in a fixed order),
//! and [`report`]/[`xunit`] render them. The `glow-lit` binary and the `cargo test` harness
//! (`tests/lit.rs`) are thin layers over it.

pub mod config;
pub mod discovery;
pub mod features;
pub mod report;
pub mod runner;
pub mod script;
pub mod sensitivity;
pub mod shell;
pub mod stale;
pub mod update_checks;
pub mod xunit;

pub use discovery::{discover, find_suite_root, TestFile};
pub use runner::{run_all, run_test, ResultCode, RunConfig, TestResult};
pub use shell::Tools;

/// The tools a RUN line may name, besides `FileCheck` (an alias of `glow-filecheck`).
pub const TOOL_NAMES: [&str; 10] = [
    "glow-opt",
    "glow-lsp",
    "glow-train",
    "glow-reduce",
    "glow-filecheck",
    "glow-run",
    "glow-import",
    "glow-memplan",
    "glow-lit",
    "glow-update-checks",
];

/// Tools built by other workspace members (the out-of-tree pass example's
/// `custom-opt` and `custom-run`): a RUN line may name them, and when found each is also a
/// feature of the same name, so tests `REQUIRES:` it and show as
/// UNSUPPORTED, not failed, in a build without it.
pub const OPTIONAL_TOOL_NAMES: [&str; 2] = ["custom-opt", "custom-run"];

/// Collects the tools among [`TOOL_NAMES`] and [`OPTIONAL_TOOL_NAMES`] that
/// exist as executables in `dir`.
pub fn tools_in_dir(dir: &std::path::Path) -> Tools {
    TOOL_NAMES
        .iter()
        .chain(&OPTIONAL_TOOL_NAMES)
        .map(|n| (n.to_string(), dir.join(n)))
        .filter(|(_, p)| p.is_file())
        .collect()
}
