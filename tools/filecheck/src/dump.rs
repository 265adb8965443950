//! The annotated input dump (`--dump-input`), in LLVM 19's layout.
//!
//! Each input line is printed with its number; below it, one annotation line per recorded
//! result (`check:12'0 X~~ error: no match found`), in the order the results were recorded.
//! `--dump-input-filter` chooses the lines that are always shown (all, those with
//! annotations, those where an annotation starts, those where an error starts) and
//! `--dump-input-context` how many lines around them; the others are elided as three `.`
//! lines, unless that would take more room than the lines themselves.

use crate::diag::{Diag, MatchTy};
use crate::source::{ansi, Sources};
use crate::{DumpFilter, DumpInput, Options};
use std::collections::BTreeMap;
use std::fmt::Write;

struct Annotation {
    diag: usize,
    label: String,
    line: usize,
    first_line: bool,
    start_col: usize,
    /// `usize::MAX` means "to the end of the line".
    end_col: usize,
    lead: char,
    note: String,
    /// Counts as an error for `-dump-input-filter=error`.
    is_error: bool,
    /// The colour of the annotation line under `--color`.
    color: &'static str,
    /// A good match: under `-v --color` its columns are not highlighted as unmatched.
    good: bool,
}

/// LLVM 19's `GetMarker`: the lead character, the colour, the note and whether it filters
/// as an error.
fn marker(ty: MatchTy) -> (char, &'static str, &'static str, bool) {
    match ty {
        MatchTy::FoundAndExpected => ('^', ansi::GREEN, "", false),
        MatchTy::FoundButExcluded => ('!', ansi::RED, "error: no match expected", true),
        MatchTy::WrongLine => ('!', ansi::RED, "error: match on wrong line", true),
        MatchTy::Discarded => ('!', ansi::CYAN, "discard: overlaps earlier match", false),
        MatchTy::NoneAndExcluded => ('X', ansi::GREEN, "", false),
        MatchTy::NoneButExpected => ('X', ansi::RED, "error: no match found", true),
        MatchTy::InvalidPattern => (
            'X',
            ansi::RED,
            "error: match failed for invalid pattern",
            true,
        ),
        MatchTy::Fuzzy => ('?', ansi::MAGENTA, "possible intended match", true),
    }
}

/// Renders the dump, starting with the blank line LLVM prints before it.
pub fn render(
    sources: &Sources,
    check_buf: usize,
    input_buf: usize,
    diags: &[Diag],
    opts: &Options,
) -> String {
    let input = &sources.bufs[input_buf];
    let check = &sources.bufs[check_buf];
    let mut out = String::new();
    let _ = write!(
        out,
        "\nInput file: {}\nCheck file: {}\n\n-dump-input=help explains the following input dump.\n\nInput was:\n<<<<<<\n",
        input.name, check.name
    );
    let paint = |code: &'static str| if opts.color { code } else { "" };
    // LLVM asks a throwaway WithColor whether colours are on, which prints bold and reset.
    out.push_str(paint(ansi::BOLD));
    out.push_str(paint(ansi::RESET));
    let mut anns = annotations(sources, check_buf, input_buf, diags);
    anns.sort_by_key(|a| (a.line, a.diag));
    let text = input.text.as_bytes();
    let mut line_count = text.iter().filter(|&&b| b == b'\n').count();
    if text.last() != Some(&b'\n') {
        line_count += 1;
    }
    let digits = line_count.max(1).to_string().len();
    let width = anns
        .iter()
        .map(|a| a.label.len())
        .max()
        .unwrap_or(0)
        .max(digits)
        + 3;
    let filter = opts
        .dump_input_filter
        .unwrap_or(if opts.dump_input == DumpInput::Always {
            DumpFilter::All
        } else {
            DumpFilter::Error
        });
    let ctx = opts.dump_input_context;
    // LLVM's DumpAnnotatedInput: the previous and next lines the filter keeps decide
    // whether a line is within the context; elided lines are buffered.
    let mut prev_in_filter = 0;
    let mut next_in_filter = 0;
    let mut elided = String::new();
    let mut pos = 0;
    let mut ai = 0;
    let mut line = 1;
    while pos < text.len() || ai < anns.len() {
        if next_in_filter < line {
            next_in_filter = next_line_in_filter(filter, line, &anns[ai..]);
        }
        if next_in_filter == line {
            prev_in_filter = line;
        }
        let elide = (prev_in_filter == 0 || prev_in_filter + ctx < line)
            && (next_in_filter == usize::MAX || line + ctx < next_in_filter);
        if !elide {
            flush_elided(&mut out, &mut elided, width, opts.color);
        }
        let sink = if elide { &mut elided } else { &mut out };
        let _ = write!(
            sink,
            "{}{:>width$}: {}",
            paint(ansi::BLACK),
            line,
            paint(ansi::RESET)
        );
        // Under -v --color, what no good match covers is highlighted.
        let highlight = opts.verbose && opts.color;
        let good: Vec<(usize, usize)> = anns[ai..]
            .iter()
            .take_while(|a| a.line == line)
            .filter(|a| highlight && a.good)
            .map(|a| (a.start_col, a.end_col))
            .collect();
        let line_start = pos;
        let mut shown = Vec::new();
        shown.extend_from_slice(paint(ansi::BOLD).as_bytes());
        if highlight {
            shown.extend_from_slice(ansi::CYAN_BG.as_bytes());
        }
        let mut in_match = false;
        let mut col = 1;
        while pos < text.len() {
            let was = in_match;
            in_match = good.iter().any(|&(s, e)| s <= col && col < e);
            if !was && in_match {
                shown.extend_from_slice(ansi::RESET.as_bytes());
            } else if was && !in_match {
                shown.extend_from_slice(ansi::CYAN_BG.as_bytes());
            }
            let b = text[pos];
            pos += 1;
            col += 1;
            if b == b'\n' {
                shown.push(b' ');
                break;
            }
            shown.push(b);
        }
        shown.extend_from_slice(paint(ansi::RESET).as_bytes());
        let _ = writeln!(sink, "{}", String::from_utf8_lossy(&shown));
        let line_width = pos - line_start;
        while ai < anns.len() && anns[ai].line == line {
            let a = &anns[ai];
            let mut s = format!("{}{:<width$}  ", paint(a.color), a.label);
            let mut col = 1;
            while col < a.start_col {
                s.push(' ');
                col += 1;
            }
            s.push(a.lead);
            col += 1;
            while col < a.end_col && col <= line_width {
                s.push('~');
                col += 1;
            }
            if !a.note.is_empty() {
                while col <= line_width {
                    s.push(' ');
                    col += 1;
                }
                s.push(' ');
                s.push_str(&a.note);
            }
            let _ = writeln!(sink, "{}", s);
            sink.push_str(paint(ansi::RESET));
            ai += 1;
        }
        line += 1;
    }
    flush_elided(&mut out, &mut elided, width, opts.color);
    out.push_str(">>>>>>\n");
    out
}

/// LLVM's `FindInputLineInFilter`: the first line at or after the annotations left that the
/// filter keeps (`usize::MAX` for none), or `line` itself for `all`.
fn next_line_in_filter(filter: DumpFilter, line: usize, anns: &[Annotation]) -> usize {
    if filter == DumpFilter::All {
        return line;
    }
    anns.iter()
        .find(|a| match filter {
            DumpFilter::All | DumpFilter::AnnotationFull => true,
            DumpFilter::Annotation => a.first_line,
            DumpFilter::Error => a.first_line && a.is_error,
        })
        .map_or(usize::MAX, |a| a.line)
}

/// Prints the buffered elided lines, or three `.` lines when they are fewer.
fn flush_elided(out: &mut String, elided: &mut String, width: usize, color: bool) {
    if elided.is_empty() {
        return;
    }
    if elided.matches('\n').count() > 3 {
        let (on, off) = if color {
            (ansi::BLACK, ansi::RESET)
        } else {
            ("", "")
        };
        for _ in 0..3 {
            let _ = writeln!(out, "{on}{:>width$}{off}", ".");
        }
    } else {
        out.push_str(elided);
    }
    elided.clear();
}

/// LLVM's `BuildInputAnnotations`: one annotation per result and input line it covers,
/// labelled `T:L` or, when the directive has several results, `T:L'N`.
fn annotations(
    sources: &Sources,
    check_buf: usize,
    input_buf: usize,
    diags: &[Diag],
) -> Vec<Annotation> {
    let input = &sources.bufs[input_buf];
    let mut per_loc: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for d in diags {
        *per_loc
            .entry((d.check_loc.buf, d.check_loc.offset))
            .or_default() += 1;
    }
    let mut seen: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut anns = Vec::new();
    for (i, d) in diags.iter().enumerate() {
        let key = (d.check_loc.buf, d.check_loc.offset);
        let mut label = format!("{}:", d.kind.abbrev());
        if d.check_loc.buf == check_buf {
            let (line, _) = sources.bufs[check_buf].line_col(d.check_loc.offset);
            let _ = write!(label, "{}", line);
        } else {
            // Implicit patterns live in buffers after the input.
            let _ = write!(label, "imp{}", d.check_loc.buf - input_buf);
        }
        if per_loc[&key] > 1 {
            let n = seen.entry(key).or_default();
            let _ = write!(label, "'{}", n);
            *n += 1;
        }
        let (mut lead, color, note, is_error) = marker(d.ty);
        let good = d.ty == MatchTy::FoundAndExpected;
        let (sl, sc) = input.line_col(d.start);
        let (el, ec) = input.line_col(d.end);
        let mut note = note.to_string();
        if let Some(n) = &d.note {
            note = n.clone();
            // A note without a range of its own gets no marker.
            if sl == el && sc == ec {
                lead = ' ';
            }
        }
        let a = Annotation {
            diag: i,
            label: label.clone(),
            line: sl,
            first_line: true,
            start_col: sc,
            end_col: if sl == el {
                (sc + 1).max(ec)
            } else {
                usize::MAX
            },
            lead,
            note,
            is_error,
            color,
            good,
        };
        anns.push(a);
        for l in sl + 1..=el {
            // A range ending before the first column has nothing on its last line.
            if ec == 1 && l == el {
                break;
            }
            anns.push(Annotation {
                diag: i,
                label: label.clone(),
                line: l,
                first_line: false,
                start_col: 1,
                end_col: if l == el { ec } else { usize::MAX },
                lead: '~',
                note: String::new(),
                is_error,
                color,
                good,
            });
        }
    }
    anns
}
