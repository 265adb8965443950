//! `glow-lit --check-sensitivity`: would a test notice if its pass broke?
//!
//! For each RUN line that runs `glow-opt` (or `glow-run`) with named passes
//! (`--pass=P`, `--pass P`, `--passes=a,b`, LLVM's `-passes=`), the test is
//! run once per named pass with that pass left out of the line (the only
//! pass of a line leaves the identity pipeline). A test that still passes
//! cannot notice its pass doing nothing: it is reported as insensitive.
//! A test may say why that is intended with a line holding
//! `sensitivity-exempt: P: why` (for pass `P`), and is then reported as
//! exempt instead. `-O` pipelines are not mutated.
//!
//! Report lines (one per finding, in test order, then the summary):
//!
//! ```text
//! insensitive: REL: RUN line N: passes without `P`
//! exempt: REL: RUN line N: `P`: WHY
//! sensitivity: T tests with named passes, M mutants, I insensitive, E exempt
//! ```
//!
//! The mutated copy of a test is written beside it (so `%S` paths hold) as
//! `.NAME.sensitivity-PID` and removed after the run.

use crate::discovery::TestFile;
use crate::runner::{load_script, run_test, ResultCode, RunConfig};

/// One mutation of a test: a RUN line with one pass left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutant {
    /// 1-based line of the RUN line.
    pub line: usize,
    /// The pass left out.
    pub pass: String,
    /// The whole file with that line changed.
    pub text: String,
}

/// What one mutant showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    Insensitive {
        line: usize,
        pass: String,
    },
    Exempt {
        line: usize,
        pass: String,
        why: String,
    },
}

/// The tools whose `--pass` flags name passes.
const PASS_TOOLS: [&str; 2] = ["glow-opt", "glow-run"];

/// Splits `a,b{k=v,w=x},c` at the commas outside braces.
fn split_list(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The pass name of a list element (`dse{x=1}` is `dse`).
fn pass_name(element: &str) -> &str {
    element
        .split('{')
        .next()
        .unwrap_or(element)
        .trim_matches(['\'', '"'])
}

/// One `--pass` occurrence in a line: the byte range of its words and its
/// list of passes.
struct PassFlag {
    /// Range of the flag and its value (both words when written apart).
    range: std::ops::Range<usize>,
    /// The flag's spelling (`--pass`, `-passes`, ...).
    flag: String,
    elements: Vec<String>,
    /// The value was written `--pass=V` (else `--pass V`).
    joined: bool,
}

fn words(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

fn pass_flags(line: &str) -> Vec<PassFlag> {
    let ws = words(line);
    let mut out = Vec::new();
    let mut in_tool = false;
    let mut k = 0;
    while k < ws.len() {
        let (at, w) = ws[k];
        match w {
            "|" | "||" | "&&" | ";" => in_tool = false,
            _ if PASS_TOOLS.contains(&w) => in_tool = true,
            _ if in_tool => {
                let unquoted = w.trim_matches('\'');
                let flag = ["--passes", "--pass", "-passes", "-pass"]
                    .into_iter()
                    .find(|f| unquoted == *f || unquoted.starts_with(&format!("{f}=")));
                if let Some(flag) = flag {
                    let (value, range, joined) = if unquoted == flag {
                        match ws.get(k + 1) {
                            Some(&(vat, v)) => {
                                k += 1;
                                (v.trim_matches('\''), at..vat + v.len(), false)
                            }
                            None => break,
                        }
                    } else {
                        (&unquoted[flag.len() + 1..], at..at + w.len(), true)
                    };
                    out.push(PassFlag {
                        range,
                        flag: flag.to_string(),
                        elements: split_list(value).into_iter().map(str::to_string).collect(),
                        joined,
                    });
                }
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// Every mutant of a test file's text.
pub fn mutants(text: &str, run_lines: &[usize]) -> Vec<Mutant> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = Vec::new();
    for &n in run_lines {
        let Some(line) = lines.get(n - 1) else {
            continue;
        };
        for flag in pass_flags(line) {
            for (i, e) in flag.elements.iter().enumerate() {
                let rest: Vec<&str> = flag
                    .elements
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, e)| e.as_str())
                    .collect();
                let replacement = match (rest.is_empty(), flag.joined) {
                    (true, _) => String::new(),
                    (false, true) => format!("'{}={}'", flag.flag, rest.join(",")),
                    (false, false) => format!("{} '{}'", flag.flag, rest.join(",")),
                };
                let mut new_line = line.to_string();
                new_line.replace_range(flag.range.clone(), &replacement);
                let mut all: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                all[n - 1] = new_line;
                out.push(Mutant {
                    line: n,
                    pass: pass_name(e).to_string(),
                    text: all.concat(),
                });
            }
        }
    }
    out
}

/// The reason a test gives for being exempt for `pass`, if it gives one.
pub fn exemption(text: &str, pass: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.split("sensitivity-exempt:").nth(1)?;
        let (p, why) = rest.split_once(':')?;
        (p.trim() == pass).then(|| why.trim().to_string())
    })
}

/// Runs each mutant of `test`; a mutant that passes is a finding. Returns
/// the findings and the number of mutants run.
pub fn check_test(test: &TestFile, cfg: &RunConfig) -> Result<(Vec<Finding>, usize), String> {
    let (text, script) = load_script(test)?;
    let runs: Vec<usize> = script.run_lines.iter().map(|r| r.line).collect();
    let ms = mutants(&text, &runs);
    let name = test
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let copy = test
        .path
        .with_file_name(format!(".{name}.sensitivity-{}", std::process::id()));
    let mut findings = Vec::new();
    for m in &ms {
        std::fs::write(&copy, &m.text)
            .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
        let mutated = TestFile {
            path: copy.clone(),
            ..test.clone()
        };
        let r = run_test(&mutated, cfg);
        let _ = std::fs::remove_file(&copy);
        if r.code == ResultCode::Pass {
            findings.push(match exemption(&text, &m.pass) {
                Some(why) => Finding::Exempt {
                    line: m.line,
                    pass: m.pass.clone(),
                    why,
                },
                None => Finding::Insensitive {
                    line: m.line,
                    pass: m.pass.clone(),
                },
            });
        }
    }
    Ok((findings, ms.len()))
}

/// The report line of a finding of the test `rel`.
pub fn report_line(rel: &str, f: &Finding) -> String {
    match f {
        Finding::Insensitive { line, pass } => {
            format!("insensitive: {rel}: RUN line {line}: passes without `{pass}`")
        }
        Finding::Exempt { line, pass, why } => {
            format!("exempt: {rel}: RUN line {line}: `{pass}`: {why}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_named_pass_is_left_out_once() {
        let text = "// RUN: glow-opt %s --pass=dse --passes=a,b{x=1,y=2} | glow-filecheck %s --pass=nope\n// RUN: glow-opt %s -O --pass share-buffers\nx\n";
        let ms = mutants(text, &[1, 2]);
        let got: Vec<(usize, &str, &str)> = ms
            .iter()
            .map(|m| {
                (
                    m.line,
                    m.pass.as_str(),
                    m.text.lines().nth(m.line - 1).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, "dse", "// RUN: glow-opt %s  --passes=a,b{x=1,y=2} | glow-filecheck %s --pass=nope"),
                (1, "a", "// RUN: glow-opt %s --pass=dse '--passes=b{x=1,y=2}' | glow-filecheck %s --pass=nope"),
                (1, "b", "// RUN: glow-opt %s --pass=dse '--passes=a' | glow-filecheck %s --pass=nope"),
                (2, "share-buffers", "// RUN: glow-opt %s -O "),
            ]
        );
        assert!(ms.iter().all(|m| m.text.ends_with("x\n")));
    }

    #[test]
    fn exemptions_name_their_pass() {
        let text = "// sensitivity-exempt: dse: the output is the same by design\n";
        assert_eq!(
            exemption(text, "dse").as_deref(),
            Some("the output is the same by design")
        );
        assert_eq!(exemption(text, "dead-alloc"), None);
    }
}
