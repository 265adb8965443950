//! Stale tools: `cargo run --bin glow-lit` rebuilds glow-lit only, so the
//! other tools beside it may predate the sources, and their tests would pass
//! on old code. Cargo's dep-info file beside each binary (`glow-opt.d`) lists
//! every source it was built from; a tool is stale when one of them is newer
//! than the binary or gone.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A tool that is older than one of its sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stale {
    pub tool: String,
    pub binary: PathBuf,
    /// The first source (in dep-info order) changed or removed after the build.
    pub source: PathBuf,
}

impl Stale {
    /// The warning glow-lit prints.
    pub fn warning(&self) -> String {
        format!(
            "glow-lit: warning: {} ({}) was built before its source {} changed or went away; the \
             tests would run the old code: run `cargo build --workspace --bins` first",
            self.tool,
            self.binary.display(),
            self.source.display()
        )
    }
}

/// The tools of `tools` whose dep-info names a source newer than the binary
/// (tools without a dep-info file, e.g. installed ones, are never stale).
pub fn stale_tools(tools: &crate::Tools) -> Vec<Stale> {
    let mut out = Vec::new();
    for (name, binary) in tools {
        if let Some(source) = newer_source(binary) {
            out.push(Stale {
                tool: name.clone(),
                binary: binary.clone(),
                source,
            });
        }
    }
    out
}

fn newer_source(binary: &Path) -> Option<PathBuf> {
    let built = mtime(binary)?;
    let mut dep_info = binary.as_os_str().to_owned();
    dep_info.push(".d");
    let text = std::fs::read_to_string(PathBuf::from(dep_info)).ok()?;
    dep_info_sources(&text)
        .into_iter()
        .find(|src| mtime(src).is_none_or(|t| t > built))
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The prerequisites of the first rule of a Makefile-style dep-info file
/// (`target: a.rs b\ c.rs`, with `\ ` for a space in a path).
fn dep_info_sources(text: &str) -> Vec<PathBuf> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let Some((_, deps)) = first.split_once(": ") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut word = String::new();
    let mut chars = deps.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            ' ' => {
                if !word.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut word)));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(PathBuf::from(word));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dep_info_paths_keep_escaped_spaces() {
        assert_eq!(
            dep_info_sources("/t/x: /s/a.rs /s/b\\ c.rs\n\n/s/a.rs:\n"),
            [PathBuf::from("/s/a.rs"), PathBuf::from("/s/b c.rs")]
        );
    }

    #[test]
    fn a_tool_older_than_a_source_is_stale() {
        let dir = std::env::temp_dir().join(format!("glow-lit-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (bin, src) = (dir.join("glow-opt"), dir.join("lib.rs"));
        std::fs::write(&bin, "").expect("write");
        std::fs::write(&src, "").expect("write");
        std::fs::write(
            dir.join("glow-opt.d"),
            format!("{}: {}\n", bin.display(), src.display()),
        )
        .expect("write");
        let t0 = SystemTime::now();
        let set = |p: &Path, t: SystemTime| {
            std::fs::File::options()
                .write(true)
                .open(p)
                .and_then(|f| f.set_modified(t))
                .expect("set mtime")
        };
        let tools: crate::Tools = [("glow-opt".to_string(), bin.clone())].into();
        set(&bin, t0);
        set(&src, t0 - Duration::from_secs(10));
        assert_eq!(stale_tools(&tools), []);
        set(&src, t0 + Duration::from_secs(10));
        let stale = stale_tools(&tools);
        assert_eq!(stale.len(), 1);
        assert_eq!(stale[0].source, src);
        assert!(stale[0]
            .warning()
            .contains("cargo build --workspace --bins"));
        std::fs::remove_file(&src).expect("remove");
        assert_eq!(
            stale_tools(&tools).len(),
            1,
            "a removed source is a change too"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
