//! The annotated input dump (`--dump-input`), in LLVM's layout.
//!
//! Each input line is printed with its number; below it, one annotation
//! line per recorded result (`check:12'0 X~~ error: no match found`). With
//! `--dump-input=fail` only lines near errors are shown; others collapse to
//! three `.` lines, as LLVM's default `--dump-input-filter=error` does.

use crate::diag::{Diag, MatchTy};
use crate::source::Sources;
use crate::{DumpInput, Options};
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
    is_error: bool,
}

fn marker(ty: MatchTy) -> (char, &'static str, bool) {
    match ty {
        MatchTy::FoundAndExpected => ('^', "", false),
        MatchTy::FoundButExcluded => ('!', "error: no match expected", true),
        MatchTy::WrongLine => ('!', "error: match on wrong line", true),
        MatchTy::Discarded => ('!', "discard: overlaps earlier match", false),
        MatchTy::NoneAndExcluded => ('X', "", false),
        MatchTy::NoneButExpected => ('X', "error: no match found", true),
        MatchTy::InvalidPattern => ('X', "error: match failed for invalid pattern", true),
        MatchTy::Fuzzy => ('?', "possible intended match", true),
        MatchTy::Note => ('!', "", true),
    }
}

/// Renders the dump, starting with the blank line LLVM prints before it.
pub fn render(
    sources: &Sources,
    check_buf: usize,
    input_buf: usize,
    diags: &[Diag],
    opts: &Options,
    failed: bool,
) -> String {
    let input = &sources.bufs[input_buf];
    let check = &sources.bufs[check_buf];
    let mut out = String::new();
    let _ = write!(
        out,
        "\nInput file: {}\nCheck file: {}\n\n-dump-input=help explains the following input dump.\n\nInput was:\n<<<<<<\n",
        input.name, check.name
    );
    let anns = annotations(sources, check_buf, input_buf, diags);
    // Lines of the input as LLVM walks them: a trailing newline ends the last line.
    let text = &input.text;
    let mut lines: Vec<(&str, bool)> = Vec::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(i) => {
                lines.push((&rest[..i], true));
                rest = &rest[i + 1..];
            }
            None => {
                lines.push((rest, false));
                rest = "";
            }
        }
    }
    let last_ann_line = anns.iter().map(|a| a.line).max().unwrap_or(0);
    let total = lines.len().max(last_ann_line);
    let digits = total.max(1).to_string().len();
    let width = anns
        .iter()
        .map(|a| a.label.len())
        .max()
        .unwrap_or(0)
        .max(digits)
        + 3;
    let show_all = opts.dump_input == DumpInput::Always || !failed;
    let ctx = opts.dump_input_context;
    let error_lines: Vec<usize> = anns
        .iter()
        .filter(|a| a.is_error && a.first_line)
        .map(|a| a.line)
        .collect();
    let visible = |l: usize| show_all || error_lines.iter().any(|&e| l + ctx >= e && l <= e + ctx);
    let mut eliding = false;
    let mut ai = 0;
    for l in 1..=total {
        if !visible(l) {
            if !eliding {
                for _ in 0..3 {
                    let _ = writeln!(out, "{:>width$}", ".");
                }
                eliding = true;
            }
            while ai < anns.len() && anns[ai].line == l {
                ai += 1;
            }
            continue;
        }
        eliding = false;
        let (src, nl) = lines.get(l - 1).copied().unwrap_or(("", false));
        let _ = writeln!(out, "{:>width$}: {}{}", l, src, if nl { " " } else { "" });
        let line_width = src.len() + usize::from(nl);
        while ai < anns.len() && anns[ai].line == l {
            let a = &anns[ai];
            let mut s = format!("{:<width$}  ", a.label);
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
            let _ = writeln!(out, "{}", s);
            ai += 1;
        }
    }
    out.push_str(">>>>>>\n");
    out
}

fn annotations(
    sources: &Sources,
    check_buf: usize,
    input_buf: usize,
    diags: &[Diag],
) -> Vec<Annotation> {
    let input = &sources.bufs[input_buf];
    let mut anns = Vec::new();
    let mut idx_in_run = 0;
    for (i, d) in diags.iter().enumerate() {
        let same_prev = i > 0 && diags[i - 1].check_loc == d.check_loc;
        let same_next = diags.get(i + 1).is_some_and(|n| n.check_loc == d.check_loc);
        idx_in_run = if same_prev { idx_in_run + 1 } else { 0 };
        let mut label = format!("{}:", d.kind.abbrev());
        if d.check_loc.buf == check_buf {
            let (line, _) = sources.bufs[check_buf].line_col(d.check_loc.offset);
            let _ = write!(label, "{}", line);
        } else {
            // Implicit patterns live in buffers after the input.
            let _ = write!(label, "imp{}", d.check_loc.buf - input_buf);
        }
        if same_prev || same_next {
            let _ = write!(label, "'{}", idx_in_run);
        }
        let (lead, note, is_error) = marker(d.ty);
        let (sl, sc) = input.line_col(d.start);
        let (el, ec) = input.line_col(d.end);
        let mut a = Annotation {
            diag: i,
            label: label.clone(),
            line: sl,
            first_line: true,
            start_col: sc,
            end_col: 0,
            lead,
            note: note.to_string(),
            is_error,
        };
        if let Some(n) = &d.note {
            a.note = n.clone();
            if sl == el && sc == ec {
                a.lead = ' ';
            }
        }
        if sl == el {
            a.end_col = (sc + 1).max(ec);
            anns.push(a);
        } else {
            a.end_col = usize::MAX;
            anns.push(a);
            for l in sl + 1..=el {
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
                });
            }
        }
    }
    anns.sort_by_key(|a| (a.line, a.first_line, a.diag));
    anns
}
