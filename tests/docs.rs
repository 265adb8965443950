//! The documentation stays true to the repository: every link and every
//! `*.md` a page or a source comment names exists, and every flag of
//! `glow-opt --help` is described in docs/glow-opt.md.

use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Files under `dirs` (relative to the root) whose name ends with `ext`,
/// outside `target/` and the vendored test data.
fn files(dirs: &[&str], ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        for e in walkdir::WalkDir::new(root().join(d))
            .into_iter()
            .filter_entry(|e| e.file_name() != "target" && e.file_name() != "testdata")
        {
            let e = e.expect("the tree is readable");
            if e.file_type().is_file() && e.file_name().to_string_lossy().ends_with(ext) {
                out.push(e.into_path());
            }
        }
    }
    out.sort();
    out
}

/// Pages a tutorial tells the reader to create: they exist only in the reader's copy.
const TO_BE_WRITTEN: &[&str] = &["docs/passes/strip-debugprint.md"];

/// Whether `name` exists beside `file` or one level up (a crate's
/// `CARGO_MANIFEST_DIR`), at the root, under docs/ or under testdata/.
fn resolves(file: &Path, name: &str) -> bool {
    let name = name.trim_start_matches('/');
    let dir = file.parent().expect("a file has a directory");
    let up = dir.parent().unwrap_or(dir);
    TO_BE_WRITTEN.contains(&name)
        || [
            dir.to_path_buf(),
            up.to_path_buf(),
            root(),
            root().join("docs"),
            root().join("testdata"),
        ]
        .iter()
        .any(|base| inside_repository(&base.join(name)))
}

/// Whether `path` exists inside the repository: a page must not point at a
/// file beside the checkout, which a clone does not have.
fn inside_repository(path: &Path) -> bool {
    let root = root().canonicalize().expect("the root exists");
    path.canonicalize().is_ok_and(|p| p.starts_with(root))
}

#[test]
fn markdown_links_and_md_mentions_resolve() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let mention = Regex::new(r"[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b").expect("regex");
    let mut broken = Vec::new();
    let mut pages = files(&["docs"], ".md");
    pages.push(root().join("README.md"));
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("readable");
        for c in link.captures_iter(&text) {
            let target = c[1].split('#').next().unwrap_or("");
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !inside_repository(&page.parent().expect("dir").join(target)) {
                broken.push(format!("{}: link to {target}", page.display()));
            }
        }
    }
    let mut sources = pages.clone();
    sources.extend(files(
        &[
            "ir", "passes", "backend", "import", "tools", "examples", "tests", "benches",
        ],
        ".rs",
    ));
    for file in &sources {
        let text = std::fs::read_to_string(file).expect("readable");
        for m in mention.find_iter(&text) {
            let name = m.as_str().trim_start_matches("./");
            if !resolves(file, name) {
                broken.push(format!("{}: names {name}", file.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "missing documents:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_glow_opt_flag_is_documented() {
    let out = Command::new(env!("CARGO_BIN_EXE_glow-opt"))
        .arg("--help")
        .output()
        .expect("glow-opt runs");
    let help = String::from_utf8(out.stdout).expect("utf-8");
    let flag = Regex::new(r"(?m)^\s+(?:-[A-Za-z], )?(--[a-z0-9-]+)").expect("regex");
    let manual = std::fs::read_to_string(root().join("docs/glow-opt.md")).expect("readable");
    let flags: Vec<&str> = flag
        .captures_iter(&help)
        .map(|c| c.get(1).expect("group").as_str())
        .collect();
    assert!(flags.len() > 20, "glow-opt --help lists its flags:\n{help}");
    let missing: Vec<&&str> = flags
        .iter()
        .filter(|f| !manual.contains(&format!("`{f}")))
        .collect();
    assert!(missing.is_empty(), "not in docs/glow-opt.md: {missing:?}");
}

#[test]
fn the_why_convention_is_documented() {
    let guide = std::fs::read_to_string(root().join("docs/testing.md")).expect("readable");
    assert!(
        guide.contains("`// WHY:`"),
        "docs/testing.md explains `// WHY:` lines"
    );
}

#[test]
fn readme_says_how_to_run_models_and_glow_lit() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("readable");
    let backend = std::fs::read_to_string(root().join("docs/backend.md")).expect("readable");
    // A debug-build interpreter takes minutes on ResNet-18.
    assert!(readme.contains("cargo run --release --bin glow-run"));
    assert!(backend.contains("cargo run --release --bin glow-run"));
    // `cargo run --bin glow-lit` alone leaves the other tools stale.
    assert!(readme.contains("cargo build --workspace --bins && cargo run\n--bin glow-lit"));
}

/// The passes that `--mode=train` leaves out, as each manual lists them
/// after "the same without", against `pipeline::TRAIN_SKIPS`.
#[test]
fn train_mode_docs_name_every_skipped_pass() {
    let mut want: Vec<&str> = glow_passes::pipeline::TRAIN_SKIPS
        .iter()
        .map(|p| p.name)
        .collect();
    want.sort_unstable();
    let name = Regex::new(r"`([a-z-]+)`").expect("regex");
    for doc in ["docs/glow-opt.md", "docs/passes/README.md"] {
        let text = std::fs::read_to_string(root().join(doc)).expect("readable");
        let line = text
            .lines()
            .find(|l| l.contains("train") && l.contains("the same without"))
            .unwrap_or_else(|| panic!("{doc} describes --mode=train as \"the same without ...\""));
        let list = line.split("the same without").nth(1).expect("split");
        let list = list.split([';', '(', '|']).next().expect("split");
        let mut got: Vec<&str> = name
            .captures_iter(list)
            .map(|c| c.get(1).expect("group").as_str())
            .collect();
        got.sort_unstable();
        assert_eq!(got, want, "{doc}: the passes --mode=train skips");
    }
}

#[test]
fn readme_says_a_c_compiler_is_needed() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("readable");
    let req = readme
        .split("## Requirements")
        .nth(1)
        .expect("README has a Requirements section");
    assert!(req.contains("C compiler") && req.contains("`cc`"), "{req}");
}
