//! Test discovery: from the paths given on the command line to a sorted list of test files.
//!
//! A path's suite is found by walking up to the nearest `lit.toml`. Directories are walked
//! recursively, applying the suite's suffixes and excludes and any `lit.local.toml` found on the
//! way (which applies to its directory and below). A subdirectory holding its own `lit.toml` is
//! another suite and is not entered. An explicitly named file is a test whatever its suffix. The
//! result is sorted by suite root then relative path, and deduplicated, so every run sees the same
//! order.

use crate::config::{ConfigError, LocalConfig, SuiteConfig, LOCAL_CONFIG, SUITE_CONFIG};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Errors while discovering tests.
#[derive(Debug, Error)]
pub enum DiscoveryError {
    #[error("{0}: no such file or directory")]
    Missing(String),
    #[error("{0}: not inside a test suite (no {SUITE_CONFIG} found in it or its parents)")]
    NoSuite(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Walk(String),
}

/// One discovered test file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestFile {
    /// Absolute directory holding the suite's `lit.toml`.
    pub suite_root: PathBuf,
    /// Path relative to the suite root, `/`-separated.
    pub rel: String,
    /// Absolute path of the file.
    pub path: PathBuf,
    /// The suite's name.
    pub suite_name: String,
    /// Features from the suite config and the local configs on the way down.
    pub features: BTreeSet<String>,
    /// A local config declared this directory unsupported.
    pub unsupported: bool,
}

impl TestFile {
    /// The display name, `suite :: rel/path`, as lit prints it.
    pub fn display_name(&self) -> String {
        format!("{} :: {}", self.suite_name, self.rel)
    }
}

/// The effective settings for one directory.
#[derive(Clone)]
struct DirSettings {
    suffixes: Vec<String>,
    excludes: Vec<String>,
    features: BTreeSet<String>,
    unsupported: bool,
}

impl DirSettings {
    fn apply(&mut self, local: LocalConfig) {
        if let Some(s) = local.suffixes {
            self.suffixes = s;
        }
        self.excludes.extend(local.excludes);
        self.features.extend(local.features);
        if let Some(u) = local.unsupported {
            self.unsupported = u;
        }
    }
}

/// Finds the directory holding the nearest `lit.toml` at or above `path`.
pub fn find_suite_root(path: &Path) -> Option<PathBuf> {
    let start = if path.is_dir() { path } else { path.parent()? };
    start
        .ancestors()
        .find(|d| d.join(SUITE_CONFIG).is_file())
        .map(Path::to_path_buf)
}

/// Discovers every test under `paths` (files or directories), sorted and deduplicated.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<TestFile>, DiscoveryError> {
    let mut out = BTreeSet::new();
    for given in paths {
        let abs =
            absolute(given).map_err(|_| DiscoveryError::Missing(given.display().to_string()))?;
        if !abs.exists() {
            return Err(DiscoveryError::Missing(given.display().to_string()));
        }
        let root = find_suite_root(&abs)
            .ok_or_else(|| DiscoveryError::NoSuite(given.display().to_string()))?;
        let suite = SuiteConfig::load(&root.join(SUITE_CONFIG))?;
        let base = DirSettings {
            suffixes: suite.suffixes.clone(),
            excludes: suite.excludes.clone(),
            features: suite.features.iter().cloned().collect(),
            unsupported: false,
        };
        let (dir, explicit_file) = if abs.is_dir() {
            (abs.clone(), None)
        } else {
            (
                abs.parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| root.clone()),
                Some(abs.clone()),
            )
        };
        // Local configs from the root down to the starting directory.
        let mut settings = base;
        let rel_dir = dir.strip_prefix(&root).unwrap_or(Path::new(""));
        let mut cur = root.clone();
        settings.apply(load_local(&cur)?);
        for comp in rel_dir.components() {
            cur.push(comp);
            settings.apply(load_local(&cur)?);
        }
        let ctx = Ctx {
            root: &root,
            suite: &suite,
        };
        match explicit_file {
            Some(file) => {
                out.insert(ctx.make(&file, &settings));
            }
            None => walk_dir(&ctx, &dir, settings, &mut out)?,
        }
    }
    Ok(out.into_iter().collect())
}

struct Ctx<'a> {
    root: &'a Path,
    suite: &'a SuiteConfig,
}

impl Ctx<'_> {
    fn make(&self, file: &Path, settings: &DirSettings) -> TestFile {
        let rel = file
            .strip_prefix(self.root)
            .unwrap_or(file)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        TestFile {
            suite_root: self.root.to_path_buf(),
            rel,
            path: file.to_path_buf(),
            suite_name: self.suite.name.clone(),
            features: settings.features.clone(),
            unsupported: settings.unsupported,
        }
    }
}

fn load_local(dir: &Path) -> Result<LocalConfig, ConfigError> {
    let p = dir.join(LOCAL_CONFIG);
    if p.is_file() {
        LocalConfig::load(&p)
    } else {
        Ok(LocalConfig::default())
    }
}

/// Walks one directory level; recursion carries the settings down so local configs nest.
fn walk_dir(
    ctx: &Ctx,
    dir: &Path,
    settings: DirSettings,
    out: &mut BTreeSet<TestFile>,
) -> Result<(), DiscoveryError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| DiscoveryError::Walk(format!("{}: {e}", dir.display())))?;
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for path in names {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        if settings.excludes.contains(&name) || name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            if path.join(SUITE_CONFIG).is_file() {
                continue; // a nested suite: only run when named explicitly
            }
            let mut sub = settings.clone();
            sub.apply(load_local(&path)?);
            walk_dir(ctx, &path, sub, out)?;
        } else if name != LOCAL_CONFIG
            && name != SUITE_CONFIG
            && settings.suffixes.iter().any(|s| name.ends_with(s.as_str()))
        {
            out.insert(ctx.make(&path, &settings));
        }
    }
    Ok(())
}

fn absolute(p: &Path) -> std::io::Result<PathBuf> {
    let abs = std::path::absolute(p)?;
    // Normalise `..` and symlinks when possible so relative names are stable.
    Ok(abs.canonicalize().unwrap_or(abs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("glow-lit-disc-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn discovers_sorted_with_excludes_and_locals() {
        let d = scratch("a");
        fs::write(
            d.join("lit.toml"),
            "name = \"s\"\nsuffixes = [\".gir\"]\nexcludes = [\"Inputs\"]\n",
        )
        .unwrap();
        fs::create_dir_all(d.join("b/Inputs")).unwrap();
        fs::create_dir_all(d.join("a")).unwrap();
        fs::create_dir_all(d.join("c")).unwrap();
        fs::write(d.join("b/x.gir"), "").unwrap();
        fs::write(d.join("b/Inputs/y.gir"), "").unwrap();
        fs::write(d.join("a/z.gir"), "").unwrap();
        fs::write(d.join("a/z.txt"), "").unwrap();
        fs::write(
            d.join("c/lit.local.toml"),
            "unsupported = true\nsuffixes = [\".txt\"]",
        )
        .unwrap();
        fs::write(d.join("c/w.txt"), "").unwrap();
        let tests = discover(std::slice::from_ref(&d)).unwrap();
        let rels: Vec<_> = tests.iter().map(|t| t.rel.as_str()).collect();
        assert_eq!(rels, vec!["a/z.gir", "b/x.gir", "c/w.txt"]);
        assert!(tests[2].unsupported && !tests[0].unsupported);
        // Naming a file inside a subdirectory finds the same suite root.
        let one = discover(&[d.join("b/x.gir")]).unwrap();
        assert_eq!(one[0].display_name(), "s :: b/x.gir");
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn missing_paths_are_errors() {
        assert!(discover(&[PathBuf::from("/nonexistent/glow/x")]).is_err());
    }
}
