//! The static registry of passes, built from one list. Each entry gives the
//! kebab-case name, a one-line summary, the options and the statistics the
//! pass declares, and a constructor.

use crate::pass::{Pass, PassOptions};

/// An option a pass accepts in `name{key=value}`.
#[derive(Debug, PartialEq, Eq)]
pub struct PassOption {
    pub name: &'static str,
    pub help: &'static str,
}

/// A registered pass.
pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub options: &'static [PassOption],
    /// (counter, description) pairs, printed by `--stats`.
    pub stats: &'static [(&'static str, &'static str)],
    pub create: fn(&PassOptions) -> Result<Box<dyn Pass>, String>,
}

impl std::fmt::Debug for PassInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for PassInfo {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// Every pass, in the order `--list-passes` prints them.
pub static PASSES: &[&PassInfo] = &[
    &crate::alloc_sinking::INFO,
    &crate::dead_alloc::INFO,
    &crate::dealloc_sinking::INFO,
    &crate::dse::INFO,
    &crate::fold_batchnorm::INFO,
    &crate::fuse_activations::INFO,
    &crate::inplace::INFO,
    &crate::make_weights_const::INFO,
    &crate::optimize_extracts::INFO,
    &crate::optimize_inserts::INFO,
    &crate::peephole::INFO,
    &crate::plan_memory::INFO,
    &crate::share_buffers::INFO,
    &crate::verify::INFO,
];

/// The registered pass called `name`.
pub fn lookup(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().copied().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case() {
        for (i, p) in PASSES.iter().enumerate() {
            assert!(
                p.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{}",
                p.name
            );
            assert!(
                PASSES[..i].iter().all(|q| q.name != p.name),
                "{} twice",
                p.name
            );
            assert!(!p.summary.is_empty());
        }
    }
}
