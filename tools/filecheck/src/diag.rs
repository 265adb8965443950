//! Match results recorded for the input dump, and the fuzzy "possible
//! intended match" search.

use crate::pattern::CheckKind;
use crate::source::Loc;

/// The kind of a recorded result (LLVM's `FileCheckDiag::MatchType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchTy {
    FoundAndExpected,
    FoundButExcluded,
    WrongLine,
    Discarded,
    NoneAndExcluded,
    NoneButExpected,
    InvalidPattern,
    Fuzzy,
    /// A note (`with "X" equal to ...`) attached to an excluded match.
    Note,
}

/// One recorded result: which directive, what happened, where in the input.
#[derive(Clone, Debug)]
pub struct Diag {
    pub check_loc: Loc,
    pub kind: CheckKind,
    pub ty: MatchTy,
    /// Input byte range.
    pub start: usize,
    pub end: usize,
    pub note: Option<String>,
}

impl Diag {
    pub fn new(check_loc: Loc, kind: CheckKind, ty: MatchTy, start: usize, end: usize) -> Self {
        Diag {
            check_loc,
            kind,
            ty,
            start,
            end,
            note: None,
        }
    }

    pub fn with_note(mut self, note: String) -> Self {
        self.note = Some(note);
        self
    }
}

/// LLVM's `printFuzzyMatch`: the offset in `hay` of the best candidate, if
/// it is good enough and not at the start of `hay`.
pub fn fuzzy_best(example: &str, hay: &str) -> Option<usize> {
    let hb = hay.as_bytes();
    let eb = example.as_bytes();
    let mut lines = 0usize;
    let mut best: Option<(usize, f64)> = None;
    for i in 0..hb.len().min(4096) {
        if hb[i] == b'\n' {
            lines += 1;
        }
        if hb[i] == b' ' || hb[i] == b'\t' {
            continue;
        }
        let window = &hb[i..hb.len().min(i + eb.len())];
        let window = window.split(|&c| c == b'\n').next().unwrap_or(&[]);
        let quality = edit_distance(window, eb) as f64 + lines as f64 / 100.0;
        if best.is_none_or(|(_, q)| quality < q) {
            best = Some((i, quality));
        }
    }
    match best {
        Some((i, q)) if i != 0 && q < 50.0 => Some(i),
        _ => None,
    }
}

/// Levenshtein distance with replacements.
pub fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}
