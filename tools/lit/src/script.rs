//! Reading a test file's directives: `RUN:` lines (with `\` continuation), `REQUIRES:`,
//! `UNSUPPORTED:` and `XFAIL:`; the `%` substitutions; and the "CHECK lines but no checker" lint.
//!
//! A directive is recognised anywhere on a line (`// RUN:`, `; RUN:`, `# RUN:` ...) as long as the
//! keyword is not glued to a preceding word character or `-` (so `CHECK-RUN:` is not a RUN line).

use crate::features::{parse_list, Expr};
use regex::Regex;
use std::path::Path;
use std::sync::OnceLock;

/// One logical RUN line (continuations joined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLine {
    /// 1-based line number of the first physical line.
    pub line: usize,
    /// The command text, before substitution.
    pub text: String,
}

/// When a test is expected to fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Xfail {
    /// `XFAIL: *`.
    Always,
    /// `XFAIL: expr`.
    When(String, Expr),
}

/// Everything the runner needs from a test file.
#[derive(Debug, Clone, Default)]
pub struct Script {
    pub run_lines: Vec<RunLine>,
    pub requires: Vec<(String, Expr)>,
    pub unsupported: Vec<(String, Expr)>,
    pub xfail: Vec<Xfail>,
}

impl Script {
    /// Parses the directives of a file; errors name the line.
    pub fn parse(text: &str) -> Result<Script, String> {
        let mut s = Script::default();
        let mut pending: Option<RunLine> = None;
        for (idx, line) in text.lines().enumerate() {
            let lineno = idx + 1;
            let Some((kw, rest)) = find_directive(line) else {
                continue;
            };
            let rest = rest.trim();
            if let Some(p) = pending.as_mut() {
                if kw != "RUN:" {
                    return Err(format!(
                        "line {lineno}: expected a RUN: line continuing line {}",
                        p.line
                    ));
                }
            }
            match kw {
                "RUN:" => {
                    let (body, continues) = match rest.strip_suffix('\\') {
                        Some(b) => (b.trim_end(), true),
                        None => (rest, false),
                    };
                    let mut cur = pending.take().unwrap_or(RunLine {
                        line: lineno,
                        text: String::new(),
                    });
                    if !cur.text.is_empty() && !body.is_empty() {
                        cur.text.push(' ');
                    }
                    cur.text.push_str(body);
                    if continues {
                        pending = Some(cur);
                    } else if !cur.text.is_empty() {
                        s.run_lines.push(cur);
                    }
                }
                "REQUIRES:" => s.requires.extend(list(rest, lineno)?),
                "UNSUPPORTED:" => s.unsupported.extend(list(rest, lineno)?),
                "XFAIL:" => {
                    for item in rest.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                        if item == "*" {
                            s.xfail.push(Xfail::Always);
                        } else {
                            let e = Expr::parse(item).map_err(|e| format!("line {lineno}: {e}"))?;
                            s.xfail.push(Xfail::When(item.to_string(), e));
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(p) = pending {
            return Err(format!(
                "line {}: RUN line ends with `\\` but no RUN line follows",
                p.line
            ));
        }
        Ok(s)
    }
}

fn list(rest: &str, lineno: usize) -> Result<Vec<(String, Expr)>, String> {
    if rest.is_empty() {
        return Err(format!("line {lineno}: empty feature list"));
    }
    parse_list(rest).map_err(|e| format!("line {lineno}: {e}"))
}

const KEYWORDS: [&str; 4] = ["RUN:", "REQUIRES:", "UNSUPPORTED:", "XFAIL:"];

/// Finds the first directive keyword on the line; returns it and the text after it.
fn find_directive(line: &str) -> Option<(&'static str, &str)> {
    let mut best: Option<(usize, &'static str)> = None;
    for kw in KEYWORDS {
        let mut from = 0;
        while let Some(off) = line[from..].find(kw) {
            let at = from + off;
            let glued = line[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !glued {
                if best.is_none_or(|(b, _)| at < b) {
                    best = Some((at, kw));
                }
                break;
            }
            from = at + kw.len();
        }
    }
    best.map(|(at, kw)| (kw, &line[at + kw.len()..]))
}

/// The values of the `%` substitutions for one test.
#[derive(Debug, Clone)]
pub struct Substitutions {
    /// `%s`: the test file.
    pub source: String,
    /// `%S` and `%p`: the test file's directory.
    pub source_dir: String,
    /// `%t`: a per-test temporary path.
    pub temp: String,
    /// `%T`: the directory of `%t`.
    pub temp_dir: String,
}

impl Substitutions {
    /// Builds the substitutions for `file` with temp path `temp`.
    pub fn new(file: &Path, temp: &Path) -> Substitutions {
        let dir = |p: &Path| {
            p.parent()
                .map(|d| d.display().to_string())
                .unwrap_or_default()
        };
        Substitutions {
            source: file.display().to_string(),
            source_dir: dir(file),
            temp: temp.display().to_string(),
            temp_dir: dir(temp),
        }
    }

    /// Applies `%s %S %p %t %T %%` in one left-to-right pass (so `%%s` is a literal `%s`);
    /// unknown `%x` sequences are left alone, as lit does.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let rep = match chars.peek() {
                Some('s') => Some(self.source.as_str()),
                Some('S') | Some('p') => Some(self.source_dir.as_str()),
                Some('t') => Some(self.temp.as_str()),
                Some('T') => Some(self.temp_dir.as_str()),
                Some('%') => Some("%"),
                _ => None,
            };
            match rep {
                Some(r) => {
                    chars.next();
                    out.push_str(r);
                }
                None => out.push('%'),
            }
        }
        out
    }
}

/// The names under which a RUN line can call the checker.
pub const CHECKER_NAMES: [&str; 3] = ["glow-filecheck", "FileCheck", "llvm-filecheck"];

/// Returns a warning when the file has lines for a check prefix used by its RUN lines (default
/// `CHECK`) but no RUN line calls the checker: such checks would silently never run.
pub fn checker_warning(text: &str, run_lines: &[RunLine]) -> Option<String> {
    static PREFIX_ARG: OnceLock<Regex> = OnceLock::new();
    static CHECKER: OnceLock<Regex> = OnceLock::new();
    let prefix_arg = PREFIX_ARG.get_or_init(|| {
        Regex::new(r"--?check-prefix(?:es)?(?:=|\s+)([A-Za-z0-9_,-]+)").expect("static regex")
    });
    let checker = CHECKER.get_or_init(|| {
        Regex::new(r"(?:^|[\s|;&(/])(?:glow-filecheck|FileCheck|llvm-filecheck)(?:\s|$)")
            .expect("static regex")
    });
    if run_lines.iter().any(|r| checker.is_match(&r.text)) {
        return None;
    }
    let mut prefixes: Vec<String> = run_lines
        .iter()
        .flat_map(|r| {
            prefix_arg
                .captures_iter(&r.text)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .flat_map(|p| p.split(',').map(str::to_string).collect::<Vec<_>>())
        .filter(|p| !p.is_empty())
        .collect();
    if prefixes.is_empty() {
        prefixes.push("CHECK".into());
    }
    prefixes.sort();
    prefixes.dedup();
    let alternatives = prefixes
        .iter()
        .map(|p| regex::escape(p))
        .collect::<Vec<_>>()
        .join("|");
    let re = Regex::new(&format!(
        r"(?:^|[^A-Za-z0-9_])({alternatives})(?:-NEXT|-SAME|-NOT|-DAG|-LABEL|-EMPTY|-COUNT-[0-9]+)?:"
    ))
    .ok()?;
    let (lineno, m) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| re.captures(l).map(|c| (i + 1, c[1].to_string())))?;
    Some(format!(
        "has {m} lines (first at line {lineno}) but no RUN line calls glow-filecheck/FileCheck"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_run_lines_and_continuations() {
        let s = Script::parse("// RUN: a \\\n// RUN:   | b\n; RUN: c\n# CHECK-RUN: no\nx RUN:y\n")
            .unwrap();
        assert_eq!(s.run_lines.len(), 3);
        assert_eq!(
            s.run_lines[0],
            RunLine {
                line: 1,
                text: "a | b".into()
            }
        );
        assert_eq!(s.run_lines[1].text, "c");
        assert_eq!(s.run_lines[2].text, "y");
    }

    #[test]
    fn dangling_continuation_is_an_error() {
        assert!(Script::parse("// RUN: a \\\n").is_err());
        assert!(Script::parse("// RUN: a \\\n// REQUIRES: x\n// RUN: b").is_err());
    }

    #[test]
    fn parses_feature_directives() {
        let s = Script::parse("// REQUIRES: a, b && !c\n// XFAIL: *\n// UNSUPPORTED: d || e\n")
            .unwrap();
        assert_eq!(s.requires.len(), 2);
        assert_eq!(s.xfail, vec![Xfail::Always]);
        assert_eq!(s.unsupported.len(), 1);
        assert!(Script::parse("// REQUIRES: a &&").is_err());
        assert!(Script::parse("// REQUIRES:").is_err());
    }

    #[test]
    fn substitutes() {
        let sub = Substitutions::new(Path::new("/s/d/x.gir"), Path::new("/o/d/x.gir.tmp"));
        assert_eq!(
            sub.apply("%s %S %p %t %T %% %%s 100% %q"),
            "/s/d/x.gir /s/d /s/d /o/d/x.gir.tmp /o/d % %s 100% %q"
        );
    }

    #[test]
    fn warns_on_checks_without_checker() {
        let run = |t: &str| {
            vec![RunLine {
                line: 1,
                text: t.into(),
            }]
        };
        let text = "// RUN: x\n// CHECK: y\n";
        assert!(checker_warning(text, &run("glow-opt %s")).is_some());
        assert!(checker_warning(text, &run("glow-opt %s | glow-filecheck %s")).is_none());
        assert!(checker_warning(text, &run("glow-opt %s --check-prefix=FOO")).is_none());
        assert!(checker_warning("// FOO-NEXT: y", &run("x --check-prefixes=A,FOO")).is_some());
        assert!(checker_warning("no checks", &run("glow-opt %s")).is_none());
    }
}
