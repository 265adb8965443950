//! The matching algorithm (LLVM's `FileCheck::checkInput` and
//! `FileCheckString::Check`, `CheckDag`, `CheckNot`, `CheckNext`).
//!
//! LABEL directives split the input into blocks first; every check string
//! then matches inside its block, after its DAG group and before its NOTs
//! are verified on the skipped region. Every result that the input dump
//! shows is recorded as a [`Diag`].

use crate::diag::{self, Diag, MatchTy};
use crate::directive::{self, CheckString, DagNot};
use crate::pattern::{CheckKind, Env, Found, Names, Pattern, SubstError};
use crate::source::{Kind, Loc, Sources};
use crate::{dump, DumpInput, Options, Outcome};

/// Runs a whole check (see [`crate::check`]).
pub fn run(
    check_name: &str,
    check_text: &str,
    input_name: &str,
    input_text: &str,
    opts: &Options,
) -> Outcome {
    let mut err = String::new();
    let prefixes: Vec<String> = if opts.check_prefixes.is_empty() {
        vec!["CHECK".to_string()]
    } else {
        opts.check_prefixes.clone()
    };
    let comments: Vec<String> = opts
        .comment_prefixes
        .clone()
        .unwrap_or_else(|| vec!["COM".to_string(), "RUN".to_string()]);
    if let Some(msg) = validate_prefixes(
        &opts.check_prefixes,
        opts.comment_prefixes.as_deref().unwrap_or(&[]),
        &prefixes,
        &comments,
    ) {
        return usage(msg);
    }
    let mut sources = Sources {
        color: opts.color,
        ..Sources::default()
    };
    let check_buf = sources.add(
        check_name,
        crate::source::canonicalize(check_text, opts.strict_whitespace),
    );
    let input_buf = sources.add(
        input_name,
        crate::source::canonicalize(input_text, opts.strict_whitespace),
    );
    let mut implicit = Vec::new();
    for pat in &opts.implicit_check_not {
        let text = format!("-implicit-check-not='{}'", pat);
        let buf = sources.add("command line", text);
        if let Err((off, msg)) = Pattern::parse(
            pat,
            CheckKind::Not,
            false,
            1,
            false,
            false,
            false,
            &mut Names::default(),
        ) {
            sources.print(
                &mut err,
                Loc {
                    buf,
                    offset: 21 + off,
                },
                Kind::Error,
                &msg,
                None,
            );
            return Outcome {
                exit_code: 2,
                stderr: err,
            };
        }
        implicit.push(buf);
    }
    let mut env = Env::default();
    if let Err(msg) = apply_defines(&opts.defines, &mut env, opts.color) {
        return usage(msg);
    }
    if opts.reject_misspelled {
        let found =
            crate::spell::find_misspellings(&sources.bufs[check_buf].text, &prefixes, &comments);
        // Every typo at once: fixing them one run at a time is tedious.
        for m in &found {
            let loc = Loc {
                buf: check_buf,
                offset: m.offset,
            };
            let msg = format!(
                "misspelled directive '{}'; did you mean '{}'?",
                m.written, m.suggestion
            );
            sources.print(&mut err, loc, Kind::Error, &msg, None);
        }
        if !found.is_empty() {
            return Outcome {
                exit_code: 2,
                stderr: err,
            };
        }
    }
    let (file, used) = match directive::read_check_file(
        &sources,
        check_buf,
        opts,
        &prefixes,
        &comments,
        &implicit,
        &mut Names::from_env(&env),
        &mut err,
    ) {
        Ok(x) => x,
        Err(()) => {
            // LLVM's FindRegexVarEnd calls exit(1) on this one error.
            let unbalanced = err.contains("error: missing closing \"]\" for regex variable");
            return Outcome {
                exit_code: if unbalanced { 1 } else { 2 },
                stderr: err,
            };
        }
    };
    let unused: Vec<&String> = prefixes.iter().filter(|p| !used.contains(p)).collect();
    let none_found = unused.len() == prefixes.len();
    if (none_found || (!opts.allow_unused_prefixes && !unused.is_empty()))
        && (implicit.is_empty() || !opts.check_prefixes.is_empty())
    {
        let list: Vec<String> = unused.iter().map(|p| format!("'{}:'", p)).collect();
        let es = if unused.len() > 1 { "es" } else { "" };
        return usage(format!(
            "error: no check strings found with prefix{} {}\n",
            es,
            list.join(", ")
        ));
    }
    if sources.bufs[input_buf].text.is_empty() && !opts.allow_empty {
        return usage(format!(
            "FileCheck error: '{}' is empty.\nFileCheck command line:  {}\n",
            input_name, opts.command_line
        ));
    }
    let mut m = Matcher {
        sources: &sources,
        input: input_buf,
        env,
        diags: Vec::new(),
        out: String::new(),
        opts,
        failure: None,
        collect: opts.dump_input != DumpInput::Never,
    };
    let ok = m.check_input(&file.strings);
    let mut stderr = m.out;
    let diags = m.diags;
    if let (false, true, Some((block, region))) = (ok, opts.diff, m.failure) {
        stderr.push_str(&crate::diff::render(
            &sources,
            input_buf,
            &file.strings,
            block,
            region,
        ));
    }
    let dump = match opts.dump_input {
        DumpInput::Always => true,
        DumpInput::Fail => !ok,
        DumpInput::Never => false,
    };
    if dump {
        stderr.push_str(&dump::render(&sources, check_buf, input_buf, &diags, opts));
    }
    Outcome {
        exit_code: if ok { 0 } else { 1 },
        stderr,
    }
}

fn usage(msg: String) -> Outcome {
    Outcome {
        exit_code: 2,
        stderr: msg,
    }
}

/// LLVM's `ValidateCheckPrefixes`: the defaults in use are known first but not validated, so a
/// duplicate of one is blamed on the supplied prefix; then the supplied check prefixes, then the
/// supplied comment prefixes.
fn validate_prefixes(
    supplied: &[String],
    supplied_comments: &[String],
    prefixes: &[String],
    comments: &[String],
) -> Option<String> {
    let mut seen: Vec<&String> = Vec::new();
    if supplied.is_empty() {
        seen.extend(prefixes);
    }
    if supplied_comments.is_empty() {
        seen.extend(comments);
    }
    for (p, is_comment) in supplied
        .iter()
        .map(|p| (p, false))
        .chain(supplied_comments.iter().map(|p| (p, true)))
    {
        let what = if is_comment { "comment" } else { "check" };
        if p.is_empty() {
            return Some(format!(
                "error: supplied {what} prefix must not be the empty string\n"
            ));
        }
        // LLVM's wording says "start with a letter" but it only checks the characters.
        if !p.bytes().all(directive::is_word) {
            return Some(format!(
                "error: supplied {what} prefix must start with a letter and contain only alphanumeric characters, hyphens, and underscores: '{p}'\n"
            ));
        }
        if seen.contains(&p) {
            return Some(format!(
                "error: supplied {what} prefix must be unique among check and comment prefixes: '{p}'\n"
            ));
        }
        seen.push(p);
    }
    None
}

/// LLVM's `defineCmdlineVariables`: every definition is tried and every error reported (each
/// followed by a blank line, as LLVM logs them), in the buffer "Global defines", one line per -D.
fn apply_defines(defines: &[(String, String)], env: &mut Env, color: bool) -> Result<(), String> {
    // The buffer LLVM parses them from: one line per definition, numeric ones shown with the
    // substitution block they stand for.
    let lines: Vec<String> = defines
        .iter()
        .enumerate()
        .map(|(k, (name, value))| match name.strip_prefix('#') {
            Some(n) => format!(
                "Global define #{}: #{n}={value} (parsed as: [[#{n}:{value}]])",
                k + 1
            ),
            None => format!("Global define #{}: {name}={value}", k + 1),
        })
        .collect();
    let mut sources = Sources {
        color,
        ..Sources::default()
    };
    let buf = sources.add("Global defines", lines.join("\n") + "\n");
    let starts: Vec<usize> = lines
        .iter()
        .scan(0, |at, l| {
            let s = *at;
            *at += l.len() + 1;
            Some(s)
        })
        .collect();
    let mut errs = String::new();
    let err = |errs: &mut String, k: usize, col: usize, msg: &str| {
        let loc = Loc {
            buf,
            offset: starts[k - 1] + col,
        };
        sources.print(errs, loc, Kind::Error, msg, None);
        errs.push('\n');
    };
    for (k, (name, value)) in defines.iter().enumerate() {
        let k = k + 1;
        if let Some(n) = name.strip_prefix('#') {
            let body = format!("{n}:{value}");
            let shown = format!("Global define #{k}: #{n}={value} (parsed as: [[#");
            let names = Names::from_env(env);
            let scope = DefineScope(&names);
            let block = match crate::numeric::parse_block(&body, false, &scope) {
                Ok(b) => b,
                Err((o, m)) => {
                    err(&mut errs, k, shown.len() + o, &m);
                    continue;
                }
            };
            let (Some((def, _)), Some(expr)) = (block.def, block.expr) else {
                errs.push_str(&format!(
                    "error: invalid numeric definition '-D#{n}={value}'\n"
                ));
                continue;
            };
            match expr.eval(&env.nums, 0) {
                Ok(v) => {
                    env.nums.insert(def, (v, block.format));
                }
                // LLVM logs this one without a location.
                Err(m) => errs.push_str(&format!("{m}\n")),
            }
        } else {
            // LLVM's parseVariable on the name, then the string-definition checks.
            let at = format!("Global define #{k}: ").len();
            let b = name.as_bytes();
            let pseudo = b.first() == Some(&b'@');
            let i = usize::from(pseudo || b.first() == Some(&b'$'));
            if i == b.len() {
                let what = if pseudo { "pseudo" } else { "global" };
                err(&mut errs, k, at + i, &format!("empty {what} variable name"));
                continue;
            }
            if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
                err(&mut errs, k, at, "invalid variable name");
                continue;
            }
            let end = b[i..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                .map_or(b.len(), |e| i + e);
            if pseudo || end != b.len() {
                let msg = format!("invalid name in string variable definition '{name}'");
                err(&mut errs, k, at, &msg);
                continue;
            }
            if env.nums.contains_key(name) {
                let msg = format!("numeric variable with name '{name}' already exists");
                err(&mut errs, k, at, &msg);
                continue;
            }
            // LLVM's table insert keeps the first of two `-DV=` (a numeric one takes the last).
            env.strings
                .entry(name.clone())
                .or_insert_with(|| value.clone());
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}

/// The variables of earlier -D definitions, for parsing a numeric one.
struct DefineScope<'a>(&'a Names);

impl crate::numeric::Scope for DefineScope<'_> {
    fn num_format(&self, name: &str) -> Option<crate::numeric::Format> {
        self.0.nums.get(name).copied()
    }
    fn defined_here(&self, _: &str) -> bool {
        false
    }
    fn is_string(&self, name: &str) -> bool {
        self.0.strs.contains(name)
    }
}

struct Matcher<'a> {
    sources: &'a Sources,
    input: usize,
    env: Env,
    diags: Vec<Diag>,
    out: String,
    opts: &'a Options,
    /// The failing block (check string indices) and its input region.
    failure: Option<((usize, usize), (usize, usize))>,
    /// Results are recorded for an input dump (LLVM passes its `Diags` list): verbose
    /// remarks are then left to the dump instead of being printed.
    collect: bool,
}

impl Matcher<'_> {
    fn text(&self) -> &str {
        &self.sources.bufs[self.input].text
    }

    /// LLVM's `checkInput`: labels first, then each block in order.
    fn check_input(&mut self, strings: &[CheckString]) -> bool {
        let end = self.text().len();
        let mut buf_start = 0;
        let mut failed = false;
        let (mut i, mut j) = (0, 0);
        loop {
            let (region_start, region_end);
            if j == strings.len() {
                (region_start, region_end) = (buf_start, end);
            } else {
                if strings[j].pat.kind != CheckKind::Label {
                    j += 1;
                    continue;
                }
                let Some((pos, len)) = self.check_string(&strings[j], buf_start, end, true) else {
                    self.failure = Some(((i, j + 1), (buf_start, end)));
                    return false;
                };
                (region_start, region_end) = (buf_start, pos + len);
                buf_start = pos + len;
                j += 1;
            }
            if i != 0 && self.opts.enable_var_scope {
                self.env.clear_locals();
            }
            let mut cur = region_start;
            let block_start = i;
            while i != j {
                match self.check_string(&strings[i], cur, region_end, false) {
                    Some((pos, len)) => cur = pos + len,
                    None => {
                        if self.failure.is_none() {
                            self.failure = Some(((block_start, j), (region_start, region_end)));
                        }
                        failed = true;
                        i = j;
                        break;
                    }
                }
                i += 1;
            }
            if j == strings.len() {
                break;
            }
        }
        !failed
    }

    /// LLVM's `FileCheckString::Check`; returns the absolute match start and
    /// length (from the first to the last COUNT match).
    fn check_string(
        &mut self,
        cs: &CheckString,
        start: usize,
        end: usize,
        scan: bool,
    ) -> Option<(usize, usize)> {
        let mut last_pos = start;
        let mut nots: Vec<&DagNot> = Vec::new();
        if !scan {
            last_pos = self.check_dag(cs, start, end, &mut nots)?;
        }
        let count = match cs.pat.kind {
            CheckKind::Count(n) => n,
            _ => 1,
        };
        let d = Dir::of(cs);
        let mut last_end = last_pos;
        let mut first = 0;
        for i in 1..=count {
            let r = self.find(d, last_end, end);
            if self.report(true, d, (i, count), last_end, end, &r) {
                return None;
            }
            let Ok(Some(f)) = r else {
                unreachable!("a positive match without a reported error was found")
            };
            if i == 1 {
                first = last_end + f.start;
            }
            last_end += f.end;
        }
        let len = last_end - first;
        if !scan {
            if let Some(kind) = line_error(cs.pat.kind, &self.text()[last_pos..first]) {
                self.report_wrong_line(cs, kind, last_pos, first, len);
                return None;
            }
            if self.check_not(&nots, last_pos, first) {
                return None;
            }
        }
        Some((first, len))
    }

    /// Matches `d` on `[start, end)`; the match is relative to `start`. Variables the match
    /// defines are set at once, as LLVM's `Pattern::match` does.
    fn find(&mut self, d: Dir, start: usize, end: usize) -> MatchResult {
        let r = d
            .pat
            .find(&self.sources.bufs[self.input].text[start..end], &self.env);
        if let Ok(Some(f)) = &r {
            for (n, v) in &f.str_defs {
                self.env.strings.insert(n.clone(), v.clone());
            }
            for (n, v, fmt) in &f.num_defs {
                self.env.nums.insert(n.clone(), (v.clone(), *fmt));
            }
        }
        r
    }

    /// LLVM's `reportMatchResult`: reports a match of `d` on `[start, end)` (expected for
    /// a positive directive, excluded for a NOT); true when that is an error. `count` is
    /// (this match, of how many) for COUNT directives.
    fn report(
        &mut self,
        expected: bool,
        d: Dir,
        count: (usize, usize),
        start: usize,
        end: usize,
        r: &MatchResult,
    ) -> bool {
        match r {
            Ok(Some(f)) => self.print_match(expected, d, count, start, f),
            Ok(None) => self.print_no_match(expected, d, count, start, end, &[]),
            Err(errors) => self.print_no_match(expected, d, count, start, end, errors),
        }
    }

    /// LLVM's `printMatch`, for a match `f` relative to `start`. A good match is recorded
    /// only under `-v` (an implicit EOF only under `-vv`), and printed as a remark only
    /// when there is no input dump to carry it.
    fn print_match(
        &mut self,
        expected: bool,
        d: Dir,
        count: (usize, usize),
        start: usize,
        f: &Found,
    ) -> bool {
        let has_error = !expected;
        let mut print = true;
        if !has_error {
            if !self.opts.verbose || (!self.opts.verbose_verbose && d.pat.kind == CheckKind::Eof) {
                return false;
            }
            print = !self.collect;
        }
        let (ms, me) = (start + f.start, start + f.end);
        let ty = if expected {
            MatchTy::FoundAndExpected
        } else {
            MatchTy::FoundButExcluded
        };
        let notes = d.pat.substitution_notes(&self.env);
        let captures: Vec<(String, usize, usize)> = f
            .captures
            .iter()
            .map(|(n, s, e)| (format!("captured var \"{n}\""), start + s, start + e))
            .collect();
        let kind = d.pat.kind;
        self.diags.push(Diag::new(d.loc, kind, ty, ms, me));
        for n in &notes {
            self.diags
                .push(Diag::new(d.loc, kind, ty, ms, ms).with_note(n.clone()));
        }
        for (n, s, e) in &captures {
            self.diags
                .push(Diag::new(d.loc, kind, ty, *s, *e).with_note(n.clone()));
        }
        if !print {
            return has_error;
        }
        let what = if expected { "expected" } else { "excluded" };
        let msg = format!(
            "{}: {what} string found in input{}",
            d.describe(),
            of(count)
        );
        let sev = if expected { Kind::Remark } else { Kind::Error };
        let s = self.sources;
        s.print(&mut self.out, d.loc, sev, &msg, None);
        let at = il(self.input, ms);
        s.print(&mut self.out, at, Kind::Note, "found here", Some((ms, me)));
        for n in &notes {
            s.print(&mut self.out, at, Kind::Note, n, None);
        }
        for (n, cs, ce) in &captures {
            s.print(
                &mut self.out,
                il(self.input, *cs),
                Kind::Note,
                n,
                Some((*cs, *ce)),
            );
        }
        has_error
    }

    /// LLVM's `printNoMatch`: no match on `[start, end)`, or none attempted because of the
    /// substitution `errors` (each printed). A NOT not found is recorded only under `-vv`.
    fn print_no_match(
        &mut self,
        expected: bool,
        d: Dir,
        count: (usize, usize),
        start: usize,
        end: usize,
        errors: &[SubstError],
    ) -> bool {
        let s = self.sources;
        let pattern_error = !errors.is_empty();
        let has_error = expected || pattern_error;
        let ty = if pattern_error {
            MatchTy::InvalidPattern
        } else if expected {
            MatchTy::NoneButExpected
        } else {
            MatchTy::NoneAndExcluded
        };
        for e in errors {
            let at = Loc {
                buf: d.loc.buf,
                offset: d.loc.offset + e.at,
            };
            s.print(&mut self.out, at, Kind::Error, &e.msg, None);
        }
        let mut print = true;
        if !has_error {
            if !self.opts.verbose_verbose {
                return false;
            }
            print = !self.collect;
        }
        let kind = d.pat.kind;
        self.diags.push(Diag::new(d.loc, kind, ty, start, end));
        for e in errors {
            self.diags
                .push(Diag::new(d.loc, kind, ty, start, start).with_note(e.msg.clone()));
        }
        let notes = d.pat.substitution_notes(&self.env);
        for n in &notes {
            self.diags
                .push(Diag::new(d.loc, kind, ty, start, start).with_note(n.clone()));
        }
        if !print {
            return has_error;
        }
        let at = il(self.input, start);
        if !pattern_error {
            let what = if expected { "expected" } else { "excluded" };
            let msg = format!(
                "{}: {what} string not found in input{}",
                d.describe(),
                of(count)
            );
            let sev = if expected { Kind::Error } else { Kind::Remark };
            s.print(&mut self.out, d.loc, sev, &msg, None);
            s.print(&mut self.out, at, Kind::Note, "scanning from here", None);
        }
        for n in &notes {
            s.print(&mut self.out, at, Kind::Note, n, None);
        }
        if expected {
            let hay = &s.bufs[self.input].text[start..end];
            if let Some(best) = diag::fuzzy_best(&d.pat.example(), hay) {
                let at = start + best;
                s.print(
                    &mut self.out,
                    il(self.input, at),
                    Kind::Note,
                    "possible intended match here",
                    None,
                );
                self.diags
                    .push(Diag::new(d.loc, kind, MatchTy::Fuzzy, at, at));
            }
        }
        has_error
    }

    /// LLVM's `ProcessMatchResult` with `AdjustPrevDiags`: the results just recorded for the
    /// last directive (the match and its notes) become `ty`.
    fn retype_last(&mut self, ty: MatchTy) {
        let Some(loc) = self.diags.last().map(|d| d.check_loc) else {
            return;
        };
        for d in self.diags.iter_mut().rev() {
            if d.check_loc != loc {
                break;
            }
            d.ty = ty;
        }
    }

    fn report_wrong_line(
        &mut self,
        cs: &CheckString,
        kind: LineError,
        prev_end: usize,
        first: usize,
        len: usize,
    ) {
        let s = self.sources;
        let desc = describe(&cs.prefix, cs.pat.kind, false);
        let msg = match kind {
            LineError::Same => format!("{desc}: is on the same line as previous match"),
            LineError::NotNext => format!("{desc}: is not on the line after the previous match"),
            LineError::NotSame => format!("{desc}: is not on the same line as the previous match"),
        };
        s.print(&mut self.out, cs.loc, Kind::Error, &msg, None);
        s.print(
            &mut self.out,
            il(self.input, first),
            Kind::Note,
            "'next' match was here",
            None,
        );
        s.print(
            &mut self.out,
            il(self.input, prev_end),
            Kind::Note,
            "previous match ended here",
            None,
        );
        if kind == LineError::NotNext {
            let nl = self.text()[prev_end..first]
                .find('\n')
                .map_or(prev_end, |i| prev_end + i);
            s.print(
                &mut self.out,
                il(self.input, nl + 1),
                Kind::Note,
                "non-matching line after previous match is here",
                None,
            );
        }
        // Under -v the good match is already recorded: it is retyped, not recorded twice.
        if self.opts.verbose {
            self.retype_last(MatchTy::WrongLine);
        } else {
            self.diags.push(Diag::new(
                cs.loc,
                cs.pat.kind,
                MatchTy::WrongLine,
                first,
                first + len,
            ));
        }
    }

    /// LLVM's `CheckNot`: every NOT is tried on `[start, end)`; all failures are reported.
    fn check_not(&mut self, nots: &[&DagNot], start: usize, end: usize) -> bool {
        let mut failed = false;
        for n in nots {
            let d = Dir::of_not(n);
            let r = self.find(d, start, end);
            failed |= self.report(false, d, (1, 1), start, end, &r);
        }
        failed
    }

    /// LLVM's `CheckDag`: returns where the positive pattern starts searching.
    fn check_dag<'c>(
        &mut self,
        cs: &'c CheckString,
        start: usize,
        end: usize,
        nots: &mut Vec<&'c DagNot>,
    ) -> Option<usize> {
        if cs.dag_nots.is_empty() {
            return Some(start);
        }
        let vv = self.opts.verbose_verbose;
        let mut start_pos = start;
        // Sorted, non-overlapping match ranges of the current DAG group.
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for (idx, dn) in cs.dag_nots.iter().enumerate() {
            if dn.pat.kind == CheckKind::Not {
                nots.push(dn);
                continue;
            }
            let d = Dir::of_not(dn);
            let mut match_pos = start_pos;
            let mut mi = 0;
            let found = loop {
                let r = self.find(d, match_pos, end);
                // Under -vv every attempt is reported; otherwise only a failure here.
                if (vv || !matches!(r, Ok(Some(_))))
                    && self.report(true, d, (1, 1), match_pos, end, &r)
                {
                    return None;
                }
                let Ok(Some(f)) = r else {
                    unreachable!("a DAG match without a reported error was found")
                };
                let m = (match_pos + f.start, match_pos + f.end);
                if self.opts.allow_deprecated_dag_overlap {
                    // LLVM keeps one range spanning the whole group in this mode.
                    match ranges.first_mut() {
                        None => ranges.push(m),
                        Some(r) => *r = (r.0.min(m.0), r.1.max(m.1)),
                    }
                    break (match_pos, f);
                }
                let mut overlap = false;
                while mi < ranges.len() {
                    if m.0 < ranges[mi].1 {
                        overlap = ranges[mi].0 < m.1;
                        break;
                    }
                    mi += 1;
                }
                if !overlap {
                    ranges.insert(mi, m);
                    break (match_pos, f);
                }
                if vv {
                    if self.collect {
                        self.retype_last(MatchTy::Discarded);
                    } else {
                        let (os, oe) = ranges[mi];
                        self.sources.print(
                            &mut self.out,
                            il(self.input, os),
                            Kind::Note,
                            "match discarded, overlaps earlier DAG match here",
                            Some((os, oe)),
                        );
                    }
                }
                match_pos = ranges[mi].1;
            };
            if !vv {
                self.print_match(true, d, (1, 1), found.0, &found.1);
            }
            let group_ends = cs
                .dag_nots
                .get(idx + 1)
                .is_none_or(|n| n.pat.kind == CheckKind::Not);
            if group_ends {
                if !nots.is_empty() {
                    let gap_end = ranges[0].0;
                    if self.check_not(nots, start_pos, gap_end) {
                        return None;
                    }
                    nots.clear();
                }
                start_pos = ranges.last().map_or(start_pos, |r| r.1);
                ranges.clear();
            }
        }
        Some(start_pos)
    }
}

type MatchResult = Result<Option<Found>, Vec<SubstError>>;

/// A directive as reports name it: its pattern, where it is, and how messages describe it.
#[derive(Clone, Copy)]
struct Dir<'c> {
    pat: &'c Pattern,
    loc: Loc,
    prefix: &'c str,
    literal: bool,
}

impl<'c> Dir<'c> {
    fn of(cs: &'c CheckString) -> Self {
        Dir {
            pat: &cs.pat,
            loc: cs.loc,
            prefix: &cs.prefix,
            literal: cs.literal,
        }
    }

    fn of_not(dn: &'c DagNot) -> Self {
        Dir {
            pat: &dn.pat,
            loc: dn.loc,
            prefix: &dn.prefix,
            literal: dn.literal,
        }
    }

    /// LLVM's `getDescription`: `CHECK-NEXT`, `CHECK{LITERAL}`, `implicit EOF`.
    fn describe(&self) -> String {
        if self.pat.kind == CheckKind::Eof {
            return "implicit EOF".into();
        }
        describe(self.prefix, self.pat.kind, self.literal)
    }
}

/// The ` (2 out of 3)` of a COUNT directive's messages.
fn of((i, n): (usize, usize)) -> String {
    if n > 1 {
        format!(" ({i} out of {n})")
    } else {
        String::new()
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LineError {
    Same,
    NotNext,
    NotSame,
}

/// LLVM's `CheckNext`/`CheckSame` on the skipped region.
fn line_error(kind: CheckKind, skipped: &str) -> Option<LineError> {
    let n = count_newlines(skipped);
    match kind {
        CheckKind::Next | CheckKind::Empty if n == 0 => Some(LineError::Same),
        CheckKind::Next | CheckKind::Empty if n != 1 => Some(LineError::NotNext),
        CheckKind::Same if n != 0 => Some(LineError::NotSame),
        _ => None,
    }
}

/// Counts line breaks, treating `\r\n` and `\n\r` as one.
fn count_newlines(s: &str) -> usize {
    let b = s.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\n' || b[i] == b'\r' {
            n += 1;
            if i + 1 < b.len() && (b[i + 1] == b'\n' || b[i + 1] == b'\r') && b[i + 1] != b[i] {
                i += 1;
            }
        }
        i += 1;
    }
    n
}

/// `CHECK-NEXT`, `CHECK{LITERAL}`, `CHECK-COUNT` ...
fn describe(prefix: &str, kind: CheckKind, literal: bool) -> String {
    let mut d = CheckString::describe(prefix, kind);
    if literal {
        d.push_str("{LITERAL}");
    }
    d
}

/// A location in the input buffer.
fn il(buf: usize, offset: usize) -> Loc {
    Loc { buf, offset }
}
