//! Tool detection shared by the build scripts of crates whose tests need an
//! external program (`cc`, `rsvg-convert`, LLVM's FileCheck).
//!
//! libtest cannot ignore a test at run time, so the build script decides:
//! it sets `cfg(NAME)` when the tool runs, and the test says
//! `#[cfg_attr(not(NAME), ignore = "reason")]`. Without the tool the test
//! shows as `ignored, reason`, never as passed (docs/testing.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Sets `cfg(cfg_name)` when the first candidate found (an absolute path, or
/// a name looked up on `PATH`) answers `--version` with success.
pub fn detect(cfg_name: &str, candidates: &[&str]) {
    println!("cargo::rustc-check-cfg=cfg({cfg_name})");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-changed=build.rs");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    if let Some(me) = manifest
        .ancestors()
        .map(|d| d.join("build/tool_cfg.rs"))
        .find(|p| p.is_file())
    {
        println!("cargo::rerun-if-changed={}", me.display());
    }
    let found = candidates.iter().find_map(|c| resolve(c));
    match found.filter(|p| runs(p)) {
        Some(path) => {
            println!("cargo::rustc-cfg={cfg_name}");
            // Rebuild when the tool is removed or replaced.
            println!("cargo::rerun-if-changed={}", path.display());
        }
        None => {
            // Rebuild when something is installed into a PATH directory.
            for dir in path_dirs().filter(|d| d.is_dir()) {
                println!("cargo::rerun-if-changed={}", dir.display());
            }
        }
    }
}

fn path_dirs() -> impl Iterator<Item = PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .collect::<Vec<_>>()
        .into_iter()
}

fn resolve(candidate: &str) -> Option<PathBuf> {
    let p = Path::new(candidate);
    if p.is_absolute() {
        return p.is_file().then(|| p.to_path_buf());
    }
    path_dirs().map(|d| d.join(p)).find(|p| p.is_file())
}

fn runs(path: &Path) -> bool {
    Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
