//! Debug counters, as LLVM's `-debug-counter`: a pass names each kind of
//! decision it takes (`share-buffers` for one buffer share) and asks the
//! counter before taking one; the user picks which occurrences happen, so a
//! miscompile can be narrowed to the one decision that causes it.
//!
//! Two spellings select occurrences (numbered from 0 over the whole run):
//! - `NAME=CHUNKS`, LLVM 17's form: `NAME=3`, `NAME=1-3:7` (the listed
//!   occurrences happen, every other one is skipped);
//! - `NAME-skip=S` and `NAME-count=C`, the older form: skip the first `S`,
//!   then let `C` happen (`-1`: all of them), skip the rest.

use std::collections::BTreeMap;
use std::fmt::Write;

/// The occurrences of one counter that may happen.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Selection {
    /// Inclusive ranges, sorted and disjoint.
    Chunks(Vec<(u64, u64)>),
    /// Skip the first `skip`, then let `count` happen (`None`: unlimited).
    SkipCount { skip: u64, count: Option<u64> },
}

impl Selection {
    fn allows(&self, n: u64) -> bool {
        match self {
            Selection::Chunks(chunks) => chunks.iter().any(|&(a, b)| a <= n && n <= b),
            Selection::SkipCount { skip, count } => {
                n >= *skip && count.is_none_or(|c| n - skip < c)
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Selection::Chunks(chunks) => chunks
                .iter()
                .map(|&(a, b)| {
                    if a == b {
                        a.to_string()
                    } else {
                        format!("{a}-{b}")
                    }
                })
                .collect::<Vec<_>>()
                .join(":"),
            Selection::SkipCount { skip, count } => format!(
                "skip={skip},count={}",
                count.map_or("-1".to_string(), |c| c.to_string())
            ),
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Counter {
    selection: Option<Selection>,
    /// Occurrences seen so far.
    seen: u64,
    /// Occurrences that were skipped.
    skipped: u64,
}

/// The counters of one run: which were configured and how often each was
/// asked.
#[derive(Clone, Debug, Default)]
pub struct DebugCounters {
    counters: BTreeMap<String, Counter>,
}

impl DebugCounters {
    /// Parses the comma-separated `--debug-counter` values; `known` lists
    /// the counters the registered passes declare, so a typo is an error
    /// that names them.
    pub fn parse(specs: &[String], known: &[&str]) -> Result<DebugCounters, String> {
        let mut out = DebugCounters::default();
        for spec in specs.iter().flat_map(|s| s.split(',')) {
            let spec = spec.trim();
            if spec.is_empty() {
                continue;
            }
            let (key, value) = spec.split_once('=').ok_or_else(|| {
                format!(
                    "--debug-counter `{spec}`: expected NAME=CHUNKS, NAME-skip=N or NAME-count=N"
                )
            })?;
            let (name, form) = if known.contains(&key) {
                (key, None)
            } else if let Some(n) = key.strip_suffix("-skip").filter(|n| known.contains(n)) {
                (n, Some("skip"))
            } else if let Some(n) = key.strip_suffix("-count").filter(|n| known.contains(n)) {
                (n, Some("count"))
            } else {
                let mut names: Vec<&str> = known.to_vec();
                names.sort_unstable();
                return Err(format!(
                    "--debug-counter `{spec}`: unknown counter `{key}` (counters: {})",
                    names.join(", ")
                ));
            };
            let entry = out.counters.entry(name.to_string()).or_default();
            entry.selection = Some(match form {
                None => Selection::Chunks(
                    parse_chunks(value).map_err(|e| format!("--debug-counter `{spec}`: {e}"))?,
                ),
                Some(which) => {
                    let (mut skip, mut count) = match entry.selection.take() {
                        Some(Selection::SkipCount { skip, count }) => (skip, count),
                        _ => (0, None),
                    };
                    let bad = || {
                        format!("--debug-counter `{spec}`: `{value}` is not a count (an integer, -1 for all)")
                    };
                    if which == "skip" {
                        skip = value.parse().map_err(|_| bad())?;
                    } else if value == "-1" {
                        count = None;
                    } else {
                        count = Some(value.parse().map_err(|_| bad())?);
                    }
                    Selection::SkipCount { skip, count }
                }
            });
        }
        Ok(out)
    }

    /// Whether no counter was configured (every decision happens).
    pub fn is_empty(&self) -> bool {
        self.counters.values().all(|c| c.selection.is_none())
    }

    /// Counts one occurrence of `name` and says whether it may happen.
    pub fn should_execute(&mut self, name: &str) -> bool {
        self.ask(name).1
    }

    /// Counts one occurrence of `name`: its number (from 0) and whether it
    /// may happen.
    pub fn ask(&mut self, name: &str) -> (u64, bool) {
        let c = match self.counters.get_mut(name) {
            Some(c) => c,
            None => self.counters.entry(name.to_string()).or_default(),
        };
        let n = c.seen;
        c.seen += 1;
        let ok = c.selection.as_ref().is_none_or(|s| s.allows(n));
        if !ok {
            c.skipped += 1;
        }
        (n, ok)
    }

    /// `--print-debug-counter`: every counter asked or configured, with how
    /// often it was asked, how many occurrences were skipped and the selection.
    pub fn report(&self) -> String {
        let mut s = String::from("Counters and values:\n");
        for (name, c) in &self.counters {
            let sel = c
                .selection
                .as_ref()
                .map_or("all".to_string(), Selection::describe);
            let _ = writeln!(
                s,
                "  {name} : {{{} seen, {} skipped, {sel}}}",
                c.seen, c.skipped
            );
        }
        s
    }
}

/// `1-3:7`: inclusive ranges separated by `:`, ascending.
fn parse_chunks(text: &str) -> Result<Vec<(u64, u64)>, String> {
    let mut chunks: Vec<(u64, u64)> = Vec::new();
    for part in text.split(':') {
        let num = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{t}` in `{text}` is not an occurrence number"))
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let n = num(part)?;
                (n, n)
            }
        };
        if a > b {
            return Err(format!("range `{part}` in `{text}` is backwards"));
        }
        if chunks.last().is_some_and(|&(_, end)| a <= end) {
            return Err(format!(
                "chunks in `{text}` must be ascending and disjoint (`{part}` overlaps or comes back)"
            ));
        }
        chunks.push((a, b));
    }
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(spec: &str, n: u64) -> Vec<bool> {
        let mut c = DebugCounters::parse(&[spec.to_string()], &["share-buffers", "dse"]).unwrap();
        (0..n).map(|_| c.should_execute("share-buffers")).collect()
    }

    #[test]
    fn chunks_select_occurrences() {
        assert_eq!(
            run("share-buffers=1-2:4", 6),
            [false, true, true, false, true, false]
        );
        assert_eq!(run("share-buffers=0", 3), [true, false, false]);
    }

    #[test]
    fn skip_and_count_compose() {
        assert_eq!(
            run("share-buffers-skip=1,share-buffers-count=2", 5),
            [false, true, true, false, false]
        );
        assert_eq!(run("share-buffers-count=0", 2), [false, false]);
        assert_eq!(
            run("share-buffers-skip=3", 5),
            [false, false, false, true, true]
        );
        assert_eq!(run("share-buffers-count=-1", 2), [true, true]);
    }

    #[test]
    fn unconfigured_counters_let_everything_happen() {
        assert_eq!(run("dse=0", 3), [true, true, true]);
    }

    #[test]
    fn bad_specs_are_errors_that_name_the_counters() {
        let known = ["share-buffers", "dse"];
        let err = |s: &str| DebugCounters::parse(&[s.to_string()], &known).unwrap_err();
        assert!(err("share-buffer-count=1").contains("counters: dse, share-buffers"));
        assert!(err("share-buffers=3-1").contains("backwards"));
        assert!(err("share-buffers=4:2").contains("ascending"));
        assert!(err("share-buffers-count=x").contains("not a count"));
        assert!(err("share-buffers").contains("expected NAME=CHUNKS"));
    }

    #[test]
    fn report_lists_seen_and_skipped() {
        let mut c = DebugCounters::parse(&["dse-count=1".to_string()], &["dse"]).unwrap();
        for _ in 0..3 {
            c.should_execute("dse");
        }
        assert_eq!(
            c.report(),
            "Counters and values:\n  dse : {3 seen, 2 skipped, skip=0,count=1}\n"
        );
    }
}
