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
        // Only a distance below both the best so far and the cut-off of 50
        // matters, so the band of the computation is that wide: a long
        // pattern over long lines costs O(len * 50) per position, not len^2.
        let limit = best.map_or(50.0, |(_, q)| q.min(50.0)) - lines as f64 / 100.0;
        if limit <= 0.0 {
            continue;
        }
        let Some(d) = edit_distance_below(window, eb, limit.ceil() as usize) else {
            continue;
        };
        let quality = d as f64 + lines as f64 / 100.0;
        if best.is_none_or(|(_, q)| quality < q) {
            best = Some((i, quality));
        }
    }
    match best {
        Some((i, q)) if i != 0 && q < 50.0 => Some(i),
        _ => None,
    }
}

/// The edit distance of `a` and `b` when it is below `limit`, computed only
/// on the diagonal band of that width (a cell further out already costs
/// `limit`).
fn edit_distance_below(a: &[u8], b: &[u8], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) >= limit {
        return None;
    }
    let inf = usize::MAX / 2;
    let mut prev: Vec<usize> = (0..=b.len())
        .map(|j| if j < limit { j } else { inf })
        .collect();
    let mut cur = vec![inf; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        let lo = (i + 1).saturating_sub(limit);
        let hi = (i + 1 + limit).min(b.len());
        // Only the band and its two edges are read: reset those.
        if lo == 0 {
            cur[0] = i + 1;
        } else {
            cur[lo - 1] = inf;
        }
        if hi < b.len() {
            cur[hi + 1] = inf;
        }
        let mut row_min = if lo == 0 { cur[0] } else { inf };
        for j in lo.max(1)..=hi {
            let sub = prev[j - 1] + usize::from(ca != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
            row_min = row_min.min(cur[j]);
        }
        if row_min >= limit {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[b.len()]).filter(|&d| d < limit)
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

#[cfg(test)]
mod band_tests {
    use super::*;

    #[test]
    fn the_band_agrees_with_the_full_distance_below_its_limit() {
        let words: [&[u8]; 7] = [
            b"",
            b"a",
            b"abc",
            b"acb",
            b"CHECK-NEXT",
            b"CHEKC-NXET",
            b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        ];
        for a in words {
            for b in words {
                let d = edit_distance(a, b);
                for limit in 1..60 {
                    let expect = (d < limit).then_some(d);
                    assert_eq!(
                        edit_distance_below(a, b, limit),
                        expect,
                        "{a:?} {b:?} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_long_pattern_over_long_lines_finds_its_near_match() {
        // 4096 positions of a long pattern over one long line (quadratic
        // per position without the band), and a near match found in it.
        let example = "ab".repeat(100);
        let mut hay = "b".repeat(2_000);
        hay.push_str(&"ab".repeat(50));
        hay.push('x');
        hay.push_str(&"ab".repeat(50));
        hay.push_str(&"b".repeat(3_000));
        // The unbanded search, as before the band: the same answer.
        let full = |example: &str, hay: &str| {
            let (hb, eb) = (hay.as_bytes(), example.as_bytes());
            let mut best: Option<(usize, f64)> = None;
            for i in 0..hb.len().min(4096) {
                let w = &hb[i..hb.len().min(i + eb.len())];
                let q = edit_distance(w, eb) as f64;
                if best.is_none_or(|(_, b)| q < b) {
                    best = Some((i, q));
                }
            }
            best.filter(|&(i, q)| i != 0 && q < 50.0).map(|(i, _)| i)
        };
        let found = fuzzy_best(&example, &hay);
        assert!(found.is_some_and(|i| i.abs_diff(2_000) <= 1), "{found:?}");
        assert_eq!(found, full(&example, &hay));
        assert_eq!(fuzzy_best(&example, &"b".repeat(7_000)), None);
        let long = "ab".repeat(3_000);
        assert_eq!(fuzzy_best(&long, &"b".repeat(7_000)), None);
    }
}
